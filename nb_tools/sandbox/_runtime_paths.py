"""The paths protected because of what this process is and what its environment says,
derived at run time: the interpreter's own folders (``sys.prefix``, the user site), the
folders on ``PATH``, Jupyter's and IPython's, and the start-up files the environment
names. Each reason is a row of the docs' protection table too (beside the one table,
:mod:`._protection`, whose entries are patterns known in advance)."""

from __future__ import annotations

import functools
import os
import site
import sys
from pathlib import Path

__all__ = [
    "JUPYTER_REASON",
    "PATH_REASON",
    "PREFIX_REASON",
    "START_ENV",
    "START_REASON",
    "interpreter_dirs",
    "jupyter_dirs",
    "prefix_reason",
    "program_dirs",
    "run_time_dirs",
    "start_files",
]

PREFIX_REASON = (
    "the kernel's own Python environment (sys.prefix): what it imports and the programs in "
    "its bin/ run later outside the sandbox"
)
"""Why a path in :func:`interpreter_dirs` is protected (a row of the docs' table too)."""


def interpreter_dirs() -> tuple[Path, ...]:
    """The folders of the running interpreter a write there would change for every later
    start: ``sys.prefix``, ``sys.exec_prefix`` (a virtualenv's ``bin/python``,
    ``site-packages``, ``.pth`` files) and the user site (``~/.local/lib/pythonX/site-
    packages``: a ``usercustomize.py`` or ``.pth`` there runs at every start-up), as
    realpaths. Read at every call (a test or a kernel may change ``sys.prefix``)."""
    raw = [sys.prefix, sys.exec_prefix]
    user_site = getattr(site, "USER_SITE", None) or ""
    if isinstance(user_site, str) and user_site:
        raw.append(user_site)
    return tuple(dict.fromkeys(Path(os.path.realpath(p)) for p in raw))


PATH_REASON = (
    "a folder on the kernel's PATH: a program there runs, in place of the system's, whenever "
    "the kernel, nb_tools (bwrap, rg) or a library looks a command up, outside the sandbox "
    "with the kernel's environment"
)
"""Why a folder of :func:`program_dirs` is protected (a row of the docs' table too)."""


JUPYTER_REASON = (
    "a folder Jupyter or IPython reads (jupyter --paths, JUPYTER_CONFIG_DIR, JUPYTER_DATA_DIR, "
    "IPYTHONDIR): its config, kernel specs, start-up files and front-end extensions run "
    "code when Jupyter or a kernel starts, or as JavaScript in the page"
)
"""Why a folder of :func:`jupyter_dirs` is protected (a row of the docs' table too)."""

_JUPYTER_ENV = (
    "JUPYTER_CONFIG_DIR", "JUPYTER_CONFIG_PATH", "JUPYTER_DATA_DIR", "JUPYTER_PATH",
    "JUPYTER_PREFER_ENV_PATH", "JUPYTER_PLATFORM_DIRS", "JUPYTER_NO_CONFIG", "HOME",
    "IPYTHONDIR", "XDG_CONFIG_HOME", "XDG_DATA_HOME",
)  # fmt: skip


@functools.lru_cache(maxsize=8)
def _jupyter_paths(_key: tuple[str | None, ...]) -> tuple[str, ...]:
    try:  # jupyter_core comes with ipykernel; without it there is no Jupyter to protect
        from jupyter_core.paths import jupyter_config_path, jupyter_path
    except ImportError:  # pragma: no cover
        found: list[str] = []
    else:
        found = [*jupyter_config_path(), *jupyter_path()]
    ipython = os.environ.get("IPYTHONDIR")
    return tuple([*found, *([ipython] if ipython else [])])


def jupyter_dirs() -> tuple[Path, ...]:
    """The folders Jupyter reads config and data from and IPython's folder, as this
    process's environment names them (the kernel's, which is the server's as a rule), as
    realpaths. Looked up again when the environment changes."""
    key = (*(os.environ.get(k) for k in _JUPYTER_ENV), sys.prefix)
    raw = [p for p in _jupyter_paths(key) if os.path.isabs(p)]
    return tuple(dict.fromkeys(Path(os.path.realpath(p)) for p in raw))


def program_dirs(root: Path) -> tuple[Path, ...]:
    """The folders on the kernel's ``PATH`` (absolute entries, as realpaths, whether they
    exist yet or not) that lie inside ``root`` but are not ``root`` itself: a ``bin``,
    ``node_modules/.bin`` or a home's ``bin`` put there by a ``.profile``. Read at every
    call (a kernel may change ``PATH``)."""
    out: list[Path] = []
    for raw in os.environ.get("PATH", "").split(os.pathsep):
        if raw and os.path.isabs(raw):
            d = Path(os.path.realpath(raw))
            if d != root and d.is_relative_to(root):
                out.append(d)
    return tuple(dict.fromkeys(out))


START_ENV = (
    "PYTHONSTARTUP", "BASH_ENV", "ENV", "ZDOTDIR", "INPUTRC", "GIT_CONFIG_GLOBAL",
    "GIT_CONFIG_SYSTEM", "RIPGREP_CONFIG_PATH", "PIP_CONFIG_FILE", "CONDARC",
)  # fmt: skip
"""Variables of the kernel's environment that name a file (or folder) a program reads at
start-up: IPython runs ``PYTHONSTARTUP`` in every new kernel, bash sources ``BASH_ENV``
before every script (``%%bash``, ``subprocess``), git reads ``GIT_CONFIG_GLOBAL``..."""

START_REASON = (
    "a file the kernel's environment names for a program to read at start-up "
    "(PYTHONSTARTUP runs in every new kernel, BASH_ENV before every bash script, "
    "GIT_CONFIG_GLOBAL is git's config): what it holds runs later outside the sandbox"
)
"""Why a path of :func:`start_files` is protected (a row of the docs' table too)."""


def start_files(root: Path) -> tuple[Path, ...]:
    """The paths the :data:`START_ENV` variables of this process's environment name
    inside ``root`` (absolute, as realpaths, existing or not), but ``root`` itself."""
    out: list[Path] = []
    for name in START_ENV:
        raw = os.environ.get(name, "")
        if raw and os.path.isabs(raw):
            p = Path(os.path.realpath(raw))
            if p != root and p.is_relative_to(root):
                out.append(p)
    return tuple(dict.fromkeys(out))


def run_time_dirs(root: Path) -> dict[Path, str]:
    """The folders (and files) inside ``root`` (not ``root`` itself) protected because of
    what this process's environment says, with the reason: the folders on ``PATH``
    (:func:`program_dirs`), Jupyter's and IPython's (:func:`jupyter_dirs`) and the
    start-up files it names (:func:`start_files`). The sandbox binds those that exist
    read-only and removes one a call makes; ``write_file`` asks for a path in one."""
    out = dict.fromkeys(program_dirs(root), PATH_REASON)
    for d in jupyter_dirs():
        if d != root and d.is_relative_to(root):
            out.setdefault(d, JUPYTER_REASON)
    for f in start_files(root):
        out.setdefault(f, START_REASON)
    return out


def prefix_reason(root: Path, path: Path) -> str | None:
    """Why ``path`` (absolute) is protected as part of an interpreter folder that is, or
    lies inside, the workspace ``root`` (one that holds the root, such as ``/usr`` for a
    workspace under ``/usr/src``, does not make the workspace protected), or of a folder
    on the kernel's ``PATH`` or of Jupyter inside it (:func:`run_time_dirs`), or ``None``.
    The sandbox binds the same folders read-only (``_bwrap``)."""
    for d in interpreter_dirs():
        if d.is_relative_to(root) and path.is_relative_to(d):
            return PREFIX_REASON
    for d, reason in run_time_dirs(root).items():
        if path.is_relative_to(d):
            return reason
    return None
