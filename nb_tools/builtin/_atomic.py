"""Atomic, all-or-nothing file writes inside a workspace.

Each new content goes to a temp file in the target's own folder (same file system), is
flushed and fsynced, and then replaces the target with a rename; an existing file keeps its
permission bits (but set-user-ID and set-group-ID, which a write drops), a new one gets the
usual ``0o666 & ~umask``. Several files are written as
one transaction: everything is staged first, and if a rename or delete still fails
part-way, the files already changed are put back. No temp file survives a failure.

Confinement is re-checked at write time, not only when the call was planned: each target
folder is opened from the workspace root one component at a time with ``O_NOFOLLOW``
(``Workspace.open_dir``), so the descriptor is the realpath that was resolved, or the call
fails naming the component that became a symlink. On POSIX every later step (create,
rename, delete) goes through that folder's descriptor, and the final name is never
followed: the temp file is created ``O_EXCL | O_NOFOLLOW``, an existing target must still
be a regular file, and the rename replaces the directory entry itself. A hardlink to a file
outside is safe for the same reason: the rename gives the name a new inode and the other
name keeps the old content. Where ``dir_fd`` is unsupported (Windows), the paths are re-checked
just before the first rename instead.
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
_USE_DIR_FD = {os.open, os.mkdir, os.rmdir, os.unlink, os.rename} <= os.supports_dir_fd
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)


class WriteFailed(Exception):
    """A write that did not happen; the workspace is as it was. The message is for the
    model."""


@dataclass
class _Op:
    path: Path
    data: bytes | None  # None: delete
    folder: _Folder | None = None
    tmp: str | None = None  # temp file name inside the folder
    original: bytes | None = None
    original_mode: int | None = None
    done: bool = False


class _Folder:
    """A verified folder: its descriptor (POSIX) or just its path."""

    def __init__(self, path: Path, fd: int | None) -> None:
        self.path = path
        self.fd = fd

    def at(self, name: str) -> str:
        """How to name ``name`` in this folder for an ``os`` call with ``dir_fd=self.fd``."""
        return name if self.fd is not None else str(self.path / name)

    def close(self) -> None:
        if self.fd is not None:
            with contextlib.suppress(OSError):
                os.close(self.fd)
            self.fd = None


def atomic_write(path: Path, data: bytes, *, workspace: Workspace, tool: str) -> None:
    """Replace (or create) ``path`` with ``data`` atomically."""
    write_files([(path, data)], workspace=workspace, tool=tool)


def write_files(ops: list[tuple[Path, bytes | None]], *, workspace: Workspace, tool: str) -> None:
    """Write (``bytes``) or delete (``None``) each realpath in ``ops``, all or nothing.

    Raises ``WorkspaceError`` if a path is no longer confined, ``WriteFailed`` on an I/O
    error; in both cases the workspace is left as it was."""
    plan = [_Op(path=p, data=d) for p, d in ops]
    folders: dict[Path, _Folder] = {}
    created_dirs: list[tuple[_Folder, str]] = []
    current: Path | None = None  # for the message if an OS call fails
    try:
        for op in plan:
            workspace.recheck(op.path, tool=tool)
        for op in plan:
            current = op.path
            if op.data is not None:
                created_dirs += _make_parents(op.path, workspace, tool, folders)
            op.folder = _folder(op.path.parent, workspace, tool, folders)
            _remember_original(op, workspace, tool)
        for op in plan:
            current = op.path
            if op.data is not None:
                op.tmp = _stage(op, op.data, _new_mode(op.original_mode))
        if not _USE_DIR_FD:  # last look before anything visible changes
            for op in plan:
                workspace.recheck(op.path, tool=tool)
        for op in plan:
            current = op.path
            folder = _need(op.folder)
            if op.tmp is None:  # a delete
                os.unlink(folder.at(op.path.name), dir_fd=folder.fd)
            else:
                _rename(folder, op.tmp, op.path.name)
                op.tmp = None
            op.done = True
        for folder in folders.values():
            _still_there(folder, workspace, tool)
    except (OSError, WorkspaceError) as exc:
        _rollback(plan, created_dirs)
        if isinstance(exc, WorkspaceError):
            raise
        where = workspace.display(current) if current is not None else "the files"
        raise WriteFailed(
            f"{tool}: could not write {where}: {exc.strerror or exc}; nothing was changed"
        ) from exc
    except BaseException:
        _rollback(plan, created_dirs)
        raise
    finally:
        for folder in folders.values():
            if folder.fd is not None:
                with contextlib.suppress(OSError):
                    os.fsync(folder.fd)
            folder.close()


def _need(folder: _Folder | None) -> _Folder:
    if folder is None:  # pragma: no cover - set for every op before use
        raise RuntimeError("write_files: folder not opened")
    return folder


def _folder(path: Path, workspace: Workspace, tool: str, cache: dict[Path, _Folder]) -> _Folder:
    """Open ``path`` from the root, component by component, never following a symlink
    (``Workspace.open_dir``): the descriptor is the folder that was resolved or the
    call fails."""
    if path in cache:
        return cache[path]
    workspace.recheck(path, tool=tool)
    fd = workspace.open_dir(path, tool=tool) if _USE_DIR_FD else None
    cache[path] = _Folder(path, fd)
    return cache[path]


def _still_there(folder: _Folder, workspace: Workspace, tool: str) -> None:
    """After the renames: the folder written through is still the one its path names.
    A folder moved away after it was opened (the descriptor follows the folder, not the
    name) is caught here, and the caller rolls the write back."""
    if folder.fd is None:
        return
    fd = workspace.open_dir(folder.path, tool=tool)
    try:
        now, held = os.fstat(fd), os.fstat(folder.fd)
    finally:
        os.close(fd)
    if (now.st_dev, now.st_ino) != (held.st_dev, held.st_ino):
        raise WorkspaceError(
            f"{tool}: the folder {workspace.display(folder.path)!r} was moved while it was "
            f"being written; the write was undone and nothing was changed. Look at the "
            f"workspace and make the call again"
        )


def _make_parents(
    path: Path, workspace: Workspace, tool: str, folders: dict[Path, _Folder]
) -> list[tuple[_Folder, str]]:
    """Create the missing folders above ``path`` (inside the root), outermost first."""
    missing: list[Path] = []
    folder = path.parent
    while not os.path.lexists(folder):
        missing.append(folder)
        folder = folder.parent
    made: list[tuple[_Folder, str]] = []
    for folder in reversed(missing):
        parent = _folder(folder.parent, workspace, tool, folders)
        os.mkdir(parent.at(folder.name), dir_fd=parent.fd)
        made.append((parent, folder.name))
    return made


def _remember_original(op: _Op, workspace: Workspace, tool: str) -> None:
    folder = _need(op.folder)
    name = folder.at(op.path.name)
    try:
        st = os.stat(name, dir_fd=folder.fd, follow_symlinks=False)
    except FileNotFoundError:
        if op.data is None:
            raise
        return
    if stat.S_ISLNK(st.st_mode):  # swapped in after resolve: never write through it
        raise WorkspaceError(
            f"{tool}: {workspace.display(op.path)!r} is now a symlink (to "
            f"{os.readlink(name, dir_fd=folder.fd)!r}), not the file that was checked and "
            f"approved; nothing was written. Look at the workspace and make the call again"
        )
    if not stat.S_ISREG(st.st_mode):
        raise WorkspaceError(
            f"{tool}: {workspace.display(op.path)!r} is not a regular file (a folder, FIFO, "
            f"device or socket); nothing was written"
        )
    fd = os.open(name, os.O_RDONLY | _NOFOLLOW | getattr(os, "O_NONBLOCK", 0), dir_fd=folder.fd)
    with os.fdopen(fd, "rb") as f:
        op.original_mode = stat.S_IMODE(st.st_mode)
        op.original = f.read()


def _new_mode(mode: int | None) -> int | None:
    """The mode new content gets: the file's own, without set-user-ID and set-group-ID
    (as the kernel drops them when an unprivileged process writes to such a file: new
    content must not run with the owner's rights, least of all root's)."""
    return None if mode is None else mode & ~(stat.S_ISUID | stat.S_ISGID)


def _stage(op: _Op, data: bytes, mode: int | None) -> str:
    folder = _need(op.folder)
    name = f".{op.path.name}.{secrets.token_hex(4)}{_TMP_SUFFIX}"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW
    fd = os.open(folder.at(name), flags, 0o666 if mode is None else 0o600, dir_fd=folder.fd)
    try:
        if mode is not None and hasattr(os, "fchmod"):
            os.fchmod(fd, mode)
        with os.fdopen(fd, "wb", closefd=False) as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
    except BaseException:
        os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(folder.at(name), dir_fd=folder.fd)
        raise
    os.close(fd)
    if mode is not None and not hasattr(os, "fchmod"):  # Windows: only the read-only bit
        os.chmod(folder.at(name), mode)
    return name


def _rename(folder: _Folder, src: str, dst: str) -> None:
    if folder.fd is not None:
        os.rename(src, dst, src_dir_fd=folder.fd, dst_dir_fd=folder.fd)
    else:
        os.replace(folder.at(src), folder.at(dst))


def _rollback(plan: list[_Op], created_dirs: list[tuple[_Folder, str]]) -> None:
    for op in reversed(plan):
        folder = op.folder
        if folder is None:
            continue
        if op.tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(folder.at(op.tmp), dir_fd=folder.fd)
            op.tmp = None
        if not op.done:
            continue
        with contextlib.suppress(OSError):
            if op.original is None:
                os.unlink(folder.at(op.path.name), dir_fd=folder.fd)
            else:
                _rename(folder, _stage(op, op.original, op.original_mode), op.path.name)
    for parent, name in reversed(created_dirs):  # through the parent's descriptor
        with contextlib.suppress(OSError):
            os.rmdir(parent.at(name), dir_fd=parent.fd)
