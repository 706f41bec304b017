"""The live view of one run: a Stop button, then streamed text, a card per tool call,
approval cards, progress and a usage footer, all in one ``VBox`` shown under one display
id. At the end it is replaced by the transcript bundle and every widget is closed, so the
saved notebook holds no widget views.

The Stop buttons are the box's first child, always: what streams grows below them, so they
neither move under the pointer nor get a new view while the run lives (a box's frontend
view keeps the views of the children before the first one that changed and re-creates
the rest)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from html import escape
from typing import Any, assert_never

import ipywidgets as widgets
from IPython.display import DisplayHandle, display
from ipywidgets.widgets.widget_string import HTMLMathStyle, HTMLStyle

from nb_tools.agent import (
    ApprovalDecided,
    ApprovalRequest,
    ApprovalRequested,
    CitationsReceived,
    ContextCompacted,
    Decision,
    Event,
    ModelFailed,
    ModelRetrying,
    RunFinished,
    RunNotice,
    ServerToolUsed,
    TextDelta,
    ThinkingDelta,
    ToolArgumentsDelta,
    ToolCallFinished,
    ToolCallStarted,
    ToolProgress,
    TurnStarted,
    UsageUpdated,
)
from nb_tools.jupyter._approval_card import ApprovalCard
from nb_tools.jupyter._draft import DRAFT_STATUS, Draft
from nb_tools.jupyter._rich import card_display
from nb_tools.jupyter._throttle import Throttle
from nb_tools.tool import Tool
from nb_tools.tool._tasks import wait_waking
from nb_tools.transcript import (
    LIVE_TEXT_CLASSES,
    TranscriptRecorder,
    diff_dict,
    footer_html,
    safe_split,
    text_html,
    tool_item_html,
    transcript_bundle,
)

PROGRESS_INTERVAL = 0.25
LIVE_MIME = "application/vnd.nbtools.live+json"
LOST_RUN_TEXT = (
    "nb_tools: this run did not finish here (its kernel stopped or restarted before the "
    "end, so there is no transcript). Run the cell again to start it over."
)


_SHARED: dict[str, widgets.Widget] = {}
"""Style and layout models every run's view uses, made once per kernel: a run then opens
and closes only its own widgets (six models less each way, a fifth of a run's fixed
messages). They hold no state of a run; ``close_tree`` leaves them open."""


def shared(key: str, make: Callable[[], Any]) -> Any:
    """The shared model ``key`` (made by ``make`` the first time, or again if closed)."""
    w = _SHARED.get(key)
    if w is None or getattr(w, "comm", None) is None:
        w = _SHARED[key] = make()
    return w


def close_tree(*roots: Any) -> None:
    """Close widgets with their children, layouts and styles (each is a model in the
    frontend; closing only the top one would leave the others open), except the
    :func:`shared` ones."""
    seen: set[int] = {id(w) for w in _SHARED.values()}
    stack = list(roots)
    while stack:
        w = stack.pop()
        if not isinstance(w, widgets.Widget) or id(w) in seen:
            continue
        seen.add(id(w))
        for attr in ("children", "layout", "style"):
            value = getattr(w, attr, None) if attr in w.keys else None
            if isinstance(value, tuple | list):
                stack.extend(value)
            elif value is not None:
                stack.append(value)
        w.close()


class _Card:
    """A tool call's card: one HTML widget (plus a progress bar when a fraction comes)."""

    def __init__(
        self, view: RunView, item: dict[str, Any], status: str, draft: Draft | None = None
    ) -> None:
        self.view = view
        self.item = item
        self.status = status
        self.draft = draft  # the model is still writing the call
        self.html = widgets.HTML(layout=view.layout, style=view.html_style)
        self.bar: widgets.IntProgress | None = None
        self.fraction: float | None = None
        self.approval: ApprovalCard | None = None
        self.throttle = Throttle(
            self.render, loop=view.loop, interval=lambda _age: PROGRESS_INTERVAL
        )
        self.render()

    def render(self) -> None:
        if self.draft is not None:
            self.item = self.draft.fill()
        done = self.item.get("status") not in (None, "pending")
        self.html.value = tool_item_html(self.item, status=None if done else self.status)
        if self.bar is not None and self.fraction is not None:
            self.bar.value = round(self.fraction * 100)

    def become(self, item: dict[str, Any], status: str) -> None:
        """The draft's call is complete: the same widget shows the call's card."""
        self.throttle.cancel()
        self.draft = None
        self.item, self.status = item, status
        self.render()

    def progress(self, fraction: float | None) -> None:
        if fraction is not None:
            self.fraction = fraction
            if self.bar is None:
                self.bar = widgets.IntProgress(min=0, max=100, layout=self.view.layout)
                self.view.refresh()
        self.throttle.poke()

    def widgets(self) -> list[widgets.Widget]:
        out: list[widgets.Widget] = [self.html]
        if self.bar is not None:
            out.append(self.bar)
        if self.approval is not None:
            out.append(self.approval.widget)
        return out


TEXT_CHUNK = 120
"""Streamed text grows in a small "active" widget of about this many characters; each
update re-sends only that widget, at most a few hundred characters."""
FANOUT = 4
"""When the active piece is full it joins the level-1 widget; a level that has taken
this many pieces joins the next level up. So a segment uses 1 + log4(pieces) widgets and
each character is sent O(log n) times (log base 4): bytes grow as n log n, not n squared."""


class _Slot:
    """One widget of a text segment, showing ``text[start:end]`` (after ``reopen``, the
    code fence that a piece starting inside a code block needs)."""

    def __init__(self, widget: widgets.HTMLMath) -> None:
        self.widget = widget
        self.start: int | None = None
        self.end = 0
        self.reopen = ""
        self.count = 0

    def take(self, start: int, end: int, reopen: str) -> None:
        if self.start is None:
            self.start, self.reopen = start, reopen
        self.end = end
        self.count += 1

    def clear(self) -> None:
        self.start, self.end, self.reopen, self.count = None, 0, "", 0

    def render(self, text: str) -> None:
        if self.start is None:
            value = ""
        else:
            piece = self.reopen + text[self.start : self.end]
            value = text_html(piece, label=self.start == 0, live=True)
        if self.widget.value != value:
            self.widget.value = value


class _TextStream:
    """One assistant text segment as Markdown in ``HTMLMath`` widgets (math typeset):
    levels of frozen text (the oldest and largest first) and the growing active piece,
    cut between Markdown blocks so the pieces render as the whole would."""

    def __init__(self, view: RunView, item: dict[str, Any]) -> None:
        self.view = view
        self.item = item
        self.levels: list[_Slot] = []  # levels[0]: the most recent frozen text
        self.active = _Slot(self._new())
        self.active.start = 0

    def _new(self) -> widgets.HTMLMath:
        return widgets.HTMLMath(
            layout=self.view.layout,
            style=self.view.math_style,
            _dom_classes=LIVE_TEXT_CLASSES,
        )

    def render(self) -> None:
        text = str(self.item.get("text", ""))
        start = self.active.start or 0
        split = safe_split(text, start, TEXT_CHUNK, self.active.reopen)
        if split is not None and split[0] > start:
            cut, reopen = split
            self._freeze(text, start, cut, reopen)
        self.active.end = len(text)
        self.active.render(text)

    def _freeze(self, text: str, start: int, cut: int, reopen: str) -> None:
        changed: set[int] = set()
        if not self.levels:
            self.levels.append(_Slot(self._new()))
        self.levels[0].take(start, cut, self.active.reopen)
        changed.add(0)
        level = 0
        while self.levels[level].count >= FANOUT:
            if level + 1 == len(self.levels):
                self.levels.append(_Slot(self._new()))
            lower = self.levels[level]
            self.levels[level + 1].take(lower.start or 0, lower.end, lower.reopen)
            lower.clear()
            changed.add(level + 1)
            level += 1
        for i in sorted(changed, reverse=True):  # the higher level first: no text twice
            self.levels[i].render(text)
        for slot in self.levels:
            if slot.start is None:
                slot.render(text)
        self.active.start, self.active.reopen = cut, reopen
        self.view.refresh()  # sends the children only when a level was added

    def widgets(self) -> list[widgets.Widget]:
        return [s.widget for s in reversed(self.levels)] + [self.active.widget]


class RunView:
    """Widgets for one run, driven by its events (:meth:`on_event`)."""

    def __init__(
        self,
        recorder: TranscriptRecorder,
        *,
        on_stop: Callable[[], None] | None = None,
        on_stop_after_turn: Callable[[], None] | None = None,
        loop: asyncio.AbstractEventLoop | None = None,
        tools: Callable[[str], Tool | None] | None = None,
    ) -> None:
        self.recorder = recorder
        self.loop = loop
        self.tools = tools  # the run's tools by name: a draft card previews a writer's diff
        self.layout = shared("layout", widgets.Layout)
        self.html_style = shared("html", HTMLStyle)
        self._math_style: HTMLMathStyle | None = None
        self.footer = widgets.HTML(layout=self.layout, style=self.html_style)
        self.stop_button = widgets.Button(
            description="Stop",
            icon="stop",
            layout=self.layout,
            button_style="warning",
            style=shared("button", widgets.ButtonStyle),
            tooltip="Stop the run now (as Interrupt does): calls still running are cut off",
        )
        self._on_stop = on_stop
        self._on_stop_after_turn = on_stop_after_turn
        self.stop_button.on_click(lambda _b: self.stop())
        buttons = [self.stop_button]
        self.stop_after_button: widgets.Button | None = None
        if on_stop_after_turn is not None:
            self.stop_after_button = widgets.Button(
                description="Stop after this turn",
                icon="step-forward",
                # the default width cuts its label
                layout=shared("auto-width", lambda: widgets.Layout(width="auto")),
                style=shared("button", widgets.ButtonStyle),
                tooltip="Let the calls of this turn finish and be answered, then stop before "
                "the next request (an empty %%agent cell goes on)",
            )
            self.stop_after_button.on_click(lambda _b: self.stop_after_turn())
            buttons.append(self.stop_after_button)
        self.stop_buttons = widgets.HBox(buttons, layout=self.layout)
        self.box = widgets.VBox([self.stop_buttons, self.footer], layout=self.layout)
        self._entries: list[Any] = []  # HTML widgets of text segments and _Card objects
        self._cards: dict[str, _Card] = {}
        self._drafts: dict[str, _Card] = {}  # calls the model is writing, by streamed id
        self._text: _TextStream | None = None
        self._continue: ContinuePrompt | None = None
        self._text_throttle = Throttle(self._render_text, loop=loop)
        self.handle: DisplayHandle | None = None
        self.stopped_by_button = False
        self.closed = False
        self._render_footer()
        self.refresh()

    @property
    def math_style(self) -> HTMLMathStyle:
        """One style model for every text widget, made when the first text comes."""
        if self._math_style is None:
            self._math_style = shared("math", HTMLMathStyle)
        return self._math_style

    # -- showing ---------------------------------------------------------------------

    def show(self) -> None:
        """Display the live view. Its bundle also carries :data:`LIVE_MIME` (the
        labextension replaces the view by a note when its kernel goes away, so a saved
        notebook never shows a dead view) and a readable ``text/plain`` in place of the
        widget's repr."""
        data = dict(self.box._repr_mimebundle_() or {})
        data["text/plain"] = LOST_RUN_TEXT
        data[LIVE_MIME] = {"version": 1}
        self.handle = display(data, raw=True, display_id=True)

    def refresh(self) -> None:
        children: list[widgets.Widget] = [self.stop_buttons]  # first, always (see above)
        for entry in self._entries:
            children.extend(entry.widgets())
        children.append(self.footer)
        if self._continue is not None:
            children.append(self._continue.widget)
        if tuple(children) != tuple(self.box.children):
            self.box.children = children

    def _render_text(self) -> None:
        if self._text is not None:
            self._text.render()

    def _render_footer(self) -> None:
        self.footer.value = footer_html(self.recorder.summary(), live=True)

    def stop(self) -> None:
        """The Stop button: cancel the run (the runner shows the transcript)."""
        self.stopped_by_button = True
        self.stop_button.disabled = True
        self.stop_button.description = "Stopping…"
        if self.stop_after_button is not None:
            self.stop_after_button.disabled = True
        if self._continue is not None:
            self._continue.answer(False)
        if self._on_stop is not None:
            self._on_stop()

    def stop_after_turn(self) -> None:
        """The "Stop after this turn" button: the calls of the turn in progress finish and
        are answered, then the run ends before its next request. Paused at "Continue?",
        the run is between turns already: it stops there."""
        button, callback = self.stop_after_button, self._on_stop_after_turn
        if self.stop_button.disabled or button is None or button.disabled or callback is None:
            return
        button.disabled = True
        button.description = "Stopping after this turn…"
        if self._continue is not None:
            self._continue.answer(False)
        callback()

    # -- events ----------------------------------------------------------------------

    def on_event(self, event: Event) -> None:
        rec = self.recorder
        rec.record(event)
        match event:
            case TextDelta():
                item = rec.items[-1]
                if self._text is None or item is not self._text.item:
                    self._text_throttle.flush()
                    self._text = _TextStream(self, item)
                    self._entries.append(self._text)
                    self.refresh()
                self._text_throttle.poke()
            case TurnStarted():
                self._text_throttle.flush()
                self._drop_drafts()
            case ToolArgumentsDelta():
                self._draft(event)
            case ToolCallStarted():
                self._text_throttle.flush()
                item = rec.items[-1]
                if item.get("id") != event.call.id or item.get("arguments") != (
                    event.call.arguments
                ):
                    # a call id seen before (the recorder kept that call's item): the card
                    # must show THIS call's arguments, which are what the person approves
                    item = _own_item(event.call, event.preview, event.info)
                status = "waiting for approval" if event.needs_approval else "running"
                drafted = self._claim_draft(event.call.id, event.call.name)
                if drafted is not None:  # the card the call streamed into becomes its card
                    drafted.become(item, status)
                    self._cards[event.call.id] = drafted
                else:
                    created = _Card(self, item, status)
                    self._cards[event.call.id] = created
                    self._entries.append(created)
                    self.refresh()
            case ApprovalRequested():
                card = self._cards.get(event.call.id)
                if card is not None:
                    card.status = "waiting"
                    card.render()
            case ApprovalDecided():
                card = self._cards.get(event.call_id)
                if card is not None:
                    card.status = "running" if event.approved else "denied"
                    card.render()
            case ToolProgress():
                card = self._cards.get(event.call_id)
                if card is not None:
                    card.progress(event.progress.fraction)
            case ToolCallFinished():
                card = self._cards.get(event.call.id)
                if card is not None:
                    card.throttle.cancel()
                    if card.bar is not None and event.status == "ok":
                        card.fraction = 1.0
                    if event.status == "ok":
                        shown = card_display(event.result)
                        if shown:
                            card.item["display"] = shown  # the transcript holds it too
                    card.render()
            case UsageUpdated():
                self._render_footer()
            case ModelFailed():
                self._drop_drafts()
                self._render_footer()
            case ModelRetrying():  # shown until the next footer update
                from nb_tools.agent import retry_text

                self._drop_drafts()  # the reply starts over
                self._render_footer()
                self.footer.value += f"<div>{escape(retry_text(event))}</div>"
            case RunFinished():
                self._text_throttle.flush()  # the footer is replaced by the transcript's
            case (
                ThinkingDelta()
                | ContextCompacted()
                | RunNotice()
                | ServerToolUsed()
                | CitationsReceived()
            ):
                pass  # the recorder keeps them for the transcript; the live view does not show them
            case _:
                assert_never(event)

    # -- calls the model is writing ---------------------------------------------------

    def _draft(self, event: ToolArgumentsDelta) -> None:
        card = self._drafts.get(event.call_id)
        if card is None:
            self._text_throttle.flush()  # the text above the call is shown whole
            tool = None
            if self.tools is not None:
                with contextlib.suppress(Exception):
                    tool = self.tools(event.name)
            draft = Draft(event.call_id, event.name, tool)
            card = _Card(self, draft.item, DRAFT_STATUS, draft=draft)
            self._drafts[event.call_id] = card
            self._entries.append(card)
            self.refresh()
        if card.draft is not None and event.partial_json:
            card.draft.feed(event.partial_json)
            card.throttle.poke()

    def _claim_draft(self, call_id: str, name: str) -> _Card | None:
        """The draft card of the call now complete: by its id, else (its id was made
        unique) the oldest draft of a tool of that name."""
        card = self._drafts.pop(call_id, None)
        if card is None:
            for key, other in self._drafts.items():
                if other.item.get("name") == name:
                    card = self._drafts.pop(key)
                    break
        return card

    def _drop_drafts(self) -> None:
        """Drafts no call completed (the reply was cut, retried or dropped) go away."""
        if not self._drafts:
            return
        gone = list(self._drafts.values())
        self._drafts.clear()
        for card in gone:
            card.throttle.cancel()
            self._entries.remove(card)
        self.refresh()
        for card in gone:  # not close_tree: the layout and style are the view's, shared
            for widget in card.widgets():
                widget.close()

    # -- approval --------------------------------------------------------------------

    async def ask(self, request: ApprovalRequest) -> Decision:
        """The approver: show an approval card under the call's card and wait."""
        if self.loop is None:
            self.loop = asyncio.get_running_loop()
        card = ApprovalCard(request, loop=self.loop, layout=self.layout)
        owner = self._cards.get(request.call.id)
        if owner is None or owner.item.get("arguments") != request.call.arguments:
            # no card shows this call's arguments (should not happen): make one, so the
            # person never decides on a call they cannot read
            owner = _Card(self, _own_item(request.call, request.preview), "waiting")
            self._cards[request.call.id] = owner
            self._entries.append(owner)
        owner.approval = card
        self.refresh()
        return await card.wait()

    async def ask_continue(self, why: str) -> bool:
        """At the turn limit or a budget: ask whether to go on (Continue / Stop here)."""
        if self.loop is None:
            self.loop = asyncio.get_running_loop()
        prompt = ContinuePrompt(why, loop=self.loop)
        self._continue = prompt
        self.refresh()
        try:
            return await prompt.wait()
        finally:
            self._continue = None
            self.refresh()
            close_tree(prompt.widget)

    def approval_cards(self) -> list[ApprovalCard]:
        return [c.approval for c in self._cards.values() if c.approval is not None]

    # -- the end ---------------------------------------------------------------------

    def finish(self, transcript: dict[str, Any]) -> None:
        """Replace the live widgets by the transcript bundle and close them."""
        if self.closed:
            return
        self.closed = True
        self._text_throttle.cancel()
        for card in [*self._cards.values(), *self._drafts.values()]:
            card.throttle.cancel()
            if card.approval is not None:
                card.approval.cancel()
        if self._continue is not None:
            self._continue.answer(False)
        bundle = transcript_bundle(transcript)
        if self.handle is None:
            display(bundle, raw=True)
        else:
            self.handle.update(bundle, raw=True)
        with contextlib.suppress(Exception):
            # an answered card's buttons left the tree (one line stays): closed here too
            close_tree(self.box, *(a.buttons for a in self.approval_cards()))


class ContinuePrompt:
    """ "Paused at the turn limit." with Continue / Stop here buttons."""

    def __init__(self, why: str, *, loop: asyncio.AbstractEventLoop) -> None:
        # Its own layouts: closing the prompt must not close the view's shared one.
        self._loop = loop
        self.future: asyncio.Future[bool] = loop.create_future()
        self.label = widgets.HTML(f"<b>{escape(why)}</b>")
        self.go_on = widgets.Button(description="Continue", button_style="primary", icon="play")
        self.stop_here = widgets.Button(description="Stop here")
        self.go_on.on_click(lambda _b: self.answer(True))
        self.stop_here.on_click(lambda _b: self.answer(False))
        self.widget = widgets.VBox([self.label, widgets.HBox([self.go_on, self.stop_here])])

    def answer(self, go_on: bool) -> None:
        self.go_on.disabled = self.stop_here.disabled = True
        self._loop.call_soon_threadsafe(
            lambda: None if self.future.done() else self.future.set_result(go_on)
        )

    async def wait(self) -> bool:
        """The answer, through the one wake loop (Interrupt acts while it waits)."""
        return await wait_waking(asyncio.shield(self.future))


def _own_item(call: Any, preview: Any, info: Any = None) -> dict[str, Any]:
    """A card item for ``call`` alone (the recorder's shape), its ``preview`` as diffs."""
    from nb_tools.tool import headline_of

    diffs = [diff_dict(c) for c in preview or ()]
    headline = headline_of(info)
    return {
        **({"headline": headline.to_dict()} if headline is not None else {}),
        "kind": "tool",
        "id": call.id,
        "name": call.name,
        "arguments": call.arguments,
        "status": "pending",
        "result": None,
        "parts": [],
        "duration": None,
        "diffs": diffs,
        "progress": None,
        "approval": None,
    }
