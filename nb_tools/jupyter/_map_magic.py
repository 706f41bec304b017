"""``%%agent --over DF``: the cell body is a template run over every row of the DataFrame
``DF`` with :func:`nb_tools.amap`; the result table is put in a variable and shown."""

from __future__ import annotations

import asyncio
import contextlib
from argparse import Namespace
from typing import Any

from IPython.core.error import UsageError

from nb_tools.tool._tasks import wait_waking

DEFAULT_VARIABLE = "map_result"
"""Where the result goes without ``--output NAME``."""
SETTLE_SECONDS = 10.0
"""How long an interrupted map may take to stop its rows and return its table."""


def _frame(ns: dict[str, Any], name: str) -> Any:
    from nb_tools.agent import is_frame

    if name not in ns:
        raise UsageError(f"%%agent --over {name}: {name} is not defined in the notebook")
    value = ns[name]
    if not (is_frame(value) or isinstance(value, list)):
        raise UsageError(
            f"%%agent --over {name}: {name} is a {type(value).__name__}; give a pandas "
            "DataFrame, a list of dicts or a list of strings"
        )
    return value


def _target(ns: dict[str, Any], spec: str | None) -> tuple[str, Any]:
    """``--output NAME[:TYPE]``: the variable for the table and the rows' output type
    (TYPE, else NAME's annotation, else none: the rows' answers are text)."""
    if spec is None:
        return DEFAULT_VARIABLE, None
    from nb_tools.jupyter._magics import _output_target

    name, _, type_name = (p.strip() for p in spec.partition(":"))
    if type_name or name in (ns.get("__annotations__") or {}):
        return _output_target(spec)
    if not name.isidentifier():
        raise UsageError(f"%%agent --output {spec!r}: NAME must be a Python variable name")
    return name, None


class MapInterrupted(KeyboardInterrupt):
    """Ends a ``%%agent --over`` cell that was interrupted, after its partial table is
    shown and put in its variable (so "Run All" stops there, as for any interrupt)."""

    def __init__(self, variable: str | None) -> None:
        super().__init__(variable)
        self.variable = variable

    def _render_traceback_(self) -> list[str]:  # IPython shows this instead of a traceback
        if self.variable is None:
            return ["Interrupted before the map started: no request was sent."]
        return [
            f"Interrupted: the map stopped; the partial table is above and in "
            f'{self.variable} (rows in flight are marked "stopped"; finished rows are kept).'
        ]


def row_names(inputs: Any) -> list[str]:
    """Each row's first input value, to name it in the list of rows."""
    from nb_tools.agent import read_inputs

    table = read_inputs(inputs)
    if not table.columns:
        return []
    first = table.columns[0]
    return [str(row.get(first, "")) for row in table.rows]


async def run_over(args: Namespace, template: str, ns: dict[str, Any]) -> Any:
    """Run the map the options in ``args`` describe, after its plan card; returns the
    table (also in the variable and displayed), or None when the plan was cancelled."""
    import nb_tools
    from nb_tools.agent import read_inputs, render_prompts
    from nb_tools.jupyter._runner import default_budget, resolve_model
    from nb_tools.jupyter._session import get_session
    from nb_tools.tool import default_registry

    if not template.strip():
        raise UsageError("%%agent --over: the cell body is the prompt template; write one")
    inputs = _frame(ns, args.over)
    variable, output = _target(ns, args.output)
    session = get_session()
    _, model = resolve_model(session, args.model, args.base_url)
    registry = default_registry()
    if args.tools:
        registry = registry.subset(*(n.strip() for n in args.tools.split(",") if n.strip()))
    from nb_tools.jupyter._map_plan_card import PlanCard
    from nb_tools.jupyter._map_view import MapView
    from nb_tools.jupyter._runner import default_approval

    try:
        prompts = render_prompts(template.strip(), read_inputs(inputs))
    except (KeyError, ValueError, TypeError) as exc:
        raise UsageError(str(exc).strip("'\"")) from None
    view = MapView(
        prompts,
        row_names(inputs),
        model=str(getattr(model, "model", model or "")),
        provider=str(getattr(model, "name", "")),
    )
    card = PlanCard()
    queue = approver = None
    asking = (args.approval or default_approval()) == "ask"
    if asking:
        from nb_tools.jupyter._review_queue import ReviewQueue

        queue = ReviewQueue(rules=session.rules)
        approver = queue.approver
    started = False

    async def confirm(plan: Any) -> bool:
        nonlocal started
        if not await card(plan):
            return False
        started = True
        view.show()
        if queue is not None:
            queue.show()
        return True

    task = asyncio.ensure_future(
        nb_tools.amap(
            template.strip(),
            inputs,
            tools=registry.clone(),
            output=output,
            model=model,  # type: ignore[arg-type]
            system=args.system,
            concurrency=args.concurrency or 8,
            approval=args.approval,
            approver=approver,
            rules=session.rules,
            budget_usd=args.budget if args.budget is not None else default_budget(),
            max_turns=args.max_turns or 10,
            checkpoint=args.checkpoint,
            backend="batch" if args.batch else "kernel",
            on_progress=view.update,
            stop=view.stop,
            confirm=confirm,
            on_row_event=view.records,
        )
    )
    interrupted = False
    try:
        try:
            await wait_waking(asyncio.wait({task}))
        except (asyncio.CancelledError, KeyboardInterrupt):
            # Interrupt: end the map as Stop does (rows in flight stopped and marked, the
            # rest skipped, the table returned); before the plan was approved, send nothing.
            interrupted = True
            view.stop.set()
            if not started:
                task.cancel()
            with contextlib.suppress(BaseException):
                await asyncio.wait({task}, timeout=SETTLE_SECONDS)
        if not task.done() or task.cancelled():
            task.cancel()
            view.finish(None)
            raise MapInterrupted(None) if interrupted else asyncio.CancelledError()
        failure = task.exception()
        if isinstance(failure, KeyError | ValueError | TypeError):
            view.finish(None)
            raise UsageError(str(failure).strip("'\"")) from None
        if failure is not None:
            view.finish(None)
            raise failure
    finally:
        if queue is not None:
            queue.close()
    result = task.result()
    if result is None:  # cancelled at the plan card: nothing was sent, nothing is set
        return None
    ns[variable] = result
    if interrupted:
        view.finish(result, note=f"Interrupted: the partial table (also in {variable})")
        raise MapInterrupted(variable)
    view.finish(result)
    return result
