"""The Messages API wire format as the fake server speaks it: message JSON, SSE events,
error bodies, and the few request checks the real API makes that catch our own bugs."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from nb_tools.model import Usage
from nb_tools.testing._script import Reply

JSON = dict[str, Any]

ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    402: "billing_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    504: "timeout_error",
    529: "overloaded_error",
}


def signature_for(thinking: str) -> str:
    """The fake server's signature of a thinking text (the check of every request body
    compares what comes back with it)."""
    import base64
    import hashlib

    return base64.b64encode(hashlib.sha256(thinking.encode()).digest()).decode()


ARGUMENT_CHUNK = 8  # characters of tool-argument text per input_json_delta
_WORDS = re.compile(r"\s*\S+\s*|\s+")
_TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


def error_body(status: int, message: str) -> JSON:
    return {
        "type": "error",
        "error": {"type": ERROR_TYPES.get(status, "api_error"), "message": message},
    }


def usage_for(
    reply: Reply,
    body: Mapping[str, Any],
    prompt_keys: Sequence[str] = ("system", "messages", "tools"),
) -> Usage:
    """``reply.usage``, else rough counts: a token per four characters of the reply and
    of the request's ``prompt_keys`` (the Messages API's by default)."""
    if reply.usage is not None:
        return reply.usage
    prompt = json.dumps([_loaded(body, key) for key in prompt_keys])
    produced = len(reply.text) + sum(len(c.argument_text) for c in reply.calls)
    return Usage(input_tokens=max(1, len(prompt) // 4), output_tokens=max(1, produced // 4))


def _loaded(body: Mapping[str, Any], key: str) -> Any:
    """A part of the prompt as the model reads it: deferred tools (``defer_loading``) are
    not in it until tool search loads them."""
    value = body.get(key)
    if key == "tools" and isinstance(value, list):
        return [t for t in value if not (isinstance(t, Mapping) and t.get("defer_loading"))]
    return value


def usage_json(usage: Usage) -> JSON:
    out: JSON = {
        "input_tokens": usage.input_tokens,
        "output_tokens": usage.output_tokens,
        "cache_creation_input_tokens": usage.cache_creation_input_tokens,
        "cache_read_input_tokens": usage.cache_read_input_tokens,
    }
    if usage.cache_creation_input_tokens:
        hour = usage.cache_creation_1h_input_tokens
        out["cache_creation"] = {
            "ephemeral_5m_input_tokens": usage.cache_creation_input_tokens - hour,
            "ephemeral_1h_input_tokens": hour,
        }
    return out


def content_json(reply: Reply, tool_ids: Sequence[str]) -> list[JSON]:
    blocks: list[JSON] = []
    if reply.thinking is not None:
        blocks.append(
            {
                "type": "thinking",
                "thinking": reply.thinking,
                "signature": signature_for(reply.thinking),
            }
        )
    if reply.redacted_thinking is not None:
        blocks.append({"type": "redacted_thinking", "data": reply.redacted_thinking})
    blocks.extend(dict(b) for b in reply.blocks)
    if reply.text:
        blocks.append({"type": "text", "text": reply.text})
    for call, tool_id in zip(reply.calls, tool_ids, strict=True):
        try:
            value = json.loads(call.argument_text)
        except ValueError:
            value = {}
        blocks.append({"type": "tool_use", "id": tool_id, "name": call.name, "input": value})
    return blocks


def message_json(
    reply: Reply, *, msg_id: str, model: str, tool_ids: Sequence[str], usage: Usage
) -> JSON:
    """The non-streaming response body."""
    message: JSON = {
        "id": msg_id,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content_json(reply, tool_ids),
        "stop_reason": reply.effective_stop_reason,
        "stop_sequence": None,
        "usage": usage_json(usage),
    }
    if reply.stop_details:
        message["stop_details"] = dict(reply.stop_details)
    if reply.container is not None:
        message["container"] = dict(reply.container)
    return message


def stream_events(
    reply: Reply, *, msg_id: str, model: str, tool_ids: Sequence[str], usage: Usage
) -> list[tuple[str, JSON]]:
    """The SSE events of a streamed reply, in order: text by words, tool arguments in
    several raw chunks (exactly the scripted text, duplicate keys and all)."""
    start_usage = usage_json(usage) | {"output_tokens": 1}
    message: JSON = {
        "id": msg_id,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": start_usage,
    }
    events: list[tuple[str, JSON]] = [
        ("message_start", {"type": "message_start", "message": message}),
        ("ping", {"type": "ping"}),
    ]
    index = 0
    if reply.thinking is not None:
        events.append(_block_start(index, {"type": "thinking", "thinking": "", "signature": ""}))
        for word in _WORDS.findall(reply.thinking):
            events.append(_block_delta(index, {"type": "thinking_delta", "thinking": word}))
        signature = {"type": "signature_delta", "signature": signature_for(reply.thinking)}
        events.append(_block_delta(index, signature))
        events.append(_block_stop(index))
        index += 1
    if reply.redacted_thinking is not None:
        block = {"type": "redacted_thinking", "data": reply.redacted_thinking}
        events += [_block_start(index, block), _block_stop(index)]
        index += 1
    for block in reply.blocks:
        block = dict(block)
        if block.get("type") == "server_tool_use":
            arguments = json.dumps(block.pop("input", {}))
            events.append(_block_start(index, {**block, "input": {}}))
            events.append(
                _block_delta(index, {"type": "input_json_delta", "partial_json": arguments})
            )
        else:
            events.append(_block_start(index, block))
        events.append(_block_stop(index))
        index += 1
    if reply.text:
        events.append(_block_start(index, {"type": "text", "text": ""}))
        for word in _WORDS.findall(reply.text):
            events.append(_block_delta(index, {"type": "text_delta", "text": word}))
        events.append(_block_stop(index))
        index += 1
    for n, (call, tool_id) in enumerate(zip(reply.calls, tool_ids, strict=True)):
        block = {"type": "tool_use", "id": tool_id, "name": call.name, "input": {}}
        events.append(_block_start(index, block))
        text = call.argument_text
        if reply.cut_last_call and n == len(reply.calls) - 1:
            text = text[: len(text) // 2]
        # The real API opens with an empty delta; then the raw text in pieces.
        pieces = [""] + [text[i : i + ARGUMENT_CHUNK] for i in range(0, len(text), ARGUMENT_CHUNK)]
        for piece in pieces:
            events.append(_block_delta(index, {"type": "input_json_delta", "partial_json": piece}))
        events.append(_block_stop(index))
        index += 1
    delta: JSON = {"stop_reason": reply.effective_stop_reason, "stop_sequence": None}
    if reply.stop_details is not None:
        delta["stop_details"] = dict(reply.stop_details)
    if reply.container is not None:
        delta["container"] = dict(reply.container)
    events.append(
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": delta,
                "usage": {"output_tokens": usage.output_tokens},
            },
        )
    )
    events.append(("message_stop", {"type": "message_stop"}))
    return events


def encode_event(name: str, data: Mapping[str, Any]) -> bytes:
    return f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()


def _block_start(index: int, block: JSON) -> tuple[str, JSON]:
    return "content_block_start", {
        "type": "content_block_start",
        "index": index,
        "content_block": block,
    }


def _block_delta(index: int, delta: JSON) -> tuple[str, JSON]:
    return "content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}


def _block_stop(index: int) -> tuple[str, JSON]:
    return "content_block_stop", {"type": "content_block_stop", "index": index}


def recorded_thinking(body: bytes) -> set[tuple[str, str]]:
    """The (thinking, signature) pairs of the thinking blocks in a recorded stream."""
    from nb_tools.model._sse_parse import SSEDecoder

    decoder = SSEDecoder()
    blocks: dict[int, list[str]] = {}
    for name, data in [*decoder.feed(body), *decoder.finish()]:
        if name not in ("content_block_start", "content_block_delta"):
            continue
        event = json.loads(data)
        index = event["index"]
        block = event.get("content_block") or {}
        delta = event.get("delta") or {}
        if block.get("type") == "thinking":
            blocks[index] = [block.get("thinking", ""), block.get("signature", "")]
        elif index in blocks and delta.get("type") == "thinking_delta":
            blocks[index][0] += delta["thinking"]
        elif index in blocks and delta.get("type") == "signature_delta":
            blocks[index][1] = delta["signature"]
    return {(t, s) for t, s in blocks.values()}


def check_body(
    body: object, *, count: bool = False, signed: set[tuple[str, str]] | None = None
) -> str | None:
    """The first problem the real API would reject this request body for, or None
    (``count``: a token-counting request, which takes no max_tokens; ``signed``: thinking
    blocks from recorded streams, signed by the real API)."""
    if not isinstance(body, dict):
        return "the request body must be a JSON object"
    if not isinstance(body.get("model"), str) or not body["model"]:
        return "model: Field required"
    if not count and (not isinstance(body.get("max_tokens"), int) or body["max_tokens"] < 1):
        return "max_tokens: Field required (a positive integer)"
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return "messages: at least one message is required"
    for tool in body.get("tools") or ():
        if not _TOOL_NAME.match(str(tool.get("name", ""))):
            return f"tools: name {tool.get('name')!r} must match ^[a-zA-Z0-9_-]{{1,64}}$"
    breakpoints = json.dumps(body).count('"cache_control"')
    if breakpoints > 4:
        return f"A maximum of 4 blocks with cache_control may be provided. Found {breakpoints}."
    return _check_messages(messages, signed or set())


def _check_messages(messages: list[Any], signed: set[tuple[str, str]]) -> str | None:
    for i, message in enumerate(messages):
        if message.get("role") not in ("user", "assistant"):
            return f"messages.{i}.role: must be 'user' or 'assistant'"
        content = message.get("content")
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        if not content and i != len(messages) - 1:
            return f"messages.{i}: all messages must have non-empty content"
        for j, block in enumerate(content or ()):
            if block.get("type") == "text" and not block.get("text"):
                return f"messages.{i}.content.{j}.text: text content blocks must be non-empty"
            if block.get("type") == "text" and not str(block["text"]).strip():
                return (
                    f"messages.{i}.content.{j}.text: text content blocks must contain "
                    "non-whitespace text"
                )
            if block.get("type") == "thinking" and not _signed(block, signed):
                return (
                    f"messages.{i}.content.{j}: Invalid `signature` in `thinking` block (the "
                    "thinking text or its signature was changed)"
                )
        if message["role"] == "assistant" and i + 1 < len(messages):
            problem = _check_answered(i, content or [], messages[i + 1])
            if problem:
                return problem
    return None


def _signed(block: Mapping[str, Any], signed: set[tuple[str, str]]) -> bool:
    thinking, signature = str(block.get("thinking", "")), block.get("signature")
    return signature == signature_for(thinking) or (thinking, signature) in signed


def _check_answered(i: int, content: list[Any], following: Mapping[str, Any]) -> str | None:
    used = [b["id"] for b in content if b.get("type") == "tool_use"]
    if not used:
        return None
    answer = following.get("content")
    answered = {
        b.get("tool_use_id")
        for b in (answer if isinstance(answer, list) else ())
        if b.get("type") == "tool_result"
    }
    missing = [u for u in used if u not in answered]
    if missing:
        return (
            f"messages.{i + 1}: `tool_use` ids were found without `tool_result` blocks "
            f"immediately after: {', '.join(missing)}. Each `tool_use` block must have a "
            "corresponding `tool_result` block in the next message."
        )
    return None
