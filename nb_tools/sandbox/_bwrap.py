"""The bubblewrap command line for a policy.

The file system view is built in a fixed order (as codex-rs/linux-sandbox does): the
whole system read-only; private, empty folders over ``/tmp``, ``/run``, the home folders
and the Jupyter runtime folder; the system's secret files hidden; the workspace bound back
(read-only, or writable in ``workspace-write``) with the extra writable roots; then, inside
those, the paths that must stay read-only re-bound read-only, and the secrets (``.env*``,
``.ssh``, credentials of a home folder that lies inside) and every Unix socket hidden.
Mounts made later win, which is why the order matters.
"""

from __future__ import annotations

import contextlib
import functools
import glob
import os
import re
import stat
from collections.abc import Hashable
from pathlib import Path
from typing import Any, NamedTuple

from nb_tools.sandbox._creds import R_BIT, sandbox_may
from nb_tools.sandbox._fsrules import (
    config_includes,
    home_dot_entries,
    homes_among,
    homes_in,
    hooks_path,
)
from nb_tools.sandbox._hide import (
    GIT_PROTECTED,
    HOME_SECRETS,
    coarse_masks,
    git_configs_with_credentials,
    home_dirs,
    homes_pinned,
    outside_masks,
    repository_dirs,
    sanitized_git_config,
    system_secret_files,
    toolchain_dirs,
    unix_socket_paths,
)
from nb_tools.sandbox._kept import kept
from nb_tools.sandbox._policy import SandboxPolicy
from nb_tools.sandbox._probe import sandbox_available
from nb_tools.sandbox._runtime_paths import interpreter_dirs, run_time_dirs
from nb_tools.sandbox._scan import ScanResult, scan_all

__all__ = ["BwrapCommand", "bwrap_argv", "bwrap_command"]


class BwrapCommand(NamedTuple):
    """bubblewrap's command line, and the folders it hides from a call without a click
    because the scan has not read them (``unread``: not yet, or past its limits)."""

    argv: list[str]
    unread: tuple[Path, ...]


class _Within:
    """:func:`_under` for many paths against the same ``roots``: the strings made once, one
    set lookup and one ``str.startswith`` of a tuple a path."""

    def __init__(self, roots: list[Path]) -> None:
        self.same = frozenset(map(str, roots))
        self.prefixes = tuple(r.rstrip("/") + "/" for r in self.same)

    def __call__(self, path: Path | str) -> bool:
        s = str(path)
        return s in self.same or s.startswith(self.prefixes)


def _under(path: Path, roots: list[Path]) -> bool:
    """``path`` is one of ``roots`` or inside one (all absolute and normalised: compared as
    strings, component-wise, which is what ``Path.is_relative_to`` does, only faster)."""
    s = str(path)
    for r in roots:
        t = str(r)
        if s.startswith(t) and (len(s) == len(t) or s[len(t)] == "/" or t == "/"):
            return True
    return False


# The kernel-wide settings under the new /proc. bubblewrap covers /proc/sys only when
# access(W_OK) says the folder is writable, which it does not (mode 0555) even where its
# files are: as root (uid 0 maps to the files' owner) `echo x > /proc/sys/kernel/core_pattern`
# then changes the host (a core_pattern of "|prog" runs prog as root outside the sandbox).
_PROC_READ_ONLY = (
    "--ro-bind-try", "/proc/sys", "/proc/sys",
    "--ro-bind-try", "/proc/sysrq-trigger", "/proc/sysrq-trigger",
)  # fmt: skip


READ_ONLY_TMPFS_BYTES = 512 << 20
"""The size of each private tmpfs (``/tmp``, the home folders) of a ``read-only`` call,
where bubblewrap can set it (0.8 and later). A tmpfs lives in memory and by default may
take half of it: a no-click ``sort -S 1M data.csv`` spills a big file there, and the
memory it takes belongs to no process, so the OOM killer picks another (the kernel)."""


def _tmpfs_size() -> list[str]:
    return list(_size_for(sandbox_available().version))


@functools.lru_cache(maxsize=4)
def _size_for(version: str) -> tuple[str, ...]:
    numbers = re.findall(r"\d+", version)
    if len(numbers) >= 2 and (int(numbers[0]), int(numbers[1])) >= (0, 8):
        return ("--size", str(READ_ONLY_TMPFS_BYTES))
    return ()


def bwrap_argv(
    bwrap: str, policy: SandboxPolicy, argv: list[str], *, cwd: str | os.PathLike[str] | None
) -> list[str]:
    """``bwrap ... -- argv`` for ``policy`` (its mode must not be ``off``)."""
    return bwrap_command(bwrap, policy, argv, cwd=cwd).argv


def bwrap_command(
    bwrap: str, policy: SandboxPolicy, argv: list[str], *, cwd: str | os.PathLike[str] | None
) -> BwrapCommand:
    """:func:`bwrap_argv`, with what it hid for being unread."""
    if policy.mode == "off":
        raise ValueError("bwrap_argv: the policy's mode is 'off'; run the command directly")
    with homes_pinned():
        return _command(bwrap, policy, argv, cwd=cwd)


def _command(
    bwrap: str, policy: SandboxPolicy, argv: list[str], *, cwd: str | os.PathLike[str] | None
) -> BwrapCommand:
    workspace = policy.workspace
    roots = [r for r in (workspace, *policy.writable_roots) if r is not None]
    writable = policy.mode == "workspace-write"
    confined = policy.system_only and not writable
    gitdirs: list[Path] = []
    if confined and workspace is not None:  # git reads its repository, read-only
        tops, gitdirs = repository_dirs(workspace)
        roots += [d for d in tops if not _under(d, roots)]
    roots = [r for r in dict.fromkeys(roots) if r.is_dir()]
    gitdirs = [g for g in dict.fromkeys(gitdirs) if not _under(g, roots)]
    out = [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", *_PROC_READ_ONLY]
    masks = coarse_masks() + [p for p in policy.hidden if p.is_dir()]
    if confined:  # only the system and the workspace: a link inside leads nowhere else
        seen = set(masks)
        masks += [m for m in outside_masks() if m not in seen]
    size = [] if writable else _tmpfs_size()
    key = (tuple(masks), tuple(roots), tuple(gitdirs), tuple(size))
    system = _kept_masks.get(key)
    if system is None:
        if len(_kept_masks) > 64:
            _kept_masks.clear()
        system = _kept_masks[key] = _masks(masks, roots, gitdirs, size)
    fragment, applied, late = system
    out += fragment
    in_roots, in_applied = _Within(roots), _Within(applied)
    tools = [t for t in toolchain_dirs(list(applied)) if not in_roots(t)]
    for t in tools:
        out += ["--ro-bind", str(t), str(t)]
    for f in system_secret_files():
        if not in_applied(f) and _shows_secret(f, in_roots(f)):
            out += ["--ro-bind", "/dev/null", str(f)]
    for r in roots:
        out += ["--bind" if writable else "--ro-bind", str(r), str(r)]
    for g in gitdirs:  # git's own folders: not scanned (objects), bound read-only
        out += ["--ro-bind", str(g), str(g)]
    found = {r: scan_all(r, links=confined) for r in roots}
    if writable:
        for r in roots:
            out += _protect(r, found[r])
    hidden = _fine_secrets(roots, policy, found) + _home_secrets_in(tools) + late
    if confined:  # no click: more credentials, a home's dot-entries, what the scan did not read
        extra = [p for f in found.values() for p in (*f.protected, *f.unscanned, *(f.linked or ()))]
        homes = [h for r in roots for h in homes_in(r)]
        homes += [h for f in found.values() for h in homes_among((*f.writes, *f.secrets))]
        extra += [p for h in dict.fromkeys(homes) for p in home_dot_entries(h)]
        hidden += [p for p in extra if _kind(p) > _LINK]
    late_binds: list[str] = []
    masked = {str(p) for p in hidden if _kind(p) == _DIR}
    if confined:  # git reads its config; the credentials in it stay out of sight
        for cfg in git_configs_with_credentials(roots, gitdirs, found):
            if _in_masked(cfg, masked):
                continue  # hidden with its folder
            clean = sanitized_git_config(cfg)
            late_binds += ["--ro-bind", str(clean), str(cfg)] if clean else _hide(cfg)
    for p in dict.fromkeys(hidden):
        if not _in_masked(p, masked):  # hidden with its folder
            out += _hide(p)
    out += late_binds
    # The masked folders (in_applied) hold nothing any more.
    for sock in dict.fromkeys(unix_socket_paths()):
        if in_applied(sock) and not in_roots(sock):
            continue
        if _in_masked(sock, masked):
            continue
        if os.path.lexists(sock) and not os.path.islink(sock):
            out += ["--ro-bind", "/dev/null", sock]
    chdir = os.path.realpath(os.fspath(cwd)) if cwd is not None else str(workspace or "/")
    out += ["--chdir", chdir]
    out += ["--unshare-all"]
    if policy.network:
        out += ["--share-net"]
    out += ["--die-with-parent", "--new-session", "--cap-drop", "ALL", "--"]
    unread = tuple(p for f in found.values() for p in f.unscanned) if confined else ()
    return BwrapCommand(out + list(argv), unread)


_kept_masks: dict[tuple[object, ...], tuple[list[str], list[Path], list[Path]]] = {}
""":func:`_masks` by its arguments (it reads nothing of the machine)."""


def _masks(
    masks: list[Path], roots: list[Path], gitdirs: list[Path], size: list[str]
) -> tuple[list[str], list[Path], list[Path]]:
    """The masks before the roots, a private tmpfs each (one inside another is left out):
    their command line, the folders masked, and the masks strictly inside a root, which go
    on after the root's bind (one that is or holds a root goes on before it: the root
    comes back on top)."""
    in_roots = _Within(roots + gitdirs)
    same = set(roots)
    late = [m for m in masks if m not in same and in_roots(m)]
    early = [m for m in masks if m not in late]
    applied: list[Path] = []
    out: list[str] = []
    for m in sorted(early, key=lambda p: len(p.parts)):
        if not _under(m, applied):
            out += [*size, "--tmpfs", str(m)]
            applied.append(m)
    return out, applied, late


def _shows_secret(f: Path, in_root: bool) -> bool:
    """Whether the system secret file ``f`` needs an empty file over it: it is a regular
    file that holds something and that the sandboxed process could read (by its mode, as
    the sandbox's user with no capability: :func:`~._creds.sandbox_may`), or it lies in a
    root (the call could change its mode). An empty one shows nothing; one the mode
    refuses stays refused (the system is read-only, the mode cannot change inside)."""
    s = str(f)
    try:
        st = os.stat(s)
    except OSError:
        return False
    if not stat.S_ISREG(st.st_mode):
        return False
    return in_root or (st.st_size > 0 and sandbox_may(st, R_BIT, s))


def _in_masked(path: Path | str, masked: set[str]) -> bool:
    """Whether a folder that holds ``path`` (absolute, normalised) is in ``masked`` (as
    strings): what ``any(str(d) in masked for d in path.parents)`` says, without making a
    path object for each parent."""
    s = str(path)
    i = s.rfind("/")
    while i > 0:
        if s[:i] in masked:
            return True
        i = s.rfind("/", 0, i)
    return s != "/" and "/" in masked


def _protect(root: Path, found: ScanResult) -> list[str]:
    """Re-bind read-only what in a writable root runs code later or holds the rules: each
    repository's hooks, config, the files its config includes and ``core.hooksPath``
    folder (bare ones too), the protection
    table's paths the scan found, a home's dot-entries, and the folders the scan did not
    read (what is in them is unknown). Each repository's ``.git`` is first bound onto
    itself, so that it is a mount point: it cannot be renamed away and replaced."""
    out: list[str] = []
    keep: list[Path] = []
    for repo in found.repos:
        dot = repo / ".git"
        if os.path.islink(dot):
            continue
        if dot.is_file():  # a linked worktree's pointer: rewritten, it sends the user's
            out += ["--ro-bind", str(dot), str(dot)]  # next git to a planted config
            # A submodule's own config (in the gitdir it names) may set core.hooksPath.
            keep += [*_hooks_path(root, repo), *config_includes(repo)]
            continue
        out += ["--bind", str(dot), str(dot)]
        if dot.is_dir():
            _mkdir(dot / "hooks")
        keep += [repo / rel for rel in GIT_PROTECTED]
        keep += _hooks_path(root, repo)
        keep += config_includes(repo)  # read as its config: as guarded as the config
    for repo in found.bare:
        _mkdir(repo / "hooks")
        keep += [repo / "hooks", repo / "config", *_hooks_path(root, repo)]
        keep += config_includes(repo)
    _mkdir(root / ".nb_tools")
    keep += [root / ".nb_tools", *found.writes, *found.protected, *found.unscanned]
    # A home's .git is a repository like any other: its hooks and config (above). A home
    # copied deeper (backup/alice, found by its start-up files) too: write_file refuses
    # its dot-entries (the one home_dot_reason), so a shell call gets them read-only.
    homes = [*homes_in(root), *homes_among((*found.writes, *found.secrets))]
    keep += [
        p
        for h in dict.fromkeys(homes)
        for p in home_dot_entries(h, programs=True)
        if p.name != ".git"
    ]
    for prefix in interpreter_dirs():
        # The kernel's own environment (a .venv in the workspace), the user site: what it
        # imports and the programs in its bin/ run later outside the sandbox.
        if prefix.is_relative_to(root) and prefix.is_dir():
            out += ["--ro-bind", str(prefix), str(prefix)]
    for folder in run_time_dirs(root):
        # On the kernel's PATH, or Jupyter's and IPython's: what is there runs later outside
        # the sandbox (a missing one the call makes is removed after it: `remove_planted`).
        if folder.exists():  # a start-up file the environment names too
            out += ["--ro-bind", str(folder), str(folder)]
    for p in dict.fromkeys(keep):
        if _under(p, [root]) and os.path.lexists(p):
            out += ["--ro-bind", str(p), str(p)]
    return out


def _hooks_path(root: Path, repo: Path) -> list[Path]:
    """The repository's ``core.hooksPath`` folder when it is in ``root`` (made if missing, so
    that a mount keeps it read-only)."""
    hooks = hooks_path(repo)
    if hooks is None or not _under(hooks, [root]) or hooks == root:
        return []
    _mkdir(hooks)
    return [hooks]


def _mkdir(p: Path) -> None:
    if not os.path.lexists(p):
        with contextlib.suppress(OSError):
            p.mkdir()


def _fine_secrets(
    roots: list[Path], policy: SandboxPolicy, found: dict[Path, ScanResult]
) -> list[Path]:
    out: list[Path] = []
    homes = home_dirs()
    for r in roots:
        out += found[r].secrets
        in_r, holds_r = _Within([r]), str(r) + "/"
        inside = [h for h in homes if in_r(h) or holds_r.startswith(str(h).rstrip("/") + "/")]
        for home in dict.fromkeys([*inside, *homes_in(r)]):
            out += [p for p in _home_globs(home, HOME_SECRETS) if _under(p, [r])]
    out += [p for p in policy.hidden if _under(p, roots)]
    # A symlink is left alone: what it points to is hidden or visible on its own account.
    return [p for p in out if _kind(p) > _LINK]


def _home_globs(home: Path, patterns: tuple[str, ...]) -> list[Path]:
    """The paths under ``home`` that ``patterns`` match (kept while the folders they list
    are unchanged: a file made, removed or renamed in one changes its times)."""
    raw = str(home).rstrip("/")
    dirs = sorted({os.path.dirname(p) for p in patterns})
    if any(glob.has_magic(d) for d in dirs):
        return list(_globs(raw, patterns))
    listed = tuple(f"{raw}/{d}" if d else raw or "/" for d in dirs)
    return list(kept(_kept_globs, (raw, patterns), listed, lambda: _globs(raw, patterns)))


_kept_globs: dict[Hashable, Any] = {}


def _globs(raw: str, patterns: tuple[str, ...]) -> tuple[Path, ...]:
    base = glob.escape(raw)
    return tuple(Path(p) for pattern in patterns for p in glob.glob(f"{base}/{pattern}"))


def _home_secrets_in(folders: list[Path]) -> list[Path]:
    """Credentials inside the tool folders brought back from a home (``~/.cargo/credentials``)."""
    out: list[Path] = []
    in_folders = _Within(folders)
    for home in home_dirs():
        base = str(home).rstrip("/") + "/"
        tops = {str(f)[len(base) :].split("/", 1)[0] for f in folders if str(f).startswith(base)}
        tops.discard("")
        if not tops:
            continue
        patterns = _secrets_under(frozenset(tops))
        out += [p for p in _home_globs(home, patterns) if in_folders(p)]
    return [p for p in out if _kind(p) > _LINK]


@functools.lru_cache(maxsize=32)
def _secrets_under(tops: frozenset[str]) -> tuple[str, ...]:
    """The patterns of :data:`HOME_SECRETS` under the home's entries ``tops``."""
    return tuple(s for s in HOME_SECRETS if s.split("/")[0] in tops)


def _hide(p: Path) -> list[str]:
    if _kind(p) == _DIR:
        return ["--tmpfs", str(p), "--remount-ro", str(p)]
    return ["--ro-bind", "/dev/null", str(p)]


_MISSING, _LINK, _DIR, _OTHER = range(4)


def _kind(p: Path | str) -> int:
    """What ``p`` is, by one ``lstat``: missing, a symbolic link, a folder (not a link to
    one), anything else."""
    try:
        mode = os.lstat(p).st_mode
    except (OSError, ValueError):
        return _MISSING
    if stat.S_ISLNK(mode):
        return _LINK
    return _DIR if stat.S_ISDIR(mode) else _OTHER
