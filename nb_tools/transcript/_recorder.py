"""Build a run's transcript (``application/vnd.nbtools.transcript+json``, docs/transcript.md)
from its events, and render it as plain text.

Pure Python: the jupyter layer displays it, the labextension renders it, scripts print it.
"""

from __future__ import annotations

import base64
import json
import math
from collections.abc import Mapping
from typing import Any, assert_never, cast

from nb_tools.agent._events import (
    ApprovalDecided,
    ApprovalRequested,
    Event,
    ModelFailed,
    ModelRetrying,
    RunFinished,
    TextDelta,
    ToolArgumentsDelta,
    ToolCallFinished,
    ToolCallStarted,
    ToolProgress,
    TurnStarted,
    UsageUpdated,
)
from nb_tools.agent._notices import (
    CitationsReceived,
    ContextCompacted,
    RunNotice,
    ServerToolUsed,
    ThinkingDelta,
)
from nb_tools.model import Part, Usage
from nb_tools.tool import Change, headline_of
from nb_tools.transcript._blocks import item_text_lines, messages_item
from nb_tools.transcript._chain import ConversationRef, continues, conversation_id
from nb_tools.transcript._types import ITEM_KINDS, ItemKind, StopReason
from nb_tools.transcript._visible import NOT_SHOWN, shown_arguments

_MESSAGES_EVENTS = (ThinkingDelta, ServerToolUsed, CitationsReceived, ContextCompacted, RunNotice)

TRANSCRIPT_MIME = "application/vnd.nbtools.transcript+json"
TRANSCRIPT_VERSION = 1
RESULT_MAX_CHARS = 20_000
PROGRESS_MAX_CHARS = 2_000
PART_MAX_BYTES = 4_000_000


def usage_dict(usage: Usage | None) -> dict[str, Any]:
    u = usage or Usage()
    estimated = {"estimated": True} if u.estimated else {}
    return {
        "input_tokens": u.input_tokens,
        "output_tokens": u.output_tokens,
        "cache_creation_input_tokens": u.cache_creation_input_tokens,
        "cache_read_input_tokens": u.cache_read_input_tokens,
        "cost_usd": round(u.cost_usd, 6),
        "thinking_tokens": u.thinking_tokens,
        "web_search_requests": u.web_search_requests,
        "web_fetch_requests": u.web_fetch_requests,
    } | estimated


def diff_dict(change: Change) -> dict[str, Any]:
    """A writer's preview as the transcript stores it."""
    out = {"path": change.path, "kind": change.kind, "diff": change.diff()}
    return out | ({"label": change.label} if change.label else {})


def part_dict(part: Part) -> dict[str, Any]:
    """A ``Part`` as the transcript stores it (base64 data; too-large data is dropped)."""
    out: dict[str, Any] = {"kind": part.kind, "media_type": part.media_type}
    if part.title:
        out["title"] = part.title
    if len(part.data) <= PART_MAX_BYTES:
        out["data"] = base64.b64encode(part.data).decode("ascii")
    else:
        out["data"] = None
        out["note"] = f"{len(part.data)} bytes, not stored"
    return out


def _clip(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    half = limit // 2
    cut = len(text) - 2 * half
    return f"{text[:half]}\n… [{cut} characters cut] …\n{text[-half:]}"


def tool_item(call_id: str, name: str, arguments: str) -> dict[str, Any]:
    """A tool call's transcript item before anything happened to it (the contract's
    ``tool`` item: pending, no result yet)."""
    return {
        "kind": "tool",
        "id": call_id,
        "name": name,
        "arguments": arguments,
        "status": "pending",
        "result": None,
        "parts": [],
        "duration": None,
        "diffs": [],
        "progress": None,
        "approval": None,
    }


class TranscriptRecorder:
    """Collects one run's events into the transcript dict. Call it with each event
    (it is an ``on_event`` callback); :meth:`to_dict` at any time gives the transcript so
    far (tool calls still running show ``"status": "pending"``)."""

    def __init__(
        self,
        prompt: str | None = None,
        *,
        model: str = "",
        provider: str = "",
        previous: ConversationRef | None = None,
        cell: str | None = None,
    ) -> None:
        self.model = model
        self.provider = provider
        self.items: list[dict[str, Any]] = []
        self.stop_reason: str | None = None
        self.error: str | None = None
        self.turns = 0
        self.usage: Usage = Usage()
        self._tools: dict[str, dict[str, Any]] = {}
        self._text_open = False
        self.conversation: dict[str, Any] | None = None
        self.previous = previous  # the run this one continues (its transcript holds the rest)
        self.cell = cell  # the notebook cell that shows this run, when known
        self.ref: ConversationRef | None = None  # the conversation as this run left it
        self._base_usage: Usage = Usage()  # earlier runs of this cell (Continue)
        self._base_turns = 0
        if prompt:
            self.items.append({"kind": "user", "text": prompt})

    def __call__(self, event: Event) -> None:
        self.record(event)

    def record(self, event: Event) -> None:
        if isinstance(event, TextDelta):
            if not self._text_open or not self.items or self.items[-1]["kind"] != "assistant":
                self.items.append({"kind": "assistant", "text": ""})
                self._text_open = True
            self.items[-1]["text"] += event.text
        elif isinstance(event, TurnStarted):
            self.turns = max(self.turns, self._base_turns + event.turn)
            self._text_open = False
        elif isinstance(event, ToolCallStarted):
            self._text_open = False
            item = self._tool_item(event.call.id, event.call.name, event.call.arguments)
            headline = headline_of(event.info)
            if headline is not None:  # what the tool declared its card shows first
                item["headline"] = headline.to_dict()
            if event.preview:
                self._tools[event.call.id]["diffs"] = [diff_dict(c) for c in event.preview]
        elif isinstance(event, ToolProgress):
            item = self._tools.get(event.call_id)
            if item is not None and event.progress.text:
                item["progress"] = _clip(
                    (item["progress"] or "") + event.progress.text, PROGRESS_MAX_CHARS
                )
        elif isinstance(event, ApprovalDecided):
            item = self._tools.get(event.call_id)
            if item is not None:
                item["approval"] = {
                    "approved": event.approved,
                    "by": event.by,
                    "message": event.message,
                    "source": event.source.kind if event.source is not None else None,
                    "rule": event.rule,
                }
        elif isinstance(event, ToolCallFinished):
            self._text_open = False
            item = self._tool_item(event.call.id, event.call.name, event.call.arguments)
            item["status"] = event.status
            meta = event.result.metadata or {}
            full = meta.get("full_content")
            content = full if isinstance(full, str) else event.result.content
            item["result"] = _clip(content, RESULT_MAX_CHARS)
            saw = meta.get("model_saw")
            if isinstance(saw, list | tuple) and len(saw) == 2:
                item["model_saw"] = {"bytes": int(saw[0]), "of": int(saw[1])}
            item["parts"] = [part_dict(p) for p in event.result.parts]
            item["duration"] = round(event.duration, 6)
            tb = event.result.metadata.get("traceback") if event.result.metadata else None
            if isinstance(tb, str) and tb:
                item["traceback"] = _clip(tb, RESULT_MAX_CHARS)
        elif isinstance(event, UsageUpdated):
            self.usage = self._base_usage + event.total
            self.turns = max(self.turns, self._base_turns + event.turn)
        elif isinstance(event, ModelFailed):
            self.error = event.message
        elif isinstance(event, _MESSAGES_EVENTS):
            last = self.items[-1]["kind"] if self.items else ""
            if isinstance(event, ThinkingDelta) and last == "thinking":
                self.items[-1]["text"] += event.text
                return
            self._text_open = False
            self.items.append(dict(messages_item(event)))
        elif isinstance(event, RunFinished):
            result = event.result
            self.stop_reason = getattr(result, "stop_reason", None) or self.stop_reason
            usage = getattr(result, "usage", None)
            if isinstance(usage, Usage):
                self.usage = self._base_usage + usage
            turns = getattr(result, "turns", None)
            if isinstance(turns, int):
                self.turns = max(self.turns, self._base_turns + turns)
            error = getattr(result, "error", None)
            if error and not self.error:
                self.error = str(error)
            messages = getattr(result, "messages", None)
            if messages is not None:  # what Agent.from_notebook rebuilds the agent from
                self._keep_conversation(tuple(messages), getattr(result, "system", None))
        elif isinstance(event, ApprovalRequested | ModelRetrying | ToolArgumentsDelta):
            pass  # the live view shows these; the transcript keeps the decision and the call
        else:
            assert_never(event)

    def _keep_conversation(self, messages: tuple[Any, ...], system: str | None) -> None:
        """Store what this run added to the conversation, after the run it continues."""
        from nb_tools.agent._persist import encode_messages

        previous = self.previous if continues(self.previous, messages) else None
        start = len(previous.messages) if previous is not None else 0
        added = encode_messages(messages[start:])
        before = previous.id if previous is not None else None
        cid = conversation_id(before, system, added)
        self.conversation = {
            "system": system,
            "id": cid,
            "previous": before,
            "start": start,
            "messages": added,
        }
        cells = previous.cells if previous is not None else ()
        if self.cell is not None and self.cell not in cells:
            cells = (*cells, self.cell)
        self.ref = ConversationRef(id=cid, messages=messages, cells=cells)

    def _tool_item(self, call_id: str, name: str, arguments: str) -> dict[str, Any]:
        item = self._tools.get(call_id)
        if item is None:
            item = tool_item(call_id, name, arguments)
            self._tools[call_id] = item
            self.items.append(item)
        return item

    def resume(self) -> None:
        """The cell goes on with another run (Continue): its turns and usage add up."""
        self._base_usage = self.usage
        self._base_turns = self.turns
        self.stop_reason = None
        self._text_open = False

    def finish(self, stop_reason: str, error: str | None = None) -> None:
        """Close a run that ended without a ``RunFinished`` (e.g. an internal error)."""
        if self.stop_reason is None:
            self.stop_reason = stop_reason
        if error and not self.error:
            self.error = error

    def summary(self) -> dict[str, Any]:
        """The transcript without its items (for a live footer)."""
        summary = {
            "version": TRANSCRIPT_VERSION,
            "model": self.model,
            "provider": self.provider,
            "stop_reason": self.stop_reason,
            "error": self.error,
            "turns": self.turns,
            "usage": usage_dict(self.usage),
        }
        if not self.provider:  # a recorder outside a notebook run may not know it
            del summary["provider"]
        return summary

    def to_dict(self) -> dict[str, Any]:
        """The transcript (a deep copy: later events do not change it)."""
        d = self.summary()
        d["items"] = json.loads(json.dumps(self.items))
        out: dict[str, Any] = {
            k: d[k]
            for k in (  # the documented order
                "version",
                "model",
                "provider",
                "stop_reason",
                "error",
                "turns",
                "items",
                "usage",
            )
            if k in d
        }
        if self.conversation is not None:
            out["conversation"] = json.loads(json.dumps(self.conversation))
        return out


def usage_line(usage: Mapping[str, Any], turns: int | None = None) -> str:
    """``3 turns · 1,204 in / 310 out tokens · 800 cached · $0.0061``."""
    bits = []
    if turns is not None:
        bits.append(f"{turns} turn{'s' if turns != 1 else ''}")
    bits.append(
        f"{usage.get('input_tokens', 0):,} in / {usage.get('output_tokens', 0):,} out tokens"
    )
    cached = usage.get("cache_read_input_tokens", 0)
    bits.append(f"{cached:,} cached")
    estimated = " (estimated)" if usage.get("estimated") else ""
    bits.append(f"${usage.get('cost_usd', 0.0):.4f}{estimated}")
    return " · ".join(bits)


def format_duration(seconds: object) -> str:
    """``12 ms``, ``1.5 s``, ``2 min 5 s``: whole milliseconds first, then tenths of a
    second under a minute, then whole seconds, each rounded half up in integers (the
    labextension's formatDuration is the same arithmetic, so both show the same text)."""
    if not isinstance(seconds, int | float) or isinstance(seconds, bool):
        return ""
    if not math.isfinite(seconds) or seconds < 0:
        return ""
    ms = math.floor(seconds * 1000 + 0.5)
    if ms < 1000:
        return f"{ms} ms"
    tenths = (ms + 50) // 100
    if tenths < 600:
        return f"{tenths // 10}.{tenths % 10} s"
    whole = (ms + 500) // 1000
    return f"{whole // 60} min {whole % 60} s"


STATUS_LABELS: dict[str, str] = {
    "cut_off": "cut off",
    "running_in_background": "still running in the background",
}


def status_label(status: object) -> str:
    """A tool status as a card's badge says it (``cut_off`` -> "cut off")."""
    text = str(status)
    return STATUS_LABELS.get(text, text.replace("_", " "))


def who_text(by: object) -> str:
    """Who decided, as a card says it: "you" for the person at the notebook."""
    return "you" if by in (None, "user") else str(by)


ENDINGS: dict[StopReason, str] = {
    "max_turns": "Paused at the turn limit ({turns} turns).",
    "budget": "Paused at this run's budget (the notice above says what was spent).",
    "stopped": "Stopped.",
    "stopped_after_turn": "Stopped after turn {turns}, as asked.",
}
CONTINUE_HINT = "Run `%%agent --continue` to go on."
CONTINUABLE: tuple[StopReason, ...] = ("max_turns", "budget", "stopped_after_turn")


def ending_text(d: Mapping[str, Any]) -> str:
    """What a run's end means and what to do next ("" for an ordinary end)."""
    reason = d.get("stop_reason")
    template = ENDINGS.get(cast(StopReason, reason))
    if template is None:
        return ""
    text = template.format(turns=d.get("turns"))
    return f"{text} {CONTINUE_HINT}" if reason in CONTINUABLE else text


def pretty_arguments(raw: str) -> str:
    """The raw argument text, indented when it parses as JSON (else as sent)."""
    parsed = shown_arguments(raw)
    if parsed is NOT_SHOWN:
        return raw
    return json.dumps(parsed, indent=2, ensure_ascii=False)


def transcript_text(d: Mapping[str, Any], *, max_result_lines: int = 12) -> str:
    """The transcript as plain text (the ``text/plain`` fallback)."""
    out: list[str] = []
    for item in d.get("items", []):
        if item.get("kind") not in ITEM_KINDS:
            continue  # a kind from a newer nb_tools
        kind = cast(ItemKind, item["kind"])
        if kind == "user":
            out.append(f"User: {item.get('text', '')}")
        elif kind == "assistant":
            out.append(f"Assistant: {item.get('text', '')}")
        elif kind == "tool":
            out.append(f"[tool] {item.get('name')}({item.get('arguments', '')})")
            approval = item.get("approval")
            if approval:
                verb = "approved" if approval.get("approved") else "denied"
                note = f": {approval['message']}" if approval.get("message") else ""
                out.append(f"  {verb} by {who_text(approval.get('by'))}{note}")
            for diff in item.get("diffs") or []:
                out.extend("  " + line for line in diff.get("diff", "").splitlines())
            took = format_duration(item.get("duration"))
            took_text = f" in {took}" if took else ""
            out.append(f"  → {item.get('status')}{took_text}")
            result = item.get("result") or ""
            lines = result.splitlines()
            for line in lines[:max_result_lines]:
                out.append(f"  | {line}")
            if len(lines) > max_result_lines:
                out.append(f"  | … {len(lines) - max_result_lines} more lines")
            for part in item.get("parts") or []:
                out.append(f"  [{part.get('kind')} {part.get('media_type')}]")
        elif (
            kind == "thinking"
            or kind == "server_tool"
            or kind == "citations"
            or kind == "compaction"
            or kind == "notice"
        ):
            out.extend(item_text_lines(item))
        else:
            assert_never(kind)
    footer = f"[{d.get('stop_reason') or 'running'}] " + usage_line(
        d.get("usage", {}), d.get("turns")
    )
    if d.get("error"):
        footer += f"\nError: {d['error']}"
    ending = ending_text(d)
    if ending:
        footer += f"\n{ending}"
    out.append(footer)
    return "\n".join(out)
