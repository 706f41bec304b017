"""The one launcher: a command line and environment for a policy, and starting it.

``prepare`` builds what to exec (``bwrap ... -- argv`` unless the mode is ``off``) and the
allow-listed environment; ``spawn`` starts it as an asyncio subprocess in its own process
group. Inside the sandbox the command runs in a new PID namespace whose init is
bubblewrap's: when the command exits, or bubblewrap is killed, the kernel kills every
process left in the namespace (background jobs, ``setsid`` and double-forked children
included), so nothing outlives the call.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import stat
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nb_tools.sandbox._bwrap import bwrap_command
from nb_tools.sandbox._creds import resolve_program
from nb_tools.sandbox._defuse import (
    Protected,
    defuse_new_repos,
    protected_now,
    remove_new_protected,
    remove_path,
)
from nb_tools.sandbox._env import sandbox_env
from nb_tools.sandbox._hide import SYSTEM_TOP
from nb_tools.sandbox._policy import SandboxPolicy
from nb_tools.sandbox._probe import sandbox_available
from nb_tools.sandbox._runtime_paths import run_time_dirs
from nb_tools.sandbox._scan import scan

__all__ = ["Launch", "SandboxUnavailable", "kill_tree", "prepare", "remove_planted", "spawn"]


class SandboxUnavailable(RuntimeError):
    """A sandboxed mode was asked for where no sandbox can start; the message says why."""


@dataclass(frozen=True, kw_only=True)
class Launch:
    """What to exec: ``argv`` (bubblewrap's command line when ``sandboxed``), its ``env``
    and the folder to start in (``cwd``; inside the sandbox bubblewrap changes to it)."""

    argv: list[str]
    env: dict[str, str]
    cwd: str
    sandboxed: bool
    policy: SandboxPolicy
    guarded: tuple[str, ...] = ()
    """Paths that did not exist and must not appear as a file or link (``.git/commondir``,
    a root's ``.git`` file would point git at another config and hooks; a mount cannot
    guard a name that does not exist): see :func:`remove_planted`."""
    guarded_dirs: tuple[str, ...] = ()
    """Folders on the kernel's ``PATH`` or of Jupyter inside a writable root that did not
    exist: one the command made is removed after it (what it holds would run later
    outside the sandbox; see :func:`~nb_tools.sandbox._runtime_paths.run_time_dirs`)."""
    roots: tuple[str, ...] = ()
    """The writable roots, and the repositories in them when the call started: one that
    appears during the call is defused after it."""
    repos_before: tuple[str, ...] = ()
    tops_before: tuple[Protected, ...] = ()
    """The protected paths in each of ``roots`` when the call started
    (:func:`~nb_tools.sandbox._defuse.protected_now`): a new one is removed after the call."""
    unread: tuple[str, ...] = ()
    """Folders hidden from a call without a click because the scan has not read them (not
    yet: the first scan was under way; or past its limits): the call saw them empty."""


def remove_planted(launch: Launch) -> list[str]:
    """Remove what the command created at the launch's guarded paths, and switch off what
    would run programs in the repositories it created (see :mod:`._defuse`); returns the
    paths changed."""
    removed = []
    for path in launch.guarded:
        if os.path.islink(path) or os.path.isfile(path):
            with contextlib.suppress(OSError):
                os.unlink(path)
                removed.append(path)
    for path in launch.guarded_dirs:
        if os.path.lexists(path) and remove_path(path):
            removed.append(path)
    if launch.policy.mode == "workspace-write":
        nows = [
            (Path(root), before, protected_now(Path(root), before.homes, before=before))
            for root, before in zip(launch.roots, launch.tops_before, strict=True)
        ]
        for root, before, now in nows:
            removed += remove_new_protected(root, before, now)
        for root, _, now in nows:  # past the scan's cap too (protected_now read there)
            repos = [Path(raw) for raw, _ in now.repos]
            removed += defuse_new_repos(launch.repos_before, repos, root=root)
    return removed


def prepare(
    argv: Sequence[str],
    policy: SandboxPolicy,
    *,
    cwd: str | os.PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
) -> Launch:
    """The launch of ``argv`` under ``policy``. ``cwd`` defaults to the policy's workspace;
    ``env``: extra variables (secret-looking names are dropped unless the mode is ``off``
    with ``kernel_env``). Raises :class:`SandboxUnavailable` for a sandboxed mode where no
    sandbox can start."""
    workspace = policy.workspace
    start = os.fspath(cwd) if cwd is not None else os.fspath(workspace or os.getcwd())
    if policy.mode == "off":
        if policy.kernel_env:
            full = dict(os.environ)
            full.update(env or {})
        else:
            full = sandbox_env(extra=env, git_config=_git_config(Path(start)))
        return Launch(argv=list(argv), env=full, cwd=start, sandboxed=False, policy=policy)
    found = sandbox_available()
    if not found.ok or found.bwrap is None:
        raise SandboxUnavailable(f"no sandbox can start here: {found.reason}")
    real = os.path.realpath(found.bwrap)
    for root in (policy.workspace, *policy.writable_roots):
        if root is not None and (real + "/").startswith(str(root).rstrip("/") + "/"):
            raise SandboxUnavailable(
                f"the bwrap found ({found.bwrap}) lies in {root}, which sandboxed calls can "
                "write; it could be a planted program, so it is not run (put the system's "
                "bubblewrap first on PATH, or set NB_TOOLS_BWRAP)"
            )
    full = sandbox_env(extra=env, git_config=_git_config(Path(start)))
    command = bwrap_command(found.bwrap, policy, _resolved(argv, full, policy), cwd=start)
    guarded: list[str] = []
    roots: list[str] = []
    tops: list[Protected] = []
    before: list[str] = []
    guarded_dirs: list[str] = []
    if policy.mode == "workspace-write":
        for root in (policy.workspace, *policy.writable_roots):
            if root is not None and root.is_dir():
                missing = [d for d in run_time_dirs(root) if not os.path.lexists(d)]
                guarded_dirs += [str(d) for d in missing]
                roots.append(str(root))
                tops.append(protected_now(root))
                before += [str(r) for r in scan(root)[1]]
            if root is not None and root.is_dir() and not os.path.lexists(root / ".git"):
                # A `.git` file made by the call would point git at a planted config.
                guarded.append(str(root / ".git"))
            if root is not None and root.is_dir():
                for repo in scan(root)[1]:
                    p = repo / ".git" / "commondir"
                    if (repo / ".git").is_dir() and not os.path.lexists(p):
                        guarded.append(str(p))
    # bwrap itself starts in "/": the sandboxed command changes to `start` (--chdir).
    return Launch(
        argv=command.argv,
        unread=tuple(map(str, command.unread)),
        env=full,
        cwd="/",
        sandboxed=True,
        policy=policy,
        guarded=tuple(guarded),
        guarded_dirs=tuple(guarded_dirs),
        roots=tuple(roots),
        repos_before=tuple(before),
        tops_before=tuple(tops),
    )


async def spawn(launch: Launch, **kwargs: Any) -> asyncio.subprocess.Process:
    """Start ``launch`` in a new session (its own process group; ``kill_tree`` ends it).
    ``kwargs`` go to :func:`asyncio.create_subprocess_exec` (stdin, stdout, stderr...)."""
    return await asyncio.create_subprocess_exec(
        *launch.argv, cwd=launch.cwd, env=launch.env, start_new_session=True, **kwargs
    )


def kill_tree(pid: int, sig: int = signal.SIGKILL) -> None:
    """Signal the process group ``pid`` leads. For a sandboxed launch that is bubblewrap:
    killed, it takes the sandbox's whole PID namespace with it (``--die-with-parent``)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)


_PROGRAM_DIRS = tuple(f"/{top}/" for top in sorted(SYSTEM_TOP - {"dev", "proc", "sys", "etc"}))
"""The system folders every sandbox shows as they are (read-only; ``/dev``, ``/proc`` and
``/sys`` are made anew inside, files of ``/etc`` bound over): a program found there
outside is the one ``execvp`` finds inside."""


def _resolved(argv: Sequence[str], env: Mapping[str, str], policy: SandboxPolicy) -> list[str]:
    """``argv`` with its program given by name (``bash``) replaced by the file the
    sandbox's ``PATH`` finds (:func:`~nb_tools.sandbox._creds.resolve_program`), when that
    lies in a system folder no root or hidden path of ``policy`` covers: bubblewrap's
    ``execvp`` then looks in no ``PATH`` entry (each a lookup through the new mounts)."""
    out = list(argv)
    if not out:
        return out
    hit = resolve_program(out[0], env.get("PATH", ""), _PROGRAM_DIRS)
    if hit is None:
        return out
    covered = [str(p) for p in (policy.workspace, *policy.writable_roots, *policy.hidden) if p]
    if not any(hit == c or hit.startswith(c.rstrip("/") + "/") for c in covered):
        out[0] = hit
    return out


def _git_config(start: Path) -> Path | None:
    """The ``.git/config`` of the repository at ``start`` (or its gitdir's, for a linked
    worktree whose ``.git`` is a file)."""
    raw = os.path.abspath(start)
    while True:  # the folder and its parents, as strings (no path object for each)
        dot = raw.rstrip("/") + "/.git"
        try:
            mode = os.stat(dot).st_mode
        except (OSError, ValueError):
            mode = 0
        if stat.S_ISDIR(mode):
            return Path(dot, "config")
        if stat.S_ISREG(mode):
            return _linked_config(Path(raw), Path(dot))
        parent = os.path.dirname(raw)
        if parent == raw:
            return None
        raw = parent


def _linked_config(folder: Path, dot: Path) -> Path | None:
    """The config of the repository whose ``.git`` file ``dot`` (in ``folder``) names its
    git folder (a linked worktree: the common folder's)."""
    try:
        line = dot.read_text(errors="replace").strip()
    except OSError:
        return None
    if not line.startswith("gitdir:"):
        return None
    gitdir = (folder / line[7:].strip()).resolve()
    common = gitdir / "commondir"
    if common.is_file():
        with contextlib.suppress(OSError):
            gitdir = (gitdir / common.read_text().strip()).resolve()
    return gitdir / "config"
