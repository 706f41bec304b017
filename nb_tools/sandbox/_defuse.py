"""Repositories that a sandboxed call created itself: what in them would run a program
when git next runs on this machine, outside the sandbox, is switched off after the call.

The mounts of :mod:`nb_tools.sandbox._bwrap` keep ``.git/hooks`` and ``.git/config`` of
the repositories that exist when a call starts read-only; a repository the call makes
(``git init``) has nothing to protect it while the call runs. After the call: its
executable hooks lose their execute bits (git skips a hook that is not executable) and a
config that names a program (``core.fsmonitor``, ``core.hooksPath``, a pager, a diff or
filter driver, an alias, an include...) is renamed to ``config.nb_tools-disabled`` (git
reads a missing config as the defaults).

What a call created that the protection table protects (a kernel start-up module, a
``.pth`` file, a shell start-up file, nb_tools' rules, a home's new dot-entry; a mount
cannot guard a name that does not exist yet) is removed after the call:
:func:`remove_new_protected`.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import stat
from dataclasses import dataclass, replace
from pathlib import Path

from nb_tools.sandbox._fsrules import config_includes, home_dot_entries, homes_in, hooks_path
from nb_tools.sandbox._protection import protection_of
from nb_tools.sandbox._scan import scan_all, scan_past

__all__ = ["Protected", "defuse_new_repos", "protected_now", "remove_new_protected"]

# A key that names a program, alone or after a section header on its line, or an include:
# `remote.<name>.uploadpack`/`receivepack` run at a fetch or push of a local remote,
# `protocol.<name>.allow` lets an `ext::` URL run its command, `mergetool.<x>.cmd`.
_RUNS = re.compile(
    r"(?:^|\])\s*(fsmonitor|external|textconv|command|clean|smudge|process|pager|hookspath|"
    r"program|askpass|sshcommand|editor|gitproxy|helper|driver|difffilter|"
    r"alternaterefscommand|worktree|uploadpack|receivepack|allow|cmd)\s*(?:=|[;#]|$)|"
    r"\[\s*(include|alias)",
    re.IGNORECASE | re.MULTILINE,
)
DISABLED = "config.nb_tools-disabled"


@dataclass(frozen=True)
class Protected:
    """What :func:`protected_now` found: the paths with their inode numbers (a folder
    renamed away and made again is new), and the home folders it looked into."""

    paths: frozenset[tuple[str, int]]
    homes: tuple[Path, ...]
    repos: frozenset[tuple[str, int]] = frozenset()
    """Each work tree's repository with its ``.git``'s inode number: one renamed away and
    made again under the same name (``mv sub old && git init sub``) is a new one."""
    unscanned: tuple[Path, ...] = ()
    """The folders the capped scan left unread (bound read-only for the call)."""


def protected_now(
    root: Path, homes: tuple[Path, ...] | None = None, *, before: Protected | None = None
) -> Protected:
    """The paths in ``root`` a call may not create: the protection table's that the scan
    finds (start-up files, rules, credentials), the dot-entries of the home folders in it
    (``homes``: those of an earlier look, so that a folder a call made look like a home
    does not turn its old entries into new ones), the repositories' ``core.hooksPath``
    folders and the files their configs include (a mount cannot guard an included file
    that does not exist yet: one a call made is removed). ``before``: the look before a
    call; the folders the capped scan leaves unread now that it read then (or that are
    new) are read to their end (:func:`~._scan.scan_past`): a call must not hide what it
    made behind more entries than the cap."""
    found = scan_all(root)
    if before is not None:
        old = [str(u).rstrip("/") + "/" for u in before.unscanned]
        unseen = [u for u in found.unscanned if not any((str(u) + "/").startswith(o) for o in old)]
        if unseen:
            past = scan_past(unseen)
            found = replace(
                found,
                writes=(*found.writes, *past.writes),
                secrets=(*found.secrets, *past.secrets),
                protected=(*found.protected, *past.protected),
                repos=(*found.repos, *past.repos),
                bare=(*found.bare, *past.bare),
            )
    homes = homes_in(root) if homes is None else homes
    paths = [*found.writes, *found.secrets, *found.protected]
    paths += [p for h in homes for p in home_dot_entries(h, programs=True)]
    for repo in (*found.repos, *found.bare):
        hooks = hooks_path(repo)
        if hooks is not None and hooks != root and hooks.is_relative_to(root):
            paths.append(hooks)
        paths += [f for f in config_includes(repo) if f.is_relative_to(root)]
    out: set[tuple[str, int]] = set()
    for p in paths:
        with contextlib.suppress(OSError):
            out.add((str(p), os.lstat(p).st_ino))
    repos: set[tuple[str, int]] = set()
    for repo in found.repos:
        with contextlib.suppress(OSError):
            repos.add((str(repo), os.lstat(repo / ".git").st_ino))
    return Protected(
        paths=frozenset(out), homes=homes, repos=frozenset(repos), unscanned=found.unscanned
    )


def remove_new_protected(root: Path, before: Protected, now: Protected | None = None) -> list[str]:
    """Remove what a call created in ``root`` that :func:`protected_now` lists and that was
    not there before: a kernel start-up module or ``.pth`` file at any depth, a shell
    start-up file, nb_tools' rules, a credentials file a tool reads (``Entry.removes_new``),
    a new dot-entry of a home folder. Data a program makes that merely holds a secret
    (``terraform.tfstate``) stays. A link is removed, never followed. Returns the paths."""
    removed: list[str] = []
    if now is None:
        now = protected_now(root, before.homes, before=before)
    for raw, _ in sorted(now.paths - before.paths):
        path = Path(raw)
        entry = protection_of(path.relative_to(root).parts)
        if entry is not None and not entry.removes_new and path.parent not in before.homes:
            continue
        if any(raw.startswith(r.rstrip("/") + "/") for r in removed):
            continue
        if remove_path(raw):
            removed.append(raw)
    known = {raw for raw, _ in before.repos}
    kept = {str(_gitdir(Path(raw))) for raw, _ in before.repos & now.repos}
    for raw, _ in sorted(now.repos - before.repos):
        if raw in known:  # the same name, another repository: made by the call
            removed += _defuse_repo(Path(raw), kept, root)
    return removed


def remove_path(path: str | os.PathLike[str]) -> bool:
    """Remove a file, a link (never followed) or a whole folder; whether it went."""
    try:
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path)
        else:
            os.unlink(path)
    except OSError:
        return False
    return True


def defuse_new_repos(before: tuple[str, ...], after: list[Path], *, root: Path) -> list[str]:
    """For each repository in ``after`` (in the writable ``root``) that is not in
    ``before``: take the execute bits off its hooks and rename a config that runs
    programs. Returns what was changed."""
    changed: list[str] = []
    known = set(before)
    trusted = {os.path.realpath(os.path.join(r, ".git")) for r in before}
    trusted |= {str(_gitdir(Path(r))) for r in before}
    for repo in after:
        if str(repo) not in known:
            changed += _defuse_repo(repo, trusted, root)
    return changed


def _defuse_repo(repo: Path, trusted: set[str], root: Path) -> list[str]:
    dot = repo / ".git"
    if dot.is_symlink():
        return []
    if dot.is_file():  # `gitdir: ../.git/modules/x`: defuse the folder it names
        try:
            line = dot.read_text(errors="replace").strip()
        except OSError:
            return []
        if not line.startswith("gitdir:"):
            return []
        dot = Path(os.path.realpath(repo / line[7:].strip()))
        if not dot.is_relative_to(root) or str(dot) in trusted:
            # Another repository's git folder (outside the root, or one that was there,
            # its hooks and config read-only to the call): not the call's to switch off.
            return []
    return _defuse(dot, trusted) if dot.is_dir() else []


def _gitdir(repo: Path) -> Path:
    """The realpath of the git folder of the repository at ``repo`` (the folder a ``.git``
    file names, not followed further)."""
    dot = repo / ".git"
    with contextlib.suppress(OSError, UnicodeError):
        if dot.is_file():
            line = dot.read_text(errors="replace")[:4096].strip()
            if line.startswith("gitdir:"):
                return Path(os.path.realpath(repo / line[7:].strip()))
    return Path(os.path.realpath(dot))


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
