"""Who decides whether a tool call may run, and what the model and the transcript read.

One pipeline decides each call (:mod:`nb_tools.agent._deciders`): an ordered list of
deciders, each returning a verdict (:class:`Allow`, :class:`Deny` with a message,
:class:`Ask`) with a typed source, or passing (``None``); then the person. The order:

1. arguments: a call whose arguments are not I-JSON or fail the schema never runs;
2. plan mode (policy ``"read-only"``): a call that is not read-only is refused;
3. protection: a call that touches a protected path (``.env``, ``.git/``, the rules file)
   asks a person, whatever the later deciders allow;
4. the permission rules (:class:`~nb_tools.permissions.PermissionRules`): deny, ask, allow
   (the card's "Always allow" adds a session rule here: one home, one meaning under
   every policy);
5. the user's ``permission`` callable ``(call, info) -> Decision | None``;
6. the policy: ``"auto"`` allows, ``"deny"`` refuses, ``"ask"`` asks, ``"read-only"``
   refuses what still needs approval.

A deny ends the question; an allow ends it unless an earlier decider asked (an allow never
lifts an ask); an ask goes to the person after the later deciders had their chance to deny.
A decider that raises denies the call (fail closed). The texts the model and the transcript
read are written from the verdict's source kind (:func:`denial_text`, :func:`source_label`).
"""

from __future__ import annotations

import asyncio
import inspect
import os
import warnings
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, TypeAlias, assert_never, get_args

from nb_tools.model import ToolCall
from nb_tools.tool import Change, Info
from nb_tools.tool._tasks import wait_waking

if TYPE_CHECKING:
    from nb_tools.permissions import Rule

Policy: TypeAlias = Literal["ask", "auto", "deny", "read-only"]
POLICIES: tuple[str, ...] = get_args(Policy)

# -- what a person (or a permission callable) answers ------------------------------------


@dataclass(frozen=True, kw_only=True)
class Decision:
    """An approver's (or a ``permission`` callable's) answer to "may this call run?".
    ``remember=True`` (with ``approved=True``) means "always allow": the request's
    :attr:`ApprovalRequest.always_allow_rule` is added to the agent's rules as a session
    rule.
    ``by`` is shown in the transcript."""

    approved: bool
    message: str | None = None
    by: str = "user"
    remember: bool = False


# -- where a verdict comes from ----------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class RuleSource:
    """A permission rule decided (``rule.action`` is allow, ask or deny)."""

    kind: Literal["rule"] = "rule"
    rule: Rule

    @property
    def label(self) -> str:
        return f"rule:{self.rule} [{self.rule.source}]"


@dataclass(frozen=True, kw_only=True)
class PermissionSource:
    """The user's ``permission`` callable decided; ``by`` is what its ``Decision`` said."""

    kind: Literal["permission"] = "permission"
    by: str


@dataclass(frozen=True, kw_only=True)
class ProtectionSource:
    """The call touches a protected path (the tool's ``is_protected_call`` said so)."""

    kind: Literal["protection"] = "protection"


@dataclass(frozen=True, kw_only=True)
class PolicySource:
    """The approval policy decided. ``plan_mode`` is set when ``"read-only"`` refused a
    call that is not read-only or still needs approval."""

    kind: Literal["policy"] = "policy"
    policy: Policy
    plan_mode: bool = False


AskReason: TypeAlias = RuleSource | ProtectionSource | PolicySource
"""Why a person is asked."""


@dataclass(frozen=True, kw_only=True)
class PersonSource:
    """A person answered (the approver). ``asked`` says why they were asked; ``remembered``
    is the rule "Always allow" added; ``by`` is who the approver said answered."""

    kind: Literal["person"] = "person"
    asked: AskReason
    by: str = "user"
    remembered: str | None = None


ErrorStage: TypeAlias = Literal["arguments", "decider", "approver", "no-approver"]


@dataclass(frozen=True, kw_only=True)
class ErrorSource:
    """No sound answer could be had, so the call is refused (fail closed): the arguments
    are invalid, a decider raised, the approver failed, or nobody can be asked."""

    kind: Literal["error"] = "error"
    stage: ErrorStage
    decider: str | None = None
    asked: AskReason | None = None


Source: TypeAlias = (
    RuleSource | PermissionSource | ProtectionSource | PolicySource | PersonSource | ErrorSource
)
SourceKind: TypeAlias = Literal["rule", "permission", "protection", "policy", "person", "error"]


# -- verdicts ----------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class Allow:
    source: Source

    @property
    def approved(self) -> bool:
        return True

    @property
    def by(self) -> str:
        """The source's display label (:func:`source_label`); switch on ``source.kind``
        to act on who decided."""
        return source_label(self.source)


@dataclass(frozen=True, kw_only=True)
class Deny:
    source: Source
    message: str | None = None

    @property
    def approved(self) -> bool:
        return False

    @property
    def by(self) -> str:
        return source_label(self.source)


@dataclass(frozen=True, kw_only=True)
class Ask:
    source: AskReason


Verdict: TypeAlias = Allow | Deny | Ask
Settled: TypeAlias = Allow | Deny


# -- what the approver is shown ----------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class ApprovalRequest:
    """What an approver is shown. ``arguments`` is the parsed JSON object; ``preview``
    holds a writer's changes; ``reason`` says why a person is asked; ``always_allow_rule``
    is the narrowest rule that covers this call (``bash(git log:*)``, ``edit_file(nb/**)``):
    "Always allow" adds exactly that rule, and ``None`` means "Always allow" is not offered
    (it could not cover the call without covering more, or the question would come back
    anyway, as for a protected path)."""

    call: ToolCall
    info: Info | None
    preview: tuple[Change, ...] | None
    arguments: dict[str, Any] | None = None
    protected: bool = False
    reason: AskReason | None = None
    always_allow_rule: str | None = None


Approver: TypeAlias = Callable[[ApprovalRequest], "bool | Decision | Awaitable[bool | Decision]"]
"""``approver(request) -> bool | Decision`` (sync or async): a person's answer."""

Permission: TypeAlias = Callable[
    [ToolCall, "Info | None"], "Decision | Awaitable[Decision | None] | None"
]
"""A permission callable consulted after the rules: a ``Decision`` settles the call,
``None`` passes it on."""


POLICY_RANK: dict[str, int] = {"deny": 0, "read-only": 0, "ask": 1, "auto": 2}
"""How much a policy lets run without a person: ``deny`` / ``read-only`` < ``ask`` < ``auto``.
A loaded conversation never brings a policy of higher rank than the caller's."""


def stricter_policy(chosen: Policy, offered: str) -> Policy:
    """``offered`` (a saved file's policy) if it is a known policy that lets run no more
    than ``chosen`` (the caller's), else ``chosen``: a file never loosens the session."""
    if offered in POLICIES and POLICY_RANK[offered] < POLICY_RANK[chosen]:
        return offered  # type: ignore[return-value]
    return chosen


APPROVAL_ENV = "NB_TOOLS_APPROVAL"
"""The environment variable naming the policy of runs that pass none (``%%agent``,
``nb_tools.map``): how unattended runs (nbclient, papermill) choose one."""


def default_policy() -> str:
    """``$NB_TOOLS_APPROVAL``, else "ask" (not checked: the caller checks it)."""
    return os.environ.get(APPROVAL_ENV, "").strip() or "ask"


def check_policy(policy: str) -> Policy:
    if policy not in POLICIES:
        choices = ", ".join(repr(p) for p in POLICIES)
        raise ValueError(f"Agent: unknown approval policy {policy!r}; use one of {choices}")
    return policy  # type: ignore[return-value]


# -- texts, written from the source kind -------------------------------------------------


def source_label(source: Source) -> str:
    """Who decided, as the transcript and ``ApprovalDecided.by`` show it."""
    match source:
        case RuleSource():
            return source.label
        case PermissionSource():
            return source.by
        case ProtectionSource():
            return "protection"
        case PolicySource():
            return f"policy:{source.policy}"
        case PersonSource():
            if isinstance(source.asked, RuleSource):
                return f"{source.by}, asked by {source.asked.label}"
            return source.by
        case ErrorSource():
            if source.stage == "decider":
                return f"{source.decider}-error"
            if source.stage == "no-approver":
                return source_label(source.asked) if source.asked is not None else "no-approver"
            if source.stage == "approver":
                return "approver-error"
            return "invalid-arguments"
        case _:
            assert_never(source)


def denial_text(verdict: Deny) -> str:
    """The error text the model reads for a refused call, written from its source kind."""
    source, message = verdict.source, verdict.message
    match source:
        case PersonSource():
            text = "The user denied this call."
            return f"{text} Message from the user: {message}" if message else text
        case RuleSource():
            return (
                f"This call was denied by the permission rule '{source.rule}' "
                f"(from {source.rule.source}). The tool did not run."
            )
        case PolicySource() if source.plan_mode:
            return f"{message} The tool did not run."
        case ErrorSource() if source.stage == "arguments":
            return message or "invalid arguments"
        case PolicySource() | PermissionSource() | ProtectionSource() | ErrorSource():
            reason = f": {message}" if message else ""
            return f"This call was denied ({source_label(source)}){reason}. The tool did not run."
        case _:
            assert_never(source)


# -- asking the person -------------------------------------------------------------------


async def ask(approver: Approver, request: ApprovalRequest) -> Decision | Deny:
    """Ask ``approver``; its answer as a ``Decision``, or a ``Deny`` (source "error") when
    it raised or answered nonsense (fail closed). An async answer is awaited through the
    one wake loop (:func:`~nb_tools.tool._tasks.wait_waking`), so Interrupt and Stop act at
    once while a person thinks; the approver itself just awaits."""
    reason = request.reason
    try:
        answer: Any = approver(request)
        if inspect.isawaitable(answer):
            answer = await wait_waking(answer)
    except asyncio.CancelledError:
        raise
    except Exception as exc:
        warnings.warn(
            f"nb_tools: the approver raised {type(exc).__name__}: {exc}; the call "
            f"{request.call.name} ({request.call.id}) was denied",
            RuntimeWarning,
            stacklevel=2,
        )
        return Deny(
            source=ErrorSource(stage="approver", asked=reason),
            message=f"the approver failed ({type(exc).__name__}: {exc}), so the call was denied",
        )
    if isinstance(answer, Decision):
        return answer
    if isinstance(answer, bool):
        return Decision(approved=answer)
    return Deny(
        source=ErrorSource(stage="approver", asked=reason),
        message=f"the approver answered {answer!r}; it must return a bool or a Decision",
    )


def no_approver(reason: AskReason) -> Deny:
    """The verdict when a person must be asked and no approver is configured."""
    match reason:
        case ProtectionSource():
            why = "this call touches a protected path"
        case RuleSource():
            why = f"the rule '{reason.rule}' asks for approval"
        case PolicySource():
            why = f"the policy is {reason.policy!r}"
        case _:
            assert_never(reason)
    return Deny(
        source=ErrorSource(stage="no-approver", asked=reason),
        message=f"{why} but no approver is configured; pass approver= to Agent, or choose "
        "approval='auto' or 'read-only'",
    )
