"""The approval card: Approve / Deny / Always allow buttons and an optional message for the
model, waiting in the cell (top-level ``await``) until someone clicks.

ipykernel >= 7.4 handles widget messages while a cell awaits; on some versions the click
handler runs on another thread, so the future is resolved with ``call_soon_threadsafe``.
"""

from __future__ import annotations

import asyncio
from html import escape

import ipywidgets as widgets

from nb_tools.agent._approval import ApprovalRequest, Decision

WAKE_SECONDS = 0.25
"""The wait wakes this often so an Interrupt stops it within a second."""

_MUTED = "color:var(--jp-content-font-color2,#57606a)"


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
        layout = layout if layout is not None else widgets.Layout()
        name = escape(request.call.name)
        why = " (it touches a protected path)" if request.protected else ""
        preview = " Its changes are shown above." if request.preview else ""
        self.prompt = widgets.HTML(
            f"<b>{name}</b> needs your approval to run{why}.{preview}",
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
        rule = request.always_allow_rule  # the narrowest rule covering this call; None: not offered
        self.always = widgets.Button(
            description=f"Always allow {rule}" if rule else "Always allow",
            button_style="info",
            style=style,
            layout=layout,
            tooltip=f"Add the session rule allow {rule}: calls it covers run without asking"
            if rule
            else "Not offered for this call: no rule covers it without covering more",
            disabled=rule is None,
        )
        self.message = widgets.Text(
            placeholder="Optional message to the model (sent with a denial)",
            layout=widgets.Layout(width="60%"),
        )
        self.approve.on_click(lambda _b: self.decide(Decision(approved=True, by="user")))
        self.deny.on_click(
            lambda _b: self.decide(
                Decision(approved=False, by="user", message=self.message.value.strip() or None)
            )
        )
        self.always.on_click(
            lambda _b: self.decide(Decision(approved=True, by="user", remember=True))
        )
        self.buttons = widgets.HBox(
            [self.approve, self.deny, self.always, self.message], layout=layout
        )
        self.widget = widgets.VBox([self.prompt, self.buttons], layout=layout)

    @property
    def decided(self) -> bool:
        return self.future.done()

    def decide(self, decision: Decision) -> None:
        """Record ``decision`` (from a click, or from code): disable the buttons, say who
        decided what, and wake the waiting run. Later decisions are ignored."""
        if self.future.done():
            return
        for control in (self.approve, self.deny, self.always, self.message):
            control.disabled = True
        self.prompt.value = self._decided_html(decision)
        self._loop.call_soon_threadsafe(self._resolve, decision)

    def _resolve(self, decision: Decision) -> None:
        if not self.future.done():
            self.future.set_result(decision)

    def _decided_html(self, d: Decision) -> str:
        name = escape(self.request.call.name)
        who = "you" if d.by == "user" else escape(d.by)
        rule = self.request.always_allow_rule
        if d.approved and d.remember and rule:
            what = (
                f"Always allowed by {who}: session rule <code>allow {escape(rule)}</code> "
                f"(<code>%nbtools forget {escape(rule)}</code> undoes it)"
            )
        elif d.approved:
            what = f"Approved by {who}"
        else:
            what = f"Denied by {who}"
            if d.message:
                what += f': "{escape(d.message)}"'
        return f"<b>{name}</b>: {what}"

    def cancel(self, why: str = "the run stopped") -> None:
        """The run ended while waiting: disable the buttons and say so."""
        if self.future.done():
            return
        for control in (self.approve, self.deny, self.always, self.message):
            control.disabled = True
        self.prompt.value = (
            f"<b>{escape(self.request.call.name)}</b>: "
            f'<span style="{_MUTED}">not decided ({escape(why)})</span>'
        )
        self.future.cancel()

    async def wait(self) -> Decision:
        """The decision, waking every :data:`WAKE_SECONDS` so a cancellation (Interrupt,
        Stop) lands at once."""
        try:
            while True:
                done, _ = await asyncio.wait({self.future}, timeout=WAKE_SECONDS)
                if done:
                    return self.future.result()
        except asyncio.CancelledError:
            self.cancel()
            raise

    def close(self) -> None:
        for w in (
            self.approve,
            self.deny,
            self.always,
            self.message,
            self.buttons,
            self.prompt,
            self.widget,
        ):
            w.close()
