"""A map run in a notebook cell, as ``%%agent --over`` and ``await nb_tools.amap(...)`` show
it: the plan card before the first request, then the progress view (and the review queue
when calls may need a person), and at the end the table with the rows' conversations.

Interrupt (the kernel's interrupt while the cell awaits) ends the map as Stop does: rows in
flight are stopped and marked "stopped", rows not started "skipped", the partial table is
shown and kept (:func:`nb_tools.last_map`, and the magic's variable), and the cell ends with
a one-line "Interrupted" so "Run All" stops there. Interrupted at the plan card, nothing is
sent.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import threading
from collections.abc import Callable
from typing import Any

from nb_tools.tool._tasks import wait_waking

SETTLE_SECONDS = 10.0
"""How long an interrupted map may take to stop its rows and return its table."""
LAST_MAP = "nb_tools.last_map()"
"""Where an interrupted ``await nb_tools.amap(...)`` leaves its partial table."""


class MapInterrupted(KeyboardInterrupt):
    """Ends a map's cell that was interrupted, after its partial table is shown and kept
    in ``where`` (so "Run All" stops there, as for any interrupt)."""

    def __init__(self, where: str | None) -> None:
        super().__init__(where)
        self.variable = where

    def _render_traceback_(self) -> list[str]:  # IPython shows this instead of a traceback
        if self.variable is None:
            return ["Interrupted before the map started: no request was sent."]
        return [
            f"Interrupted: the map stopped; the partial table is above and in "
            f'{self.variable} (rows in flight are marked "stopped"; finished rows are kept).'
        ]


def in_kernel_cell() -> bool:
    """Whether this is a cell of an IPython kernel, on its main thread (where a view can be
    shown and clicked while the cell awaits)."""
    if threading.current_thread() is not threading.main_thread():
        return False
    from IPython.core.getipython import get_ipython

    return getattr(get_ipython(), "kernel", None) is not None


def row_names(inputs: Any) -> list[str]:
    """Each row's first input value, to name it in the list of rows."""
    from nb_tools.agent import read_inputs

    table = read_inputs(inputs)
    if not table.columns:
        return []
    first = table.columns[0]
    return [str(row.get(first, "")) for row in table.rows]


def _both(mine: Callable[..., Any], theirs: Callable[..., Any] | None) -> Callable[..., Any]:
    if theirs is None:
        return mine

    def call(*args: Any) -> None:
        mine(*args)
        theirs(*args)

    return call


async def run_in_cell(
    prompt: Any,
    inputs: Any,
    options: dict[str, Any],
    *,
    keep: Callable[[Any], None] | None = None,
    where: str = LAST_MAP,
    prompts: list[str | None] | None = None,
) -> Any:
    """Run ``nb_tools.agent.amap(prompt, inputs, **options)`` with the cell's views; the
    table (also passed to ``keep``), or None when the plan was cancelled. An interrupt
    ends with :class:`MapInterrupted` naming ``where`` once the partial table is shown."""
    from nb_tools.agent import amap, default_policy, read_inputs, render_prompts
    from nb_tools.jupyter._map_plan_card import PlanCard
    from nb_tools.jupyter._map_view import MapView

    if prompts is None:
        prompts = render_prompts(prompt, read_inputs(inputs))
    model = options.get("model")
    view = MapView(
        prompts,
        row_names(inputs),
        model=str(getattr(model, "model", model or "")),
        provider=str(getattr(model, "name", "")),
        stop=options.get("stop"),
    )
    queue = None
    if (options.get("approval") or default_policy()) == "ask" and options.get("approver") is None:
        from nb_tools.jupyter._review_queue import ReviewQueue

        queue = ReviewQueue(rules=options.get("rules"))
        options["approver"] = queue.approver
    decide: Callable[[Any], Any] = options.get("confirm") or PlanCard()
    started = False

    async def confirm(plan: Any) -> bool:
        nonlocal started
        go = decide(plan)
        if inspect.isawaitable(go):
            go = await go
        if not go:
            return False
        started = True
        view.show()
        if queue is not None:
            queue.show()
        return True

    options.update(
        on_progress=_both(view.update, options.get("on_progress")),
        on_row_event=_both(view.records, options.get("on_row_event")),
        on_restored=_both(view.records.restored, options.get("on_restored")),
        stop=view.stop,
        confirm=confirm,
    )
    task = asyncio.ensure_future(amap(prompt, inputs, **options))
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
        if failure is not None:
            view.finish(None)
            raise failure
    finally:
        if queue is not None:
            queue.close()
    result = task.result()
    if result is None:  # cancelled at the plan card: nothing was sent, nothing is set
        return None
    if keep is not None:
        keep(result)
    if interrupted:
        view.finish(result, note=f"Interrupted: the partial table (also in {where})")
        raise MapInterrupted(where)
    view.finish(result)
    return result


async def amap_in_cell(prompt: Any, inputs: Any, **options: Any) -> Any:
    """``await nb_tools.amap(...)`` in a notebook cell: the map with the cell's views; on
    Interrupt the partial table is shown and in :func:`nb_tools.last_map`."""
    if options.get("rules") is None:
        from nb_tools.jupyter._session import get_session

        options["rules"] = get_session().rules  # the session's one rule set, as %%agent's
    return await run_in_cell(prompt, inputs, options)
