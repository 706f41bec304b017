"""Confinement of the built-in tools to one workspace root.

API (other built-in modules import this; keep it stable)::

    ws = Workspace(root)              # root must be an existing directory; ws.root is its realpath
    ws.resolve(path, *, for_write=False, tool=None) -> Path
        # path: relative to the root, or absolute. Returns the realpath of the target (for a
        # target that does not exist yet: the realpath of its nearest existing parent plus the
        # rest). Raises WorkspaceError (a ValueError) when the path is empty, holds a NUL
        # byte, starts with "~" ("~", "~/x", "~user/x"), is a UNC path ("\\\\server\\share",
        # "//server/share"), or resolves outside the root (a symlink inside the root that
        # points outside is outside). for_write=True also refuses the root itself and
        # existing directories. With tool="read_file" the message starts "read_file: ...".
    ws.recheck(path, *, tool=None) -> None
        # Just before a write: `path` (a result of resolve) still resolves to itself and is
        # inside the root, i.e. no symlink was swapped in since. Raises WorkspaceError.
    ws.display(path) -> str           # path relative to the root ("." for the root itself)
    ws.is_protected(path) -> bool     # .git/ anywhere, .env*, shell rc files, .ssh/
    WorkspaceError(ValueError)

Containment is decided by ``Path.is_relative_to`` on realpaths, never by string prefixes.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path, PurePosixPath

__all__ = ["PROTECTED_NAMES", "Workspace", "WorkspaceError"]

# Shell start-up files: writing one runs code in the user's next shell.
_RC_FILES = frozenset(
    {
        ".bashrc",
        ".bash_profile",
        ".bash_login",
        ".bash_logout",
        ".profile",
        ".zshrc",
        ".zshenv",
        ".zprofile",
        ".zlogin",
        ".zlogout",
        ".cshrc",
        ".tcshrc",
        ".kshrc",
        ".login",
        ".logout",
    }
)
_PROTECTED_DIRS = frozenset({".git", ".ssh"})
PROTECTED_NAMES = _RC_FILES | _PROTECTED_DIRS | {".env*"}


class WorkspaceError(ValueError):
    """A path the built-in tools refuse (outside the root, malformed, ...)."""


class Workspace:
    """The folder the built-in tools may touch; every path goes through ``resolve``."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        real = Path(os.path.realpath(os.fspath(root)))
        if not real.is_dir():
            raise WorkspaceError(f"workspace root {os.fspath(root)!r} is not a directory")
        self.root: Path = real

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
            raise WorkspaceError(
                f"{prefix}{self.display(path)!r} changed on disk (a symlink now leads to "
                f"{str(real)!r}); refusing to write outside the workspace {self.root}"
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

    def is_protected(self, path: str | os.PathLike[str]) -> bool:
        """Whether ``path`` (as given or as resolved) is a secret or start-up file:
        ``.git/`` anywhere, ``.env*``, shell rc files, ``.ssh/``."""
        candidates = [os.fspath(path)]
        with contextlib.suppress(WorkspaceError):
            candidates.append(os.fspath(self.resolve(path)))
        for cand in candidates:
            p = Path(cand)
            if p.is_absolute():
                try:
                    p = p.relative_to(self.root)
                except ValueError:
                    p = Path(*p.parts[1:])
            if _protected_parts(PurePosixPath(p.as_posix()).parts):
                return True
        return False


def _protected_parts(parts: tuple[str, ...]) -> bool:
    if any(part in _PROTECTED_DIRS for part in parts):
        return True
    if not parts:
        return False
    name = parts[-1]
    return name.startswith(".env") or name in _RC_FILES
