"""What a sandboxed process must not see or change, as data.

Everything here is hidden (an empty read-only stand-in is mounted over it) or re-bound
read-only; :mod:`nb_tools.sandbox._bwrap` turns these lists into mounts.
"""

from __future__ import annotations

import functools
import glob
import os
from collections.abc import Iterator
from pathlib import Path

__all__ = [
    "HOME_SECRETS",
    "SECRET_NAMES",
    "SYSTEM_SECRET_FILES",
    "SYSTEM_TOP",
    "WRITE_PROTECTED",
    "coarse_masks",
    "home_dirs",
    "outside_masks",
    "repository_dirs",
    "scan",
    "secret_files_in",
    "system_secret_files",
    "toolchain_dirs",
    "unix_sockets",
]

HOME_SECRETS = (
    ".ssh",
    ".aws",
    ".azure",
    ".config/gcloud",
    ".config/gh",
    ".config/hub",
    ".config/op",
    ".netrc",
    ".gnupg",
    ".docker",
    ".kube",
    ".git-credentials",
    ".gitconfig",
    ".npmrc",
    ".pypirc",
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".password-store",
    ".local/share/keyrings",
    ".local/share/jupyter",
    ".jupyter",
    ".pgpass",
    ".my.cnf",
    ".vault-token",
    ".terraform.d",
    ".bash_history",
    ".zsh_history",
    ".python_history",
)
"""Credentials under a home folder: hidden when a home folder is visible (it is inside the
workspace); the home folders themselves are always replaced by empty ones."""

SYSTEM_SECRET_FILES = (
    "/etc/shadow",
    "/etc/shadow-",
    "/etc/gshadow",
    "/etc/gshadow-",
    "/etc/ssh/ssh_host_*_key",
    "/etc/sudoers",
    "/etc/security/opasswd",
    "/etc/ssl/private/*",
    "/etc/wireguard/*",
    "/etc/NetworkManager/system-connections/*",
    "/etc/krb5.keytab",
    "/etc/docker/key.json",
    "/etc/letsencrypt/archive/*/*",
)

SECRET_NAMES = frozenset(
    {".ssh", ".aws", ".gnupg", ".docker", ".kube", ".netrc", ".git-credentials", ".pgpass"}
)
"""Names hidden wherever they occur in the workspace, with every ``.env*``."""

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

WRITE_PROTECTED = (
    ".nb_tools",
    ".ipython",
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".profile",
    ".zshrc",
    ".zshenv",
    ".zprofile",
)
"""Paths (relative to a writable root) that run code later or hold the permission rules:
read-only even in ``workspace-write``. The two that must exist to be protected
(``.git/hooks`` of a repository, ``.nb_tools``) are created empty."""

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


def repository_dirs(workspace: Path) -> list[Path]:
    """The folders outside ``workspace`` that git needs to read its repository: the work
    tree's top when the workspace is a folder inside it (unless that top is ``/`` or holds
    or is a home folder), and the git folder and common folder of a linked worktree."""
    out: list[Path] = []
    for d in (workspace, *workspace.parents):
        dot = d / ".git"
        if dot.is_dir():
            if d != workspace:
                homes = home_dirs()
                if d != Path("/") and not any(h == d or h.is_relative_to(d) for h in homes):
                    out.append(d)
            return out
        if dot.is_file():
            try:
                line = dot.read_text(errors="replace").strip()
            except OSError:
                return out
            if d != workspace:
                out.append(d)
            if line.startswith("gitdir:"):
                gitdir = Path(os.path.realpath(d / line[7:].strip()))
                out.append(gitdir)
                try:
                    common = (gitdir / "commondir").read_text().strip()
                    out.append(Path(os.path.realpath(gitdir / common)))
                except OSError:
                    pass
            return [p for p in out if p.is_dir() and p != Path("/")]
    return out


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
MAX_SCAN_DEPTH = 8
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
    """The existing files of :data:`SYSTEM_SECRET_FILES` (looked up once per process: new
    host keys appear with a reinstall, not between two shell calls)."""
    if not _system_cache:
        out: list[Path] = []
        for pattern in SYSTEM_SECRET_FILES:
            out += [Path(p) for p in sorted(glob.glob(pattern)) if os.path.isfile(p)]
        _system_cache.append(out)
    return list(_system_cache[0])


_system_cache: list[list[Path]] = []


def secret_files_in(root: Path) -> list[Path]:
    """``.env*`` and :data:`SECRET_NAMES` under ``root`` (see :func:`scan`)."""
    return scan(root)[0]


_scan_cache: dict[str, tuple[list[tuple[str, int]], list[Path], list[Path]]] = {}


def scan(root: Path) -> tuple[list[Path], list[Path]]:
    """The secrets under ``root`` (``.env*`` and :data:`SECRET_NAMES`) and the folders that
    hold a ``.git`` (the repositories whose hooks and config must stay read-only), not
    below :data:`_SKIP_DIRS`, at most :data:`MAX_SCAN_DEPTH` levels and
    :data:`MAX_SCAN_ENTRIES` entries.

    The answer is kept with the modification time of every folder it read, and reused while
    none of them changed (a name added, removed or renamed in a folder changes its mtime):
    one ``stat`` per folder instead of reading them all again."""
    key = str(root)
    cached = _scan_cache.get(key)
    if cached is not None:
        folders, found, repos = cached
        try:
            if all(os.stat(d).st_mtime_ns == m for d, m in folders):
                return list(found), list(repos)
        except OSError:
            pass
    folders, found, repos, complete = _scan(key)
    if complete:
        if len(_scan_cache) > 64:
            _scan_cache.clear()
        _scan_cache[key] = (folders, found, repos)
    return list(found), list(repos)


def _scan(root: str) -> tuple[list[tuple[str, int]], list[Path], list[Path], bool]:
    found: list[Path] = []
    repos: list[Path] = []
    folders: list[tuple[str, int]] = []
    seen = 0
    stack: list[tuple[str, int]] = [(root, 0)]
    while stack:
        folder, depth = stack.pop()
        try:
            mtime = os.stat(folder).st_mtime_ns
            it = os.scandir(folder)
        except OSError:
            continue
        folders.append((folder, mtime))
        with it:
            for entry in it:
                seen += 1
                if seen > MAX_SCAN_ENTRIES:
                    return folders, found, repos, False
                name = entry.name
                if name == ".git":
                    repos.append(Path(folder))
                    continue
                if name.startswith(".env") or name in SECRET_NAMES:
                    found.append(Path(entry.path))
                    continue
                if depth < MAX_SCAN_DEPTH and name not in _SKIP_DIRS:
                    try:
                        is_dir = entry.is_dir(follow_symlinks=False)
                    except OSError:
                        is_dir = False
                    if is_dir:
                        stack.append((entry.path, depth + 1))
    return folders, found, repos, True


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
