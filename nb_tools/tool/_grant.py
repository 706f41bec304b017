"""Who approved the call being executed: a context variable the tool loop sets around each
call, so a tool can act on it (the ``bash`` tool runs an approved call in the
``workspace-write`` sandbox and one that ran without a click in the ``read-only`` one).

``current_grant()`` is ``None`` outside the tool loop (a direct ``Executor.execute`` or
``tool.call``): a tool must then treat the call as not approved (fail closed) unless its
developer configured it otherwise.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol, TypeAlias

__all__ = ["Grant", "GrantKind", "ReadRules", "current_grant", "granted"]

GrantKind: TypeAlias = Literal["person", "rule", "policy", "none"]


class ReadRules(Protocol):
    """What the permission rules say a process must not read (``PermissionRules``)."""

    def unreadable(self, top: Path, *, approved: bool) -> tuple[Path, ...]: ...


@dataclass(frozen=True, kw_only=True)
class Grant:
    """The approval of one call. ``approved``: someone said yes to exactly this call
    (``kind`` person, rule or policy); ``False`` means it ran without a click (a read-only
    vote, or plan mode). ``by`` is the decision's source as the transcript names it
    (``"user"``, ``"rule:allow bash(git:*) [session]"``, ``"policy:auto"``).
    ``sandbox``: the session's sandbox default for approved shell calls (a mode name or a
    ``SandboxPolicy``; ``None``: the tool's own default). ``rules``: the permission rules
    in force, for a tool that must keep them itself (the ``bash`` sandbox hides what
    ``read_file`` rules name)."""

    approved: bool
    kind: GrantKind = "none"
    by: str | None = None
    sandbox: Any = None
    rules: ReadRules | None = None


_current: ContextVar[Grant | None] = ContextVar("nb_tools_grant", default=None)


def current_grant() -> Grant | None:
    """The grant of the call running in this context; ``None`` outside the tool loop."""
    return _current.get()


@contextlib.contextmanager
def granted(grant: Grant | None) -> Iterator[None]:
    """Run the block with ``grant`` as the current call's approval."""
    token = _current.set(grant)
    try:
        yield
    finally:
        _current.reset(token)
