"""A streamed Chat Completion rebuilt from each chunk's JSON as the server sent it, in the
dialects OpenAI-compatible servers really speak:

- thinking as ``reasoning_content`` (vLLM, llama.cpp's server, DeepSeek), ``reasoning``
  (Ollama, OpenRouter, newer vLLM) or ``reasoning_details`` (OpenRouter), shown as it
  streams (:class:`ThinkingDeltaEvent`);
- every field of a message or of a tool call that the Chat Completions format does not
  define (the reasoning above, Gemini's ``extra_content.google.thought_signature`` on a
  call, ...) kept on the message as one :class:`OtherBlock` of type :data:`CHAT_EXTRA`
  and sent back with it (:mod:`nb_tools.model._openai_convert`): DeepSeek refuses a
  follow-up without the ``reasoning_content`` of a call's message, Gemini 3 one without
  the call's thought signature;
- tool-call deltas without ``index`` (or with ``index: null``): a delta with an ``id`` is
  that call's, one with a new function name starts a call, the rest continue the calls in
  order; two calls in one chunk stay two calls;
- usage wherever the server puts it: ``usage`` on a chunk (the last one may have no
  ``choices``), Groq's ``x_groq.usage``, or ``usage`` inside the choice.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from nb_tools.model._pricing import Price, priced
from nb_tools.model._provider import (
    ModelEvent,
    ResponseEvent,
    TextDeltaEvent,
    ThinkingDeltaEvent,
    ToolArgumentsDeltaEvent,
    ToolUseStartEvent,
)
from nb_tools.model._types import Block, Message, OtherBlock, TextBlock, ToolUseBlock, Usage

__all__ = ["CHAT_EXTRA", "ChatTurn", "chat_usage"]

CHAT_EXTRA = "openai.chat.extra"
"""The ``OtherBlock.type`` holding what a Chat Completions server sent beyond the format:
``data = {"message": {field: value}, "tool_calls": {call id: {field: value}}}``."""

# The fields the Chat Completions format defines on a streamed message and on a tool call;
# everything else a server sends is its own extension, kept and sent back. (OpenAI's own
# output-only fields, such as a search model's annotations, are not sent back: OpenAI
# refuses properties a message does not take.)
_MESSAGE_FIELDS = frozenset(
    {"role", "content", "tool_calls", "refusal", "function_call", "audio", "annotations"}
)
_CALL_FIELDS = frozenset({"index", "id", "type", "function"})
_REASONING_TEXT = ("reasoning_content", "reasoning")
_DETAIL_TEXT = {"reasoning.text": "text", "reasoning.summary": "summary"}

_STOP = {
    "stop": "end_turn",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "length": "max_tokens",
    "content_filter": "refusal",
}


@dataclass
class _Call:
    id: str
    name: str
    arguments: list[str] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)
    server_id: bool = True


class ChatTurn:
    """Accumulates one streamed Chat Completion from its chunks (JSON objects)."""

    def __init__(self) -> None:
        self.text: list[str] = []
        self.refusal: list[str] = []
        self.calls: list[_Call] = []
        self._by_index: dict[int, _Call] = {}
        self._by_id: dict[str, _Call] = {}
        self.extra: dict[str, Any] = {}
        self.finish_reason: str | None = None
        self.usage = Usage()

    @property
    def complete(self) -> bool:
        return self.finish_reason is not None

    @property
    def started(self) -> bool:
        """Whether any of the reply arrived (text, thinking or a call)."""
        return bool(self.text or self.refusal or self.calls or self.extra)

    def add(self, chunk: Mapping[str, Any]) -> list[ModelEvent]:
        events: list[ModelEvent] = []
        for usage in (chunk.get("usage"), (chunk.get("x_groq") or {}).get("usage")):
            if isinstance(usage, Mapping):
                self.usage = chat_usage(usage)
        for choice in chunk.get("choices") or ():
            if (choice.get("index") or 0) != 0:  # we never ask for n > 1
                continue
            if isinstance(choice.get("usage"), Mapping):
                self.usage = chat_usage(choice["usage"])
            delta = choice.get("delta") or {}
            events.extend(self._thinking(delta))
            content = delta.get("content")
            if isinstance(content, str) and content:
                self.text.append(content)
                events.append(TextDeltaEvent(text=content))
            if isinstance(delta.get("refusal"), str) and delta["refusal"]:
                self.refusal.append(delta["refusal"])
            calls = [tc for tc in delta.get("tool_calls") or () if isinstance(tc, Mapping)]
            for position, tc in enumerate(calls):
                events.extend(self._call_delta(tc, position, len(calls)))
            if choice.get("finish_reason"):
                self.finish_reason = str(choice["finish_reason"])
        return events

    def _thinking(self, delta: Mapping[str, Any]) -> list[ModelEvent]:
        """Keep the delta's own fields; the thinking text they carry, once (OpenRouter
        sends the same text as ``reasoning`` and inside ``reasoning_details``)."""
        shown = ""
        for key, value in delta.items():
            if key in _MESSAGE_FIELDS or value is None:
                continue
            _merge_stream(self.extra, key, value)
            if key in _REASONING_TEXT and isinstance(value, str) and not shown:
                shown = value
        if not shown and isinstance(delta.get("reasoning_details"), list):
            shown = "".join(
                str(d.get(_DETAIL_TEXT[d.get("type", "")]) or "")
                for d in delta["reasoning_details"]
                if isinstance(d, Mapping) and d.get("type") in _DETAIL_TEXT
            )
        return [ThinkingDeltaEvent(text=shown)] if shown else []

    def _call_delta(self, tc: Mapping[str, Any], position: int, count: int) -> list[ModelEvent]:
        events: list[ModelEvent] = []
        function = tc.get("function") or {}
        name = function.get("name") or ""
        call = self._find(tc, name, position, count)
        if call is None:
            call_id = tc.get("id") or f"call_{len(self.calls)}"
            call = _Call(id=str(call_id), name=name, server_id=bool(tc.get("id")))
            self.calls.append(call)
            self._by_id[call.id] = call
            events.append(ToolUseStartEvent(id=call.id, name=call.name))
        if isinstance(tc.get("index"), int):
            self._by_index[tc["index"]] = call
        for key, value in tc.items():
            if key not in _CALL_FIELDS and value is not None:
                call.extra[key] = _merged(call.extra.get(key), value)
        piece = function.get("arguments")
        if isinstance(piece, str) and piece:
            call.arguments.append(piece)
            events.append(ToolArgumentsDeltaEvent(id=call.id, partial_json=piece))
        return events

    def _find(self, tc: Mapping[str, Any], name: str, position: int, count: int) -> _Call | None:
        """The call this delta continues; None when it starts one."""
        index, call_id = tc.get("index"), tc.get("id") or ""
        if isinstance(index, int):
            call = self._by_index.get(index)
            if call is not None and call_id and call.id != call_id and name:
                return None  # a second call under a reused index (some proxies send 0s)
            return call
        if call_id:
            return self._by_id.get(call_id)
        if name or not self.calls:
            return None
        # No index, no id, no name: the continuation of the calls in order.
        return self.calls[max(0, len(self.calls) - count + position)]

    def finish(self, model: str, price: Price | None = None) -> ResponseEvent:
        blocks: list[Block] = []
        extra: dict[str, Any] = {}
        message_extra = {k: v for k, v in self.extra.items() if v not in ("", [], {})}
        if message_extra:
            extra["message"] = message_extra
        call_extra = {c.id: c.extra for c in self.calls if c.extra}
        if call_extra:
            extra["tool_calls"] = call_extra
        if extra:
            blocks.append(OtherBlock(type=CHAT_EXTRA, data=extra))
        text = "".join(self.text) or "".join(self.refusal)
        if text:
            blocks.append(TextBlock(text=text))
        blocks.extend(
            ToolUseBlock(id=c.id, name=c.name, arguments="".join(c.arguments) or "{}")
            for c in self.calls
        )
        # A reason this version does not know ends the reply as an ordinary end.
        stop = _STOP.get(self.finish_reason or "", "end_turn")
        if self.calls and stop == "end_turn":
            stop = "tool_use"  # some servers say "stop" after tool calls
        if self.refusal and not self.text:
            stop = "refusal"
        return ResponseEvent(
            message=Message(role="assistant", content=tuple(blocks)),
            stop_reason=stop,
            usage=priced(self.usage, price),
        )


def _merge_stream(into: dict[str, Any], key: str, value: Any) -> None:
    """A message field's next piece: text is streamed in pieces (joined), a list of
    details in items (an item with the ``index`` of one before continues it)."""
    old = into.get(key)
    if isinstance(value, str) and isinstance(old, str):
        into[key] = old + value
    elif isinstance(value, list) and isinstance(old, list):
        into[key] = _merge_items(old, value)
    else:
        into[key] = _merged(old, value)


def _merge_items(old: list[Any], new: Sequence[Any]) -> list[Any]:
    out = list(old)
    for item in new:
        index = item.get("index") if isinstance(item, Mapping) else None
        same = next(
            (
                i
                for i, o in enumerate(out)
                if index is not None
                and isinstance(o, Mapping)
                and o.get("index") == index
                and o.get("type") == item.get("type")
            ),
            None,
        )
        if same is None:
            out.append(item)
            continue
        merged = dict(out[same])
        for k, v in item.items():
            if isinstance(v, str) and isinstance(merged.get(k), str) and k in ("text", "summary"):
                merged[k] = merged[k] + v
            elif v is not None:
                merged[k] = v
        out[same] = merged
    return out


def _merged(old: Any, new: Any) -> Any:
    """``new`` over ``old``: objects merged key by key, anything else replaced."""
    if isinstance(old, Mapping) and isinstance(new, Mapping):
        out = dict(old)
        for k, v in new.items():
            out[k] = _merged(out.get(k), v)
        return out
    return new


def chat_usage(usage: Mapping[str, Any]) -> Usage:
    """A Chat Completions ``usage`` object (cached input tokens apart, as DeepSeek's
    ``prompt_cache_hit_tokens`` or OpenAI's ``prompt_tokens_details.cached_tokens``)."""
    details = usage.get("prompt_tokens_details") or {}
    cached = int(details.get("cached_tokens") or usage.get("prompt_cache_hit_tokens") or 0)
    out_details = usage.get("completion_tokens_details") or {}
    return Usage(
        input_tokens=int(usage.get("prompt_tokens") or 0) - cached,
        cache_read_input_tokens=cached,
        output_tokens=int(usage.get("completion_tokens") or 0),
        thinking_tokens=int(out_details.get("reasoning_tokens") or 0),
    )
