"""A tool's per-call votes, asked in one place: does this call need approval, is it
read-only, does it touch a protected path, what would it change.

Each vote is one of the protocols in :mod:`nb_tools.tool._types`; a tool without it
falls back to its ``Info`` (or to "no"). A vote that raises fails closed: it counts as
needing approval, not read-only, protected. The method is looked up as an attribute
(``method_of``), not with ``isinstance`` on the runtime-checkable protocol: from Python
3.12 ``isinstance`` looks attributes up statically and would miss the votes a wrapper
hands on through ``__getattr__`` (a session's approval override, for one).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from nb_tools.tool._types import (
    ApprovalByArguments,
    Change,
    MultiPreviewer,
    Previewer,
    ProtectedCall,
    ReadOnlyCall,
    Tool,
)

__all__ = [
    "is_parallel_call",
    "is_protected_call",
    "is_read_only_call",
    "method_of",
    "needs_approval",
    "preview_changes",
]

_METHODS: dict[type, str] = {
    ApprovalByArguments: "requires_approval_for",
    ReadOnlyCall: "read_only_call",
    ProtectedCall: "is_protected_call",
    Previewer: "preview",
    MultiPreviewer: "preview_files",
}


def method_of(tool: object, protocol: type) -> Callable[..., Any] | None:
    """``tool``'s method of the one-method vote ``protocol``, or ``None`` without it."""
    method = getattr(tool, _METHODS[protocol], None)
    return method if callable(method) else None


def needs_approval(tool: Tool, args: str | bytes) -> bool:
    """Whether a call of ``tool`` with ``args`` needs approval: the tool's
    ``requires_approval_for(args)`` if it has one, else ``Info.requires_approval``. A vote
    that raises counts as "needs approval" (fail closed)."""
    vote = method_of(tool, ApprovalByArguments)
    if vote is None:
        return tool.info().requires_approval
    try:
        return bool(vote(args))
    except Exception:
        return True


def is_read_only_call(tool: Tool, args: str | bytes) -> bool:
    """Whether a call of ``tool`` with ``args`` has no side effects: the tool's
    ``read_only_call(args)`` vote if it has one, else ``Info.read_only``. A vote that
    raises counts as "not read-only"."""
    vote = method_of(tool, ReadOnlyCall)
    if vote is None:
        return tool.info().read_only
    try:
        return bool(vote(args))
    except Exception:
        return False


def is_parallel_call(tool: Tool, args: str | bytes, *, read_only: bool | None = None) -> bool:
    """Whether a call may run beside its adjacent parallel calls: the tool says calls run
    concurrently (``Info.concurrent``) or this call is read-only (``read_only`` when the
    caller has already asked :func:`is_read_only_call`)."""
    if tool.info().concurrent:
        return True
    return is_read_only_call(tool, args) if read_only is None else read_only


def is_protected_call(tool: Tool, args: str | bytes) -> bool:
    """Whether ``tool`` (a :class:`~nb_tools.tool.ProtectedCall`) says this call touches
    something protected; a check that raises counts as protected (fail closed)."""
    vote = method_of(tool, ProtectedCall)
    if vote is None:
        return False
    try:
        return bool(vote(args))
    except Exception:
        return True


def preview_changes(tool: Tool, args: str | bytes) -> list[Change] | None:
    """The changes a writer would make for ``args``, or ``None`` when there is nothing to
    show: the tool is read-only, has no preview, or the preview failed (the call will
    most likely fail too and say why). Binary changes are dropped."""
    many, one = method_of(tool, MultiPreviewer), method_of(tool, Previewer)
    try:
        if many is not None:
            changes = list(many(args))
        elif one is not None:
            changes = [one(args)]
        else:
            return None
    except Exception:
        return None
    return [c for c in changes if not c.binary] or None
