"""What a sandboxed process must not see or change, found on this machine.

The lists of names come from the one protection table (:mod:`._protection`); here they
are looked up (the scan of a root, the system's files, the home and tool folders) and
:mod:`nb_tools.sandbox._bwrap` turns what is found into mounts: hidden (an empty
read-only stand-in mounted over it) or re-bound read-only.
"""

from __future__ import annotations

import contextlib
import functools
import glob
import os
import re
import stat
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from nb_tools.sandbox._probe import sandbox_available
from nb_tools.sandbox._protection import ALL, SECRETS, TABLE, fold_name
from nb_tools.sandbox._watch import Watcher, watchable, watcher

__all__ = [
    "HOME_SECRETS",
    "LINKING_MANAGERS",
    "SECRET_NAMES",
    "SYSTEM_SECRET_FILES",
    "SYSTEM_TOP",
    "ScanResult",
    "coarse_masks",
    "git_configs_with_credentials",
    "hard_linked",
    "home_dirs",
    "outside_masks",
    "repository_dirs",
    "sanitized_git_config",
    "scan",
    "scan_all",
    "secret_files_in",
    "system_secret_files",
    "toolchain_dirs",
    "unapproved_problem",
    "unix_sockets",
    "warm_up",
    "writable_problem",
]


def _system_globs() -> tuple[str, ...]:
    return tuple("/" + e.pattern for e in TABLE if e.where == "system")


HOME_SECRETS = tuple(e.pattern for e in TABLE if e.secret and e.where == "home folder")
"""Credentials under a home folder (globs relative to it, from the protection table):
hidden when a home folder is visible (it is inside the workspace), approved calls too; the
home folders themselves are always replaced by empty ones."""

SYSTEM_SECRET_FILES = _system_globs()
"""The table's system files (globs; a folder stands for the files in it): hidden from
every call."""

SECRET_NAMES = frozenset(e.parts[0] for e in TABLE if e.secret)
"""The first names of the table's secrets: a tool folder of a home with such a name does
not come back whole (its entries come back alone)."""

GIT_PROTECTED = (
    ".git/hooks",
    ".git/config",
    ".git/config.worktree",
    ".git/commondir",
    ".git/modules",
    ".git/worktrees",
    ".git/info/attributes",
)
"""In every repository of a writable root (``.git`` itself becomes a mount point, so it
cannot be renamed away and replaced)."""

SYSTEM_TOP = frozenset(
    ["usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32", "etc", "dev", "proc", "sys",
     "nix", "gnu", "snap"]
)  # fmt: skip
"""The top-level folders a ``system_only`` sandbox shows (``/tmp``, ``/run`` and the homes
are masked in every mode)."""


def outside_masks() -> list[Path]:
    """Every top-level folder but :data:`SYSTEM_TOP` (``/srv``, ``/opt``, ``/var``, ``/mnt``,
    ``/media``, other project trees...): what a ``system_only`` sandbox masks."""
    out: list[Path] = []
    try:
        with os.scandir("/") as it:
            for entry in it:
                try:
                    is_dir = entry.is_dir(follow_symlinks=False)
                except OSError:
                    continue
                if is_dir and entry.name not in SYSTEM_TOP:
                    out.append(Path("/") / entry.name)
    except OSError:
        pass
    return sorted(out)


def repository_dirs(workspace: Path) -> tuple[list[Path], list[Path]]:
    """What git needs outside ``workspace`` to read its repository: (work tree folders, git
    folders). The work tree's top when the workspace is a folder inside it (unless that top
    is ``/`` or holds or is a home folder); the git folder and common folder of a linked
    worktree."""
    tops: list[Path] = []
    gitdirs: list[Path] = []
    for d in (workspace, *workspace.parents):
        dot = d / ".git"
        if dot.is_dir() or dot.is_file():
            homes = home_dirs()
            if d not in (workspace, Path("/")) and not any(
                h == d or h.is_relative_to(d) for h in homes
            ):
                tops.append(d)
        if dot.is_dir():
            break
        if dot.is_file():
            try:
                line = dot.read_text(errors="replace").strip()
            except OSError:
                break
            if line.startswith("gitdir:"):
                gitdir = Path(os.path.realpath(d / line[7:].strip()))
                gitdirs.append(gitdir)
                try:
                    common = (gitdir / "commondir").read_text().strip()
                    gitdirs.append(Path(os.path.realpath(gitdir / common)))
                except OSError:
                    pass
            break
    return [p for p in tops if p.is_dir()], [p for p in gitdirs if p.is_dir() and p != Path("/")]


_SKIP_DIRS = frozenset(
    {
        ".git",
        "node_modules",
        "__pycache__",
        ".venv",
        "venv",
        ".tox",
        ".nox",
        ".mypy_cache",
        ".ruff_cache",
        ".pytest_cache",
        "site-packages",
    }
)
MAX_SCAN_DEPTH = 32
MAX_SCAN_ENTRIES = 50_000


def home_dirs() -> list[Path]:
    """Every home folder to replace by an empty one: ``/root``, ``/home``, ``$HOME`` and the
    user's home from the password database."""
    out = [Path("/root"), Path("/home")]
    for raw in (os.environ.get("HOME"), _pw_home()):
        if raw and os.path.isabs(raw):
            out.append(Path(os.path.realpath(raw)))
    return _dedupe(out)


def coarse_masks() -> list[Path]:
    """Folders replaced by an empty, private tmpfs: ``/tmp``, ``/run`` (the Unix sockets of
    dbus, docker, systemd), ``$XDG_RUNTIME_DIR``, the Jupyter runtime folder (the kernels'
    connection files) and the home folders."""
    out = [Path("/tmp"), Path("/run"), Path("/var/tmp")]  # /dev (and /dev/shm) is new
    xdg = os.environ.get("XDG_RUNTIME_DIR")
    if xdg and os.path.isabs(xdg):
        out.append(Path(os.path.realpath(xdg)))
    out.append(jupyter_runtime_dir())
    out += home_dirs()
    return [p for p in _dedupe(out) if p != Path("/") and p.is_dir()]


def jupyter_runtime_dir() -> Path:
    """Where Jupyter keeps the kernels' connection files (their keys run code in a kernel)."""
    try:
        from jupyter_core.paths import jupyter_runtime_dir as find
    except ImportError:  # pragma: no cover - jupyter_core comes with ipykernel
        raw = os.environ.get("JUPYTER_RUNTIME_DIR") or os.path.expanduser(
            "~/.local/share/jupyter/runtime"
        )
    else:
        raw = find()
    return Path(os.path.realpath(raw))


_tool_cache: dict[tuple[str, ...], list[Path]] = {}


def toolchain_dirs(masked: list[Path]) -> list[Path]:
    """:func:`_toolchain_dirs`, cached by the environment it reads and ``masked``."""
    key = (
        os.environ.get("PATH", ""),
        os.environ.get("HOME", ""),
        os.environ.get("VIRTUAL_ENV", ""),
        os.environ.get("CONDA_PREFIX", ""),
        *map(str, masked),
    )
    found = _tool_cache.get(key)
    if found is None:
        found = _tool_cache[key] = _toolchain_dirs(masked)
    return list(found)


def _toolchain_dirs(masked: list[Path]) -> list[Path]:
    """Folders under the masked ones that programs need: the ``PATH`` entries, the Python
    that runs this kernel, ``$VIRTUAL_ENV`` and ``$CONDA_PREFIX`` (``~/.pyenv``,
    ``~/.cargo``...). Under a home folder the whole tool folder (``~/.pyenv``) comes back,
    read-only, except ``.local``, ``.config`` and secret names, whose entries come back alone."""
    import sys

    wanted = [p for p in os.environ.get("PATH", "").split(os.pathsep) if os.path.isabs(p)]
    wanted += [sys.prefix, sys.base_prefix, sys.exec_prefix]
    wanted += [v for k in ("VIRTUAL_ENV", "CONDA_PREFIX") if (v := os.environ.get(k))]
    homes = home_dirs()
    out: list[Path] = []
    for raw in wanted:
        p = Path(os.path.realpath(raw))
        if not p.is_dir() or not any(p.is_relative_to(m) and p != m for m in masked):
            continue
        home = next((h for h in homes if p.is_relative_to(h) and p != h), None)
        if home is not None:
            top = home / p.relative_to(home).parts[0]
            if top.name not in (".local", ".config", ".cache") and not _secret_top(top.name):
                p = top
        out.append(p)
    return [p for p in _dedupe(out) if not any(p != q and p.is_relative_to(q) for q in out)]


def _secret_top(name: str) -> bool:
    return name in SECRET_NAMES or any(s.split("/")[0] == name for s in HOME_SECRETS)


def system_secret_files() -> list[Path]:
    """The existing files of :data:`SYSTEM_SECRET_FILES`, a folder's files included
    (looked up once per process: new host keys appear with a reinstall, not between two
    shell calls)."""
    if not _system_cache:
        out: list[Path] = []
        for pattern in SYSTEM_SECRET_FILES:
            for p in sorted(glob.glob(pattern)):
                if os.path.isfile(p):
                    out.append(Path(p))
                elif os.path.isdir(p) and not os.path.islink(p):
                    for top, _, files in os.walk(p):
                        out += [Path(top) / f for f in sorted(files)]
        _system_cache.append(out)
    return list(_system_cache[0])


_system_cache: list[list[Path]] = []


def secret_files_in(root: Path) -> list[Path]:
    """The protection table's secrets under ``root`` (see :func:`scan`)."""
    return scan(root)[0]


@dataclass(frozen=True)
class ScanResult:
    """What :func:`scan` found under a root.

    ``secrets``: the protection table's secrets (hidden in every mode); ``protected``: its
    secrets a build reads (``Entry.build``: hidden from unapproved calls); ``repos``:
    folders holding a ``.git``; ``unscanned``: folders the scan did not read (past
    :data:`MAX_SCAN_ENTRIES` or :data:`MAX_SCAN_DEPTH`): an unapproved call must not see
    them, since a secret there is unknown, and a writable one gets them read-only;
    ``writes``: the table's other paths (start-up files, rules: read-only in
    ``workspace-write``, and removed when a call created them); ``bare``: bare
    repositories (whose ``hooks/`` and ``config`` stay read-only); ``linked``: regular
    files with more than one hard link outside the folders of package managers that link
    on purpose (:data:`LINKING_MANAGERS`): the other name may be a secret outside the
    workspace, so an unapproved call must not see them either."""

    secrets: tuple[Path, ...]
    protected: tuple[Path, ...]
    repos: tuple[Path, ...]
    unscanned: tuple[Path, ...]
    writes: tuple[Path, ...] = ()
    bare: tuple[Path, ...] = ()
    linked: tuple[Path, ...] = ()


LINKING_MANAGERS = frozenset({"node_modules", ".venv", "venv", "site-packages", "pkgs"})
"""Folders whose package managers hard-link files on purpose (npm/pnpm, uv and pip
caches, conda's ``pkgs``; a conda environment, a folder holding ``conda-meta``, too):
a file with several links there is expected, and is not hidden for it."""


def hard_linked(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is a regular file with more than one hard link, outside the
    folders of :data:`LINKING_MANAGERS` and conda environments: another name of it may
    be a secret outside the workspace (what a no-click read must not show)."""
    try:
        st = os.stat(path, follow_symlinks=False)
    except (OSError, ValueError):
        return False
    if not stat.S_ISREG(st.st_mode) or st.st_nlink <= 1:
        return False
    parents = Path(os.path.abspath(path)).parents
    if any(p.name in LINKING_MANAGERS for p in parents):
        return False
    return not any(os.path.isdir(p / "conda-meta") for p in parents)


_Todo = tuple[str, int, str, bool]  # folder, depth, the package folder it is in, links expected


@dataclass
class _Folder:
    """What the scan read in one folder."""

    todo: _Todo
    mtime: int
    entries: int
    secrets: list[Path]
    protected: list[Path]
    linked: list[Path]
    repo: bool
    subdirs: list[_Todo]
    wd: int | None = None
    writes: list[Path] = field(default_factory=list)  # the table's paths that are no secret
    bare: bool = False  # a bare repository


@dataclass
class _Cached:
    result: ScanResult
    folders: dict[str, _Folder]
    """Every folder read, in the order read, with its modification time (checked by
    ``stat`` only where inotify cannot watch: ``wds`` is ``None``)."""
    unscanned: list[str]
    wds: dict[int, str] | None
    """inotify wd -> folder, for every folder read; ``None``: not watched."""


_scan_cache: dict[str, _Cached] = {}
_watched: dict[int, set[str]] = {}  # inotify wd -> the roots whose scan read that folder
_pending: dict[str, set[int]] = {}  # root -> the wds of its folders that changed
_stale: set[str] = set()
_scan_lock = threading.RLock()


def _after_fork() -> None:
    """A forked child has a new inotify instance (see ``_watch``): the scans kept with
    the parent's watches would never hear of a change there."""
    global _scan_lock
    _scan_lock = threading.RLock()
    _scan_cache.clear()
    _watched.clear()
    _pending.clear()
    _stale.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork)


def scan(root: Path) -> tuple[list[Path], list[Path]]:
    """The secrets under ``root`` (the protection table's) and the folders that
    hold a ``.git`` (the repositories whose hooks and config must stay read-only); see
    :func:`scan_all`."""
    found = scan_all(root)
    return list(found.secrets), list(found.repos)


def scan_all(root: Path) -> ScanResult:
    """Every folder under ``root`` (not into ``.git``; package folders such as
    ``node_modules`` last), at most :data:`MAX_SCAN_DEPTH` levels and
    :data:`MAX_SCAN_ENTRIES` entries; repositories are not looked for in package folders.

    The answer is kept and reused while no folder it read changed. Freshness costs no
    look at the folders: each is watched with inotify (:mod:`._watch`) from just before
    it is read, so any change since (a name created, deleted or renamed, a link count
    changed), whoever made it (the user's code in the kernel, another process, an
    approved sandboxed call), is an event in a queue that this call drains in
    microseconds; only the folders that changed are read again (and the folders new in
    them), or the whole tree when events were lost or the scan had reached its limits.
    A counter bumped after each writable call would miss the changes made outside the
    sandbox; stat-ing every folder (the fallback, where inotify cannot watch: a network
    or FUSE file system, no watches left) costs about 3 us a folder, each call, and reads
    the whole tree again on a change. A kept answer never hides less than a new one."""
    key = str(root)
    with _scan_lock:
        w = watcher()
        if w is not None:
            changed = w.changed()
            if changed is None:
                _stale.update(_scan_cache)
            else:
                for wd in changed:
                    for r in _watched.get(wd, ()):
                        _pending.setdefault(r, set()).add(wd)
        cached = _scan_cache.get(key)
        if cached is not None and key not in _stale:
            if cached.wds is not None:
                todo = _pending.pop(key, None)
                if not todo or _update(key, cached, todo, w):
                    return cached.result
            else:
                try:
                    if all(os.stat(d).st_mtime_ns == f.mtime for d, f in cached.folders.items()):
                        return cached.result
                except OSError:
                    pass
        new = _rescan(key, w)
        if len(_scan_cache) > 64:
            _forget_all(w)
        _scan_cache[key] = new
        return new.result


def _forget_all(w: Watcher | None) -> None:
    """Drop every kept scan and its watches (too many roots kept)."""
    if w is not None:
        for wd in _watched:
            w.remove(wd)
    _watched.clear()
    _pending.clear()
    _scan_cache.clear()
    _stale.clear()


def warm_up(root: str | os.PathLike[str]) -> None:
    """Scan ``root`` (and probe the sandbox) on a background thread, so that the first
    call finds both done: made when a shell tool is made, long before the model's first
    reply asks for a call. A call that comes sooner waits for it (the scan's lock)."""

    def work() -> None:
        with contextlib.suppress(Exception):
            if sandbox_available().ok:
                scan_all(Path(os.path.realpath(root)))

    threading.Thread(target=work, name="nb_tools-scan", daemon=True).start()


class _Unwatchable(Exception):
    """inotify refused a watch (out of watches): check freshness by stat instead."""


def _watcher_for(key: str, w: Watcher | None) -> Callable[[str], int | None]:
    def watch(folder: str) -> int | None:
        if w is None:
            return None
        try:
            wd = w.add(folder)
        except FileNotFoundError:
            return None  # gone since it was listed: the scan will not read it either
        except OSError as exc:
            raise _Unwatchable(str(exc)) from exc
        _watched.setdefault(wd, set()).add(key)
        return wd

    return watch


def _unwatch(key: str, wds: Iterable[int], w: Watcher | None) -> None:
    for wd in wds:
        roots = _watched.get(wd)
        if roots is not None:
            roots.discard(key)
            if not roots:
                del _watched[wd]
                if w is not None:
                    w.remove(wd)


def _rescan(key: str, w: Watcher | None) -> _Cached:
    """Read ``key`` again, watching each folder before it is read; drop the watches of
    the last scan that this one no longer uses."""
    _stale.discard(key)
    _pending.pop(key, None)
    old = _scan_cache.pop(key, None)
    use = w if w is not None and watchable(key) else None
    try:
        folders, unscanned = _scan(key, _watcher_for(key, use))
        wds = {f.wd: d for d, f in folders.items() if f.wd is not None} if use else None
    except _Unwatchable:
        folders, unscanned = _scan(key)
        wds = None
    if old is not None and old.wds is not None:
        _unwatch(key, set(old.wds) - set(wds or ()), w)
    return _Cached(
        result=_result(folders, unscanned), folders=folders, unscanned=unscanned, wds=wds
    )


def _update(key: str, cached: _Cached, changed: set[int], w: Watcher | None) -> bool:
    """Read again the folders of ``changed`` (and the folders new in them, and drop the
    ones gone); ``False`` when the tree must be read whole (its limits are involved)."""
    if cached.unscanned or cached.wds is None:
        return False
    watch = _watcher_for(key, w)
    folders = cached.folders
    try:
        for folder in sorted({cached.wds[wd] for wd in changed if wd in cached.wds}):
            old = folders.get(folder)
            if old is None:
                continue  # gone with a parent read before it
            new = _read(old.todo, watch)
            if new is None:
                if folder == key:
                    return False
                _drop(key, cached, folder, w)
                continue
            folders[folder] = new
            if new.wd is not None:
                cached.wds[new.wd] = folder
            now = {t[0] for t in new.subdirs}
            for gone in {t[0] for t in old.subdirs} - now:
                _drop(key, cached, gone, w)
            had = {t[0] for t in old.subdirs}
            for todo in new.subdirs:
                if todo[0] not in had:
                    more, unscanned = _scan(todo, watch)
                    if unscanned:
                        return False
                    folders.update(more)
                    cached.wds.update({f.wd: d for d, f in more.items() if f.wd is not None})
    except _Unwatchable:
        return False
    if sum(f.entries for f in folders.values()) > MAX_SCAN_ENTRIES:
        return False
    cached.result = _result(folders, [])
    return True


def _drop(key: str, cached: _Cached, top: str, w: Watcher | None) -> None:
    """Forget the folder ``top`` and every folder below it."""
    inside = top.rstrip("/") + "/"
    gone = [d for d in cached.folders if d == top or d.startswith(inside)]
    wds = [wd for d in gone if (wd := cached.folders.pop(d).wd) is not None]
    if cached.wds is not None:
        for wd in wds:
            cached.wds.pop(wd, None)
    _unwatch(key, wds, w)


def _read(todo: _Todo, watch: Callable[[str], int | None]) -> _Folder | None:
    """Read one folder (watched first); ``None`` if it cannot be read."""
    folder, depth, package, links_ok = todo
    wd = watch(folder)
    try:
        mtime = os.stat(folder).st_mtime_ns
        with os.scandir(folder) as it:
            entries = list(it)
    except OSError:
        return None
    out = _Folder(todo, mtime, len(entries), [], [], [], False, [], wd)
    tail = _folded_tail(folder)
    links_ok = links_ok or any(e.name == "conda-meta" for e in entries)
    for entry in entries:
        name = entry.name
        if name == ".git":
            out.repo = not package
            continue
        if name == "HEAD" and _bare(folder):
            out.bare = True
        path = (*tail, fold_name(name))
        if ALL.at_end(path) is not None:
            hit = SECRETS.at_end(path)
            if hit is not None:
                (out.protected if hit.build else out.secrets).append(Path(entry.path))
                continue
            out.writes.append(Path(entry.path))  # a secret inside is still looked for
        try:
            is_dir = entry.is_dir(follow_symlinks=False)
            if (
                not is_dir
                and not links_ok
                and entry.is_file(follow_symlinks=False)
                and entry.stat(follow_symlinks=False).st_nlink > 1
            ):
                out.linked.append(Path(entry.path))
        except OSError:
            is_dir = False
        if is_dir:
            skip = name in _SKIP_DIRS and not package
            pkg = entry.path if skip else package
            ok = links_ok or name in LINKING_MANAGERS
            out.subdirs.append((entry.path, depth + 1, pkg, ok))
    return out


def _scan(
    top: str | _Todo, watch: Callable[[str], int | None] = lambda _: None
) -> tuple[dict[str, _Folder], list[str]]:
    """Read the tree at ``top`` (a root, or a folder found by an update): the folders read
    and those left unread (past the limits). Package folders wait in ``later``, and one
    that cannot be read to the end is left unread as a whole (one mask, not many)."""
    stack: list[_Todo] = [top if isinstance(top, tuple) else (top, 0, "", False)]
    later: list[_Todo] = []
    folders: dict[str, _Folder] = {}
    unscanned: list[str] = []
    seen = 0
    while stack or later:
        if not stack:
            stack.append(later.pop())
        todo = stack.pop()
        folder, depth, package, _ = todo
        if seen >= MAX_SCAN_ENTRIES or depth > MAX_SCAN_DEPTH:
            unscanned.append(package or folder)
            continue
        read = _read(todo, watch)
        if read is None:
            continue
        folders[folder] = read
        seen += read.entries
        for sub in read.subdirs:
            (later if sub[2] and not package else stack).append(sub)
    return folders, unscanned


def _result(folders: dict[str, _Folder], unscanned: list[str]) -> ScanResult:
    fs = folders.values()
    return ScanResult(
        secrets=tuple(p for f in fs for p in f.secrets),
        protected=tuple(p for f in fs for p in f.protected),
        repos=tuple(Path(f.todo[0]) for f in fs if f.repo),
        unscanned=tuple(Path(u) for u in _outermost(unscanned)),
        linked=tuple(p for f in fs for p in f.linked),
        writes=tuple(Path(w) for w in _outermost([str(p) for f in fs for p in f.writes])),
        bare=tuple(Path(f.todo[0]) for f in fs if f.bare),
    )


_TAIL = max(len(e.parts) for e in TABLE) - 1


def _folded_tail(folder: str) -> tuple[str, ...]:
    """The folded last names of ``folder`` that a table pattern can reach back to."""
    names = folder.rstrip("/").rsplit("/", _TAIL)[1:]
    return tuple(fold_name(n) for n in names if n)


def _bare(folder: str) -> bool:
    return os.path.isdir(folder + "/objects") and os.path.isdir(folder + "/refs")


_CONFIG_CREDENTIALS = re.compile(
    r"[a-z][a-z0-9+.-]*://[^/\s@]+@|extraheader|^\s*(password|token|secret)\w*\s*=",
    re.IGNORECASE | re.MULTILINE,
)


def git_configs_with_credentials(roots: list[Path], gitdirs: Sequence[Path] = ()) -> list[Path]:
    """The config files of the repositories :func:`scan` found in ``roots`` and of the git
    folders ``gitdirs`` that hold credentials: a remote URL with a user or password
    (``https://TOKEN@host``), an ``extraheader`` (CI checkouts keep their token there), a
    ``password``/``token`` key."""
    gitdirs = list(gitdirs)
    for r in roots:
        gitdirs += [repo / ".git" for repo in scan_all(r).repos]
    out: list[Path] = []
    for g in dict.fromkeys(gitdirs):
        modules = [*g.glob("modules/*/config"), *g.glob("modules/*/modules/*/config")]
        for cfg in (g / "config", g / "config.worktree", *modules):
            try:
                if not cfg.is_file() or cfg.is_symlink():
                    continue
                text = cfg.read_text(errors="replace")[:1_000_000]
            except OSError:
                continue
            if _CONFIG_CREDENTIALS.search(text):
                out.append(cfg)
    return out


_URL_USERINFO = re.compile(r"([a-z][a-z0-9+.-]*://)[^/\s@]+@", re.IGNORECASE)
_SECRET_LINE = re.compile(
    r"^\s*(?:extraheader|password|token|secret)\w*\s*=.*$", re.IGNORECASE | re.MULTILINE
)
_clean_dir: list[str] = []


def sanitized_git_config(cfg: Path) -> Path | None:
    """A copy of the git config ``cfg`` without its credentials (a URL's user and password
    removed, ``extraheader``/``password``/``token`` lines dropped), in a private folder of
    this process: bound over the real one, git still reads the repository's settings."""
    try:
        text = cfg.read_text(errors="replace")[:1_000_000]
    except OSError:
        return None
    clean = _SECRET_LINE.sub("", _URL_USERINFO.sub(r"\1", text))
    if not _clean_dir:
        import atexit
        import shutil
        import tempfile

        d = tempfile.mkdtemp(prefix="nb_tools-gitconfig-")
        atexit.register(shutil.rmtree, d, True)
        _clean_dir.append(d)
    import hashlib

    name = hashlib.sha256(f"{cfg}\0{clean}".encode()).hexdigest()[:32]
    out = Path(_clean_dir[0]) / name
    if not out.exists():
        tmp = out.with_suffix(".tmp")
        tmp.write_text(clean)
        tmp.chmod(0o444)
        os.replace(tmp, out)
    return out


MAX_UNSCANNED_MASKS = 64


def unapproved_problem(root: Path) -> str | None:
    """Why a call without a click may not run in ``root`` (``None``: it may): past the
    scan's limits more folders are left unread than can be masked, so a secret in one of
    them could be shown."""
    found = scan_all(Path(os.path.realpath(root)))
    n = len(found.unscanned)
    if n > MAX_UNSCANNED_MASKS:
        return (
            f"the workspace holds more than {MAX_SCAN_ENTRIES} files and folders, too many "
            f"to check for secrets ({n} folders left unread), so shell commands ask first"
        )
    return None


def writable_problem(root: Path) -> str | None:
    """Why a writable call may not run in ``root`` (``None``: it may): past the scan's
    limits more folders are left unread than can be kept read-only, and one of them may
    hold a repository or a start-up file the sandbox would not protect."""
    found = scan_all(Path(os.path.realpath(root)))
    n = len(found.unscanned)
    if n > MAX_UNSCANNED_MASKS:
        return (
            f"the workspace holds more than {MAX_SCAN_ENTRIES} files and folders, too many "
            f"to check for repositories and start-up files ({n} folders left unread)"
        )
    return None


def _outermost(paths: list[str]) -> list[str]:
    out: list[str] = []
    for p in sorted(set(paths)):
        if not out or not p.startswith(out[-1].rstrip("/") + "/"):
            out.append(p)
    return out


def unix_sockets() -> Iterator[Path]:
    """Paths of the Unix sockets bound on this machine (``/proc/net/unix``)."""
    try:
        with open("/proc/net/unix", encoding="utf-8", errors="replace") as f:
            next(f, None)
            for line in f:
                parts = line.split(None, 7)
                if len(parts) == 8 and parts[7].startswith("/"):
                    yield Path(parts[7].rstrip("\n"))
    except OSError:
        return


@functools.lru_cache(maxsize=8)
def _pw_home_of(uid: int) -> str | None:
    try:
        import pwd

        return pwd.getpwuid(uid).pw_dir
    except (ImportError, KeyError):
        return None


def _pw_home() -> str | None:
    return _pw_home_of(os.getuid())


def _dedupe(paths: list[Path]) -> list[Path]:
    return list(dict.fromkeys(paths))
