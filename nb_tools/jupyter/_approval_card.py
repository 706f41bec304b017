"""The approval card: Approve / Deny / Always allow buttons and an optional message for the
model, waiting in the cell (top-level ``await``) until someone clicks.

ipykernel >= 7.4 handles widget messages while a cell awaits; on some versions the click
handler runs on another thread, so the future is resolved with ``call_soon_threadsafe``.
The card's :meth:`~ApprovalCard.wait` does not wake on its own: it is the approver the
pipeline awaits through its one wake loop (``nb_tools.tool._tasks.wait_waking``). Its
widgets are closed with the run's view (``close_tree`` in ``_view``), the one close path.
"""

from __future__ import annotations

import asyncio
import threading
from html import escape

import ipywidgets as widgets

from nb_tools.agent import ApprovalRequest, Decision
from nb_tools.jupyter._lookalike import lookalike_warning
from nb_tools.transcript import (
    count_in_arguments,
    hidden_warning,
    visible_html,
    visible_text,
)

SUBMIT_SETTLE = 0.15
"""After Enter in the message box, how long to wait for the text's own update."""

_MUTED = "color:var(--jp-content-font-color2,#57606a)"
_APPROVED = "color:var(--jp-success-color0,#1a7f37)"
_DENIED = "color:var(--jp-error-color0,#cf222e)"
_WARNING = (
    "display:block;margin:4px 0;padding:4px 8px;font-weight:600;"
    "color:var(--jp-warn-color0,#7d4e00);background:rgba(255,196,0,.18);"
    "border:1px solid var(--jp-warn-color1,#9a6700);border-radius:3px"
)


def warning_html(request: ApprovalRequest) -> str:
    """The card's warning when the call's arguments (or the rule "Always allow" would
    add) hold invisible or direction-changing characters; "" when they do not."""
    found = count_in_arguments(request.call.arguments)
    # the rule is made from the arguments: the larger count per kind, not the sum
    found |= count_in_arguments(request.always_allow_rule or "")
    lines = [hidden_warning(found)]
    # homoglyphs are visible, so not marked: the card names the words that mix them in
    lines.append(lookalike_warning(request.call.arguments))
    if request.always_allow_rule:
        lines.append(lookalike_warning(request.always_allow_rule))
    return "".join(
        f'<div class="nbtools-hidden-warning" role="alert" style="{_WARNING}">{escape(text)}</div>'
        for text in dict.fromkeys(lines)
        if text
    )


class ApprovalCard:
    """Asks a person whether ``request`` may run. :attr:`widget` goes into the run's view;
    :meth:`wait` returns the :class:`Decision`."""

    def __init__(
        self,
        request: ApprovalRequest,
        *,
        loop: asyncio.AbstractEventLoop,
        layout: widgets.Layout | None = None,
    ) -> None:
        self.request = request
        self._loop = loop
        self.future: asyncio.Future[Decision] = loop.create_future()
        # a click may be handled on another thread: decide() takes the first one only
        self._lock = threading.Lock()
        self._decision: Decision | None = None
        layout = layout if layout is not None else widgets.Layout()
        name = visible_html(request.call.name)
        why = " (it touches a protected path)" if request.protected else ""
        preview = " Its changes are shown above." if request.preview else ""
        # Above the buttons: what the person reads must be what runs (Trojan Source).
        self.warning = warning_html(request)
        self.prompt = widgets.HTML(
            # nbtools-waiting: the labextension marks the tab and the kernel status busy
            # while such a card is on the page (docs/extension.md)
            f'<div class="nbtools-waiting"><b>{name}</b> needs your approval to run{why}.'
            f"{preview}{self.warning}</div>",
            layout=layout,
        )
        style = widgets.ButtonStyle()
        self.approve = widgets.Button(
            description="Approve",
            button_style="success",
            icon="check",
            style=style,
            layout=layout,
            tooltip=f"Run this {request.call.name} call",
        )
        self.deny = widgets.Button(
            description="Deny",
            button_style="danger",
            icon="times",
            style=style,
            layout=layout,
            tooltip="Refuse this call; the model is told it was denied (with your message)",
        )
        # The narrowest rule that covers this call, named by the approval pipeline
        # (e.g. "bash(git log:*)"); without one no "Always allow" is offered (it could not
        # cover the call without covering more).
        self.rule: str | None = request.always_allow_rule or None
        shown_rule = visible_text(self.rule or request.call.name)
        self.always = widgets.Button(
            description=f"Always allow {shown_rule}",
            button_style="info",
            style=style,
            layout=widgets.Layout(width="auto", flex="0 0 auto"),
            tooltip=f"Allow {shown_rule} without asking for the rest of this session",
        )
        offered = self.rule is not None
        # continuous_update=False: typed text reaches the kernel whole (a cell awaiting
        # delivers only the first key of a continuously updated Text); Enter denies.
        self.message = widgets.Text(
            placeholder="Optional message to the model; Enter denies with it",
            continuous_update=False,
            layout=widgets.Layout(flex="1 1 auto", min_width="12em"),
        )
        self.message.on_msg(self._on_message_msg)
        self.approve.on_click(lambda _b: self.decide(Decision(approved=True, by="user")))
        self.deny.on_click(lambda _b: self._deny_with_message())
        self.always.on_click(
            lambda _b: self.decide(Decision(approved=True, by="user", remember=True))
        )
        row = [self.approve, self.deny, self.always, self.message]
        if not offered:
            row.remove(self.always)
        self.buttons = widgets.HBox(row, layout=layout)
        self.widget = widgets.VBox([self.prompt, self.buttons], layout=layout)

    def _on_message_msg(
        self, _widget: object, content: dict[str, object], _buffers: object
    ) -> None:
        """Enter in the message box (the Text view's "submit" event): deny with the text.
        The typed value is synced just before the event (continuous_update=False syncs on
        Enter); wait a moment for a value sent after it."""
        if isinstance(content, dict) and content.get("event") == "submit":
            self._loop.call_soon_threadsafe(
                lambda: self._loop.call_later(SUBMIT_SETTLE, self._deny_with_message)
            )

    def _deny_with_message(self) -> None:
        self.decide(Decision(approved=False, by="user", message=self.message.value.strip() or None))

    @property
    def decided(self) -> bool:
        return self.future.done()

    def decide(self, decision: Decision) -> None:
        """Record ``decision`` (from a click, or from code): disable the buttons, say who
        decided what, and wake the waiting run. Later decisions are ignored."""
        with self._lock:  # the first decision wins, on the card as in the run
            if self.future.done() or self._decision is not None:
                return
            self._decision = decision
        self._collapse(self._decided_html(decision))
        self._loop.call_soon_threadsafe(self._resolve, decision)

    def _collapse(self, line: str) -> None:
        """The answered card as one line: the buttons row leaves the view (disabled, so
        a click already on its way does nothing; closed with the run's view)."""
        for control in (self.approve, self.deny, self.always, self.message):
            control.disabled = True
        self.prompt.value = line
        self.widget.children = (self.prompt,)

    def _resolve(self, decision: Decision) -> None:
        if not self.future.done():
            self.future.set_result(decision)

    def _decided_html(self, d: Decision) -> str:
        name = visible_html(self.request.call.name)
        who = "you" if d.by == "user" else escape(d.by)
        if d.approved and d.remember:
            rule = visible_html(self.rule or self.request.call.name)
            what = (
                f"Always allowed by {who}: {rule} runs without asking for this session "
                f"(session rule <code>allow {rule}</code>; <code>%nbtools forget {rule}</code> "
                "undoes it)"
            )
        elif d.approved:
            what = f"Approved by {who}"
        else:
            what = f"Denied by {who}"
            if d.message:
                what += f': "{escape(d.message)}"'
        colour = _APPROVED if d.approved else _DENIED
        mark = "✓" if d.approved else "✗"
        return f'<span class="nbtools-decided" style="{colour}">{mark} <b>{name}</b>: {what}</span>'

    def cancel(self, why: str = "the run stopped") -> None:
        """The run ended while waiting: disable the buttons and say so."""
        with self._lock:
            if self.future.done() or self._decision is not None:
                return
            self._decision = Decision(approved=False, by="cancel")
        self._collapse(
            f"<b>{visible_html(self.request.call.name)}</b>: "
            f'<span style="{_MUTED}">not decided ({escape(why)})</span>'
        )
        self.future.cancel()

    async def wait(self) -> Decision:
        """The decision. Awaited by the approval pipeline, which wakes for Interrupt and
        Stop (``wait_waking``); a cancellation marks the card "not decided"."""
        try:
            return await asyncio.shield(self.future)
        except asyncio.CancelledError:
            self.cancel()
            raise
