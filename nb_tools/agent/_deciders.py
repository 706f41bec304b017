"""The approval pipeline: the ordered deciders and the loop over them, then the person.

Each decider looks at one planned call (:class:`~nb_tools.agent._schedule.CallPlan`) and
returns a verdict with a typed source, or ``None`` to pass. The order and how verdicts
combine are described in :mod:`nb_tools.agent._approval`.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from nb_tools.agent._approval import (
    Allow,
    ApprovalRequest,
    Approver,
    Ask,
    Decision,
    Deny,
    ErrorSource,
    Permission,
    PermissionSource,
    PersonSource,
    Policy,
    PolicySource,
    ProtectionSource,
    RuleSource,
    Settled,
    Verdict,
    ask,
    no_approver,
    source_label,
)
from nb_tools.agent._events import ApprovalDecided
from nb_tools.agent._schedule import CallPlan
from nb_tools.permissions import narrowest_rule
from nb_tools.tool import subject_of
from nb_tools.tool._votes import is_protected_call

if TYPE_CHECKING:
    from nb_tools.model import ToolCall
    from nb_tools.permissions import PermissionRules
    from nb_tools.tool import Registry


class Decider(Protocol):
    """One step of the pipeline. ``asked`` is the first ask of an earlier decider, if any
    (the policy needs it: a call someone asked about needs approval)."""

    @property
    def name(self) -> str:
        """What the decider checks, as a refusal names it ("rules", "permission")."""
        ...

    async def decide(self, p: CallPlan, asked: Ask | None) -> Verdict | None: ...


# -- the deciders ------------------------------------------------------------------------


@dataclass(frozen=True)
class Arguments:
    """A call whose arguments are not I-JSON, not an object, or fail the schema never runs
    (raw-parameter tools included): the model reads the problems."""

    name: str = "arguments"

    async def decide(self, p: CallPlan, asked: Ask | None) -> Verdict | None:
        if p.invalid is None:
            return None
        return Deny(source=ErrorSource(stage="arguments"), message=p.invalid)


@dataclass(frozen=True)
class PlanMode:
    """``read-only`` (plan mode): a call that is not read-only never runs, whatever the
    rules allow."""

    policy: Policy
    name: str = "plan mode"

    async def decide(self, p: CallPlan, asked: Ask | None) -> Verdict | None:
        if self.policy != "read-only" or p.read_only:
            return None
        if p.preview:
            paths = ", ".join(dict.fromkeys(c.path for c in p.preview))
            what = f"{p.call.name} would change files ({paths})"
        else:
            what = f"{p.call.name} is not read-only (it may change something)"
        return Deny(
            source=PolicySource(policy="read-only", plan_mode=True),
            message=f"plan mode: {what}, and plan mode runs only read-only calls; describe "
            "the change instead, or ask the user to leave plan mode (approval 'ask').",
        )


@dataclass(frozen=True)
class Protection:
    """A call that touches a protected path asks a person under every policy; no allow
    (a rule, "Always allow", the policy) lifts that."""

    name: str = "protection"

    async def decide(self, p: CallPlan, asked: Ask | None) -> Verdict | None:
        if p.tool is not None and is_protected_call(p.tool, p.raw):
            return Ask(source=ProtectionSource())
        return None


@dataclass(frozen=True)
class Rules:
    """The permission rules: deny > ask > allow, each naming the rule. The session rules
    "Always allow" added are among them, so they mean the same under every policy."""

    rules: PermissionRules
    name: str = "rules"

    async def decide(self, p: CallPlan, asked: Ask | None) -> Verdict | None:
        match = self.rules.check(p.call.name, p.call.arguments, p.tool)
        if match is None:
            return None
        source = RuleSource(rule=match.rule)
        if match.action == "deny":
            return Deny(source=source)
        if match.action == "ask":
            return Ask(source=source)
        return Allow(source=source)


@dataclass(frozen=True)
class PermissionCallable:
    """The user's ``permission(call, info) -> Decision | None``."""

    permission: Permission
    name: str = "permission"

    async def decide(self, p: CallPlan, asked: Ask | None) -> Verdict | None:
        answer: Any = self.permission(p.call, p.info)
        if inspect.isawaitable(answer):
            answer = await answer
        if answer is None:
            return None
        if not isinstance(answer, Decision):
            raise TypeError(f"it returned {answer!r}; return a Decision or None")
        source = PermissionSource(by=answer.by)
        if answer.approved:
            return Allow(source=source)
        return Deny(source=source, message=answer.message)


@dataclass(frozen=True)
class PolicyDecider:
    """The approval policy, for calls that need approval (the tool says so, or an earlier
    decider asked)."""

    policy: Policy
    root: Path
    name: str = "policy"

    async def decide(self, p: CallPlan, asked: Ask | None) -> Verdict | None:
        if not (p.needs_approval or asked is not None):
            return None
        source = PolicySource(policy=self.policy)
        if self.policy == "deny":
            return Deny(
                source=source,
                message="the approval policy is 'deny', which refuses every call that needs "
                "approval",
            )
        if self.policy == "auto":
            return Allow(source=source)
        if self.policy == "ask":
            return Ask(source=source)
        if asked is not None:  # read-only: a protected read or an ask rule goes to a person
            return None
        return Deny(
            source=PolicySource(policy="read-only", plan_mode=True),
            message=f"plan mode: {p.call.name} needs approval ({_why(p)}), and plan mode runs "
            f"only calls that need none; ask the user to allow it with a rule"
            f"{_rule_hint(p, self.root)} or to leave plan mode (approval 'ask').",
        )


def _why(p: CallPlan) -> str:
    if subject_of(p.info).kind == "url":
        return "it reaches the network"
    return "the tool asks before it runs"


def _rule_hint(p: CallPlan, root: Path) -> str:
    rule = narrowest_rule(p.call.name, p.arguments, root, p.info)
    return f" ({rule})" if rule else ""


# -- the loop ----------------------------------------------------------------------------


async def run_deciders(deciders: Sequence[Decider], p: CallPlan) -> Settled | Ask | None:
    """Walk ``deciders`` for ``p``: a deny ends the walk; an allow ends it unless an earlier
    decider asked; the first ask is kept while the rest may still deny. A decider that
    raises denies (fail closed). ``None``: nobody had anything to say, the call runs."""
    if p.tool is None:  # nothing can run: the executor answers with the tools there are
        return None
    asked: Ask | None = None
    for decider in deciders:
        try:
            verdict = await decider.decide(p, asked)
        except Exception as exc:
            return Deny(
                source=ErrorSource(stage="decider", decider=decider.name),
                message=f"the {decider.name} check failed ({type(exc).__name__}: {exc}), so "
                "the call was denied",
            )
        if verdict is None:
            continue
        if isinstance(verdict, Deny):
            return verdict
        if isinstance(verdict, Ask):
            asked = asked or verdict
        elif asked is None:
            return verdict
    return asked


def deciders_for(
    *,
    policy: Policy,
    rules: PermissionRules | None,
    permission: Permission | None,
    root: Path,
) -> list[Decider]:
    """The pipeline in its order (see :mod:`nb_tools.agent._approval`)."""
    out: list[Decider] = [Arguments(), PlanMode(policy), Protection()]
    if rules is not None:
        out.append(Rules(rules))
    if permission is not None:
        out.append(PermissionCallable(permission))
    out.append(PolicyDecider(policy, root))
    return out


# -- the person --------------------------------------------------------------------------


async def ask_person(
    p: CallPlan,
    asked: Ask,
    approver: Approver | None,
    root: Path,
    requested: Callable[[ApprovalRequest], Awaitable[None]],
) -> Settled:
    """Ask the person about ``p`` (``requested`` is awaited first, to announce it). "Always
    allow" is offered as the narrowest rule covering the call, and only when the policy
    asked: an ask rule or a protected path would ask again whatever is remembered."""
    reason = asked.source
    if approver is None:
        return no_approver(reason)
    rule = (
        narrowest_rule(p.call.name, p.arguments, root, p.info) if reason.kind == "policy" else None
    )
    request = ApprovalRequest(
        call=p.call,
        info=p.info,
        preview=p.preview,
        arguments=p.arguments,
        protected=reason.kind == "protection",
        reason=reason,
        always_allow_rule=rule,
    )
    await requested(request)
    answer = await ask(approver, request)
    if isinstance(answer, Deny):
        return answer
    remembered = rule if answer.approved and answer.remember else None
    source = PersonSource(asked=reason, by=answer.by, remembered=remembered)
    if answer.approved:
        return Allow(source=source)
    return Deny(source=source, message=answer.message)


def remembered_rule(verdict: Settled) -> str | None:
    """The rule "Always allow" asked to add, if this is that verdict."""
    source = verdict.source
    return source.remembered if isinstance(verdict, Allow) and source.kind == "person" else None


def is_invalid_arguments(verdict: Settled) -> bool:
    source = verdict.source
    return source.kind == "error" and source.stage == "arguments"


def decided_event(call_id: str, verdict: Settled) -> ApprovalDecided:
    """The ``ApprovalDecided`` event for a verdict: its typed source, the display label
    (``by``), the message, and the rule involved (the deciding rule, or the rule "Always
    allow" added)."""
    source = verdict.source
    rule: str | None = None
    if source.kind == "rule":
        rule = str(source.rule)
    elif source.kind == "person":
        rule = source.remembered
    return ApprovalDecided(
        call_id=call_id,
        approved=isinstance(verdict, Allow),
        by=source_label(source),
        message=verdict.message if isinstance(verdict, Deny) else None,
        source=source,
        rule=rule,
    )


async def decide(
    call: ToolCall,
    *,
    tools: Registry,
    approval: Policy = "ask",
    rules: PermissionRules | None = None,
    permission: Permission | None = None,
    root: Path | None = None,
) -> Verdict | None:
    """What the pipeline says about ``call`` before anyone is asked, as a run would decide
    it: ``Allow`` / ``Deny`` with their source, ``Ask`` (a person would be asked, and why),
    or ``None`` (the call runs without approval)."""
    from nb_tools.agent._schedule import plan

    where = root if root is not None else rules.root if rules is not None else Path.cwd()
    deciders = deciders_for(policy=approval, rules=rules, permission=permission, root=where)
    return await run_deciders(deciders, plan(tools, call))
