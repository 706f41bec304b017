"""What the loop knows about each call of a turn, and running the approved ones.

Calls run through ``Executor.execute`` one by one, on the schedule ``Executor.execute_batch``
uses (``run_grouped``: each run of adjacent read-only or concurrent calls in parallel, the
rest in order), so that each call reports its own finish the moment it finishes and a stop
knows precisely which calls had started.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from nb_tools.agent._approval import Allow, PolicySource, Source
from nb_tools.model import ToolCall, ToolResult
from nb_tools.tool import (
    Change,
    Executor,
    Info,
    Registry,
    Tool,
    ValidationError,
    is_read_only_call,
    needs_approval,
    preview_changes,
)
from nb_tools.tool._grant import Grant, GrantKind, ReadRules, granted
from nb_tools.tool._json import json_type, loads_ijson, pointer
from nb_tools.tool._tasks import run_grouped
from nb_tools.tool._votes import is_parallel_call


@dataclass(frozen=True, kw_only=True)
class CallPlan:
    """One call of a turn as the approval pipeline and the scheduler see it. ``invalid``
    is the error the model reads when the arguments are not I-JSON or fail the schema
    (such a call never runs); ``raw`` is the argument text every vote was given."""

    call: ToolCall
    tool: Tool | None
    info: Info | None
    valid: bool  # the arguments parse and satisfy the schema
    arguments: dict[str, Any] | None
    preview: tuple[Change, ...] | None
    needs_approval: bool
    read_only: bool
    parallel: bool
    invalid: str | None = None
    raw: str = "{}"
    grant: Grant | None = None  # set once decided: who approved it (approved=False: no click)


def approve(
    p: CallPlan, decision: Allow | None, *, sandbox: Any = None, rules: ReadRules | None = None
) -> CallPlan:
    """``p`` with its grant, from the deciding ``Allow``'s source (``None``: the call needed
    no approval and runs without a click). Plan mode's yes is no approval to change
    anything. ``rules`` go with it to the tool (see ``Grant``)."""
    by = decision.by if decision is not None else None
    source = decision.source if decision is not None else None
    if source is None or (isinstance(source, PolicySource) and source.policy == "read-only"):
        grant = Grant(approved=False, by=by, sandbox=sandbox, rules=rules)
    else:
        grant = Grant(approved=True, kind=grant_kind(source), by=by, sandbox=sandbox, rules=rules)
    return replace(p, grant=grant)


def grant_kind(source: Source) -> GrantKind:
    """Who approved, as a tool needs to know it: a person who saw the card, the policy, or
    a rule nobody looked at a card for (a permission rule, the ``permission`` callable, a
    rule "Always allow" added earlier)."""
    if source.kind == "person":
        return "person"
    return "policy" if source.kind == "policy" else "rule"


def plan(registry: Registry, call: ToolCall) -> CallPlan:
    """Look the call up, validate its arguments once and classify it. An unknown tool
    needs no approval (the executor answers it); invalid arguments are recorded in
    ``invalid`` and the approval pipeline refuses the call, so it never runs, whether or
    not the tool validates its own arguments (``Info.raw_parameters``)."""
    entry = registry.entry(call.name)
    if entry is None:
        return CallPlan(
            call=call,
            tool=None,
            info=None,
            valid=False,
            arguments=None,
            preview=None,
            needs_approval=False,
            read_only=False,
            parallel=False,
            invalid=None,
            raw=call.arguments,
        )
    tool, info = entry.tool, entry.info
    raw = call.arguments if call.arguments.strip() else "{}"
    parsed, invalid = _check_arguments(entry.validate, info.name, raw)
    valid = invalid is None
    read_only = valid and is_read_only_call(tool, raw)
    preview = None
    if valid and not read_only:
        changes = preview_changes(tool, raw)
        preview = tuple(changes) if changes else None
    return CallPlan(
        call=call,
        tool=tool,
        info=info,
        valid=valid,
        arguments=parsed if isinstance(parsed, dict) else None,
        preview=preview,
        needs_approval=valid and needs_approval(tool, raw),
        read_only=read_only,
        parallel=valid and is_parallel_call(tool, raw, read_only=read_only),
        invalid=invalid,
        raw=raw,
    )


def _check_arguments(
    validate: Callable[[str | bytes], Any] | None, name: str, raw: str
) -> tuple[Any, str | None]:
    """The parsed arguments and ``None``, or ``None`` and the error the model reads. The
    registry's validator checks I-JSON and the schema; a tool with raw parameters still
    gets the I-JSON check and must receive an object."""
    try:
        parsed = (validate or loads_ijson)(raw)
    except ValidationError as exc:
        problems = exc.problems or [str(exc)]
        return None, f"invalid arguments for {name}:\n" + "\n".join(problems)
    except Exception as exc:  # a validator's own failure: fail closed
        return None, (
            f"invalid arguments for {name}: the arguments could not be checked "
            f"({type(exc).__name__}: {exc})"
        )
    if validate is None and not isinstance(parsed, dict):
        return None, (
            f"invalid arguments for {name}:\n/: expected an object, got {json_type(parsed)}"
        )
    if validate is None:
        inexact = _inexact_integers(parsed)
        if inexact:
            return None, f"invalid arguments for {name}:\n" + "\n".join(inexact)
    return parsed, None


_EXACT = 2**53 - 1  # the largest integer a double (JSON in JavaScript, say) holds exactly


def _inexact_integers(value: Any) -> list[str]:
    """Integers a double cannot hold exactly, with their paths. A raw-parameter tool (an
    MCP server, a remote API) hands its arguments on as JSON to a reader that may parse
    numbers as doubles: the card would show 9007199254740993 and the server act on
    ...992. So such a number must come as a string (I-JSON, RFC 7493 2.2)."""
    problems: list[str] = []
    stack: list[tuple[Any, tuple[str | int, ...]]] = [(value, ())]
    while stack:
        v, path = stack.pop()
        if type(v) is int and abs(v) > _EXACT:
            problems.append(
                f"{pointer(path)}: {v} is beyond what a JSON number holds exactly "
                f"(±{_EXACT}); send it as a string"
            )
        elif type(v) is dict:
            stack.extend((x, (*path, k)) for k, x in v.items())
        elif type(v) is list:
            stack.extend((x, (*path, i)) for i, x in enumerate(v))
    return sorted(problems)


@dataclass
class Tracker:
    """The state of a turn's calls, kept so a stop can answer every call correctly."""

    started: dict[str, float] = field(default_factory=dict)  # call id -> start time
    results: dict[str, ToolResult] = field(default_factory=dict)


Finished = Callable[[CallPlan, ToolResult, float], Awaitable[None]]


async def run_approved(
    executor: Executor, plans: Sequence[CallPlan], tracker: Tracker, finished: Finished
) -> None:
    """Run ``plans`` group by group; ``finished(plan, result, duration)`` is awaited as each
    call ends. Cancelling cancels the calls in flight; ``tracker`` keeps what finished."""

    async def one(p: CallPlan) -> None:
        start = time.perf_counter()
        swapped = swapped_tool(executor, p)
        if swapped is not None:
            tracker.results[p.call.id] = swapped
            await finished(p, swapped, 0.0)
            return
        tracker.started[p.call.id] = start
        # A call that reached here without a grant ran without approval (fail closed).
        with granted(p.grant or Grant(approved=False)):
            result = await executor.execute(p.call)
        tracker.results[p.call.id] = result
        await finished(p, result, time.perf_counter() - start)

    await run_grouped(plans, lambda p: p.parallel, one)


def swapped_tool(executor: Executor, p: CallPlan) -> ToolResult | None:
    """The executor looks a call's tool up when it runs it; the decision was made about
    the tool registered when the reply came. If another tool has taken the name since (an
    earlier call of the batch, an MCP refresh, a cell), or a tool unknown then has been
    registered since (a call nobody decided on), the call does not run. ``None``: the
    same tool (or still none: the executor answers with the tools there are) is there."""
    if executor.registry.get(p.call.name) is p.tool:
        return None
    what = "registered" if p.tool is None else "replaced"
    return ToolResult(
        tool_use_id=p.call.id,
        content=f"{p.call.name}: the tool was {what} after this call was decided, so it did "
        "not run; call it again to have the tool that now has this name decided on.",
        is_error=True,
        metadata={"status": "error", "tool_changed": what},
    )
