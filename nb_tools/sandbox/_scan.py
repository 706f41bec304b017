"""The scan of a root: what is in it that the sandbox must hide or keep read-only.

A walk reads every folder under a root (not into ``.git``; package folders such as
``node_modules`` last), at most :data:`MAX_SCAN_DEPTH` levels and :data:`MAX_SCAN_ENTRIES`
entries, and classifies each entry by its name against the protection table
(:mod:`._protection`): a secret, a protected path, a repository, a bare repository. That
costs one ``getdents`` a folder and no look at any file.

Hard links need a look at each file (its link count), which costs about as much again as
the walk: they matter only to a call without a click (its view hides them), so they are
checked in a second pass, on demand (:func:`scan_all` with ``links=True``) and in the
background after the walk (:func:`warm_up`); a call that needs them before the background
is done finishes the pass itself. Approved calls and the file tools never wait for it
(``read_file`` and ``grep`` look at the one file they read: :func:`hard_linked`).

The answer is kept per root and reused while no folder it read changed: each folder is
watched with inotify (:mod:`._watch`) from just before it is read, so any change since (a
name created, deleted or renamed, a link count changed), whoever made it, is an event that
the next call drains in microseconds; only the folders that changed are read again (and
the folders new in them; their link counts are looked at again too), or the whole tree
when events were lost or the scan had reached its limits. Where inotify cannot watch (a
network or FUSE file system, no watches left), each call stats every folder it read and
reads the whole tree again on a change. A kept answer never hides less than a new one.
"""

from __future__ import annotations

import contextlib
import os
import stat
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import NamedTuple

from nb_tools.sandbox._probe import sandbox_available
from nb_tools.sandbox._protection import ALL, SECRETS, TABLE, fold_name
from nb_tools.sandbox._watch import Watcher, watchable, watcher

__all__ = [
    "LINKING_MANAGERS",
    "MAX_SCAN_DEPTH",
    "MAX_SCAN_ENTRIES",
    "MAX_UNSCANNED_MASKS",
    "ScanResult",
    "hard_linked",
    "scan",
    "scan_all",
    "secret_files_in",
    "unapproved_problem",
    "warm_up",
    "writable_problem",
]

_SKIP_DIRS = frozenset(
    {".git", "node_modules", "__pycache__", ".venv", "venv", ".tox", ".nox", ".mypy_cache",
     ".ruff_cache", ".pytest_cache", "site-packages"}
)  # fmt: skip
"""Package and cache folders: read last (after the project), never searched for
repositories."""
MAX_SCAN_DEPTH = 32
MAX_SCAN_ENTRIES = 50_000
MAX_UNSCANNED_MASKS = 64

LINKING_MANAGERS = frozenset({"node_modules", ".venv", "venv", "site-packages", "pkgs"})
"""Folders whose package managers hard-link files on purpose (npm/pnpm, uv and pip
caches, conda's ``pkgs``; a conda environment, a folder holding ``conda-meta``, too):
a file with several links there is expected, and is not hidden for it."""


@dataclass(frozen=True)
class ScanResult:
    """What :func:`scan_all` found under a root.

    ``secrets``: the protection table's secrets (hidden in every mode); ``protected``: its
    secrets a build reads (``Entry.build``: hidden from unapproved calls); ``repos``:
    folders holding a ``.git``; ``unscanned``: folders the scan did not read (past
    :data:`MAX_SCAN_ENTRIES` or :data:`MAX_SCAN_DEPTH`): an unapproved call must not see
    them, since a secret there is unknown, and a writable one gets them read-only;
    ``writes``: the table's other paths (start-up files, rules: read-only in
    ``workspace-write``, and removed when a call created them); ``bare``: bare
    repositories (whose ``hooks/`` and ``config`` stay read-only); ``linked`` (only when
    asked for, ``links=True``; else ``None``): regular files with more than one hard link
    outside the folders of package managers that link on purpose
    (:data:`LINKING_MANAGERS`): the other name may be a secret outside the workspace, so an
    unapproved call must not see them either."""

    secrets: tuple[Path, ...]
    protected: tuple[Path, ...]
    repos: tuple[Path, ...]
    unscanned: tuple[Path, ...]
    writes: tuple[Path, ...] = ()
    bare: tuple[Path, ...] = ()
    linked: tuple[Path, ...] | None = None


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


# -- one folder ----------------------------------------------------------------------------


class _Todo(NamedTuple):
    """A folder to read, with what its parents decided about it."""

    path: str
    depth: int
    package: str  # the package folder it is in ("": none): no repositories looked for
    links_ok: bool  # in a package manager's folder: hard links expected
    tail: tuple[str, ...]  # its last names, folded, as far back as a table pattern reaches


@dataclass
class _Folder:
    """What the scan found in one folder: the entries the table names, and the names of
    the regular files whose link count is still to be looked at (``linked`` is ``None``
    until it is)."""

    todo: _Todo
    entries: int
    wd: int | None  # its inotify watch; None: freshness by ``mtime``
    mtime: int
    secrets: list[Path] = field(default_factory=list)
    protected: list[Path] = field(default_factory=list)
    writes: list[Path] = field(default_factory=list)  # the table's paths that are no secret
    repo: bool = False
    bare: bool = False
    subdirs: list[_Todo] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    linked: list[Path] | None = None


_TAIL = max(len(e.parts) for e in TABLE) - 1


def _root_todo(root: str) -> _Todo:
    names = root.rstrip("/").rsplit("/", _TAIL)[1:]
    return _Todo(root, 0, "", False, tuple(fold_name(n) for n in names if n))


def _read(todo: _Todo, watch: Callable[[str], int | None]) -> _Folder | None:
    """Watch the folder, then list it and classify its entries (:func:`_classify`);
    ``None`` if it cannot be read. Watching first means that a change made while it is
    read is an event the next call sees."""
    wd = watch(todo.path)
    try:
        mtime = 0 if wd is not None else os.stat(todo.path).st_mtime_ns
        with os.scandir(todo.path) as it:
            entries = list(it)
    except OSError:
        return None
    return _classify(todo, entries, wd, mtime)


def _classify(todo: _Todo, entries: list[os.DirEntry[str]], wd: int | None, mtime: int) -> _Folder:
    """Each entry by its name alone (the table's patterns end at it), and by its type as
    the folder listing gives it (no look at the file)."""
    folder, depth, package, links_ok, tail = todo
    out = _Folder(todo, len(entries), wd, mtime)
    links_ok = links_ok or any(e.name == "conda-meta" for e in entries)
    near = tail[-_TAIL:] if _TAIL else ()
    for entry in entries:
        name = entry.name
        if name == ".git":
            out.repo = not package
            continue
        if name == "HEAD" and _bare(folder):
            out.bare = True
        ends = _ends.get(name)
        if ends is None:
            ends = _can_end(name)
        if ends:
            path = (*near, fold_name(name))
            if ALL.at_end(path) is not None:
                hit = SECRETS.at_end(path)
                if hit is not None:
                    (out.protected if hit.build else out.secrets).append(Path(entry.path))
                    continue
                out.writes.append(Path(entry.path))  # a secret inside is still looked for
        try:
            if entry.is_dir(follow_symlinks=False):
                skip = name in _SKIP_DIRS and not package
                ok = links_ok or name in LINKING_MANAGERS
                sub = (*near, fold_name(name))
                out.subdirs.append(
                    _Todo(entry.path, depth + 1, entry.path if skip else package, ok, sub)
                )
            elif not links_ok and entry.is_file(follow_symlinks=False):
                out.files.append(name)
        except OSError:
            continue
    if not out.files:
        out.linked = []  # nothing to look at
    return out


_ends: dict[str, bool] = {}


def _can_end(name: str) -> bool:
    """Whether a pattern of the table can end at an entry called ``name`` (folded first;
    remembered by the name as listed: most names repeat, and most end none)."""
    if len(_ends) > 100_000:
        _ends.clear()
    ends = _ends[name] = ALL._can_end(fold_name(name))  # the matcher's own first test
    return ends


def _links(f: _Folder) -> list[Path]:
    """The regular files of ``f`` with more than one hard link (one ``fstatat`` each,
    relative to the open folder: no walk of the whole path)."""
    out: list[Path] = []
    base = f.todo.path.rstrip("/") + "/"
    try:
        fd = os.open(f.todo.path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError:
        return out  # gone: the change is an event, and the next call reads it again
    try:
        for name in f.files:
            try:
                st = os.stat(name, dir_fd=fd, follow_symlinks=False)
            except OSError:
                continue
            if st.st_nlink > 1 and stat.S_ISREG(st.st_mode):
                out.append(Path(base + name))
    finally:
        os.close(fd)
    return out


def _bare(folder: str) -> bool:
    return os.path.isdir(folder + "/objects") and os.path.isdir(folder + "/refs")


# -- a tree ----------------------------------------------------------------------------------


def _walk(
    top: str | _Todo, watch: Callable[[str], int | None] = lambda _: None
) -> tuple[dict[str, _Folder], list[str]]:
    """Read the tree at ``top`` (a root, or a folder found by an update): the folders read
    and those left unread (past the limits). Package folders wait in ``later``, and one
    that cannot be read to the end is left unread as a whole (one mask, not many)."""
    stack: list[_Todo] = [top if isinstance(top, _Todo) else _root_todo(top)]
    later: list[_Todo] = []
    folders: dict[str, _Folder] = {}
    unscanned: list[str] = []
    seen = 0
    while stack or later:
        if not stack:
            stack.append(later.pop())
        todo = stack.pop()
        if seen >= MAX_SCAN_ENTRIES or todo.depth > MAX_SCAN_DEPTH:
            unscanned.append(todo.package or todo.path)
            continue
        read = _read(todo, watch)
        if read is None:
            continue
        folders[todo.path] = read
        seen += read.entries
        for sub in read.subdirs:
            (later if sub.package and not todo.package else stack).append(sub)
    return folders, unscanned


def _result(folders: dict[str, _Folder], unscanned: list[str]) -> ScanResult:
    fs = folders.values()
    return ScanResult(
        secrets=tuple(p for f in fs for p in f.secrets),
        protected=tuple(p for f in fs for p in f.protected),
        repos=tuple(Path(f.todo.path) for f in fs if f.repo),
        unscanned=tuple(Path(u) for u in _outermost(unscanned)),
        writes=tuple(Path(w) for w in _outermost([str(p) for f in fs for p in f.writes])),
        bare=tuple(Path(f.todo.path) for f in fs if f.bare),
    )


def _outermost(paths: list[str]) -> list[str]:
    out: list[str] = []
    for p in sorted(set(paths)):
        if not out or not p.startswith(out[-1].rstrip("/") + "/"):
            out.append(p)
    return out


# -- kept scans, and their freshness ---------------------------------------------------------


@dataclass
class _Cached:
    result: ScanResult
    folders: dict[str, _Folder]
    """Every folder read, in the order read."""
    unscanned: list[str]
    wds: dict[int, str] | None
    """inotify wd -> folder, for every folder read; ``None``: not watched (freshness by
    each folder's ``mtime``)."""
    unlinked: list[str] = field(default_factory=list)
    """Folders whose link counts may still be unchecked (a folder here may be checked
    already, or gone)."""
    full: ScanResult | None = None
    """``result`` with ``linked``, once every folder's link counts were looked at."""


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


def secret_files_in(root: Path) -> list[Path]:
    """The protection table's secrets under ``root`` (see :func:`scan_all`)."""
    return scan(root)[0]


def scan_all(root: Path, *, links: bool = False) -> ScanResult:
    """The scan of ``root`` (see the module's text), fresh: kept, and read again where it
    changed. ``links``: with ``linked`` (every file's link count looked at; the kept
    counts of unchanged folders are reused)."""
    key = str(root)
    with _scan_lock:
        cached = _fresh(key)
        if not links:
            return cached.result
        if cached.full is None:
            _check_links(cached, None)
            cached.full = replace(
                cached.result,
                linked=tuple(p for f in cached.folders.values() for p in f.linked or ()),
            )
        return cached.full


def _fresh(key: str) -> _Cached:
    """The kept scan of ``key``, brought up to date (the caller holds the lock)."""
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
                return cached
        else:
            try:
                if all(os.stat(d).st_mtime_ns == f.mtime for d, f in cached.folders.items()):
                    return cached
            except OSError:
                pass
    new = _rescan(key, w)
    if len(_scan_cache) > 64:
        _forget_all(w)
    _scan_cache[key] = new
    return new


def _check_links(cached: _Cached, budget: int | None) -> bool:
    """Look at the link counts of the folders still unchecked, about ``budget`` files
    (``None``: all); whether all are done."""
    done = 0
    while cached.unlinked:
        f = cached.folders.get(cached.unlinked.pop())
        if f is None or f.linked is not None:
            continue
        f.linked = _links(f)
        done += len(f.files) + 1
        if budget is not None and done >= budget:
            return not cached.unlinked
    return True


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
    """Probe the sandbox, scan ``root``, look at its link counts and build one no-click
    command line on a background thread, so that the first call finds it all done (the
    scan kept, the system's and the tool folders looked up): started when a shell tool is
    made, long before the model's first reply asks for a call. A call that comes sooner
    waits for the walk (the scan's lock); the link counts are looked at in slices of
    about 2,000 files with the lock free between them, so an approved call does not wait
    for them (one without a click finishes them)."""

    def work() -> None:
        with contextlib.suppress(Exception):
            if not sandbox_available().ok:
                return
            key = os.path.realpath(root)
            scan_all(Path(key))
            done = False
            while not done:
                with _scan_lock:
                    cached = _scan_cache.get(key)
                    done = cached is None or _check_links(cached, 2000)
            from nb_tools.sandbox._launch import prepare  # the launcher is built on this
            from nb_tools.sandbox._policy import SandboxPolicy

            prepare(["true"], SandboxPolicy(mode="read-only", workspace=Path(key)).unapproved())

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
        folders, unscanned = _walk(key, _watcher_for(key, use))
        wds = {f.wd: d for d, f in folders.items() if f.wd is not None} if use else None
    except _Unwatchable:
        folders, unscanned = _walk(key)
        wds = None
    if old is not None and old.wds is not None:
        _unwatch(key, set(old.wds) - set(wds or ()), w)
    return _Cached(
        result=_result(folders, unscanned),
        folders=folders,
        unscanned=unscanned,
        wds=wds,
        unlinked=[d for d, f in reversed(folders.items()) if f.linked is None],
    )


def _update(key: str, cached: _Cached, changed: set[int], w: Watcher | None) -> bool:
    """Read again the folders of ``changed`` (and the folders new in them, and drop the
    ones gone); ``False`` when the tree must be read whole (its limits are involved)."""
    if cached.unscanned or cached.wds is None:
        return False
    watch = _watcher_for(key, w)
    folders = cached.folders
    cached.full = None
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
            cached.unlinked.append(folder)
            if new.wd is not None:
                cached.wds[new.wd] = folder
            now = {t.path for t in new.subdirs}
            for gone in {t.path for t in old.subdirs} - now:
                _drop(key, cached, gone, w)
            had = {t.path for t in old.subdirs}
            for todo in new.subdirs:
                if todo.path not in had:
                    more, unscanned = _walk(todo, watch)
                    if unscanned:
                        return False
                    folders.update(more)
                    cached.unlinked += list(more)
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


# -- what the limits mean for a call ---------------------------------------------------------


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
