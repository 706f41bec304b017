"""Run processes inside an OS sandbox (bubblewrap on Linux).

A :class:`SandboxPolicy` is plain data (mode, workspace, extra writable roots, network);
:func:`prepare` turns a command into a launch under it and :func:`spawn` starts it;
:func:`sandbox_available` says whether a sandbox can start here and, if not, why.

Inside: the system read-only; the workspace read-only (``read-only``) or writable
(``workspace-write``, with the protection table's paths, ``.git/hooks``, ``.git/config``
and ``core.hooksPath`` still read-only; see ``_protection``); a private ``/tmp``; new
user, PID, IPC, UTS, network and cgroup namespaces (no network), no capabilities; home
folders, ``/run``, the Jupyter runtime folder, the system's secret files, the table's
secrets and every Unix socket out of sight; an allow-listed environment; and the whole
process tree dies with the call. A call that ran without a click
(``SandboxPolicy.unapproved``) sees only the system folders, the tool folders and the
workspace (with its repository): a link in the workspace leads nowhere else; in a home
folder inside the workspace it sees no dot-entry but a short allow-list. Such a call may
run in a sandbox made ready ahead (:func:`make_ready`, :func:`take_ready`), when it is
still exactly what the call would make.
"""

from nb_tools.sandbox._env import git_safety_env, sandbox_env
from nb_tools.sandbox._fsrules import HOME_ALLOW, home_dot_reason, homes_in, path_rule_reason
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
from nb_tools.sandbox._protection import (
    TABLE,
    Entry,
    fold_name,
    is_secret,
    protection_of,
    write_protected,
)
from nb_tools.sandbox._ready import READY_ENV, close_ready, make_ready, ready_enabled, take_ready
from nb_tools.sandbox._runtime_paths import interpreter_dirs, prefix_reason, run_time_dirs
from nb_tools.sandbox._scan import hard_linked, unapproved_problem, warm_up, writable_problem
from nb_tools.sandbox._secrets import (
    KEY_HIDDEN,
    NAME_HIDDEN,
    PIECE,
    SECRET_HIDDEN,
    TOKEN_SHAPES,
    SecretStream,
    TokenShape,
    hide_environment_values,
    holds_private_key,
    may_hold_secret_names,
    redact_ends,
    redact_private_keys,
    redact_secret_text,
    redact_shapes,
    secret_env_name,
    secret_label,
    secret_name,
    secret_values,
)

__all__ = [
    "HOME_ALLOW",
    "KEY_HIDDEN",
    "NAME_HIDDEN",
    "PIECE",
    "READY_ENV",
    "SANDBOX_MODES",
    "SECRET_HIDDEN",
    "TABLE",
    "TOKEN_SHAPES",
    "Availability",
    "Entry",
    "Launch",
    "SandboxMode",
    "SandboxPolicy",
    "SandboxUnavailable",
    "SecretStream",
    "TokenShape",
    "check_mode",
    "close_ready",
    "default_mode",
    "fold_name",
    "git_safety_env",
    "hard_linked",
    "hide_environment_values",
    "holds_private_key",
    "home_dot_reason",
    "homes_in",
    "interpreter_dirs",
    "is_secret",
    "kill_tree",
    "make_ready",
    "may_hold_secret_names",
    "path_rule_reason",
    "prefix_reason",
    "prepare",
    "protection_of",
    "ready_enabled",
    "redact_ends",
    "redact_private_keys",
    "redact_secret_text",
    "redact_shapes",
    "remove_planted",
    "run_time_dirs",
    "sandbox_available",
    "sandbox_env",
    "secret_env_name",
    "secret_label",
    "secret_name",
    "secret_values",
    "set_default_mode",
    "spawn",
    "take_ready",
    "unapproved_problem",
    "warm_up",
    "writable_problem",
    "write_protected",
]
