"""What a tool hands back to take its change back: an :class:`Undo` in its result's
``metadata["undo"]`` (or a list of them), or, for a change it cannot take back itself, a
``metadata["undo_note"]`` saying how the person can. The agent's run journal collects them
(``RunResult.changes``) and ``RunResult.restore`` calls them, newest first."""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Protocol, runtime_checkable

__all__ = ["RevertRefused", "Undo"]


class RevertRefused(Exception):
    """An undo that cannot be done safely (the file changed since); the message says why."""


@runtime_checkable
class Undo(Protocol):
    """One change a tool can take back: ``path`` as the card showed it, ``kind``
    ("create", "update", "delete", "replace cell", ...), ``diff()`` the change as a
    unified diff, and ``revert()``, which takes it back (may be async) or raises
    :class:`RevertRefused`."""

    path: str
    kind: str

    def diff(self) -> str: ...

    def revert(self) -> str | Awaitable[str]: ...
