"""Fixtures the file-tool tests share: an empty workspace folder and one read state."""

from __future__ import annotations

from pathlib import Path

import pytest

from nb_tools.builtin._readstate import ReadState
from nb_tools.builtin._workspace import Workspace


@pytest.fixture
def root(tmp_path: Path) -> Path:
    r = tmp_path / "root"
    r.mkdir()
    return r


@pytest.fixture
def ws(root: Path) -> Workspace:
    return Workspace(root)


@pytest.fixture
def state() -> ReadState:
    return ReadState()
