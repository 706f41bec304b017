from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, os.path.dirname(__file__))


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root


@pytest.fixture
def visible_dir(request: pytest.FixtureRequest) -> Path:
    """A folder outside the workspace that the sandbox does NOT mask wholesale (beside the
    tests, not under /tmp or a home), removed afterwards."""
    import shutil
    import uuid

    d = Path(__file__).resolve().parent / f".sandbox-probe-{uuid.uuid4().hex[:8]}"
    d.mkdir()
    yield d
    shutil.rmtree(d, ignore_errors=True)
