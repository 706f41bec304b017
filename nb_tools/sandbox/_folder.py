"""One folder of the scan (:mod:`._scan`), and a tree of them read a slice at a time.

A folder is read with one ``getdents`` (``os.scandir``; the entry types come with the
names, no file is looked at) and each entry classified by its name against the
protection table (:mod:`._protection`); a change inotify reported is looked at name by
name (:func:`patch`: one ``lstat`` a name), not by listing the folder again; the link
counts of its regular files are looked at only when asked (:func:`links`: one
``fstatat`` a file).
"""

from __future__ import annotations

import heapq
import os
import stat
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from nb_tools.sandbox._protection import ALL, SECRETS, TABLE, fold_name

__all__ = ["LINKING_MANAGERS", "Folder", "Todo", "Walk", "links", "outermost", "read"]


_SKIP_DIRS = frozenset(
    {".git", "node_modules", "__pycache__", ".venv", "venv", ".tox", ".nox", ".mypy_cache",
     ".ruff_cache", ".pytest_cache", "site-packages"}
)  # fmt: skip
"""Package and cache folders: read last (after the project), never searched for
repositories."""
LINKING_MANAGERS = frozenset({"node_modules", ".venv", "venv", "site-packages", "pkgs"})
"""Folders whose package managers hard-link files on purpose (npm/pnpm, uv and pip
caches, conda's ``pkgs``; a conda environment, a folder holding ``conda-meta``, too):
a file with several links there is expected, and is not hidden for it."""


# -- one folder ----------------------------------------------------------------------------


class Todo(NamedTuple):
    """A folder to read, with what its parents decided about it."""

    path: str
    depth: int
    package: str  # the package folder it is in ("": none): no repositories looked for
    links_ok: bool  # in a package manager's folder: hard links expected
    tail: tuple[str, ...]  # its last names, folded, as far back as a table pattern reaches


@dataclass
class Folder:
    """What the scan found in one folder: the entries the table names, and the names of
    the regular files whose link count is still to be looked at (``linked`` is ``None``
    until it is)."""

    todo: Todo
    entries: int
    wd: int | None  # its inotify watch; None: freshness by ``mtime``
    mtime: int
    secrets: list[Path] = field(default_factory=list)
    protected: list[Path] = field(default_factory=list)
    writes: list[Path] = field(default_factory=list)  # the table's paths that are no secret
    repo: bool = False
    bare: bool = False
    subdirs: list[Todo] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    linked: list[Path] | None = None
    names: set[str] | None = None  # every entry's name (None: not kept)


_TAIL = max(len(e.parts) for e in TABLE) - 1


def _root_todo(root: str) -> Todo:
    names = root.rstrip("/").rsplit("/", _TAIL)[1:]
    return Todo(root, 0, "", False, tuple(fold_name(n) for n in names if n))


def read(todo: Todo, watch: Callable[[str], int | None]) -> Folder | None:
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


def _classify(todo: Todo, entries: list[os.DirEntry[str]], wd: int | None, mtime: int) -> Folder:
    """Each entry by its name alone (the table's patterns end at it), and by its type as
    the folder listing gives it (no look at the file)."""
    folder, depth, package, links_ok, tail = todo
    out = Folder(todo, len(entries), wd, mtime, names={e.name for e in entries})
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
                    Todo(entry.path, depth + 1, entry.path if skip else package, ok, sub)
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


def links(f: Folder) -> list[Path]:
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


def _patchable(names: set[str], f: Folder) -> bool:
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


def _patch(f: Folder, names: set[str]) -> Folder | None:
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
    out = Folder(
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
        out.linked = [p for p in f.linked if keep(p)] + (links(part) if part.files else [])
    return out


def _is_dir(path: str) -> bool:
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


def _read_again(f: Folder) -> Folder | None:
    return read(f.todo, lambda _: f.wd)


def _bare(folder: str) -> bool:
    return os.path.isdir(folder + "/objects") and os.path.isdir(folder + "/refs")


# -- a tree ----------------------------------------------------------------------------------


class Walk:
    """A tree being read, a slice at a time (:meth:`step`): the folders read, those still
    to read (``stack``, kept by the folder of the top that holds them and read smallest
    first: :meth:`_pop`; package folders wait in ``later``, and one that cannot be read to
    the end is left unread as a whole: one mask, not many) and those left unread past the
    limits (``unscanned``). ``links``: each folder's link counts are looked at as it is
    read. A walk that is done stays the root's kept scan: a change sends the folders it
    touched back (:meth:`refresh`), and the new folders in them onto ``stack``."""

    def __init__(
        self,
        top: str | Todo,
        watch: Callable[[str], int | None],
        *,
        links: bool = False,
        entries: int = 50_000,
        depth: int = 32,
    ) -> None:
        self.top = top if isinstance(top, Todo) else _root_todo(top)
        self.max_entries = entries
        self.max_depth = depth
        self.watch = watch
        self.links = links
        self.groups: dict[str, list[Todo]] = {"": [self.top]}  # never an empty list
        self.used: dict[str, int] = {}  # entries read in each group
        self._order: list[tuple[int, int, str]] = [(0, 0, "")]  # heap: (used, made, group)
        self._made = 0
        self.later: list[Todo] = []
        self.folders: dict[str, Folder] = {}
        self.wds: dict[int, str] = {}  # inotify wd -> the folder read under it
        self.unscanned: list[str] = []
        self.seen = 0
        self.version = 0  # counts the changes to what the walk knows or has still to read

    @property
    def stack(self) -> list[Todo]:
        """The project's folders still to read (package folders wait in ``later``)."""
        return [t for g in self.groups.values() for t in g]

    def done(self) -> bool:
        return not self._pending() and not self.later

    def _pending(self) -> bool:
        return bool(self.groups)

    def _group(self, path: str) -> str:
        """The folder of the top that holds ``path`` (its first name below the top; ""
        for the top itself): the walk's budget is shared between these."""
        top = self.top.path.rstrip("/") + "/"
        return path[len(top) :].split("/", 1)[0] if path.startswith(top) else ""

    def _pop(self) -> Todo:
        """The next folder of the group that has read the fewest entries so far (depth
        first inside a group): the small folders of the top (the code) are read whole
        before a bulky one (data, generated files) takes the rest of the budget, so that
        what the cap leaves unread is the bulky part."""
        order = self._order
        while True:  # a heap entry may be stale: its group read more since, or emptied
            used, made, group = order[0]
            todos = self.groups.get(group)
            if not todos:
                heapq.heappop(order)
            elif used != self.used.get(group, 0):
                heapq.heapreplace(order, (self.used.get(group, 0), made, group))
            else:
                break
        todo = todos.pop()
        if not todos:
            del self.groups[group]
        return todo

    def step(self, budget: int | None = None) -> bool:
        """Read folders until about ``budget`` entries were read, or the project is read
        and only package folders are left (``None``: to the end); whether the walk is
        done."""
        work = 0
        self.version += 1
        while self.later or self._pending():
            todo = self._pop() if self._pending() else self.later.pop()
            if self.seen >= self.max_entries or todo.depth > self.max_depth:
                self.unscanned.append(todo.package or todo.path)
                continue
            f = read(todo, self.watch)
            if f is None:
                continue
            self._keep(f)
            self._push(f.subdirs)
            work += f.entries + 1
            group = self._group(todo.path)
            self.used[group] = self.used.get(group, 0) + f.entries + 1
            if budget is not None and (work >= budget or (not self._pending() and self.later)):
                break  # a slice ends with the project, before the package folders
        return self.done()

    def _keep(self, read: Folder) -> None:
        if self.links and read.linked is None:
            read.linked = links(read)
        old = self.folders.get(read.todo.path)
        self.seen += read.entries - (old.entries if old is not None else 0)
        self.folders[read.todo.path] = read
        if read.wd is not None:
            self.wds[read.wd] = read.todo.path

    def _push(self, todos: Iterable[Todo]) -> None:
        for sub in todos:
            if sub.package and sub.package == sub.path:
                self.later.append(sub)
            else:
                group = self._group(sub.path)
                todos = self.groups.get(group)
                if todos is None:
                    todos = self.groups[group] = []
                    self._made += 1
                    heapq.heappush(self._order, (self.used.get(group, 0), self._made, group))
                todos.append(sub)

    def masks(self) -> list[str]:
        """What a call must not see while the walk is not done: the folders left unread,
        and those still to read (a package folder as a whole)."""
        todo = [t.package or t.path for t in (*self.stack, *self.later)]
        return outermost(self.unscanned + todo)

    def refresh(self, changes: dict[str, set[str] | None]) -> list[int] | None:
        """Bring the folders read up to date with ``changes`` (folder -> the names in it
        that changed; ``None``: all): those names looked at again (one ``lstat`` each), or
        the folder read again; a folder that is gone, or is another one now, is forgotten
        with everything below it, and a new one goes onto ``stack``. The watches no
        longer used; ``None`` when the top is gone or another folder now."""
        drop: list[str] = []
        new: list[Todo] = []
        self.version += 1
        for folder in sorted(changes):
            old = self.folders.get(folder)
            if old is None:
                continue  # not read yet, or forgotten with a parent
            names = changes[folder]
            had = {t.path for t in old.subdirs}
            if names is not None and old.names is not None and _patchable(names, old):
                f = _patch(old, names)
                touched = {t.path for t in old.subdirs if t.path.rsplit("/", 1)[-1] in names}
            else:
                f = read(old.todo, self.watch) if _is_dir(folder) else None
                touched = had
                if f is not None and (f.wd is None or f.wd != old.wd):
                    if folder == self.top.path:
                        return None
                    drop += list(had)  # another folder now: everything below it is new
                    had = set()
            if f is None:
                if folder == self.top.path:
                    return None
                drop.append(folder)
                continue
            if f.linked is None and (self.links or old.linked is not None):
                f.linked = links(f)
            self._keep(f)
            for t in f.subdirs:
                kept = self.folders.get(t.path)
                if t.path not in had:
                    new.append(t)
                elif t.path in touched and kept is not None and self.watch(t.path) != kept.wd:
                    drop.append(t.path)  # replaced (deleted or moved away, made again)
                    new.append(t)
            drop += list(had - {t.path for t in f.subdirs})
        gone = [wd for d in outermost(drop) for wd in self.drop(d)]
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
        for g, todo in list(self.groups.items()):
            todo[:] = [t for t in todo if not (t.path == top or t.path.startswith(inside))]
            if not todo:
                del self.groups[g]
        self.later = [t for t in self.later if not (t.path == top or t.path.startswith(inside))]
        return out


def outermost(paths: list[str]) -> list[str]:
    out: list[str] = []
    for p in sorted(set(paths)):
        if not out or not p.startswith(out[-1].rstrip("/") + "/"):
            out.append(p)
    return out
