"""Run processes inside an OS sandbox (bubblewrap on Linux).

A :class:`SandboxPolicy` is plain data (mode, workspace, extra writable roots, network);
:func:`prepare` turns a command into a launch under it and :func:`spawn` starts it;
:func:`sandbox_available` says whether a sandbox can start here and, if not, why.

Inside: the system read-only; the workspace read-only (``read-only``) or writable
(``workspace-write``, with ``.git/hooks``, ``.git/config``, ``.nb_tools/`` and IPython
start-up files still read-only); a private ``/tmp``; new user, PID, IPC, UTS, network and
cgroup namespaces (no network), no capabilities; home folders, ``/run``, the Jupyter
runtime folder, the system's secret files, ``.env*`` and every Unix socket out of sight;
an allow-listed environment; and the whole process tree dies with the call. A call that
ran without a click (``SandboxPolicy.unapproved``) sees only the system folders, the tool
folders and the workspace (with its repository): a link in the workspace leads nowhere else.
"""

from nb_tools.sandbox._env import git_safety_env, is_secret_name, sandbox_env
from nb_tools.sandbox._hide import hard_linked, unapproved_problem, warm_up
from nb_tools.sandbox._launch import (
    Launch,
    SandboxUnavailable,
    kill_tree,
    prepare,
    remove_planted,
    spawn,
)
from nb_tools.sandbox._policy import (
    SANDBOX_MODES,
    SandboxMode,
    SandboxPolicy,
    check_mode,
    default_mode,
    set_default_mode,
)
from nb_tools.sandbox._probe import Availability, sandbox_available

__all__ = [
    "SANDBOX_MODES",
    "Availability",
    "Launch",
    "SandboxMode",
    "SandboxPolicy",
    "SandboxUnavailable",
    "check_mode",
    "default_mode",
    "git_safety_env",
    "hard_linked",
    "is_secret_name",
    "kill_tree",
    "prepare",
    "remove_planted",
    "sandbox_available",
    "sandbox_env",
    "set_default_mode",
    "spawn",
    "unapproved_problem",
    "warm_up",
]
