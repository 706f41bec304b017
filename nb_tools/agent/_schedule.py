"""What the loop knows about each call of a turn, and running the approved ones.

Calls run through ``Executor.execute`` one by one, grouped exactly as
``Executor.execute_batch`` groups them (each run of adjacent read-only or concurrent calls
in parallel, the rest in order), so that each call reports its own finish the moment it
finishes and a stop knows precisely which calls had started.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from nb_tools.model import ToolCall, ToolResult
from nb_tools.tool import Executor, Registry, is_read_only_call, needs_approval, preview_changes
from nb_tools.tool._executor import parallel_groups
from nb_tools.tool._grant import Grant, grant_from, granted
from nb_tools.tool._json import loads_ijson
from nb_tools.tool._types import Change, Info, Tool


@dataclass(frozen=True, kw_only=True)
class CallPlan:
    """One call of a turn as the approval step and the scheduler see it."""

    call: ToolCall
    tool: Tool | None
    info: Info | None
    valid: bool  # the arguments parse and satisfy the schema
    arguments: dict[str, Any] | None
    preview: tuple[Change, ...] | None
    needs_approval: bool
    read_only: bool
    parallel: bool
    grant: Grant | None = None  # set once decided: who approved it (approved=False: no click)


def approve(p: CallPlan, by: str | None, *, sandbox: Any = None) -> CallPlan:
    """``p`` with its grant: ``by`` is the approving decision's source, ``None`` when the
    call ran without approval."""
    return replace(p, grant=grant_from(by, approved=by is not None, sandbox=sandbox))


def plan(registry: Registry, call: ToolCall) -> CallPlan:
    """Look the call up and classify it. Unknown tools and invalid arguments need no
    approval: they never run, the executor answers them with an error."""
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
        )
    tool, info = entry.tool, entry.info
    raw = call.arguments if call.arguments.strip() else "{}"
    # The executor validates again when it runs the call; checking here decides whether
    # the call needs approval at all. (Without the registry's validator, a JSON check.)
    validate = getattr(entry, "validate", None) or loads_ijson
    try:
        parsed = validate(raw)
        valid = True
    except Exception:  # ValidationError, or a validator's own failure: the executor reports it
        parsed, valid = None, False
    read_only = is_read_only_call(tool, raw)
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
        parallel=info.concurrent or read_only,
    )


def groups(plans: Sequence[CallPlan]) -> list[list[CallPlan]]:
    """Adjacent parallel calls form one group; every other call is a group of its own
    (the same grouping as ``Executor.execute_batch``)."""
    return parallel_groups(plans, lambda p: p.parallel)


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
        tracker.started[p.call.id] = start
        # A call that reached here without a grant ran without approval (fail closed).
        with granted(p.grant or Grant(approved=False)):
            result = await executor.execute(p.call)
        tracker.results[p.call.id] = result
        await finished(p, result, time.perf_counter() - start)

    for group in groups(plans):
        if len(group) == 1:
            await one(group[0])
            continue
        tasks = [asyncio.ensure_future(one(p)) for p in group]
        try:
            await asyncio.gather(*tasks)
        except BaseException:
            for task in tasks:
                task.cancel()
            await asyncio.wait(tasks)
            raise
