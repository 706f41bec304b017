"""Confinement of the built-in tools to one workspace root.

API (other built-in modules import this; keep it stable)::

    ws = Workspace(root)              # root must be an existing directory; ws.root is its realpath
    ws.resolve(path, *, for_write=False, tool=None) -> Path
        # path: relative to the root, or absolute. Returns the realpath of the target (for a
        # target that does not exist yet: the realpath of its nearest existing parent plus the
        # rest). Raises WorkspaceError (a ValueError) when the path is empty, holds a NUL
        # byte, a control character (line breaks too), U+2028/9 or a bidi control, starts
        # with "~" ("~", "~/x", "~user/x"), is a UNC path ("\\\\server\\share",
        # "//server/share"), or resolves outside the root (a symlink inside the root that
        # points outside is outside). for_write=True also refuses the root itself and
        # existing directories. With tool="read_file" the message starts "read_file: ...".
    ws.recheck(path, *, tool=None) -> None
        # Just before a write: `path` (a result of resolve) still resolves to itself and is
        # inside the root, i.e. no symlink was swapped in since. Raises WorkspaceError.
    ws.open_dir(path, *, tool=None) -> int
        # A descriptor of the folder `path` (a realpath inside the root), opened from the
        # root one component at a time with O_NOFOLLOW: the folder that was resolved, or
        # WorkspaceError naming the component that became a symlink. Writers use it.
    ws.open_file(path, *, tool=None) -> int / ws.opener(tool, *, write=False)
        # The same walk for reads; refuses a final symlink, FIFOs, devices and sockets
        # (by lstat, before opening) and never blocks. opener() for a read also refuses a
        # protected path no person clicked for (ws.refuse_unapproved_read(path, tool)).
    ws.display(path) -> str           # path relative to the root ("." for the root itself)
    ws.is_protected(path) -> bool     # the protection table (nb_tools.sandbox.TABLE: .git/,
    ws.protected_reason(path)         # .nb_tools/, start-up files, credentials, secret stores),
                                      # a home's dot-entries, core.hooksPath, a bare repo's
                                      # hooks and config; as written or resolved. Both take
                                      # write=True: the kernel's sys.prefix and user site in
                                      # the workspace count for writes only
    WorkspaceError(ValueError)

Containment is decided by ``Path.is_relative_to`` on realpaths, never by string prefixes.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Callable
from pathlib import Path, PurePosixPath

from nb_tools.sandbox import TABLE, hard_linked, path_rule_reason, prefix_reason, write_protected
from nb_tools.tool._grant import current_grant

__all__ = ["PROTECTED_NAMES", "USE_DIR_FD", "Workspace", "WorkspaceError"]

PROTECTED_NAMES = frozenset(e.pattern for e in TABLE)

USE_DIR_FD = {os.open, os.stat} <= os.supports_dir_fd
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)


class WorkspaceError(ValueError):
    """A path the built-in tools refuse (outside the root, malformed, ...)."""


class Workspace:
    """The folder the built-in tools may touch; every path goes through ``resolve``."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        real = Path(os.path.realpath(os.fspath(root)))
        if not real.is_dir():
            raise WorkspaceError(f"workspace root {os.fspath(root)!r} is not a directory")
        self.root: Path = real
        st = os.stat(real)
        self._root_id = (st.st_dev, st.st_ino)

    def __repr__(self) -> str:
        return f"Workspace({str(self.root)!r})"

    def resolve(
        self, path: str | os.PathLike[str], *, for_write: bool = False, tool: str | None = None
    ) -> Path:
        """The realpath of ``path`` (relative to the root or absolute), refused unless it is
        inside the root."""
        prefix = f"{tool}: " if tool else ""
        raw = os.fspath(path)
        if not isinstance(raw, str):
            raise WorkspaceError(f"{prefix}path must be text, got bytes")
        if raw.strip() == "":
            raise WorkspaceError(f"{prefix}the path is empty; give a file path inside {self.root}")
        if "\x00" in raw:
            raise WorkspaceError(f"{prefix}the path {raw!r} contains a NUL byte; remove it")
        odd = _odd_char(raw)
        if odd is not None:
            raise WorkspaceError(
                f"{prefix}the path {raw!r} contains {odd}; paths may not hold line breaks, "
                f"control or text-direction characters (on a card they could forge diff lines "
                f"or reorder the name). Use a plain name"
            )
        if raw.startswith("~"):
            raise WorkspaceError(
                f"{prefix}{raw!r}: '~' is not expanded; use a path relative to the workspace "
                f"{self.root} or an absolute path inside it"
            )
        if raw.startswith(("\\\\", "//")):
            raise WorkspaceError(
                f"{prefix}{raw!r} is a network (UNC) path; use a path inside the workspace "
                f"{self.root}"
            )
        joined = os.path.join(self.root, raw)  # an absolute `raw` replaces the root
        # realpath (non-strict) follows every existing symlink, dangling ones included, and
        # appends the components that do not exist yet: the nearest existing parent rule.
        real = Path(os.path.realpath(joined))
        if not real.is_relative_to(self.root):
            raise WorkspaceError(
                f"{prefix}{raw!r} is outside the workspace {self.root}; use a path inside it"
            )
        if for_write:
            if real == self.root:
                raise WorkspaceError(f"{prefix}{raw!r} is the workspace root, not a file")
            if real.is_dir():
                raise WorkspaceError(f"{prefix}{raw!r} is a directory; give a file path")
        return real

    def recheck(self, path: Path, *, tool: str | None = None) -> None:
        """Refuse a write to ``path`` if a symlink appeared on it since ``resolve``."""
        prefix = f"{tool}: " if tool else ""
        real = Path(os.path.realpath(path))
        if real != path or not real.is_relative_to(self.root):
            where = "outside the workspace" if not real.is_relative_to(self.root) else "to"
            raise WorkspaceError(
                f"{prefix}{self.display(path)!r} changed on disk since the call was planned "
                f"(a symlink now leads {where} {self.display(real)!r}); nothing was written. "
                f"Refusing to write outside the workspace {self.root} or to a path other "
                f"than the approved one; look at the workspace and make the call again"
            )

    def open_dir(self, path: Path, *, tool: str | None = None) -> int:
        """A descriptor of the folder ``path`` (a realpath inside the root), opened one
        component at a time from the root without following any symlink, so what is
        opened is the folder that was resolved, whatever was swapped in since. Raises
        ``WorkspaceError`` naming the component that is no longer a plain folder, and
        ``FileNotFoundError`` if one is missing. POSIX only (see ``USE_DIR_FD``)."""
        prefix = f"{tool}: " if tool else ""
        if not path.is_relative_to(self.root):
            raise WorkspaceError(f"{prefix}{str(path)!r} is outside the workspace {self.root}")
        fd = os.open(self.root, os.O_RDONLY | _DIRECTORY | _CLOEXEC)
        try:
            st = os.fstat(fd)
            if (st.st_dev, st.st_ino) != self._root_id:
                raise WorkspaceError(
                    f"{prefix}the workspace root {self.root} was replaced since the tools "
                    f"were made; nothing was written. Make the tools again"
                )
            walked = self.root
            for part in path.relative_to(self.root).parts:
                walked = walked / part
                try:
                    nxt = os.open(part, os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _CLOEXEC, dir_fd=fd)
                except OSError as exc:
                    if _is_link(part, fd):
                        raise self._swapped(walked, path, prefix) from exc
                    raise
                os.close(fd)
                fd = nxt
        except BaseException:
            os.close(fd)
            raise
        return fd

    def open_file(self, path: Path, *, tool: str | None = None) -> int:
        """A read descriptor of the regular file ``path`` (a realpath inside the root),
        walked to like ``open_dir`` and opened without following a symlink or blocking
        on a FIFO. Non-regular files are left to the caller's ``fstat`` check."""
        prefix = f"{tool}: " if tool else ""
        if not USE_DIR_FD:
            self.recheck(path, tool=tool)
            return os.open(path, os.O_RDONLY | _CLOEXEC)
        parent = self.open_dir(path.parent, tool=tool)
        try:
            st = os.stat(path.name, dir_fd=parent, follow_symlinks=False)
            if stat.S_ISDIR(st.st_mode):
                raise IsADirectoryError(21, "Is a directory", str(path))
            if stat.S_ISLNK(st.st_mode):
                raise self._swapped(path, path, prefix)
            if not stat.S_ISREG(st.st_mode):
                raise WorkspaceError(
                    f"{prefix}{self.display(path)} is {_kind(st.st_mode)}; only regular files "
                    f"can be read"
                )
            try:
                return os.open(
                    path.name,
                    os.O_RDONLY | _NOFOLLOW | _NONBLOCK | _CLOEXEC,
                    dir_fd=parent,
                )
            except OSError as exc:
                if isinstance(exc, FileNotFoundError | IsADirectoryError | PermissionError):
                    raise
                raise self._swapped(path, path, prefix) from exc
        finally:
            os.close(parent)

    def opener(self, tool: str | None = None, *, write: bool = False) -> Callable[[Path], int]:
        """``open_file`` for ``load_text``: reads go through the same race-free walk. A
        read (not ``write``: a writer reading the file it replaces, which its own
        protection check guards) first refuses a protected path no person clicked for
        (:meth:`refuse_unapproved_read`): every tool that reads a file through it gets
        that by construction."""
        if write:
            return lambda path: self.open_file(path, tool=tool)

        def read(path: Path) -> int:
            self.refuse_unapproved_read(path, tool or "read")
            return self.open_file(path, tool=tool)

        return read

    def refuse_unapproved_read(self, path: Path, tool: str) -> None:
        """Refuse to read ``path`` (resolved as the call runs) when it is protected and no
        person said yes to the call. The decision judged the path as it was then; a link
        swapped in since (``a.txt`` now leads to ``.env``) would otherwise be read without
        the click the protection table asks for. No grant (a direct call, outside the
        tool loop) is the caller's own read."""
        grant = current_grant()
        if grant is None or (grant.approved and grant.kind == "person"):
            return
        if not grant.approved and hard_linked(path):
            raise WorkspaceError(
                f"{tool}: {self.display(path)} has more than one hard link (another name of "
                "it may be a file outside the workspace), so reading it needs the user's "
                "approval; it was not approved, so nothing was read"
            )
        reason = self.protected_reason(path, write=False)
        if reason is not None:
            raise WorkspaceError(
                f"{tool}: {self.display(path)} is protected ({reason}); the call was "
                "decided without a click on a path that resolves there now (a link swapped "
                "in since), so nothing was read. Reading it needs the user's approval"
            )

    def _swapped(self, component: Path, target: Path, prefix: str) -> WorkspaceError:
        try:
            now = f"a symlink to {os.readlink(component)!r}"
        except OSError:
            now = "not a plain folder"
        return WorkspaceError(
            f"{prefix}{self.display(component)!r} is now {now}, so "
            f"{self.display(target)!r} no longer resolves to the path that was checked "
            f"(and approved); nothing was read or written. Look at the workspace (a symlink was "
            f"swapped in) and make the call again"
        )

    def display(self, path: str | os.PathLike[str]) -> str:
        """``path`` relative to the root, with forward slashes, for messages."""
        p = Path(os.fspath(path))
        if not p.is_absolute():
            p = self.root / p
        try:
            rel = p.relative_to(self.root)
        except ValueError:
            return str(p)
        text = rel.as_posix()
        return text if text else "."

    def is_protected(self, path: str | os.PathLike[str], *, write: bool = True) -> bool:
        """Whether ``path`` is protected as written or as resolved (see ``protected_reason``)."""
        return self.protected_reason(path, write=write) is not None

    def protected_reason(self, path: str | os.PathLike[str], *, write: bool = True) -> str | None:
        """Why ``path`` is protected (the protection table: ``.git/``, ``.nb_tools/``,
        start-up files, ``.env*``, credentials, secret stores; a dot-entry of a home folder
        in the workspace; a repository's ``core.hooksPath``; a bare repository's hooks and
        config; for a write (``write``), the kernel's own Python folders when they lie in
        the workspace: ``sys.prefix``, the user site), judged on the lexical path (``..``
        folded) and on the resolved one (symlinks followed, dangling ones included), or
        ``None``. Reading a library's source in the kernel's ``.venv`` asks nothing."""
        raw = os.fspath(path)
        if not isinstance(raw, str) or "\x00" in raw:
            return None
        joined = os.path.normpath(os.path.join(self.root, raw))
        candidates = [PurePosixPath(Path(joined).as_posix()).parts]
        real: Path | None = None
        with contextlib.suppress(OSError, ValueError):
            real = Path(os.path.realpath(joined))
            candidates.append(real.parts)
        candidates.append(PurePosixPath(raw.replace("\\", "/")).parts)
        for parts in candidates:
            reason = write_protected(parts)
            if reason is not None:
                return reason
        for p in dict.fromkeys(x for x in (Path(joined), real) if x is not None):
            if p.is_relative_to(self.root) and p != self.root:
                reason = path_rule_reason(self.root, p)
                if reason is None and write:
                    reason = prefix_reason(self.root, p)
                if reason is not None:
                    return reason
        return None


_BIDI = frozenset([0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A)])


def _odd_char(raw: str) -> str | None:
    """The first character of ``raw`` a path may not hold, described: control characters
    (line breaks, tab, ESC, DEL, C1), Unicode line and paragraph separators, and bidi
    controls. ``None`` when there is none."""
    import unicodedata

    for c in raw:
        if c.isprintable() and ord(c) not in _BIDI:
            continue
        category = unicodedata.category(c)
        if category in ("Cc", "Zl", "Zp") or ord(c) in _BIDI:
            name = unicodedata.name(c, "a control character")
            return f"U+{ord(c):04X} ({name})"
    return None


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def _is_link(name: str, dir_fd: int) -> bool:
    try:
        return stat.S_ISLNK(os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode)
    except OSError:
        return False
