"""The plan card of ``%%agent --over``: before the map's first request, what it will do
(rows, tools and which of them ask under the policy and rules, the estimated cost and how
it was estimated, the budget), with Approve and Cancel. Approve starts the map; Cancel
ends the cell with no model request sent.

A run that nobody can click for never waits: with ``NB_TOOLS_APPROVAL`` set, or when no
frontend shows the card (:mod:`nb_tools.jupyter._headless`), the plan is printed as text
and the map goes on under its policy. Once answered, the card is replaced by a static
copy of the plan saying what was decided, so a saved notebook holds no widget view.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from html import escape
from typing import Any

import ipywidgets as widgets
from IPython.display import display

from nb_tools.agent import APPROVAL_ENV, MapPlan, plan_text
from nb_tools.jupyter._approval_card import _APPROVED, _DENIED, _MUTED
from nb_tools.jupyter._headless import FrontendWatch
from nb_tools.tool._tasks import wait_waking
from nb_tools.transcript import visible_html

CANCELLED_TEXT = "Cancelled at the plan: no request was sent."


def plan_html(plan: MapPlan) -> str:
    """The plan as HTML (the card's body, and what stays in the notebook)."""
    skipped = plan.rows - plan.to_run
    rows = f"<b>{plan.to_run:,}</b>, {plan.concurrency} at a time"
    if skipped:
        rows += f" ({skipped:,} of {plan.rows:,} are done: in the checkpoint)"
    if plan.backend == "batch":
        rows += ", through Message Batches"
    tools = "<br>".join(
        f"<code>{visible_html(t.name)}</code>: {'⏸ ' if t.asks else ''}{visible_html(t.does)}"
        for t in plan.tools
    )
    rules = ", ".join(f"<code>{visible_html(r)}</code>" for r in plan.rules)
    cost, _, how = plan.estimate_text.partition(": ")
    fields = [
        ("Rows", rows),
        ("Model", f"<code>{escape(plan.model)}</code> ({escape(plan.provider)})"),
        ("Policy", f"<b>{escape(plan.policy)}</b>"),
        ("Tools", tools or "none"),
        ("Rules", rules or "none for these tools"),
        (
            "Estimated cost",
            f'<b>{escape(cost)}</b><br><span style="{_MUTED};font-size:90%">{escape(how)}</span>',
        ),
        ("Budget", escape(plan.budget_text)),
    ]
    label = f"padding:1px 12px 1px 0;text-align:left;vertical-align:top;white-space:nowrap;{_MUTED}"
    value = "padding:1px 0;text-align:left;vertical-align:top"
    body = "".join(
        f'<tr><th style="{label}">{name}</th><td style="{value}">{text}</td></tr>'
        for name, text in fields
    )
    return (
        '<div class="nbtools-map-plan" style="line-height:1.45"><div><b>Plan of this map</b> '
        f'<span style="{_MUTED}">(nothing is sent before you approve)</span></div>'
        f'<table style="margin:4px 0;border-collapse:collapse">{body}</table></div>'
    )


class PlanCard:
    """``await card(plan)`` -> True to run the map, False to cancel it."""

    def __init__(self) -> None:
        self.handle: Any = None
        self.plan: MapPlan | None = None
        self._answer: asyncio.Future[bool] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self.widgets: list[Any] = []

    def _build(self, plan: MapPlan) -> Any:
        """The card's widgets (made once there is a plan and a future for the answer)."""
        self.html = widgets.HTML(plan_html(plan))
        self.approve = widgets.Button(
            description="Approve", button_style="success", icon="check", tooltip="Run the map"
        )
        self.cancel = widgets.Button(
            description="Cancel", icon="times", tooltip="Send no request; end the cell"
        )
        self.approve.on_click(lambda _: self.decide(True))
        self.cancel.on_click(lambda _: self.decide(False))
        buttons = widgets.HBox([self.approve, self.cancel])
        box = widgets.VBox([self.html, buttons])
        self.widgets = [self.approve, self.cancel, self.html, buttons, box]
        return box

    def decide(self, go: bool) -> None:
        """From a click (maybe on another thread) or from code."""
        answer, loop = self._answer, self._loop
        if answer is not None and loop is not None:
            loop.call_soon_threadsafe(_settle, answer, go)

    async def __call__(self, plan: MapPlan) -> bool:
        self.plan = plan
        if os.environ.get(APPROVAL_ENV, "").strip():
            print(plan_text(plan))  # an unattended run: say what it does, never wait
            return True
        self._loop = asyncio.get_running_loop()
        self._answer = self._loop.create_future()
        box = self._build(plan)
        watch = FrontendWatch(box)  # before display: is anyone there to click?
        self.handle = display(box, display_id=True)
        headless = asyncio.ensure_future(watch.headless())
        try:
            await wait_waking(
                asyncio.wait({self._answer, headless}, return_when=asyncio.FIRST_COMPLETED)
            )
            if not self._answer.done() and headless.result():
                self._replace(plan_html(plan), "headless: no frontend shows this cell; went on")
                print(plan_text(plan))
                return True
            go = await wait_waking(asyncio.shield(self._answer))
        except BaseException:
            self._replace(plan_html(plan), "not decided (interrupted)", approved=False)
            raise
        finally:
            headless.cancel()
        self._replace(
            plan_html(plan),
            "Approved: the map runs" if go else CANCELLED_TEXT,
            approved=go,
        )
        return go

    def _replace(self, body: str, line: str, *, approved: bool = True) -> None:
        colour = _APPROVED if approved else _DENIED
        mark = "✓" if approved else "✗"
        status = f'<div class="nbtools-plan-decided" style="{colour}">{mark} {escape(line)}</div>'
        if line.startswith("headless"):
            status = f'<div style="{_MUTED}">{escape(line)}</div>'
        if self.handle is not None:
            self.handle.update({"text/html": body + status, "text/plain": line}, raw=True)
        with contextlib.suppress(Exception):
            for w in self.widgets:
                w.close()


def _settle(future: asyncio.Future[bool], go: bool) -> None:
    if not future.done():
        future.set_result(go)
