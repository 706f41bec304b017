"""The environment a sandboxed command gets: an allow-list, never the kernel's secrets.

A variable passes only if its name is on :data:`ALLOWED_NAMES` (or starts with one of
:data:`ALLOWED_PREFIXES`) *and* is no secret's name (``_secrets.secret_env_name``, the one
home of secret names). On top, git is told
to ignore the code-running settings a hostile repository may carry in ``.git/config``
(:func:`git_safety_env`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Hashable, Mapping
from pathlib import Path
from typing import Any

from nb_tools.sandbox._kept import kept
from nb_tools.sandbox._secrets import secret_env_name

__all__ = [
    "ALLOWED_NAMES",
    "ALLOWED_PREFIXES",
    "git_safety_env",
    "sandbox_env",
]

ALLOWED_NAMES = frozenset(
    {
        "PATH",
        "HOME",
        "USER",
        "LOGNAME",
        "SHELL",
        "LANG",
        "LANGUAGE",
        "TERM",
        "TZ",
        "COLUMNS",
        "LINES",
        "NO_COLOR",
        "CLICOLOR",
        "VIRTUAL_ENV",
        "CONDA_PREFIX",
        "CONDA_DEFAULT_ENV",
        "PYTHONPATH",
        "PYTHONIOENCODING",
        "PYTHONUTF8",
        "SOURCE_DATE_EPOCH",
    }
)
ALLOWED_PREFIXES = ("LC_",)
_FALLBACK_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


def sandbox_env(
    base: Mapping[str, str] | None = None,
    *,
    extra: Mapping[str, str] | None = None,
    git_config: str | os.PathLike[str] | None = None,
) -> dict[str, str]:
    """The allow-listed environment built from ``base`` (default: ``os.environ``).

    ``extra``: variables the developer passed explicitly; they are added, but secret-looking
    names are still dropped. ``git_config``: the repository config whose drivers
    :func:`git_safety_env` neutralises (``<workspace>/.git/config``)."""
    src = os.environ if base is None else base
    # The names first, each value only for a name that passes: ``os.environ`` decodes
    # what it is asked for, and most of its values are not.
    env = {k: src[k] for k in src if _passes(k)}
    if extra:
        env.update({k: v for k, v in extra.items() if not _secret(k)})
    env.setdefault("PATH", _FALLBACK_PATH)
    env.setdefault("LANG", "C.UTF-8")
    env["TMPDIR"] = "/tmp"
    env["PAGER"] = env["GIT_PAGER"] = "cat"
    env.update(git_safety_env(git_config))
    return env


_verdicts: dict[str, bool] = {}


def _secret(name: str) -> bool:
    """:func:`secret_env_name`, remembered by the name (it depends on the name alone)."""
    found = _verdicts.get(name)
    if found is None:
        if len(_verdicts) > 4096:
            _verdicts.clear()
        found = _verdicts[name] = secret_env_name(name)
    return found


def _passes(name: str) -> bool:
    return (name in ALLOWED_NAMES or name.startswith(ALLOWED_PREFIXES)) and not _secret(name)


# Settings with which a repository's config makes `git status` / `git diff` / `git log`
# run a program. The values are harmless replacements, highest precedence (GIT_CONFIG_*).
_GIT_OVERRIDES: tuple[tuple[str, str], ...] = (
    ("core.fsmonitor", "false"),
    ("core.pager", "cat"),
    ("core.editor", "true"),
    ("core.askPass", ""),
    ("core.sshCommand", "false"),
    ("core.gitProxy", ""),
    ("sequence.editor", "true"),
    ("credential.helper", ""),
    ("gpg.program", "false"),
    ("log.showSignature", "false"),
    ("protocol.ext.allow", "never"),
    ("uploadpack.packObjectsHook", ""),
    # A plain unified diff in place of the repository's external diff program.
    ("diff.external", 'diff -u --label "a/$1" --label "b/$1" "$2" "$5"; true'),
)
_DRIVER_RE = re.compile(r'^\s*\[\s*(diff|filter|merge)\s+"((?:[^"\\]|\\.)*)"\s*\]', re.MULTILINE)
_DRIVER_KEYS = {
    "diff": (
        ("textconv", "cat"),
        ("command", 'diff -u "$2" "$5"; true'),
        ("cachetextconv", "false"),
    ),
    "filter": (("clean", "cat"), ("smudge", "cat"), ("process", ""), ("required", "false")),
    "merge": (("driver", "false"),),
}


def git_safety_env(config: str | os.PathLike[str] | None = None) -> dict[str, str]:
    """``GIT_CONFIG_*`` variables that switch off the code-running settings above, plus the
    diff/filter/merge drivers named in ``config`` (a ``.git/config``), and no system or
    global config."""
    pairs = list(_GIT_OVERRIDES)
    if config is not None:
        path = os.fspath(config)
        pairs += kept(_kept_drivers, path, (path,), lambda: _driver_pairs(path))
    return _safety_env(tuple(pairs))


_kept_drivers: dict[Hashable, Any] = {}


def _driver_pairs(config: str) -> tuple[tuple[str, str], ...]:
    """The settings that switch off the diff/filter/merge drivers ``config`` names."""
    try:
        text = Path(config).read_text(errors="replace")[:1_000_000]
    except OSError:
        text = ""
    pairs: list[tuple[str, str]] = []
    for section, name in dict.fromkeys(_DRIVER_RE.findall(text)):
        name = name.replace('\\"', '"').replace("\\\\", "\\")
        pairs += [(f"{section}.{name}.{key}", value) for key, value in _DRIVER_KEYS[section]]
    return tuple(pairs)


def _safety_env(pairs: tuple[tuple[str, str], ...]) -> dict[str, str]:
    env = {
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": "/dev/null",
        "GIT_TERMINAL_PROMPT": "0",
        "GIT_CONFIG_COUNT": str(len(pairs)),
    }
    for i, (key, value) in enumerate(pairs):
        env[f"GIT_CONFIG_KEY_{i}"] = key
        env[f"GIT_CONFIG_VALUE_{i}"] = value
    return env
