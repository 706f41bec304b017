"""The scan of a root: what is in it that the sandbox must hide or keep read-only.

A walk (:class:`._folder.Walk`) reads every folder under a root (not into ``.git``;
package folders such as ``node_modules`` last), at most :data:`MAX_SCAN_DEPTH` levels and
:data:`MAX_SCAN_ENTRIES` entries, and classifies each entry by its name against the
protection table (:mod:`._protection`): a secret, a protected path, a repository, a bare
repository. That costs one ``getdents`` a folder and no look at any file.

Hard links need a look at each file (its link count), which costs about as much again as
the walk: they matter only to a call without a click (its view hides them), so they are
looked at on demand (:func:`scan_all` with ``links=True``), or as each folder is read by
the background walk :func:`warm_up` starts when a shell tool is made. Approved calls and
the file tools never wait for them (``read_file`` and ``grep`` look at the one file they
read: :func:`hard_linked`). A call without a click that comes while that walk is under
way reads it itself for up to :data:`FIRST_CALL_WAIT`, then runs with what is known, the
folders not read yet hidden (as those past the limits are); any other call reads it to
the end.

The answer is kept per root and reused while no folder it read changed: each folder is
watched with inotify (:mod:`._watch`) from just before it is read, so any change since (a
name created, deleted or renamed, a link count changed), whoever made it, is an event that
the next call drains in microseconds. The events name the entries they are about, so only
those are looked at again (one ``lstat`` each), or the folder is listed again when its own
event came or many of its names changed; a folder that is another one under the same name
is read anew, and the folders new in a changed one are read; the whole tree when events
were lost. Where inotify cannot watch (a network or FUSE file system, no watches left),
each call stats every folder it read and reads the whole tree again on a change. A kept
answer never hides less than a new one.
"""

from __future__ import annotations

import contextlib
import os
import stat
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path

from nb_tools.sandbox import _folder
from nb_tools.sandbox._folder import LINKING_MANAGERS, Folder, Todo, Walk, outermost
from nb_tools.sandbox._probe import sandbox_available
from nb_tools.sandbox._watch import Watcher, watchable, watcher

__all__ = [
    "LINKING_MANAGERS",
    "MAX_SCAN_DEPTH",
    "MAX_SCAN_ENTRIES",
    "MAX_UNSCANNED_MASKS",
    "ScanResult",
    "generation",
    "hard_linked",
    "scan",
    "scan_all",
    "scan_past",
    "secret_files_in",
    "unapproved_problem",
    "warm_up",
    "writable_problem",
]

MAX_SCAN_DEPTH = 32
MAX_SCAN_ENTRIES = 50_000
MAX_UNSCANNED_MASKS = 64


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


def _walk(
    top: str | Todo, watch: Callable[[str], int | None] = lambda _: None
) -> tuple[dict[str, Folder], list[str]]:
    """Read the tree at ``top`` to the end (see :class:`Walk`): the folders read and
    those left unread."""
    walk = Walk(top, watch, entries=MAX_SCAN_ENTRIES, depth=MAX_SCAN_DEPTH)
    walk.step()
    return walk.folders, walk.unscanned


def _result(folders: dict[str, Folder], unscanned: list[str]) -> ScanResult:
    fs = folders.values()
    return ScanResult(
        secrets=tuple(p for f in fs for p in f.secrets),
        protected=tuple(p for f in fs for p in f.protected),
        repos=tuple(Path(f.todo.path) for f in fs if f.repo),
        unscanned=tuple(Path(u) for u in outermost(unscanned)),
        writes=tuple(Path(w) for w in outermost([str(p) for f in fs for p in f.writes])),
        bare=tuple(Path(f.todo.path) for f in fs if f.bare),
    )


def scan_past(folders: Iterable[Path]) -> ScanResult:
    """The scan of ``folders`` (ones a capped scan left unread) to their end, past
    :data:`MAX_SCAN_ENTRIES`, neither kept nor watched: after a writable call, what it
    made beyond the cap (60,000 new files, then a kernel start-up module beside them) is
    found all the same. Costs what the call made."""
    read: dict[str, Folder] = {}
    left: list[str] = []
    for folder in folders:
        walk = Walk(str(folder), lambda _: None, entries=sys.maxsize, depth=MAX_SCAN_DEPTH)
        walk.step()
        read.update(walk.folders)
        left += walk.unscanned
    return _result(read, left)


# -- kept scans, and their freshness ---------------------------------------------------------


_FEW_MASKS = 8
FIRST_CALL_WAIT = 0.03
"""Seconds a call without a click reads a scan still under way itself (a background
thread reads the rest) before it runs with what is known, the folders not read yet hidden."""


@dataclass
class _Cached:
    walk: Walk
    watched: bool
    """Freshness by inotify; ``False``: by each folder's ``mtime``, stat-ed at each call."""
    driven: bool = False
    """A background thread reads the walk to the end (:func:`warm_up`)."""
    deadline: float | None = None
    """When the first call without a click that found the walk under way stops reading
    it itself (:data:`FIRST_CALL_WAIT` after it came)."""
    result: ScanResult | None = None
    """The scan of the walk once done, kept until a change."""
    partial: tuple[int, ScanResult | None] | None = None
    """The last :func:`_partial` answer, and the walk's version it is for."""
    unlinked: list[str] = field(default_factory=list)
    """Folders whose link counts may still be unchecked (a folder here may be checked
    already, or gone)."""
    full: ScanResult | None = None
    """``result`` with ``linked``, once every folder's link counts were looked at."""

    @property
    def folders(self) -> dict[str, Folder]:
        """Every folder read, in the order read."""
        return self.walk.folders


_scan_cache: dict[str, _Cached] = {}
_watched: dict[int, set[str]] = {}  # inotify wd -> the roots whose scan read that folder
_pending: dict[str, dict[int, set[str] | None]] = {}  # root -> its folders' changes (by wd)
_stale: set[str] = set()
_scan_lock = threading.RLock()
_waiting: list[str] = []  # calls waiting for the lock (the background lets them go first)
_last_use = [0.0]  # when a call last had the lock (the background keeps off a while after)
_SLICE = 300  # entries the background reads (or files it looks at) with the lock held
_KEEP_OFF = 0.02  # seconds the background keeps off after a call had the lock...
_KEEP_OFF_MAX = 0.1  # ...and at most, before each slice (so that it always gets on)
_generation = [0]
"""Bumped whenever any kept scan may change: a change heard (inotify events, or events
lost), a walk started, moved on or finished, link counts looked at (:func:`generation`)."""


def generation() -> int:
    """A number that changes whenever what any kept scan says may have changed since it
    was last read: the changes heard since are taken in first. A command line built
    (:func:`~nb_tools.sandbox.prepare`) after reading it, with no change since, is
    as fresh as one built now, as far as the scans know (the ready sandbox, ``_ready``)."""
    with _first_in_line(""):
        _drain(watcher())
        return _generation[0]


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
    with _first_in_line(key):
        cached = _fresh(key)
        if cached.result is None:
            if links and cached.driven and cached.watched:
                if cached.deadline is None:
                    cached.deadline = time.monotonic() + FIRST_CALL_WAIT
                while not cached.walk.done():
                    if cached.watched and time.monotonic() >= cached.deadline:
                        found = _partial(key, cached)
                        if found is not None:
                            return found
                    _step(key, cached, 500)
            _step(key, cached)
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


@contextlib.contextmanager
def _first_in_line(key: str) -> Iterator[None]:
    """Hold the scan's lock, ahead of the background (which gives way between its slices
    to a call waiting here)."""
    _waiting.append(key)
    try:
        _scan_lock.acquire()
    finally:
        _waiting.remove(key)
    try:
        yield
    finally:
        _last_use[0] = time.monotonic()
        _scan_lock.release()


def _give_way() -> None:
    """Before a background slice: wait while a call waits for the lock, or had it a moment
    ago (a call asks for the scan several times: the slices keep off it), at most
    :data:`_KEEP_OFF_MAX`."""
    end = time.monotonic() + _KEEP_OFF_MAX
    while time.monotonic() < end and (_waiting or time.monotonic() - _last_use[0] < _KEEP_OFF):
        time.sleep(0.002)


def _step(key: str, cached: _Cached, budget: int | None = None) -> bool:
    """:meth:`Walk.step`; when inotify refuses a watch (none left), the walk starts
    again unwatched (its freshness by ``mtime`` from then on)."""
    _generation[0] += 1
    try:
        return cached.walk.step(budget)
    except _Unwatchable:
        cached.watched = False
        old = cached.walk
        _unwatch(key, list(old.wds), watcher())
        cached.walk = Walk(
            old.top, lambda _: None, links=old.links, entries=old.max_entries, depth=old.max_depth
        )
        return cached.walk.step(budget)


def _partial(key: str, cached: _Cached) -> ScanResult | None:
    """What is known of a walk under way: the folders not read yet in ``unscanned``
    (hidden from the call), the link counts of every folder read; ``None`` when a call
    may not run with that hidden yet (:func:`_masks`). Kept until the walk moves on."""
    walk = cached.walk
    if cached.partial is not None and cached.partial[0] == walk.version:
        return cached.partial[1]
    found = None
    masks = _masks(key, walk)
    if masks is not None:
        for f in walk.folders.values():
            if f.linked is None:
                f.linked = _folder.links(f)
        fs = walk.folders.values()
        found = replace(
            _result(walk.folders, masks),
            linked=tuple(p for f in fs for p in f.linked or ()),
        )
    cached.partial = (walk.version, found)
    return found


def _masks(key: str, walk: Walk) -> list[str] | None:
    """What a call hides while ``walk`` is under way (:meth:`Walk.masks`; more than
    :data:`_FEW_MASKS` of them become the folders of the root that hold them: each mask
    is a mount, and many cost a call more than they show), or ``None`` when it may not
    run with that hidden yet: the root is not read, more than
    :data:`MAX_UNSCANNED_MASKS` are needed, or one holds a folder programs run from (the
    kernel's environment, a ``PATH`` entry)."""
    masks = _few(key, walk.masks())
    if key not in walk.folders or key in masks or len(masks) > MAX_UNSCANNED_MASKS:
        return None
    tools = [sys.prefix, sys.exec_prefix, *os.environ.get("PATH", "").split(os.pathsep)]
    tools += [v for k in ("VIRTUAL_ENV", "CONDA_PREFIX") if (v := os.environ.get(k))]
    real = [os.path.realpath(t) + "/" for t in tools if os.path.isabs(t)]
    if any(t.startswith(m.rstrip("/") + "/") for m in masks for t in real):
        return None
    return masks


def _few(key: str, masks: list[str]) -> list[str]:
    """``masks`` (folders in the root ``key``), or, when there are more than
    :data:`_FEW_MASKS` of them, the folders of the root that hold them: each mask is a
    mount, and many cost a call more than they show (the walk reads the small folders of
    the root first, so these are the bulky ones)."""
    if len(masks) <= _FEW_MASKS:
        return masks
    top = key.rstrip("/") + "/"
    return outermost(
        [top + m[len(top) :].split("/", 1)[0] if m.startswith(top) else m for m in masks]
    )


def _finish(key: str, cached: _Cached) -> None:
    """The walk is done: its result (more than :data:`_FEW_MASKS` folders left unread
    become the folders of the root that hold them), and the folders whose link counts are
    still to do."""
    _generation[0] += 1
    walk = cached.walk
    cached.result = _result(walk.folders, _few(key, walk.unscanned))
    cached.full = None
    cached.unlinked = [d for d, f in reversed(walk.folders.items()) if f.linked is None]


def _fresh(key: str) -> _Cached:
    """The kept scan of ``key``, brought up to date (the caller holds the lock); a walk
    still under way is brought up to date as far as it went."""
    w = watcher()
    _drain(w)
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
    if len(_scan_cache) - (key in _scan_cache) > 64:
        _forget_all(w)  # before the new walk: its watches must outlive the forgetting
    new = _rescan(key, w)
    _scan_cache[key] = new
    return new


def _drain(w: Watcher | None) -> None:
    """Take in the changes inotify heard, for every kept scan (the caller holds the lock)."""
    if w is None:
        return
    changed = w.changed()
    if changed is None:
        _stale.update(_scan_cache)
        _generation[0] += 1
        return
    if changed:
        _generation[0] += 1
    for wd, names in changed.items():
        for r in _watched.get(wd, ()):
            mine = _pending.setdefault(r, {})
            had = mine.get(wd, set())
            mine[wd] = None if names is None or had is None else had | names


def _check_links(cached: _Cached, budget: int | None) -> bool:
    """Look at the link counts of the folders still unchecked, about ``budget`` files
    (``None``: all); whether all are done."""
    done = 0
    if cached.unlinked:
        _generation[0] += 1
    while cached.unlinked:
        f = cached.folders.get(cached.unlinked.pop())
        if f is None or f.linked is not None:
            continue
        f.linked = _folder.links(f)
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


def warm_up(root: str | os.PathLike[str]) -> threading.Event:
    """Start the scan of ``root`` now; on a background thread, probe the sandbox, look
    up what every call needs once (a command line without a workspace), read the scan,
    its link counts with it, and build one no-click command line, so that the first call
    finds it all done: started when a shell tool is made, long before
    the model's first reply asks for a call. A call without a click that comes sooner
    reads the walk itself for up to :data:`FIRST_CALL_WAIT`, then runs with the folders
    not read yet hidden (see :func:`scan_all`); any other call waits for the walk (reads
    the rest itself). The thread reads in slices of a few hundred entries, and keeps off
    a call that asks for the scan (:func:`_give_way`). Returns an event set when the
    thread is done."""
    key = os.path.realpath(root)
    finished = threading.Event()
    with _scan_lock:
        if key not in _scan_cache:
            _scan_cache[key] = _rescan(key, watcher())
        _drive(_scan_cache[key])

    def work() -> None:
        try:
            warm()
        finally:
            finished.set()

    def warm() -> None:
        with contextlib.suppress(Exception):
            from nb_tools.sandbox._launch import prepare  # the launcher is built on this
            from nb_tools.sandbox._policy import SandboxPolicy

            sandboxed = sandbox_available().ok
            if sandboxed:  # what every call looks up once (system files, tool folders)
                prepare(["true"], SandboxPolicy(mode="read-only").unapproved())
            done = False
            while not done:
                _give_way()
                with _scan_lock:
                    cached = _fresh(key)
                    if cached.result is None:
                        _drive(cached)
                        try:
                            if _step(key, cached, _SLICE):
                                _finish(key, cached)
                        except BaseException:
                            cached.driven = False  # the calls read it themselves
                            raise
                        continue
                    done = _check_links(cached, _SLICE)
            if sandboxed:
                prepare(["true"], SandboxPolicy(mode="read-only", workspace=Path(key)).unapproved())

    threading.Thread(target=work, name="nb_tools-scan", daemon=True).start()
    return finished


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
    _generation[0] += 1
    _stale.discard(key)
    _pending.pop(key, None)
    old = _scan_cache.pop(key, None)
    if old is not None and old.watched:
        _unwatch(key, list(old.walk.wds), w)
    use = w if w is not None and watchable(key) else None
    walk = Walk(key, _watcher_for(key, use), entries=MAX_SCAN_ENTRIES, depth=MAX_SCAN_DEPTH)
    return _Cached(walk=walk, watched=use is not None)


def _update(
    key: str, cached: _Cached, changed: dict[int, set[str] | None], w: Watcher | None
) -> bool:
    """Bring the folders of ``changed`` up to date (:meth:`Walk.refresh`), and read the
    folders new in them; ``False`` when the tree must be read whole (its top changed, or
    a new folder is past the limits)."""
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
        unread = len(walk.unscanned)
        _step(key, cached)
        if len(walk.unscanned) > unread:
            return False  # past the limits now: read whole (the project first, one mask a package)
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
