"""A module whose functions tests/tool/test_methods_generators.py turns into tools."""

from __future__ import annotations

from pathlib import Path  # imported: never a tool

from nb_tools import tool


def add(a: int, b: int) -> int:
    """Adds two numbers."""
    return a + b


def read_note(name: str) -> str:
    """Reads a note."""
    return f"note {name}"


@tool(register=False, read_only=True)
def shout(text: str) -> str:
    """Shouts."""
    return text.upper()


def _helper() -> None:
    """Private: never a tool."""


__all__ = ["Path", "add", "imported_helper", "read_note", "shout"]

from nb_tools.testing import call as imported_helper  # noqa: E402  (imported: never a tool)
