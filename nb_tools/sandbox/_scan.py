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
import sys
import threading
import time
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
    names: set[str] | None = None  # every entry's name (None: not kept)


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
    out = _Folder(todo, len(entries), wd, mtime, names={e.name for e in entries})
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


_WHOLE = frozenset({".git", "HEAD", "objects", "refs", "conda-meta"})
"""Names whose change changes what the scan decides about the whole folder (a
repository, a bare one, a conda environment): the folder is read again whole."""


def _patchable(names: set[str], f: _Folder) -> bool:
    """Whether the change of ``names`` in ``f`` is cheaper looked at name by name."""
    return not (names & _WHOLE) and len(names) * 4 < max(f.entries, 64)


class _Entry(NamedTuple):
    """One entry looked at with ``lstat``, for :func:`_classify` (as ``os.DirEntry``)."""

    name: str
    path: str
    mode: int

    def is_dir(self, *, follow_symlinks: bool = False) -> bool:
        return stat.S_ISDIR(self.mode)

    def is_file(self, *, follow_symlinks: bool = False) -> bool:
        return stat.S_ISREG(self.mode)


def _patch(f: _Folder, names: set[str]) -> _Folder | None:
    """``f`` with only the entries ``names`` looked at again (one ``lstat`` each: the
    names inotify reported), not the whole folder listed and every file's link count
    looked at again; ``None`` when the folder is gone."""
    base = f.todo.path.rstrip("/") + "/"
    found: list[_Entry] = []
    for name in names:
        try:
            st = os.lstat(base + name)
        except FileNotFoundError:
            continue
        except OSError:
            return None if not os.path.isdir(f.todo.path) else _read_again(f)
        found.append(_Entry(name, base + name, st.st_mode))
    if not os.path.isdir(f.todo.path):
        return None
    todo = f.todo._replace(links_ok=True) if "conda-meta" in (f.names or ()) else f.todo
    part = _classify(todo, found, f.wd, f.mtime)  # type: ignore[arg-type]

    def keep(p: Path) -> bool:
        return p.name not in names

    kept = (f.names or set()) - names
    out = _Folder(
        f.todo,
        len(kept) + len(found),
        f.wd,
        f.mtime,
        secrets=[p for p in f.secrets if keep(p)] + part.secrets,
        protected=[p for p in f.protected if keep(p)] + part.protected,
        writes=[p for p in f.writes if keep(p)] + part.writes,
        repo=f.repo,
        bare=f.bare,
        subdirs=[t for t in f.subdirs if t.path[len(base) :] not in names] + part.subdirs,
        files=[n for n in f.files if n not in names] + part.files,
        names=kept | {e.name for e in found},
    )
    if f.linked is not None:
        out.linked = [p for p in f.linked if keep(p)] + (_links(part) if part.files else [])
    return out


def _is_dir(path: str) -> bool:
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


def _read_again(f: _Folder) -> _Folder | None:
    return _read(f.todo, lambda _: f.wd)


def _bare(folder: str) -> bool:
    return os.path.isdir(folder + "/objects") and os.path.isdir(folder + "/refs")


# -- a tree ----------------------------------------------------------------------------------


class _Walk:
    """A tree being read, a slice at a time (:meth:`step`): the folders read, those still
    to read (``stack``; package folders wait in ``later``, and one that cannot be read to
    the end is left unread as a whole: one mask, not many) and those left unread past the
    limits (``unscanned``). ``links``: each folder's link counts are looked at as it is
    read. A walk that is done stays the root's kept scan: a change sends the folders it
    touched back (:meth:`refresh`), and the new folders in them onto ``stack``."""

    def __init__(
        self, top: str | _Todo, watch: Callable[[str], int | None], *, links: bool = False
    ) -> None:
        self.top = top if isinstance(top, _Todo) else _root_todo(top)
        self.watch = watch
        self.links = links
        self.stack: list[_Todo] = [self.top]
        self.later: list[_Todo] = []
        self.folders: dict[str, _Folder] = {}
        self.wds: dict[int, str] = {}  # inotify wd -> the folder read under it
        self.unscanned: list[str] = []
        self.seen = 0

    def done(self) -> bool:
        return not self.stack and not self.later

    def step(self, budget: int | None = None) -> bool:
        """Read folders until about ``budget`` entries were read (``None``: to the end);
        whether the walk is done."""
        work = 0
        while self.stack or self.later:
            if not self.stack:
                self.stack.append(self.later.pop())
            todo = self.stack.pop()
            if self.seen >= MAX_SCAN_ENTRIES or todo.depth > MAX_SCAN_DEPTH:
                self.unscanned.append(todo.package or todo.path)
                continue
            read = _read(todo, self.watch)
            if read is None:
                continue
            self._keep(read)
            self._push(read.subdirs)
            work += read.entries + 1
            if budget is not None and work >= budget:
                break
        return self.done()

    def _keep(self, read: _Folder) -> None:
        if self.links and read.linked is None:
            read.linked = _links(read)
        old = self.folders.get(read.todo.path)
        self.seen += read.entries - (old.entries if old is not None else 0)
        self.folders[read.todo.path] = read
        if read.wd is not None:
            self.wds[read.wd] = read.todo.path

    def _push(self, todos: Iterable[_Todo]) -> None:
        for sub in todos:
            (self.later if sub.package and sub.package == sub.path else self.stack).append(sub)

    def masks(self) -> list[str]:
        """What a call must not see while the walk is not done: the folders left unread,
        and those still to read (a package folder as a whole)."""
        todo = [t.package or t.path for t in (*self.stack, *self.later)]
        return _outermost(self.unscanned + todo)

    def refresh(self, changes: dict[str, set[str] | None]) -> list[int] | None:
        """Bring the folders read up to date with ``changes`` (folder -> the names in it
        that changed; ``None``: all): those names looked at again (one ``lstat`` each), or
        the folder read again; a folder that is gone, or is another one now, is forgotten
        with everything below it, and a new one goes onto ``stack``. The watches no
        longer used; ``None`` when the top is gone or another folder now."""
        drop: list[str] = []
        new: list[_Todo] = []
        for folder in sorted(changes):
            old = self.folders.get(folder)
            if old is None:
                continue  # not read yet, or forgotten with a parent
            names = changes[folder]
            if names is not None and old.names is not None and _patchable(names, old):
                f = _patch(old, names)
                touched = {t.path for t in old.subdirs if t.path.rsplit("/", 1)[-1] in names}
            else:
                f = _read(old.todo, self.watch) if _is_dir(folder) else None
                if f is not None and (f.wd is None or f.wd != old.wd):
                    if folder == self.top.path:
                        return None
                    drop += [t.path for t in old.subdirs]  # another folder: all of it new
                    touched = set()
                else:
                    touched = {t.path for t in old.subdirs}
            if f is None:
                if folder == self.top.path:
                    return None
                drop.append(folder)
                continue
            if f.linked is None and (self.links or old.linked is not None):
                f.linked = _links(f)
            self._keep(f)
            had = {t.path for t in old.subdirs}
            for t in f.subdirs:
                kept = self.folders.get(t.path)
                if t.path not in had:
                    new.append(t)
                elif t.path in touched and kept is not None and self.watch(t.path) != kept.wd:
                    drop.append(t.path)  # replaced (deleted or moved away, made again)
                    new.append(t)
            now = {t.path for t in f.subdirs}
            drop += [p for p in had - now]
        gone = [wd for d in _outermost(drop) for wd in self.drop(d)]
        self._push(new)
        return gone

    def drop(self, top: str) -> list[int]:
        """Forget the folder ``top`` and everything below it; the watches it used (a
        watch now used by a folder read since, under another name, is kept)."""
        inside = top.rstrip("/") + "/"
        out: list[int] = []
        for d in [d for d in self.folders if d == top or d.startswith(inside)]:
            f = self.folders.pop(d)
            self.seen -= f.entries
            if f.wd is not None and self.wds.get(f.wd) == d:
                del self.wds[f.wd]
                out.append(f.wd)
        self.stack = [t for t in self.stack if not (t.path == top or t.path.startswith(inside))]
        self.later = [t for t in self.later if not (t.path == top or t.path.startswith(inside))]
        return out


def _walk(
    top: str | _Todo, watch: Callable[[str], int | None] = lambda _: None
) -> tuple[dict[str, _Folder], list[str]]:
    """Read the tree at ``top`` to the end (see :class:`_Walk`): the folders read and
    those left unread."""
    walk = _Walk(top, watch)
    walk.step()
    return walk.folders, walk.unscanned


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


FIRST_CALL_WAIT = 0.05
"""Seconds a call without a click reads a scan still under way itself (a background
thread reads the rest) before it runs with what is known, the folders not read yet hidden."""


@dataclass
class _Cached:
    walk: _Walk
    watched: bool
    """Freshness by inotify; ``False``: by each folder's ``mtime``, stat-ed at each call."""
    driven: bool = False
    """A background thread reads the walk to the end (:func:`warm_up`)."""
    deadline: float | None = None
    """When the first call without a click that found the walk under way stops reading
    it itself (:data:`FIRST_CALL_WAIT` after it came)."""
    result: ScanResult | None = None
    """The scan of the walk once done, kept until a change."""
    unlinked: list[str] = field(default_factory=list)
    """Folders whose link counts may still be unchecked (a folder here may be checked
    already, or gone)."""
    full: ScanResult | None = None
    """``result`` with ``linked``, once every folder's link counts were looked at."""

    @property
    def folders(self) -> dict[str, _Folder]:
        """Every folder read, in the order read."""
        return self.walk.folders


_scan_cache: dict[str, _Cached] = {}
_watched: dict[int, set[str]] = {}  # inotify wd -> the roots whose scan read that folder
_pending: dict[str, dict[int, set[str] | None]] = {}  # root -> its folders' changes (by wd)
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
    counts of unchanged folders are reused); only such a scan (a call without a click's)
    may be one still under way, its folders not read yet in ``unscanned``."""
    key = str(root)
    with _scan_lock:
        cached = _fresh(key)
        if cached.result is None:
            if links and cached.driven and cached.watched:
                if cached.deadline is None:
                    cached.deadline = time.monotonic() + FIRST_CALL_WAIT
                while not _step(cached, 500):
                    walk = cached.walk
                    if (
                        time.monotonic() >= cached.deadline or all(t.package for t in walk.stack)
                    ) and _may_skip(key, walk):
                        return _partial(walk)
            _step(cached)
            _finish(key, cached)
        walk = cached.walk
        assert cached.result is not None
        if not links:
            return cached.result
        if cached.full is None:
            _check_links(cached, None)
            cached.full = replace(
                cached.result,
                linked=tuple(p for f in walk.folders.values() for p in f.linked or ()),
            )
        return cached.full


def _step(cached: _Cached, budget: int | None = None) -> bool:
    """:meth:`_Walk.step`; when inotify refuses a watch (none left), the walk starts
    again unwatched (its freshness by ``mtime`` from then on)."""
    try:
        return cached.walk.step(budget)
    except _Unwatchable:
        cached.watched = False
        cached.walk = _Walk(cached.walk.top, lambda _: None, links=cached.walk.links)
        return cached.walk.step(budget)


def _partial(walk: _Walk) -> ScanResult:
    """What is known of a walk under way: the folders not read yet in ``unscanned``
    (hidden from the call), the link counts of every folder read."""
    for f in walk.folders.values():
        if f.linked is None:
            f.linked = _links(f)
    found = _result(walk.folders, walk.masks())
    return replace(found, linked=tuple(p for f in walk.folders.values() for p in f.linked or ()))


def _may_skip(key: str, walk: _Walk) -> bool:
    """Whether a call may run with what ``walk`` has not read yet hidden: the root was
    read, the masks are few enough to mount, and none holds a folder programs run from
    (the kernel's environment, a ``PATH`` entry)."""
    masks = walk.masks()
    if key not in walk.folders or len(masks) > MAX_UNSCANNED_MASKS:
        return False
    tools = [sys.prefix, sys.exec_prefix, *os.environ.get("PATH", "").split(os.pathsep)]
    tools += [v for k in ("VIRTUAL_ENV", "CONDA_PREFIX") if (v := os.environ.get(k))]
    real = [os.path.realpath(t) + "/" for t in tools if os.path.isabs(t)]
    return not any(t.startswith(m.rstrip("/") + "/") for m in masks for t in real)


def _finish(key: str, cached: _Cached) -> None:
    """The walk is done: its result, and the folders whose link counts are still to do."""
    walk = cached.walk
    cached.result = _result(walk.folders, walk.unscanned)
    cached.full = None
    cached.unlinked = [d for d, f in reversed(walk.folders.items()) if f.linked is None]


def _fresh(key: str) -> _Cached:
    """The kept scan of ``key``, brought up to date (the caller holds the lock); a walk
    still under way is brought up to date as far as it went."""
    w = watcher()
    if w is not None:
        changed = w.changed()
        if changed is None:
            _stale.update(_scan_cache)
        else:
            for wd, names in changed.items():
                for r in _watched.get(wd, ()):
                    mine = _pending.setdefault(r, {})
                    had = mine.get(wd, set())
                    mine[wd] = None if names is None or had is None else had | names
    cached = _scan_cache.get(key)
    if cached is not None and key not in _stale:
        if cached.watched:
            todo = _pending.pop(key, None)
            if not todo or _update(key, cached, todo, w):
                return cached
        else:
            _pending.pop(key, None)
            if not cached.walk.done():
                return cached  # read to the end by the caller
            try:
                walk = cached.walk
                if all(os.stat(d).st_mtime_ns == f.mtime for d, f in walk.folders.items()):
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
    """Start the scan of ``root`` now and read it, its link counts with it, on a
    background thread, then probe the sandbox and build one no-click command line, so
    that the first call finds it all done: started when a shell tool is made, long before
    the model's first reply asks for a call. A call without a click that comes sooner
    reads the walk itself for up to :data:`FIRST_CALL_WAIT`, then runs with the folders
    not read yet hidden (see :func:`scan_all`); any other call waits for the walk (reads
    the rest itself). The thread reads in slices of about 2,000 entries, with the lock
    free between them."""
    key = os.path.realpath(root)
    with _scan_lock:
        if key not in _scan_cache:
            _scan_cache[key] = _rescan(key, watcher())
        _drive(_scan_cache[key])

    def work() -> None:
        with contextlib.suppress(Exception):
            done = False
            while not done:
                with _scan_lock:
                    cached = _fresh(key)
                    if cached.result is None:
                        _drive(cached)
                        try:
                            if _step(cached, 2000):
                                _finish(key, cached)
                        except BaseException:
                            cached.driven = False  # the calls read it themselves
                            raise
                        continue
                    done = _check_links(cached, 2000)
            if not sandbox_available().ok:
                return
            from nb_tools.sandbox._launch import prepare  # the launcher is built on this
            from nb_tools.sandbox._policy import SandboxPolicy

            prepare(["true"], SandboxPolicy(mode="read-only", workspace=Path(key)).unapproved())

    threading.Thread(target=work, name="nb_tools-scan", daemon=True).start()


def _drive(cached: _Cached) -> None:
    """Mark a walk under way as read by the background, its link counts as it goes."""
    if not cached.walk.done():
        cached.driven = True
        cached.walk.links = True


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
    """A new walk of ``key`` (not read yet: :func:`scan_all` or the background reads it),
    each folder watched before it is read; the watches of the last scan that this one
    does not use again are dropped as it finishes."""
    _stale.discard(key)
    _pending.pop(key, None)
    old = _scan_cache.pop(key, None)
    if old is not None and old.watched:
        _unwatch(key, list(old.walk.wds), w)
    use = w if w is not None and watchable(key) else None
    return _Cached(walk=_Walk(key, _watcher_for(key, use)), watched=use is not None)


def _update(
    key: str, cached: _Cached, changed: dict[int, set[str] | None], w: Watcher | None
) -> bool:
    """Bring the folders of ``changed`` up to date (:meth:`_Walk.refresh`), and read the
    folders new in them; ``False`` when the tree must be read whole (its top changed)."""
    walk = cached.walk
    folders = {walk.wds[wd]: names for wd, names in changed.items() if wd in walk.wds}
    try:
        gone = walk.refresh(folders)
    except _Unwatchable:
        return False
    if gone is None:
        return False
    _unwatch(key, gone, w)
    if cached.result is not None:  # a kept scan: the new folders are read at once
        _step(cached)
        _finish(key, cached)
    return True


# -- what the limits mean for a call ---------------------------------------------------------


def unapproved_problem(root: Path) -> str | None:
    """Why a call without a click may not run in ``root`` (``None``: it may): past the
    scan's limits more folders are left unread than can be masked, so a secret in one of
    them could be shown."""
    found = scan_all(Path(os.path.realpath(root)), links=True)
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
