"""What a sandboxed process must not see or change, found on this machine.

The lists of names come from the one protection table (:mod:`._protection`); here they
are looked up (the system's files, the home and tool folders, the repository around the
workspace, the credentials in git configs), next to what the scan of a root found
(:mod:`._scan`), and :mod:`nb_tools.sandbox._bwrap` turns both into mounts: hidden (an
empty read-only stand-in mounted over it) or re-bound read-only.
"""

from __future__ import annotations

import contextlib
import functools
import glob
import os
import re
import stat
import threading
from collections.abc import Hashable, Iterator, Mapping, Sequence
from contextvars import ContextVar
from pathlib import Path
from typing import Any

from nb_tools.sandbox._kept import kept
from nb_tools.sandbox._protection import TABLE
from nb_tools.sandbox._scan import ScanResult, scan_all

__all__ = [
    "GIT_PROTECTED",
    "HOME_SECRETS",
    "SECRET_NAMES",
    "SYSTEM_SECRET_FILES",
    "SYSTEM_TOP",
    "coarse_masks",
    "git_configs_with_credentials",
    "home_dirs",
    "jupyter_runtime_dir",
    "outside_masks",
    "repository_dirs",
    "sanitized_git_config",
    "system_secret_files",
    "toolchain_dirs",
    "unix_socket_paths",
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
    ``/media``, other project trees...): what a ``system_only`` sandbox masks (kept while
    ``/`` is unchanged: a folder made, removed or renamed there changes its times)."""
    return list(kept(_kept_answers, "outside_masks", ("/",), _outside_masks))


_kept_answers: dict[Hashable, Any] = {}


def _outside_masks() -> tuple[Path, ...]:
    names: list[str] = []
    try:
        with os.scandir("/") as it:
            for entry in it:
                try:
                    is_dir = entry.is_dir(follow_symlinks=False)
                except OSError:
                    continue
                if is_dir and entry.name not in SYSTEM_TOP:
                    names.append(entry.name)
    except OSError:
        pass
    return tuple(Path("/" + name) for name in sorted(names))  # the order of sorted(Path)


def repository_dirs(workspace: Path) -> tuple[list[Path], list[Path]]:
    """What git needs outside ``workspace`` to read its repository: (work tree folders, git
    folders). The work tree's top when the workspace is a folder inside it (unless that top
    is ``/`` or holds or is a home folder); the git folder and common folder of a linked
    worktree."""
    tops: list[Path] = []
    gitdirs: list[Path] = []
    for d in (workspace, *workspace.parents):
        dot = d / ".git"
        try:  # one stat a level: most have no .git
            mode = os.stat(dot).st_mode
        except (OSError, ValueError):
            continue
        is_dir, is_file = stat.S_ISDIR(mode), stat.S_ISREG(mode)
        if is_dir or is_file:
            homes = home_dirs()
            if d not in (workspace, Path("/")) and not any(
                h == d or h.is_relative_to(d) for h in homes
            ):
                tops.append(d)
        if is_dir:
            break
        if is_file:
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


_pinned_homes: ContextVar[tuple[Path, ...] | None] = ContextVar(
    "nb_tools_pinned_homes", default=None
)


@contextlib.contextmanager
def homes_pinned() -> Iterator[None]:
    """Inside the block, :func:`home_dirs` answers what it found on entry: one command line
    is built from one view of the homes (resolved once, not once per helper that asks)."""
    token = _pinned_homes.set(tuple(home_dirs()))
    try:
        yield
    finally:
        _pinned_homes.reset(token)


def home_dirs() -> list[Path]:
    """Every home folder to replace by an empty one: ``/root``, ``/home``, ``$HOME`` and the
    user's home from the password database."""
    pinned = _pinned_homes.get()
    if pinned is not None:
        return list(pinned)
    real = tuple(
        os.path.realpath(raw)
        for raw in (os.environ.get("HOME"), _pw_home())
        if raw and os.path.isabs(raw)
    )
    return list(_home_list(real))


@functools.lru_cache(maxsize=8)
def _home_list(real: tuple[str, ...]) -> tuple[Path, ...]:
    """The paths for :func:`home_dirs` (the resolved homes are looked up on every call;
    only the list built from them is kept)."""
    return tuple(_dedupe([Path("/root"), Path("/home"), *map(Path, real)]))


def coarse_masks() -> list[Path]:
    """Folders replaced by an empty, private tmpfs: ``/tmp``, ``/run`` (the Unix sockets of
    dbus, docker, systemd), ``$XDG_RUNTIME_DIR``, the Jupyter runtime folder (the kernels'
    connection files) and the home folders."""
    out = ["/tmp", "/run", "/var/tmp"]  # /dev (and /dev/shm) is new
    xdg = os.environ.get("XDG_RUNTIME_DIR")
    if xdg and os.path.isabs(xdg):
        out.append(os.path.realpath(xdg))
    out.append(str(jupyter_runtime_dir()))
    out += map(str, home_dirs())
    return [Path(p) for p in dict.fromkeys(out) if p != "/" and os.path.isdir(p)]


def jupyter_runtime_dir() -> Path:
    """Where Jupyter keeps the kernels' connection files (their keys run code in a kernel)."""
    env = os.environ
    raw = _runtime_dir_for(tuple(env.get(name) for name in _JUPYTER_PATH_ENV))
    return Path(os.path.realpath(raw))  # resolved on every call: a link may be changed


# What jupyter_core's answer depends on (checked against jupyter_core 5.9:
# paths.jupyter_runtime_dir and jupyter_data_dir, off Windows).
_JUPYTER_PATH_ENV = (
    "JUPYTER_RUNTIME_DIR",
    "JUPYTER_DATA_DIR",
    "JUPYTER_PLATFORM_DIRS",
    "XDG_DATA_HOME",
    "HOME",
)


@functools.lru_cache(maxsize=8)
def _runtime_dir_for(env: tuple[str | None, ...]) -> str:
    """jupyter_core's runtime folder for the environment values ``env`` (of
    ``_JUPYTER_PATH_ENV``), looked up once per distinct environment."""
    try:
        from jupyter_core.paths import jupyter_runtime_dir as find
    except ImportError:  # pragma: no cover - jupyter_core comes with ipykernel
        return os.environ.get("JUPYTER_RUNTIME_DIR") or os.path.expanduser(
            "~/.local/share/jupyter/runtime"
        )
    return find()


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


_CONFIG_CREDENTIALS = re.compile(
    r"[a-z][a-z0-9+.-]*://[^/\s@]+@|extraheader|^\s*(password|token|secret)\w*\s*=",
    re.IGNORECASE | re.MULTILINE,
)


def git_configs_with_credentials(
    roots: list[Path], gitdirs: Sequence[Path] = (), found: Mapping[Path, ScanResult] | None = None
) -> list[Path]:
    """The config files of the repositories the scan found in ``roots`` (``found``: the
    scans the call already has, one per root) and of the git folders ``gitdirs`` that hold
    credentials: a remote URL with a user or password (``https://TOKEN@host``), an
    ``extraheader`` (CI checkouts keep their token there), a ``password``/``token`` key."""
    gitdirs = list(gitdirs)
    for r in roots:
        scanned = found[r] if found is not None and r in found else scan_all(r)
        gitdirs += [repo / ".git" for repo in scanned.repos]
    out: list[Path] = []
    for g in dict.fromkeys(gitdirs):
        base = str(g)
        modules: list[str] = []
        if os.path.isdir(base + "/modules"):  # most repositories have no submodules
            modules = glob.glob(glob.escape(base) + "/modules/*/config")
            modules += glob.glob(glob.escape(base) + "/modules/*/modules/*/config")
        for cfg in (base + "/config", base + "/config.worktree", *modules):
            if kept(_kept_answers, ("credentials", cfg), (cfg,), lambda c=cfg: _credentials(c)):
                out.append(Path(cfg))
    return out


def _credentials(cfg: str) -> bool:
    """Whether the git config ``cfg`` (a regular file, not a link) holds credentials."""
    try:
        if os.path.islink(cfg) or not os.path.isfile(cfg):
            return False
        with open(cfg, encoding="utf-8", errors="replace") as f:
            text = f.read(1_000_000)
    except OSError:
        return False
    return _CONFIG_CREDENTIALS.search(text) is not None


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
    if not out.exists():  # a writer's own temporary name: the warm-up thread may race a call
        tmp = out.with_suffix(f".{os.getpid()}.{threading.get_ident()}.tmp")
        tmp.write_text(clean)
        tmp.chmod(0o444)
        os.replace(tmp, out)
    return out


def unix_socket_paths() -> list[str]:
    """Paths of the Unix sockets bound on this machine (``/proc/net/unix``), as strings
    (the command line needs no path object for one it leaves alone)."""
    out: list[str] = []
    try:
        with open("/proc/net/unix", encoding="utf-8", errors="replace") as f:
            next(f, None)
            for line in f:
                parts = line.split(None, 7)
                if len(parts) == 8 and parts[7].startswith("/"):
                    out.append(parts[7].rstrip("\n"))
    except OSError:
        pass
    return out


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
