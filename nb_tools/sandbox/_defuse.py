"""Repositories that a sandboxed call created itself: what in them would run a program
when git next runs on this machine, outside the sandbox, is switched off after the call.

The mounts of :mod:`nb_tools.sandbox._bwrap` keep ``.git/hooks`` and ``.git/config`` of
the repositories that exist when a call starts read-only; a repository the call makes
(``git init``) has nothing to protect it while the call runs. After the call: its
executable hooks lose their execute bits (git skips a hook that is not executable) and a
config that names a program (``core.fsmonitor``, ``core.hooksPath``, a pager, a diff or
filter driver, an alias, an include...) is renamed to ``config.nb_tools-disabled`` (git
reads a missing config as the defaults).
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import stat
from pathlib import Path

from nb_tools.sandbox._hide import WRITE_PROTECTED

__all__ = ["defuse_new_repos", "remove_new_starters", "runs_later"]

# A key that names a program, alone or after a section header on its line, or an include.
_RUNS = re.compile(
    r"(?:^|\])\s*(fsmonitor|external|textconv|command|clean|smudge|process|pager|hookspath|"
    r"program|askpass|sshcommand|editor|gitproxy|helper|driver|difffilter|"
    r"alternaterefscommand|worktree)\s*(?:=|[;#]|$)|\[\s*(include|alias)",
    re.IGNORECASE | re.MULTILINE,
)
DISABLED = "config.nb_tools-disabled"

_STARTERS = frozenset(["ipykernel_launcher", "ipykernel", "sitecustomize", "usercustomize"])
"""Module names Python imports from the folder a kernel starts in (``python -m
ipykernel_launcher`` puts that folder first on ``sys.path``): a file or package of that
name there runs, outside the sandbox, at the next kernel start."""


def runs_later(name: str) -> bool:
    """Whether a new entry ``name`` at the top of a writable root would run code later,
    outside the sandbox: a kernel start-up module (``ipykernel_launcher.py``, ``.pyc``,
    an extension module or a package of that name) or a protected start-up file."""
    return name.split(".", 1)[0] in _STARTERS or name in WRITE_PROTECTED


def remove_new_starters(root: str, before: frozenset[str]) -> list[str]:
    """Remove what a call created at the top of ``root`` that :func:`runs_later`; returns
    the paths removed. A link is removed, never followed."""
    removed: list[str] = []
    try:
        names = os.listdir(root)
    except OSError:
        return removed
    for name in names:
        if name in before or not runs_later(name):
            continue
        path = os.path.join(root, name)
        with contextlib.suppress(OSError):
            if os.path.isdir(path) and not os.path.islink(path):
                shutil.rmtree(path)
            else:
                os.unlink(path)
            removed.append(path)
    return removed


def defuse_new_repos(before: tuple[str, ...], after: list[Path]) -> list[str]:
    """For each repository in ``after`` that is not in ``before``: take the execute bits off
    its hooks and rename a config that runs programs. Returns what was changed."""
    changed: list[str] = []
    known = set(before)
    trusted = {os.path.realpath(os.path.join(r, ".git")) for r in before}
    for repo in after:
        if str(repo) in known:
            continue
        dot = repo / ".git"
        if dot.is_symlink():
            continue
        if dot.is_file():  # `gitdir: ../.git/modules/x`: defuse the folder it names
            try:
                line = dot.read_text(errors="replace").strip()
            except OSError:
                continue
            if not line.startswith("gitdir:"):
                continue
            dot = Path(os.path.realpath(repo / line[7:].strip()))
        if dot.is_dir():
            changed += _defuse(dot, trusted)
    return changed


def _defuse(dot: Path, trusted: set[str]) -> list[str]:
    changed: list[str] = []
    hooks = dot / "hooks"
    if hooks.is_dir() and not hooks.is_symlink():
        for h in hooks.iterdir():
            with contextlib.suppress(OSError):
                mode = h.lstat().st_mode
                if stat.S_ISREG(mode) and mode & 0o111 and not h.name.endswith(".sample"):
                    os.chmod(h, mode & ~0o111 & 0o7777)
                    changed.append(str(h))
    elif hooks.is_symlink():
        with contextlib.suppress(OSError):
            hooks.unlink()
            changed.append(str(hooks))
    for name in ("config", "config.worktree", "commondir"):
        cfg = dot / name
        with contextlib.suppress(OSError):
            if cfg.is_symlink():
                bad = True
            elif not cfg.is_file():
                bad = False
            elif name == "commondir":  # fine when it names a repository that was there
                target = os.path.realpath(dot / cfg.read_text(errors="replace").strip())
                bad = target not in trusted
            else:
                bad = _RUNS.search(cfg.read_text(errors="replace")) is not None
            if bad:
                os.replace(cfg, dot / (DISABLED if name == "config" else name + ".disabled"))
                changed.append(str(cfg))
    return changed
