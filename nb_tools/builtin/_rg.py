"""Finding the ``rg`` binary of the ``ripgrep`` wheel.

The wheel puts ``rg`` in the environment's scripts folder, which a kernel's ``PATH`` may
not include, so look there first, then on ``PATH``. ``NB_TOOLS_RG`` overrides: a path
forces that binary, ``none`` disables ripgrep (the pure-Python search is used).
"""

from __future__ import annotations

import functools
import os
import shutil
import sysconfig

__all__ = ["ENV_VAR", "find_rg"]

ENV_VAR = "NB_TOOLS_RG"


def find_rg() -> str | None:
    """The path of the ``rg`` to run, or ``None`` when there is none (or it is disabled)."""
    return _find(os.environ.get(ENV_VAR, ""))


@functools.lru_cache(maxsize=8)
def _find(override: str) -> str | None:
    if override.strip().lower() == "none":
        return None
    if override:
        if os.path.isfile(override) and os.access(override, os.X_OK):
            return override
        found = shutil.which(override)
        if found is None:
            raise FileNotFoundError(
                f"{ENV_VAR}={override!r} is not an executable; point it at an rg binary "
                f"or set it to 'none' to use the pure-Python search"
            )
        return found
    exe = "rg.exe" if os.name == "nt" else "rg"
    scripts = sysconfig.get_path("scripts")
    if scripts:
        candidate = os.path.join(scripts, exe)
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return shutil.which(exe)
