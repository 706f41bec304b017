"""Who decides whether a tool call may run: the policy, a permission rule, or a person.

The decision order for one call (see :meth:`nb_tools.agent.Agent.run`):

1. a ``permission`` rule ``(call, info) -> Decision | None`` (issue 7's rule engine slots in
   here); a ``Decision`` ends the question;
2. a call that needs no approval (and is not protected) runs;
3. :func:`decide` applies the policy; it returns ``None`` when a person must be asked;
4. the approver is asked (``"ask"``, or a protected call under ``"auto"``/``"read-only"``).
"""

from __future__ import annotations

import asyncio
import inspect
import warnings
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias, get_args

from nb_tools.model import ToolCall
from nb_tools.tool._types import Change, Info, Tool

Policy: TypeAlias = Literal["ask", "auto", "deny", "read-only"]
POLICIES: tuple[str, ...] = get_args(Policy)

APPROVER_WAKE_SECONDS = 0.25
"""How often a wait for the approver wakes, so an interrupt in a kernel acts fast."""


@dataclass(frozen=True, kw_only=True)
class Decision:
    """The answer to "may this call run?". ``remember=True`` (with ``approved=True``) means
    "always allow this tool for the rest of the session" (:attr:`Agent.always_allow`)."""

    approved: bool
    message: str | None = None
    by: str = "user"
    remember: bool = False


@dataclass(frozen=True, kw_only=True)
class ApprovalRequest:
    """What an approver is shown. ``arguments`` is the parsed JSON object when the raw
    argument text parses, else ``None``; ``preview`` holds a writer's changes."""

    call: ToolCall
    info: Info | None
    preview: tuple[Change, ...] | None
    arguments: dict[str, Any] | None = None
    protected: bool = False


Approver: TypeAlias = Callable[[ApprovalRequest], "bool | Decision | Awaitable[bool | Decision]"]
"""``approver(request) -> bool | Decision`` (sync or async)."""

Permission: TypeAlias = Callable[
    [ToolCall, "Info | None"], "Decision | Awaitable[Decision | None] | None"
]
"""A permission rule consulted before the policy: a ``Decision`` settles the call,
``None`` passes it on."""


def check_policy(policy: str) -> Policy:
    if policy not in POLICIES:
        choices = ", ".join(repr(p) for p in POLICIES)
        raise ValueError(f"Agent: unknown approval policy {policy!r}; use one of {choices}")
    return policy  # type: ignore[return-value]


def is_protected_call(tool: Tool | None, args: str) -> bool:
    """Whether the tool reports that this call touches something protected (``.env``,
    ``.git``, …). Such calls go to a person even under the ``"auto"`` policy. A tool
    opts in with an ``is_protected_call(args) -> bool`` method; a failing check counts
    as protected (fail closed)."""
    check = getattr(tool, "is_protected_call", None)
    if check is None:
        return False
    try:
        return bool(check(args))
    except Exception:
        return True


def decide(
    policy: Policy,
    *,
    read_only: bool,
    protected: bool = False,
    always_allowed: bool = False,
    has_approver: bool = True,
) -> Decision | None:
    """The policy's answer for a call that needs approval; ``None`` means "ask the
    approver". Pure: everything it needs is in the arguments."""
    if policy == "deny":
        return Decision(
            approved=False,
            by="policy:deny",
            message="the approval policy is 'deny', which refuses every call that needs approval",
        )
    ask = protected or policy == "ask"
    if not ask:
        if policy == "auto" or read_only:
            return Decision(approved=True, by=f"policy:{policy}")
        return Decision(
            approved=False,
            by="policy:read-only",
            message="the approval policy is 'read-only', which refuses calls that may change "
            "something",
        )
    if always_allowed and not protected:
        return Decision(approved=True, by="always-allow")
    if not has_approver:
        what = "this call touches a protected path and" if protected else "the policy is 'ask' but"
        return Decision(
            approved=False,
            by=f"policy:{policy}",
            message=f"{what} no approver is configured; pass approver= to Agent, or choose "
            "approval='auto' or 'read-only'",
        )
    return None


def denial_text(decision: Decision) -> str:
    """The error text the model reads for a denied call."""
    if decision.by == "user":
        text = "The user denied this call."
        if decision.message:
            text += f" Message from the user: {decision.message}"
        return text
    reason = f": {decision.message}" if decision.message else ""
    return f"This call was denied ({decision.by}){reason}. The tool did not run."


async def ask(approver: Approver, request: ApprovalRequest) -> Decision:
    """Ask ``approver`` and normalise its answer to a ``Decision``. An approver that
    raises or answers nonsense denies the call (fail closed). An async answer is awaited
    in slices of :data:`APPROVER_WAKE_SECONDS` so a cancellation acts at once."""
    try:
        answer: Any = approver(request)
        if inspect.isawaitable(answer):
            answer = await _await_waking(answer)
    except asyncio.CancelledError:
        raise
    except Exception as exc:
        warnings.warn(
            f"nb_tools: the approver raised {type(exc).__name__}: {exc}; the call "
            f"{request.call.name} ({request.call.id}) was denied",
            RuntimeWarning,
            stacklevel=2,
        )
        return Decision(
            approved=False,
            by="approver-error",
            message=f"the approver failed ({type(exc).__name__}: {exc}), so the call was denied",
        )
    if isinstance(answer, Decision):
        return answer
    if isinstance(answer, bool):
        return Decision(approved=answer)
    return Decision(
        approved=False,
        by="approver-error",
        message=f"the approver answered {answer!r}; it must return a bool or a Decision",
    )


async def _await_waking(awaitable: Awaitable[Any]) -> Any:
    task = asyncio.ensure_future(awaitable)
    try:
        while True:
            done, _ = await asyncio.wait({task}, timeout=APPROVER_WAKE_SECONDS)
            if done:
                return task.result()
    finally:
        if not task.done():
            task.cancel()
