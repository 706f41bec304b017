"""The sandbox policy as plain data: a mode, the workspace, extra writable roots, network.

Modes (after codex-rs/linux-sandbox):

- ``read-only``: the whole system and the workspace are read-only; only a private ``/tmp``
  (and a private, empty home) can be written, and they vanish with the call.
- ``workspace-write``: as ``read-only``, plus the workspace (and ``writable_roots``) can be
  changed, except the paths that would run code later (``.git/hooks``, ``.git/config``,
  ``.nb_tools/``, IPython start-up folders), which stay read-only.
- ``off``: no sandbox at all. Only ever by an explicit choice that a person approved.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal, TypeAlias, get_args

__all__ = [
    "SANDBOX_MODES",
    "SandboxMode",
    "SandboxPolicy",
    "check_mode",
    "default_mode",
    "set_default_mode",
]

SandboxMode: TypeAlias = Literal["read-only", "workspace-write", "off"]
SANDBOX_MODES: tuple[str, ...] = get_args(SandboxMode)


def check_mode(mode: str) -> SandboxMode:
    """``mode`` if it is a sandbox mode, else a ``ValueError`` that lists the modes."""
    if mode not in SANDBOX_MODES:
        choices = ", ".join(repr(m) for m in SANDBOX_MODES)
        raise ValueError(f"sandbox: unknown mode {mode!r}; use one of {choices}")
    return mode  # type: ignore[return-value]


@dataclass(frozen=True, kw_only=True)
class SandboxPolicy:
    """What a sandboxed process may see and change.

    ``workspace``: the folder a command runs in (``None``: the tool fills in its own root).
    ``writable_roots``: more folders that ``workspace-write`` may change.
    ``network``: ``False`` (the default) gives the process no network at all (a new, empty
    network namespace: no loopback services of the host, no abstract Unix sockets).
    ``kernel_env``: an ``off`` call gets the kernel's whole environment (API keys included)
    instead of the allow-listed one; ignored by the sandboxed modes, which never get it.
    """

    mode: SandboxMode = "workspace-write"
    workspace: Path | None = None
    writable_roots: tuple[Path, ...] = ()
    network: bool = False
    kernel_env: bool = False
    hidden: tuple[Path, ...] = field(default=())
    """Extra files or folders to hide (on top of the built-in list)."""
    system_only: bool = False
    """Show only the system folders (``/usr``, ``/etc``...), the tool folders on ``PATH``,
    the workspace and its repository, and mask every other top-level folder (``/srv``,
    ``/opt``, ``/var``, ``/mnt``, other projects): what a call that ran without a click
    runs in, so that a symlink in the workspace leads nowhere outside it."""

    def __post_init__(self) -> None:
        check_mode(self.mode)
        if self.workspace is not None:
            object.__setattr__(self, "workspace", _real(self.workspace))
        object.__setattr__(self, "writable_roots", tuple(_real(p) for p in self.writable_roots))
        object.__setattr__(self, "hidden", tuple(Path(os.path.abspath(p)) for p in self.hidden))

    def with_mode(self, mode: SandboxMode) -> SandboxPolicy:
        return replace(self, mode=check_mode(mode))

    def with_workspace(self, workspace: str | os.PathLike[str]) -> SandboxPolicy:
        return replace(self, workspace=Path(workspace))

    def read_only(self) -> SandboxPolicy:
        """The same policy in ``read-only`` mode."""
        return self.with_mode("read-only")

    def unapproved(self) -> SandboxPolicy:
        """What a call that was not approved runs in: ``read-only``, ``system_only`` and
        no network, whatever the policy it was made from allows."""
        return replace(self, mode="read-only", system_only=True, network=False)


def _real(path: str | os.PathLike[str]) -> Path:
    return Path(os.path.realpath(os.fspath(path)))


_lock = threading.Lock()
_default: list[SandboxMode | SandboxPolicy] = ["workspace-write"]


def default_mode() -> SandboxMode | SandboxPolicy:
    """The session's default for approved shell calls (``%nbtools sandbox``): what an
    ``Agent`` created without ``sandbox=`` uses."""
    with _lock:
        return _default[0]


def set_default_mode(mode: str | SandboxPolicy) -> None:
    """Set the session default (``%nbtools sandbox MODE``)."""
    value = mode if isinstance(mode, SandboxPolicy) else check_mode(mode)
    with _lock:
        _default[0] = value
