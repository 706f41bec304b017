"""Protection the table cannot read from a path's names alone: it looks at the disk.

* Default deny in a home folder. A deny-list of a home's secrets can never be complete, so
  when a home folder is inside the workspace (the workspace is one, or holds one: ``/root``,
  ``/home/u``, or a folder with the look of a home), every dot-entry of it is hidden from
  calls that ran without a click and protected from writes, but :data:`HOME_ALLOW`.
* A repository's ``core.hooksPath`` folder (husky's ``.husky/``): git runs the hooks there.
* A bare repository's ``hooks/`` and ``config`` (a folder with ``HEAD``, ``objects/`` and
  ``refs/``), which no ``.git`` in the path gives away.
* The files a repository's config includes (``include.path``, ``includeIf.*.path``): git
  reads them as its config, so they run what the config itself could.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from nb_tools.sandbox._hide import home_dirs
from nb_tools.sandbox._protection import fold_name

__all__ = [
    "HOME_ALLOW",
    "HOME_MARKERS",
    "config_includes",
    "home_dot_entries",
    "home_dot_reason",
    "homes_among",
    "homes_in",
    "hooks_path",
    "is_bare_repo",
    "path_rule_reason",
    "program_dirs",
]

HOME_ALLOW: dict[str, str] = {
    ".gitignore": "names files git skips; it runs nothing and holds no secret",
    ".editorconfig": "indentation and line-ending settings editors read; runs nothing",
    ".python-version": "the interpreter version pyenv picks; a version name, no secret",
    ".ipynb_checkpoints": "Jupyter's saved copies of the notebooks in this folder",
    ".virtual_documents": "copies of open notebooks jupyterlab-lsp writes for the language server",
}
"""The dot-entries of a home folder a call without a click may read, and a write may change
without a click, with why each is harmless. Everything else starting with a dot is denied."""

HOME_MARKERS = (".bashrc", ".bash_profile", ".bash_logout", ".profile", ".zshrc",
                ".bash_history", ".zsh_history")  # fmt: skip
"""A folder holding one of these has the look of a home folder."""

_ALLOW_FOLDED = frozenset(fold_name(n) for n in HOME_ALLOW)
_homes_cache: dict[str, tuple[int, tuple[Path, ...]]] = {}


def _looks_like_home(folder: Path, known: list[Path]) -> bool:
    if folder in known:
        return True
    return any(os.path.lexists(folder / m) for m in HOME_MARKERS)


def homes_in(root: Path) -> tuple[Path, ...]:
    """The home folders at or inside ``root`` (a realpath): ``root`` itself, its children
    and the children of its ``home`` and ``Users`` folders, when they are a known home
    (``/root``, ``/home/*``, ``$HOME``) or have the look of one (:data:`HOME_MARKERS`);
    plus the known homes inside ``root``. Kept while ``root``'s modification time stays."""
    key = str(root)
    try:
        mtime = os.stat(root).st_mtime_ns
    except OSError:
        return ()
    cached = _homes_cache.get(key)
    if cached is not None and cached[0] == mtime:
        return cached[1]
    known = [h for h in home_dirs() if h != Path("/home")]
    known += _children(Path("/home"))
    candidates = [root, *_children(root)]
    for sub in ("home", "Users"):
        candidates += _children(root / sub)
    found = [c for c in candidates if _looks_like_home(c, known)]
    found += [h for h in known if h.is_relative_to(root) and h.is_dir()]
    out = tuple(dict.fromkeys(found))
    if len(_homes_cache) > 64:
        _homes_cache.clear()
    _homes_cache[key] = (mtime, out)
    return out


def homes_among(found: Iterable[Path]) -> tuple[Path, ...]:
    """The folders, at any depth, that hold one of :data:`HOME_MARKERS` among ``found``
    (the paths a scan of the workspace classified: the shell start-up files and histories
    are the table's), so a copy of a home deeper than :func:`homes_in` looks
    (``backup/alice``) has its dot-entries hidden too."""
    return tuple(dict.fromkeys(p.parent for p in found if p.name in HOME_MARKERS))


def _children(folder: Path) -> list[Path]:
    out: list[Path] = []
    try:
        with os.scandir(folder) as it:
            for entry in it:
                try:
                    if entry.is_dir(follow_symlinks=False):
                        out.append(Path(entry.path))
                except OSError:
                    continue
    except OSError:
        pass
    return out


def home_dot_reason(path: Path, homes: tuple[Path, ...], root: Path) -> str | None:
    """Why ``path`` (absolute, in the workspace ``root``) is denied as a dot-entry of one
    of ``homes``, or of a folder of the workspace up its path with the look of a home
    (:data:`HOME_MARKERS`) at any depth: a copy of a home deeper than :func:`homes_in`
    looks (``backup/alice``, ``mnt/old/home/bob``). ``None`` when it is neither. Folders
    above ``root`` do not count: a workspace inside a home's dot-folder (a project in
    ``~/.local/src``, a search of ``~/.pyenv``'s site-packages) was chosen by the user."""
    for home in homes:
        if path == home or not path.is_relative_to(home):
            continue
        first = path.relative_to(home).parts[0]
        if _denied_dot(first):
            return _home_reason(home)
    parts = path.parts
    start = max(len(root.parts), 1)
    if not any(p[:1] == "." for p in parts[start:]):
        return None  # no dot-entry below the workspace's top (most paths: one pass)
    for i in range(start, len(parts)):
        if _denied_dot(parts[i]) and _looks_like_home(Path(*parts[:i]), []):
            return _home_reason(Path(*parts[:i]))
    return None


def _denied_dot(name: str) -> bool:
    return name.startswith(".") and name not in (".", "..") and fold_name(name) not in _ALLOW_FOLDED


def _home_reason(home: Path) -> str:
    return (
        f"the home folder {home} is in the workspace, and its dot-entries (settings, "
        f"caches, credentials) are protected but for a short allow-list "
        f"({', '.join(HOME_ALLOW)})"
    )


def home_dot_entries(home: Path, *, programs: bool = False) -> list[Path]:
    """The denied dot-entries of ``home`` that exist. Without ``programs``, what a
    sandboxed call needs to run a program in use (a ``PATH`` entry, this Python) stays:
    a tool folder whole (``~/.pyenv``), but of ``.local``, ``.config`` and ``.cache`` only
    the program's own folders (``~/.local/bin``), their other entries denied."""
    used = [] if programs else program_dirs()
    out: list[Path] = []
    try:
        names = os.listdir(home)
    except OSError:
        return out
    for name in sorted(names):
        if not name.startswith(".") or fold_name(name) in _ALLOW_FOLDED:
            continue
        p = home / name
        holds = [q for q in used if q == p or q.is_relative_to(p)]
        if not holds:
            out.append(p)
        elif name in _SHARED_TOPS:
            out += _around(p, holds)
    return out


_SHARED_TOPS = frozenset({".local", ".config", ".cache"})


def _around(folder: Path, keep: list[Path], depth: int = 0) -> list[Path]:
    """The entries of ``folder`` that are not, and do not hold, one of ``keep``."""
    if depth > 4 or any(folder == k or folder.is_relative_to(k) for k in keep):
        return []
    out: list[Path] = []
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return out
    for name in names:
        p = folder / name
        inner = [k for k in keep if k == p or k.is_relative_to(p)]
        if not inner:
            out.append(p)
        elif not os.path.islink(p):
            out += _around(p, inner, depth + 1)
    return out


def program_dirs() -> list[Path]:
    """The folders programs run from: ``PATH``, this Python's prefixes, ``$VIRTUAL_ENV``."""
    raw = [p for p in os.environ.get("PATH", "").split(os.pathsep) if os.path.isabs(p)]
    raw += [sys.prefix, sys.base_prefix, sys.exec_prefix]
    raw += [v for k in ("VIRTUAL_ENV", "CONDA_PREFIX") if (v := os.environ.get(k))]
    return list(dict.fromkeys(Path(os.path.realpath(p)) for p in raw))


_SECTION = re.compile(r"^\s*\[\s*([A-Za-z][\w.-]*)[^\]]*\]?")
_KEY = re.compile(r"^\s*([A-Za-z][\w-]*)\s*=\s*(.*?)\s*$")


def git_dir(repo: Path) -> Path:
    """The git folder of the repository at ``repo``: ``repo/.git``, the folder a ``.git``
    file names (``gitdir: ../.git/modules/lib``: a submodule, a linked work tree; its
    ``commondir`` for the shared config), or ``repo`` itself (a bare repository)."""
    dot = repo / ".git"
    if dot.is_dir():
        return dot
    if dot.is_file():
        try:
            line = dot.read_text(errors="replace")[:4096].strip()
        except OSError:
            return dot
        if line.startswith("gitdir:"):
            gitdir = Path(os.path.normpath(repo / line[7:].strip()))
            try:
                common = (gitdir / "commondir").read_text(errors="replace").strip()
            except OSError:
                return gitdir
            return Path(os.path.normpath(gitdir / common))
        return dot
    return repo


@dataclass(frozen=True)
class _Config:
    """What git reads from a repository's config and the files it includes: the
    ``core.hooksPath`` value (last wins, as git reads) and the included files."""

    hooks: str | None
    includes: tuple[Path, ...]


_config_cache: dict[str, tuple[tuple[tuple[Path, int | None], ...], _Config]] = {}


def _config(repo: Path, depth: int = 5) -> _Config:
    cfg = git_dir(repo) / "config"
    cached = _config_cache.get(str(cfg))
    if cached is not None and all(_mtime(f) == m for f, m in cached[0]):
        return cached[1]
    read: list[tuple[Path, int | None]] = []
    includes: list[Path] = []
    hooks = _parse(cfg, depth, read, includes, None)
    found = _Config(hooks=hooks, includes=tuple(includes))
    if len(_config_cache) > 256:
        _config_cache.clear()
    _config_cache[str(cfg)] = (tuple(read), found)
    return found


def _parse(
    f: Path,
    depth: int,
    read: list[tuple[Path, int | None]],
    includes: list[Path],
    hooks: str | None,
) -> str | None:
    """Read ``f`` as git does, in order, an include where it stands (``depth`` levels
    down): a ``[section] key = value`` on the header's line too. Returns the
    ``core.hooksPath`` in force after it; ``includes`` gets every included file."""
    read.append((f, _mtime(f)))
    try:
        text = f.read_text(errors="replace")[:1_000_000]
    except OSError:
        return hooks
    section = ""
    for line in text.splitlines():
        head = _SECTION.match(line)
        if head is not None:
            section = head.group(1).lower()
            line = line[head.end() :]
        m = _KEY.match(line)
        if m is None:
            continue
        key = m.group(1).lower()
        value = m.group(2).split(";")[0].split("#")[0].strip().strip('"')
        if section == "core" and key == "hookspath":
            hooks = value or None
        elif section.startswith("include") and key == "path" and value:
            target = Path(os.path.normpath(f.parent / os.path.expanduser(value)))
            if target not in includes:
                includes.append(target)
                if depth > 1:
                    hooks = _parse(target, depth - 1, read, includes, hooks)
    return hooks


def hooks_path(repo: Path) -> Path | None:
    """The ``core.hooksPath`` folder of the repository at ``repo`` (a work tree holding a
    ``.git`` folder or file, or a bare repository), as its config and the files that
    config includes set it, made absolute; ``None``."""
    value = _config(repo).hooks
    if not value:
        return None
    return Path(os.path.normpath(repo / os.path.expanduser(value)))


def config_includes(repo: Path, *, depth: int = 5) -> list[Path]:
    """The files the config of the repository at ``repo`` (a work tree holding ``.git``,
    or a bare repository) includes (``[include]`` and ``[includeIf ...]`` ``path``),
    made absolute as git does (relative to the including file's folder, ``~`` expanded),
    and what those include in turn, ``depth`` levels down."""
    return list(_config(repo, depth).includes)


def _mtime(f: Path) -> int | None:
    try:
        return os.stat(f).st_mtime_ns
    except OSError:
        return None


def is_bare_repo(folder: Path) -> bool:
    """``folder`` is a git folder without a work tree (``HEAD``, ``objects/``, ``refs/``)."""
    return (
        os.path.isfile(folder / "HEAD")
        and os.path.isdir(folder / "objects")
        and os.path.isdir(folder / "refs")
    )


def path_rule_reason(root: Path, path: Path) -> str | None:
    """Why ``path`` (absolute, inside ``root``) is protected by a rule of this module."""
    why = home_dot_reason(path, homes_in(root), root)
    if why is not None:
        return why
    for folder in (path.parent, *path.parent.parents):
        if not folder.is_relative_to(root):
            break
        if os.path.lexists(folder / ".git"):
            hooks = hooks_path(folder)
            if hooks is not None and (path == hooks or path.is_relative_to(hooks)):
                return f"git runs the hooks in {hooks} (the repository's core.hooksPath)"
            if path in config_includes(folder):
                return f"git reads it as part of the config of the repository {folder} (include)"
        if is_bare_repo(folder):
            rel = path.relative_to(folder).parts
            if rel and rel[0] in ("hooks", "config"):
                return f"{folder} is a bare repository: git runs its hooks and reads its config"
            hooks = hooks_path(folder)
            if hooks is not None and (path == hooks or path.is_relative_to(hooks)):
                return f"git runs the hooks in {hooks} (the repository's core.hooksPath)"
            if path in config_includes(folder):
                return f"git reads it as part of the config of the repository {folder} (include)"
    return None
