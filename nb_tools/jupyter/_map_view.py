"""The live view of ``%%agent --over``: one line (rows done / running / waiting for
approval / failed, tokens, cost against the budget, an ETA), a Stop button that ends the
map cleanly (rows in flight are stopped and marked, the rest skipped, the table still
shown), and the list of rows with their status: a click on a row opens its conversation
below, as the transcript renders it, while the map runs.

When the map ends, the view is replaced by the table followed by the rows'
conversations, each a ``<details>`` opened by a click (static HTML: it reads the same in
JupyterLab, in any HTML viewer and in a saved notebook, which holds no widget view).
"""

from __future__ import annotations

import asyncio
import contextlib
import html
import threading
import time
from collections.abc import Sequence
from typing import Any

import ipywidgets as widgets
from IPython.display import display

from nb_tools.agent import (
    ApprovalDecided,
    ApprovalRequested,
    Conversation,
    Event,
    MapProgress,
    ModelFailed,
    RunFinished,
    TurnStarted,
)
from nb_tools.model import TextBlock, ThinkingBlock, ToolResultBlock, ToolUseBlock, Usage
from nb_tools.transcript import TranscriptRecorder, text_html, tool_item, transcript_bundle

REFRESH_SECONDS = 0.25
"""At most this often the view is sent to the frontend (a row's start and end is not)."""
SHOWN_CONVERSATIONS = 200
"""After the run, the conversations of at most this many rows are written into the cell."""
NAME_CHARS = 28
"""A row's name in the list (its first input value) is cut to this many characters."""


def progress_text(p: MapProgress, *, waiting: int = 0, tokens: int | None = None) -> str:
    """One line: "12/40 rows done · 8 running · 2 waiting for approval · 1 failed ·
    48,210 tokens · $0.0312 of $2.00 · ETA 14 s"."""
    bits = [f"{p.done}/{p.rows} rows done", f"{p.running} running"]
    if waiting:
        bits.append(f"{waiting} waiting for approval")
    if p.failed:
        bits.append(f"{p.failed} failed")
    if tokens:
        bits.append(f"{tokens:,} tokens")
    cost = f"${p.spent_usd:.4f}"
    if p.budget_usd is not None:
        cost += f" of ${p.budget_usd:.2f}"
    bits.append(cost)
    if p.eta is not None and p.done < p.rows:
        bits.append(f"ETA {p.eta:.0f} s")
    return " · ".join(bits)


def usage_tokens(usage: Usage) -> int:
    return (
        usage.input_tokens
        + usage.output_tokens
        + usage.cache_creation_input_tokens
        + usage.cache_read_input_tokens
    )


def _cut(text: str, n: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"


def conversation_transcript(
    conversation: Conversation, *, model: str = "", provider: str = ""
) -> dict[str, Any]:
    """A transcript of a conversation that has no events to record (a row taken from the
    checkpoint): its messages' text and tool calls with their results, after its first
    prompt (shown above it, as for a row that ran)."""
    items: list[dict[str, Any]] = []
    tools: dict[str, dict[str, Any]] = {}
    messages = conversation.messages
    for m in messages[1:] if messages and messages[0].role == "user" else messages:
        for block in m.content:
            if isinstance(block, TextBlock) and block.text:
                items.append(
                    {"kind": "assistant" if m.role == "assistant" else "user", "text": block.text}
                )
            elif isinstance(block, ThinkingBlock) and block.thinking:
                items.append({"kind": "thinking", "text": block.thinking})
            elif isinstance(block, ToolUseBlock):
                tools[block.id] = tool_item(block.id, block.name, block.arguments)
                items.append(tools[block.id])
            elif isinstance(block, ToolResultBlock) and block.result.tool_use_id in tools:
                item = tools[block.result.tool_use_id]
                item["status"] = "error" if block.result.is_error else "ok"
                item["result"] = block.result.content
    usage = conversation.usage
    return {
        "version": 1,
        "model": model,
        "provider": provider,
        "stop_reason": "end_turn",
        "error": None,
        "turns": sum(m.role == "assistant" for m in messages),
        "items": items,
        "usage": {
            "input_tokens": usage.input_tokens,
            "output_tokens": usage.output_tokens,
            "cache_creation_input_tokens": usage.cache_creation_input_tokens,
            "cache_read_input_tokens": usage.cache_read_input_tokens,
            "cost_usd": round(usage.cost_usd, 6),
        },
    }


class RowRecords:
    """Each row's transcript so far, from its run's events (``on_row_event``) or, for a
    row taken from the checkpoint, from its conversation (``restored``); and which rows
    wait for a person."""

    def __init__(self, prompts: Sequence[str | None], model: str = "", provider: str = "") -> None:
        self.prompts = list(prompts)
        self.model, self.provider = model, provider
        self.recorders: dict[int, TranscriptRecorder] = {}
        self.restored_rows: dict[int, Conversation] = {}
        self.waiting: set[int] = set()
        self.turn: dict[int, int] = {}

    def restored(self, row: int, conversation: Conversation) -> None:
        """``amap(on_restored=...)``: row ``row`` was taken from the checkpoint."""
        self.restored_rows[row] = conversation

    def __call__(self, row: int, event: Event) -> None:
        rec = self.recorders.get(row)
        if rec is None:
            rec = TranscriptRecorder(self.prompts[row], model=self.model, provider=self.provider)
            self.recorders[row] = rec
        rec.record(event)
        if isinstance(event, ApprovalRequested):
            self.waiting.add(row)
        elif isinstance(event, ApprovalDecided | RunFinished | ModelFailed):
            self.waiting.discard(row)
        elif isinstance(event, TurnStarted):
            self.turn[row] = event.turn

    def tokens(self) -> int:
        return sum(usage_tokens(r.usage) for r in list(self.recorders.values()))

    def transcript(self, row: int) -> dict[str, Any] | None:
        rec = self.recorders.get(row)
        if rec is not None:
            return rec.to_dict()
        restored = self.restored_rows.get(row)
        if restored is not None:
            return conversation_transcript(restored, model=self.model, provider=self.provider)
        return None

    def prompt_html(self, row: int) -> str:
        """The row's prompt as the transcript shows a user's message (a transcript leaves
        its first prompt out: in a cell, that is the cell's source just above)."""
        prompt = self.prompts[row] if row < len(self.prompts) else None
        return text_html(prompt, who="user") if prompt else ""


def row_label(i: int, name: str, status: str, records: RowRecords) -> str:
    """ "row 3 · T3 · running · turn 2", "row 5 · T5 · ok · 2 turns · $0.0012"."""
    head = f"row {i}" + (f" · {name}" if name else "")
    rec = records.recorders.get(i)
    if status == "running" and i in records.waiting:
        return f"{head} · waiting for approval"
    if status == "running":
        turn = records.turn.get(i)
        return f"{head} · running" + (f" · turn {turn}" if turn else "")
    restored = records.restored_rows.get(i)
    if restored is not None and rec is None:
        turns = sum(m.role == "assistant" for m in restored.messages)
        cost = restored.usage.cost_usd
        return f"{head} · {status} · {turns} turn(s) · ${cost:.4f} · from the checkpoint"
    if status == "queued" or rec is None:
        return f"{head} · {status}"
    return f"{head} · {status} · {rec.turns} turn(s) · ${rec.usage.cost_usd:.4f}"


class MapView:
    """The progress line, the Stop button and the rows; ``stop`` is the map's stop event,
    ``records`` goes to ``amap(on_row_event=...)``."""

    def __init__(
        self,
        prompts: Sequence[str | None] = (),
        names: Sequence[str] = (),
        *,
        model: str = "",
        provider: str = "",
        stop: threading.Event | None = None,
    ) -> None:
        self.stop = stop if stop is not None else threading.Event()
        self.records = RowRecords(prompts, model, provider)
        self.names = [_cut(n, NAME_CHARS) for n in names] or [""] * len(prompts)
        self.text = widgets.HTML(value="starting…")
        self.button = widgets.Button(description="Stop", button_style="warning", icon="stop")
        self.button.on_click(lambda _: self._stop())
        self.rows = widgets.Select(
            options=[], rows=min(8, max(2, len(prompts))), layout={"width": "100%"}
        )
        self.rows.add_class("nbtools-map-rows-list")
        self.rows.observe(lambda _: self._show_row(), names="value")
        self.conversation = widgets.Output()
        self.hint = widgets.HTML(
            '<span style="color:var(--jp-content-font-color2,#57606a)">'
            "Click a row to open its conversation.</span>"
        )
        self.box = widgets.VBox(
            [widgets.HBox([self.text, self.button]), self.hint, self.rows, self.conversation]
        )
        self.handle: Any = None
        self._last = 0.0
        self._later: asyncio.TimerHandle | None = None
        self._shown: tuple[int, int] | None = None  # (row, items) on screen
        self.latest: MapProgress | None = None

    def _stop(self) -> None:
        self.stop.set()
        self.button.disabled = True
        self.button.description = "Stopping…"

    def show(self) -> None:
        self.handle = display(self.box, display_id=True)

    def update(self, p: MapProgress) -> None:
        """A row started or finished: refresh now, or once the refresh interval is over
        (so the last change is never left unshown)."""
        self.latest = p
        now = time.monotonic()
        if now - self._last >= REFRESH_SECONDS or p.done == p.rows:
            self.refresh()
        elif self._later is None:
            with contextlib.suppress(RuntimeError):  # no running loop: the next update shows it
                loop = asyncio.get_running_loop()
                self._later = loop.call_later(REFRESH_SECONDS, self.refresh)

    def refresh(self) -> None:
        if self._later is not None:
            self._later.cancel()
            self._later = None
        self._last = time.monotonic()
        p = self.latest
        if p is None:
            return
        waiting = sum(1 for i in self.records.waiting if i < len(p.statuses))
        self.text.value = html.escape(
            progress_text(p, waiting=waiting, tokens=self.records.tokens())
        )
        names = self.names + [""] * (len(p.statuses) - len(self.names))
        options = [(row_label(i, names[i], s, self.records), i) for i, s in enumerate(p.statuses)]
        if options != list(self.rows.options):
            selected = self.rows.value
            self.rows.options = options
            if selected is not None:
                self.rows.value = selected
        self._show_row()

    def _show_row(self) -> None:
        """The selected row's conversation as the transcript renders it (the labextension
        in JupyterLab, its HTML elsewhere); sent again only when it changed."""
        row = self.rows.value
        if row is None:
            return
        transcript = self.records.transcript(row)
        if transcript is None:
            key = (row, -1)
            data = {"text/plain": f"row {row} has not started", "text/html": ""}
        else:
            key = (row, len(str(transcript)))
            data = transcript_bundle(transcript)
        if key == self._shown:
            return
        self._shown = key
        prompt = {"text/html": self.records.prompt_html(row), "text/plain": ""}
        self.conversation.outputs = (
            {"output_type": "display_data", "data": prompt, "metadata": {}},
            {"output_type": "display_data", "data": data, "metadata": {}},
        )

    def finish(self, result: Any, *, note: str | None = None) -> None:
        """Replace the view by the table and the rows' conversations (None: by ``note``
        or nothing) and close the widgets."""
        if result is None:
            bundle = {"text/plain": note or ""}
            if note:
                bundle["text/html"] = f"<div>{html.escape(note)}</div>"
        else:
            bundle = table_bundle(result, self.records, self.names, note=note)
        if self.handle is not None:
            self.handle.update(bundle, raw=True)
        elif result is not None or note:
            display(bundle, raw=True)
        if self._later is not None:
            self._later.cancel()
        with contextlib.suppress(Exception):
            for w in (self.button, self.text, self.rows, self.conversation, self.hint):
                w.close()
            self.box.close()


def table_bundle(
    result: Any, records: RowRecords, names: Sequence[str], *, note: str | None = None
) -> dict[str, Any]:
    """The result table (as IPython shows a DataFrame) followed by the rows'
    conversations, each opened by a click."""
    from IPython.core.getipython import get_ipython

    shell = get_ipython()
    data: dict[str, Any] = {}
    if shell is not None:
        data, _ = shell.display_formatter.format(result)
    plain = str(data.get("text/plain") or repr(result))
    table = str(data.get("text/html") or f"<pre>{html.escape(plain)}</pre>")
    top = f"<div><b>{html.escape(note)}</b></div>" if note else ""
    return {
        "text/html": top + table + rows_html(result, records, names),
        "text/plain": (note + "\n" if note else "") + plain,
    }


def rows_html(result: Any, records: RowRecords, names: Sequence[str]) -> str:
    """One ``<details>`` per row (status, turns, cost in its summary; its transcript
    inside), for the first :data:`SHOWN_CONVERSATIONS` rows."""
    statuses = list(result["status"]) if "status" in result else []
    turns = list(result["turns"]) if "turns" in result else [0] * len(statuses)
    costs = list(result["cost_usd"]) if "cost_usd" in result else [0.0] * len(statuses)
    items = []
    for i, status in enumerate(statuses[:SHOWN_CONVERSATIONS]):
        name = names[i] if i < len(names) else ""
        head = f"row {i}" + (f" · {name}" if name else "")
        summary = html.escape(f"{head} · {status} · {turns[i]} turn(s) · ${costs[i]:.4f}")
        transcript = records.transcript(i)
        if transcript is not None:
            body = records.prompt_html(i) + transcript_bundle(transcript)["text/html"]
            if i in records.restored_rows and i not in records.recorders:
                summary += " · from the checkpoint"
        else:
            body = "<i>no request was sent for this row</i>"
        items.append(
            f'<details class="nbtools-map-row" data-row="{i}"><summary style="cursor:pointer">'
            f'{summary}</summary><div style="margin:2px 0 10px 18px">{body}</div></details>'
        )
    more = len(statuses) - SHOWN_CONVERSATIONS
    tail = (
        f"<div>… {more:,} more rows: <code>result.attrs['nb_tools'].conversations[i]</code></div>"
        if more > 0
        else ""
    )
    return (
        '<div class="nbtools-map-rows" style="margin-top:6px"><b>Rows</b> '
        '<span style="color:var(--jp-content-font-color2,#57606a)">(click a row to open its '
        f"conversation)</span>{''.join(items)}{tail}</div>"
    )
