"""Finding the ``rg`` binary of the ``ripgrep`` wheel.

The wheel puts ``rg`` in the environment's scripts folder, which a kernel's ``PATH`` may
not include, so look there first, then on ``PATH``. ``NB_TOOLS_RG`` overrides: a path
forces that binary, ``none`` disables ripgrep (the pure-Python search is used).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import shutil
import sysconfig
from collections.abc import Callable

__all__ = ["ENV_VAR", "RgUnavailable", "find_rg", "run_rg"]

ENV_VAR = "NB_TOOLS_RG"


class RgUnavailable(OSError):
    """The rg binary could not be started; the caller falls back to pure Python."""


def find_rg() -> str | None:
    """The path of the ``rg`` to run, or ``None`` when there is none (or it is disabled).
    Raises ``FileNotFoundError`` when ``NB_TOOLS_RG`` names something that is not there."""
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


async def run_rg(
    argv: list[str], cwd: str, *, on_chunk: Callable[[bytes], bool] | None = None
) -> tuple[bytes, bytes, int | None, bool]:
    """Run rg and collect its output: (stdout, stderr, exit code, cut off).

    ``on_chunk`` sees each piece of stdout and returns False to stop early. A cancelled
    call kills rg and returns what it had with ``cut off`` true instead of raising.
    """
    try:
        proc = await asyncio.create_subprocess_exec(
            *argv,
            cwd=cwd,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
    except OSError as exc:
        raise RgUnavailable(f"cannot run {argv[0]}: {exc.strerror or exc}") from exc
    out, err = proc.stdout, proc.stderr
    if out is None or err is None:  # pragma: no cover - PIPE always gives streams
        raise RuntimeError("rg: no output pipes")
    chunks: list[bytes] = []
    stderr_task = asyncio.ensure_future(err.read())
    cut_off = False
    try:
        while chunk := await out.read(1 << 16):
            chunks.append(chunk)
            if on_chunk is not None and not on_chunk(chunk):
                _kill(proc)
                break
        await proc.wait()
    except asyncio.CancelledError:
        cut_off = True
        _kill(proc)
        with contextlib.suppress(BaseException):
            await asyncio.shield(proc.wait())
    errors = b""
    if stderr_task.done():
        errors = stderr_task.result()
    elif not cut_off:
        with contextlib.suppress(BaseException):
            errors = await asyncio.wait_for(stderr_task, 5)
    else:
        stderr_task.cancel()
    return b"".join(chunks), errors, proc.returncode, cut_off


def _kill(proc: asyncio.subprocess.Process) -> None:
    with contextlib.suppress(ProcessLookupError):
        proc.kill()
