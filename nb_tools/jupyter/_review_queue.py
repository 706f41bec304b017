"""One review queue for the calls of a map's rows that need a person (``%%agent --over``
with approval "ask"): a table (row, tool, arguments) with Approve selected, Deny all and
Always allow RULE; each waiting row waits for its own answer while the other rows go on.
The table's rows are cut to a line; the whole of every selected call (its arguments as
they will run, hidden characters marked, long lines wrapped) is shown below the table,
and "Approve selected" approves only calls shown whole there.
"Always allow" adds the rule to the session's one rule set as a session rule, as the
single run's card does: the rest of the map, later maps and later ``%%agent`` runs honour
it (``%nbtools forget RULE`` undoes it); the waiting calls it covers are approved.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import ipywidgets as widgets
from IPython.display import display

from nb_tools.agent import ApprovalRequest, Decision, current_row
from nb_tools.jupyter._headless import HEADLESS_BY, HEADLESS_MESSAGE, FrontendWatch
from nb_tools.transcript import NOT_SHOWN, hidden_runs, shown_arguments, visible_html

if TYPE_CHECKING:
    from nb_tools.permissions import PermissionRules

BY = "user (review queue)"
ARGUMENTS_CHARS = 160
"""Arguments longer than this are cut in the table (the pane below shows them whole)."""
SHOWN_CHARS = 20_000
"""Arguments longer than this are not shown whole, so "Approve selected" does not approve
them (Deny all, or an "Always allow" rule, which names what it allows, settles them)."""
_WRAP = "white-space:pre-wrap;overflow-wrap:anywhere;margin:2px 0 6px"


def visible_text(text: str) -> str:
    """``text`` with every hidden character shown as a ``⟨U+202E⟩`` marker."""
    out, at = [], 0
    for run in hidden_runs(text):
        out.append(text[at : run.start])
        out.append(f"⟨{run.label}⟩")
        at = run.end
    out.append(text[at:])
    return "".join(out)


def _arguments(request: ApprovalRequest, indent: int | None = None) -> str:
    args = request.call.arguments
    parsed = shown_arguments(args)
    if parsed is not NOT_SHOWN:
        args = json.dumps(parsed, ensure_ascii=False, indent=indent)
    return args


def call_html(row: int | None, request: ApprovalRequest) -> str | None:
    """The whole call as the pane below the table shows it, or None when its arguments
    are too long to show (``SHOWN_CHARS``)."""
    args = _arguments(request, indent=2)
    if len(args) > SHOWN_CHARS:
        return None
    where = f"row {row}" if row is not None else "row ?"
    head = visible_html(f"{where} · {request.call.name}")
    return f'<div><b>{head}</b><pre style="{_WRAP}">{visible_html(args)}</pre></div>'


def row_label(row: int | None, request: ApprovalRequest) -> str:
    args = _arguments(request)
    if len(args) > ARGUMENTS_CHARS:
        args = args[: ARGUMENTS_CHARS - 1] + "…"
    where = f"row {row}" if row is not None else "row ?"
    return visible_text(f"{where} · {request.call.name} · {args}")


@dataclass
class _Pending:
    row: int | None
    request: ApprovalRequest
    answer: asyncio.Future[Decision]


class ReviewQueue:
    """The approver of a map's rows: ``await queue(request)`` (``queue.approver`` also
    denies at once when no frontend shows the queue). ``rules``: the session's rules,
    where "Always allow" adds its rule."""

    def __init__(self, rules: PermissionRules | None = None) -> None:
        self.pending: dict[int, _Pending] = {}
        self.rules = rules
        self.remembered: set[str] = set()
        """The rules this queue added (a call asked just before they were added is
        approved by them here)."""
        self.watch: FrontendWatch | None = None
        self._keys = itertools.count()
        self.table = widgets.SelectMultiple(options=[], rows=8, layout={"width": "100%"})
        self.title = widgets.HTML()
        self.detail = widgets.HTML()
        self.shown: set[int] = set()
        """The waiting calls the pane shows whole: what "Approve selected" approves."""
        self.approve = widgets.Button(description="Approve selected", button_style="success")
        self.deny = widgets.Button(description="Deny all", button_style="danger")
        self.always = widgets.Button(description="Always allow", disabled=True)
        self.approve.on_click(lambda _: self.approve_selected())
        self.deny.on_click(lambda _: self.deny_all())
        self.always.on_click(lambda _: self.always_allow())
        self.table.observe(lambda _: self._offer_rule(), names="value")
        buttons = widgets.HBox([self.approve, self.deny, self.always])
        self.box = widgets.VBox([self.title, self.table, self.detail, buttons])
        self.box.layout.display = "none"
        self.handle: Any = None

    def show(self) -> None:
        self.watch = FrontendWatch(self.box)  # before display: is anyone there to click?
        self.handle = display(self.box, display_id=True)

    async def approver(self, request: ApprovalRequest) -> Decision:
        """The queue, except that a headless run (nbclient) is denied at once."""
        if self.watch is not None and await self.watch.headless():
            return Decision(approved=False, by=HEADLESS_BY, message=HEADLESS_MESSAGE)
        return await self(request)

    async def __call__(self, request: ApprovalRequest) -> Decision:
        rule = request.always_allow_rule
        if rule is not None and rule in self.remembered and self._still_allowed(rule):
            return Decision(approved=True, by=BY, remember=True)
        answer: asyncio.Future[Decision] = asyncio.get_running_loop().create_future()
        key = next(self._keys)
        self.pending[key] = _Pending(row=current_row.get(), request=request, answer=answer)
        self._refresh()
        try:
            return await answer
        finally:
            self.pending.pop(key, None)
            self._refresh()

    def _still_allowed(self, rule: str) -> bool:
        """Whether the session's rules still hold the rule this queue added (the rule set
        is its one home: ``%nbtools forget`` or ``rules.remove`` ends it here too)."""
        if self.rules is None:
            return True
        return any(r.action == "allow" and r.text == rule for r in self.rules.rules)

    # -- the buttons ------------------------------------------------------------------

    def _settle(self, keys: list[int], decision: Decision) -> None:
        for key in keys:
            item = self.pending.get(key)
            if item is not None and not item.answer.done():
                item.answer.get_loop().call_soon_threadsafe(_set, item.answer, decision)

    def approve_selected(self) -> None:
        keys = [k for k in self.table.value if k in self.shown]
        self._settle(keys, Decision(approved=True, by=BY))

    def deny_all(self) -> None:
        self._settle(
            list(self.pending),
            Decision(approved=False, message="denied in the review queue", by="user"),
        )

    def always_allow(self) -> None:
        """Add the selected calls' rules to the session's rules (each row's run adds the
        rule of the call it approves as well: one rule set), approve what they cover."""
        rules = self._selected_rules()
        if self.rules is not None:
            self.rules.allow(*sorted(rules), source="session")
        self.remembered.update(rules)
        covered = [k for k, p in self.pending.items() if p.request.always_allow_rule in rules]
        self._settle(covered, Decision(approved=True, by=BY, remember=True))

    # -- the view ---------------------------------------------------------------------

    def _selected_rules(self) -> set[str]:
        return {
            rule
            for k in self.table.value
            if k in self.pending and (rule := self.pending[k].request.always_allow_rule)
        }

    def _show_selected(self) -> None:
        parts: list[str] = []
        shown: set[int] = set()
        for k in self.table.value:
            item = self.pending.get(k)
            if item is None:
                continue
            html = call_html(item.row, item.request)
            if html is None:
                parts.append(
                    f"<div><b>{visible_html(row_label(item.row, item.request))}</b>: too long "
                    "to show here; Approve selected leaves it waiting</div>"
                )
            else:
                parts.append(html)
                shown.add(k)
        self.detail.value = "".join(parts)
        self.shown = shown

    def _offer_rule(self) -> None:
        self._show_selected()
        rules = self._selected_rules()
        self.always.disabled = not rules
        label = ", ".join(sorted(rules)) if rules else "RULE"
        self.always.description = f"Always allow {label}"

    def _refresh(self) -> None:
        options = [(row_label(p.row, p.request), k) for k, p in self.pending.items()]
        selected = tuple(k for k in self.table.value if k in self.pending)
        self.table.options = options
        self.table.value = selected
        n = len(options)
        self.title.value = f"<b>{n} call(s) wait for you</b> (the other rows go on)" if n else ""
        self.box.layout.display = "" if n else "none"
        self._offer_rule()

    def close(self) -> None:
        self.deny_all()
        if self.handle is not None:
            self.handle.update({"text/plain": ""}, raw=True)
        with contextlib.suppress(Exception):
            widgets_ = (self.table, self.title, self.detail, self.approve, self.deny, self.always)
            for w in (*widgets_, self.box):
                w.close()


def _set(future: asyncio.Future[Decision], decision: Decision) -> None:
    if not future.done():
        future.set_result(decision)
