"""Fixtures the fake-server tests share."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from nb_tools.testing.server import FakeMessagesServer


@pytest.fixture
def srv() -> Iterator[FakeMessagesServer]:
    """A fake Messages server on loopback with an empty script, stopped after the test."""
    with FakeMessagesServer() as server:
        yield server
