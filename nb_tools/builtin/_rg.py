"""Finding the ``rg`` binary of the ``ripgrep`` wheel, and running it inside the boundary.

The wheel puts ``rg`` in the environment's scripts folder, which a kernel's ``PATH`` may
not include, so look there first, then on ``PATH``. ``NB_TOOLS_RG`` overrides: a path
forces that binary, ``none`` disables ripgrep (the pure-Python search is used).

That folder is often one the agent can write (the kernel's ``.venv`` inside the
workspace), so the binary found there may be one a shell call or ``write_file`` planted.
``run_rg`` runs rg directly only from a binary that lies under no root the agent can
write (the workspace, the sandbox's extra writable roots), and with the allow-listed
environment (no API keys); a binary under one runs inside the read-only sandbox
(:mod:`nb_tools.sandbox`: nothing it writes outlives it, no network), and where no sandbox
can start, another rg found outside the roots runs instead, or none (the caller falls
back to the pure-Python search). Inside the
sandbox rg cannot read the ignore files of the workspace's parent folders (they are out
of its view), the one difference in what it lists.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import shutil
import sysconfig
from collections.abc import Callable
from pathlib import Path

from nb_tools.sandbox import (
    SandboxPolicy,
    default_mode,
    prepare,
    sandbox_available,
    sandbox_env,
)
from nb_tools.tool._grant import current_grant

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
    found = _candidates(override)
    if override and not found:
        raise FileNotFoundError(
            f"{ENV_VAR}={override!r} is not an executable; point it at an rg binary "
            f"or set it to 'none' to use the pure-Python search"
        )
    return found[0] if found else None


@functools.lru_cache(maxsize=8)
def _candidates(override: str) -> tuple[str, ...]:
    """Every rg binary in order of preference, looked up once: the override, or the
    scripts folder's then the one on ``PATH``."""
    if override.strip().lower() == "none":
        return ()
    if override:
        if os.path.isfile(override) and os.access(override, os.X_OK):
            return (override,)
        found = shutil.which(override)
        return (found,) if found else ()
    exe = "rg.exe" if os.name == "nt" else "rg"
    out: list[str] = []
    scripts = sysconfig.get_path("scripts")
    if scripts:
        candidate = os.path.join(scripts, exe)
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            out.append(candidate)
    on_path = shutil.which(exe)
    if on_path and on_path not in out:
        out.append(on_path)
    return tuple(out)


def _launch(argv: list[str], cwd: str, workspace: str) -> tuple[list[str], dict[str, str], str]:
    """What to exec for ``argv`` (see the module doc): ``argv[0]`` with the allow-listed
    environment if it lies under no root the agent can write; otherwise inside the
    read-only sandbox; without a sandbox, another rg found that lies under no such root;
    otherwise refused (as :class:`RgUnavailable`: the caller falls back to the
    pure-Python search)."""
    roots = _writable_roots(workspace)

    def safe(exe: str) -> bool:
        return not any(Path(os.path.realpath(exe)).is_relative_to(r) for r in roots)

    if safe(argv[0]):
        return [os.path.realpath(argv[0]), *argv[1:]], sandbox_env(), cwd
    if sandbox_available().ok:
        policy = SandboxPolicy(mode="read-only", workspace=Path(workspace))
        launch = prepare(argv, policy, cwd=cwd)
        return launch.argv, launch.env, launch.cwd
    for exe in _candidates(os.environ.get(ENV_VAR, "")):
        if safe(exe):
            return [os.path.realpath(exe), *argv[1:]], sandbox_env(), cwd
    raise RgUnavailable(
        f"{argv[0]} lies where the agent can write ({workspace}), and no sandbox can start "
        "here to contain it"
    )


def _writable_roots(workspace: str) -> list[Path]:
    """The workspace and the extra writable roots of the session's sandbox policy: where a
    planted binary could be."""
    roots = [Path(os.path.realpath(workspace))]
    grant = current_grant()
    for policy in (grant.sandbox if grant is not None else None, default_mode()):
        if isinstance(policy, SandboxPolicy):
            roots += list(policy.writable_roots)
            if policy.workspace is not None:
                roots.append(policy.workspace)
    return roots


async def run_rg(
    argv: list[str],
    cwd: str,
    *,
    workspace: str,
    on_chunk: Callable[[bytes], bool] | None = None,
) -> tuple[bytes, bytes, int | None, bool]:
    """Run rg (inside the read-only sandbox of ``workspace``, see the module doc) and
    collect its output: (stdout, stderr, exit code, cut off).

    ``on_chunk`` sees each piece of stdout and returns False to stop early. A cancelled
    call kills rg and returns what it had with ``cut off`` true instead of raising.
    """
    command, env, start = _launch(argv, cwd, workspace)
    try:
        proc = await asyncio.create_subprocess_exec(
            *command,
            cwd=start,
            env=env,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,
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
    if errors.startswith(b"bwrap: execvp"):  # the binary is not in the sandbox's view
        raise RgUnavailable(f"cannot run {argv[0]} in the sandbox: {errors.decode().strip()}")
    return b"".join(chunks), errors, proc.returncode, cut_off


def _kill(proc: asyncio.subprocess.Process) -> None:
    """Kill rg, or bubblewrap with the sandbox's whole process tree."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, 9)
