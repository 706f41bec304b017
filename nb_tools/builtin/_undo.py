"""The way back from a file write: :class:`FileUndo` keeps the bytes a file had before a
built-in writer changed it and a digest of what it wrote, and can put them back while the
file still holds what was written (the agent's run journal, ``RunResult.restore``).

It reverts through the same confined, atomic write the tools use
(``_atomic.write_files``), so a link swapped in since cannot redirect it. The bytes are
kept in memory with the run's result, never saved with the conversation or transcript.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

from nb_tools.builtin._atomic import write_files
from nb_tools.builtin._workspace import Workspace
from nb_tools.tool import Change, RevertRefused

__all__ = ["FileUndo", "read_bytes", "undo_for", "written_before"]


def read_bytes(path: Path) -> bytes | None:
    """The file's bytes, not following a final link; ``None`` when it does not exist."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except FileNotFoundError:
        return None
    with os.fdopen(fd, "rb") as f:
        return f.read()


_UNREADABLE = object()


def written_before(path: Path) -> bytes | object | None:
    """What ``path`` held before a write (``_UNREADABLE`` when it could not be read: that
    write then has no undo)."""
    try:
        return read_bytes(path)
    except OSError:
        return _UNREADABLE


def _digest(data: bytes | None) -> str | None:
    return None if data is None else hashlib.sha256(data).hexdigest()


@dataclass(eq=False, kw_only=True)
class FileUndo:
    """One file as it was before a write (``before``: ``None`` when the write created it)."""

    path: str
    target: Path
    before: bytes | None
    written: str | None  # the digest of what the write left (None: it deleted the file)
    workspace: Workspace
    tool: str
    after_text: str | None = None

    @property
    def kind(self) -> str:
        if self.before is None:
            return "create"
        return "delete" if self.written is None else "update"

    def diff(self) -> str:
        before = self.before.decode("utf-8", "replace") if self.before is not None else None
        return Change(path=self.path, before=before, after=self.after_text).diff()

    def revert(self) -> str:
        try:
            now = read_bytes(self.target)
        except OSError as exc:  # a link or a folder swapped in, no permission
            raise RevertRefused(
                f"{self.path} is no longer the file the run wrote ({exc.strerror}); left as it is"
            ) from None
        if _digest(now) != self.written:
            if now is None:
                raise RevertRefused(f"{self.path} was deleted since the run; nothing was changed")
            if self.written is None:
                raise RevertRefused(f"{self.path} was made again since the run; left as it is")
            raise RevertRefused(f"{self.path} changed since the run; left as it is")
        write_files([(self.target, self.before)], workspace=self.workspace, tool=self.tool)
        return f"restored {self.path}"


def undo_for(
    workspace: Workspace,
    tool: str,
    shown: str,
    target: Path,
    before: bytes | None,
    after: bytes | None,
) -> FileUndo:
    text = after.decode("utf-8", "replace") if after is not None else None
    return FileUndo(
        path=shown,
        target=target,
        before=before,
        written=_digest(after),
        workspace=workspace,
        tool=tool,
        after_text=text,
    )
