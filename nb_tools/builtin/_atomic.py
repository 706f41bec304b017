"""Atomic, all-or-nothing file writes inside a workspace.

Each new content goes to a temp file in the target's own folder (same file system), is
flushed and fsynced, and then replaces the target with ``os.replace``; an existing file keeps
its permission bits, a new one gets the usual ``0o666 & ~umask``. Several files are written
as one transaction: everything is staged first, confinement is re-checked just before the
first rename (a symlink swapped in meanwhile is refused), and if a rename or delete still
fails part-way, the files already changed are put back. No temp file survives a failure.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from dataclasses import dataclass
from pathlib import Path

from nb_tools.builtin._workspace import Workspace, WorkspaceError

__all__ = ["WriteFailed", "atomic_write", "write_files"]

_TMP_SUFFIX = ".nbtools-tmp"


class WriteFailed(Exception):
    """A write that did not happen; the workspace is as it was. The message is for the
    model."""


@dataclass
class _Op:
    path: Path
    data: bytes | None  # None: delete
    tmp: Path | None = None
    original: bytes | None = None
    original_mode: int | None = None
    done: bool = False


def atomic_write(path: Path, data: bytes, *, workspace: Workspace, tool: str) -> None:
    """Replace (or create) ``path`` with ``data`` atomically."""
    write_files([(path, data)], workspace=workspace, tool=tool)


def write_files(ops: list[tuple[Path, bytes | None]], *, workspace: Workspace, tool: str) -> None:
    """Write (``bytes``) or delete (``None``) each realpath in ``ops``, all or nothing.

    Raises ``WorkspaceError`` if a path is no longer confined, ``WriteFailed`` on an I/O
    error; in both cases the workspace is left as it was."""
    plan = [_Op(path=p, data=d) for p, d in ops]
    created_dirs: list[Path] = []
    try:
        for op in plan:
            workspace.recheck(op.path, tool=tool)
            _remember_original(op)
        for op in plan:
            if op.data is not None:
                created_dirs += _make_parents(op.path, workspace, tool)
                op.tmp = _stage(op.path, op.data, op.original_mode)
        for op in plan:  # last look before anything visible changes
            workspace.recheck(op.path, tool=tool)
        for op in plan:
            if op.tmp is None:  # a delete
                os.unlink(op.path)
            else:
                os.replace(op.tmp, op.path)
                op.tmp = None
            op.done = True
    except (OSError, WorkspaceError) as exc:
        _rollback(plan, created_dirs)
        if isinstance(exc, WorkspaceError):
            raise
        where = workspace.display(exc.filename) if exc.filename else "the workspace"
        raise WriteFailed(
            f"{tool}: could not write {where}: {exc.strerror or exc}; nothing was changed"
        ) from exc
    except BaseException:
        _rollback(plan, created_dirs)
        raise
    for folder in {op.path.parent for op in plan}:
        _fsync_dir(folder)


def _remember_original(op: _Op) -> None:
    try:
        st = os.stat(op.path)
    except FileNotFoundError:
        if op.data is None:
            raise
        return
    if not stat.S_ISREG(st.st_mode):
        raise IsADirectoryError(21, "not a regular file", str(op.path))
    op.original_mode = stat.S_IMODE(st.st_mode)
    with open(op.path, "rb") as f:
        op.original = f.read()


def _make_parents(path: Path, workspace: Workspace, tool: str) -> list[Path]:
    """Create the missing folders above ``path`` (inside the root), returning them
    outermost first."""
    missing: list[Path] = []
    folder = path.parent
    while not folder.exists():
        missing.append(folder)
        folder = folder.parent
    made: list[Path] = []
    for folder in reversed(missing):
        workspace.recheck(folder, tool=tool)
        os.mkdir(folder)
        made.append(folder)
    return made


def _stage(path: Path, data: bytes, mode: int | None) -> Path:
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}{_TMP_SUFFIX}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666 if mode is None else 0o600)
    try:
        if mode is not None:
            os.fchmod(fd, mode)
        with os.fdopen(fd, "wb", closefd=False) as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
    except BaseException:
        os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    os.close(fd)
    return tmp


def _rollback(plan: list[_Op], created_dirs: list[Path]) -> None:
    for op in reversed(plan):
        if op.tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(op.tmp)
            op.tmp = None
        if not op.done:
            continue
        with contextlib.suppress(OSError):
            if op.original is None:
                os.unlink(op.path)
            else:
                tmp = _stage(op.path, op.original, op.original_mode)
                os.replace(tmp, op.path)
    for folder in reversed(created_dirs):
        with contextlib.suppress(OSError):
            os.rmdir(folder)


def _fsync_dir(folder: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
