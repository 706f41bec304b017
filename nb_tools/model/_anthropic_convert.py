"""Our messages to the Messages API's JSON and back (no SDK import: plain dicts).

``request_params`` builds the body :class:`~nb_tools.model.anthropic.AnthropicProvider`
sends and :class:`RequestEncoder` encodes it as JSON, reusing what is unchanged since the
previous turn; ``request_from_api`` reads such a body back into a :class:`ModelRequest`
(the fake server uses it so scripted responders can inspect tool results).
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal

from nb_tools.model._provider import ModelRequest
from nb_tools.model._types import (
    Block,
    CompactionBlock,
    ImageBlock,
    Message,
    OtherBlock,
    Part,
    RedactedThinkingBlock,
    ServerToolResultBlock,
    ServerToolUseBlock,
    TextBlock,
    ThinkingBlock,
    ToolResult,
    ToolResultBlock,
    ToolSpec,
    ToolUseBlock,
)

JSON = dict[str, Any]

EPHEMERAL: Mapping[str, str] = {"type": "ephemeral"}
MAX_CACHE_BREAKPOINTS = 4
IMAGE_TYPES = frozenset({"image/jpeg", "image/png", "image/gif", "image/webp"})


def cache_mark(ttl: str | None) -> JSON:
    """The ``cache_control`` of a breakpoint: ephemeral, with ``ttl`` ("5m", "1h") when
    one was asked for (without: the API's default, five minutes)."""
    return {**EPHEMERAL, "ttl": ttl} if ttl else dict(EPHEMERAL)


def request_params(request: ModelRequest, *, model: str, cache: bool) -> JSON:
    """The keyword arguments for ``messages.create`` (without ``stream``)."""
    params: JSON = {
        "model": model,
        "max_tokens": request.max_tokens,
        "messages": [message_to_api(m) for m in request.messages],
    }
    if request.system:
        params["system"] = [{"type": "text", "text": request.system}] if cache else request.system
    if request.tools or request.server_tools:
        params["tools"] = [tool_to_api(t) for t in request.tools] + [
            dict(t) for t in request.server_tools
        ]
    if request.thinking:
        params["thinking"] = dict(request.thinking)
    params.update(request.options)
    if cache:
        add_cache_breakpoints(params, request.cache_ttl)
    return params


# Blocks that may not carry a cache_control mark.
_NO_CACHE_MARK = frozenset({"thinking", "redacted_thinking"})


def _jsonable(value: object) -> Any:
    """What the SDK's encoder also accepts: any mapping as an object, any other iterable
    (a tuple, a set, a generator) as an array."""
    if isinstance(value, Mapping):
        return dict(value)
    if isinstance(value, Iterable) and not isinstance(value, str | bytes | bytearray):
        return list(value)
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


# The SDK's own encoding (anthropic._utils._json): compact, UTF-8, no NaN or Infinity.
_ENCODER = json.JSONEncoder(
    ensure_ascii=False, separators=(",", ":"), allow_nan=False, default=_jsonable
)
dumps = _ENCODER.encode


KEPT_CONVERSATIONS = 512
"""How many conversations' message JSON a :class:`RequestEncoder` keeps (at least as many as
a map has rows in flight); the least recently sent one goes first."""


class RequestEncoder:
    """Request bodies for ``POST /v1/messages`` as JSON bytes: :func:`request_params` plus
    ``"stream": true``, encoded as the SDK encodes a body.

    A conversation grows by a message or two per turn, so the JSON text of each message is
    kept (by identity: messages are immutable) and reused for as long as the message is in
    the conversation, for each of the :data:`KEPT_CONVERSATIONS` conversations sent most
    recently (``nb_tools.map``'s rows share a provider and their requests interleave);
    likewise the tool list (a registry hands out the same ``ToolSpec``
    objects until it changes; they are read-only) and the system prompt. Only the newest
    message, which carries the cache breakpoint, and new messages are encoded again.
    """

    def __init__(self, model: str) -> None:
        self._head = '{"model":' + dumps(model) + ',"stream":true,"max_tokens":'
        # id(first message) -> (that message, {id(message): (message, its JSON)}): the kept
        # messages are held, so an id is not reused while it is a key here.
        self._conversations: dict[int, tuple[Message, dict[int, tuple[Message, str]]]] = {}
        self._tools: tuple[tuple[ToolSpec, ...], JSON | None, str] | None = None
        self._system: tuple[str, JSON | None, str] | None = None

    def encode(self, request: ModelRequest, *, cache: bool) -> bytes:
        parts = [self._head, str(int(request.max_tokens))]
        mark = cache_mark(request.cache_ttl) if cache else None
        if request.system:
            parts += [',"system":', self._system_json(request.system, mark)]
        if request.tools or request.server_tools:
            tools = self._tools_json(request.tools, None if request.server_tools else mark)
            if request.server_tools:
                server = [dict(t) for t in request.server_tools]
                if mark is not None:
                    server[-1]["cache_control"] = dict(mark)
                extra = dumps(server)[1:-1]
                tools = tools[:-1] + ("," if request.tools else "") + extra + "]"
            parts += [',"tools":', tools]
        if request.thinking:
            parts += [',"thinking":', dumps(dict(request.thinking))]
        for key, value in request.options.items():
            parts += [",", dumps(key), ":", dumps(value)]
        parts.append(',"messages":[')
        parts.append(",".join(self._messages_json(request.messages, mark)))
        parts.append("]}")
        return "".join(parts).encode()

    def _system_json(self, system: str, mark: JSON | None) -> str:
        kept = self._system
        if kept is None or kept[0] != system or kept[1] != mark:
            if mark is not None:
                text = dumps([{"type": "text", "text": system, "cache_control": dict(mark)}])
            else:
                text = dumps(system)
            kept = self._system = (system, mark, text)
        return kept[2]

    def _tools_json(self, tools: Sequence[ToolSpec], mark: JSON | None) -> str:
        if not tools:
            return "[]"
        kept = self._tools
        if (
            kept is None
            or kept[1] != mark
            or len(kept[0]) != len(tools)
            or any(a is not b for a, b in zip(kept[0], tools, strict=True))
        ):
            api = [tool_to_api(t) for t in tools]
            if mark is not None:
                api[-1]["cache_control"] = dict(mark)
            kept = self._tools = (tuple(tools), mark, dumps(api))
        return kept[2]

    def _messages_json(self, messages: Sequence[Message], mark: JSON | None) -> list[str]:
        if not messages:
            return []
        first = messages[0]  # a conversation is known by its first message
        kept = self._conversations.pop(id(first), None)
        old = kept[1] if kept is not None and kept[0] is first else {}
        new: dict[int, tuple[Message, str]] = {}
        out: list[str] = []
        last = len(messages) - 1
        for i, message in enumerate(messages):
            if i == last and mark is not None:
                api = message_to_api(message)
                _mark_last(api["content"], mark)
                out.append(dumps(api))
                continue
            hit = old.get(id(message))
            if hit is None or hit[0] is not message:
                hit = (message, dumps(message_to_api(message)))
            new[id(message)] = hit
            out.append(hit[1])
        conversations = self._conversations
        conversations[id(first)] = (first, new)  # the most recently used last
        if len(conversations) > KEPT_CONVERSATIONS:
            del conversations[next(iter(conversations))]
        return out


def add_cache_breakpoints(params: JSON, ttl: str | None = None) -> None:
    """Mark the last tool, the system prompt and the last block of the last message, so
    the whole prefix is cached turn after turn (the API allows four breakpoints)."""
    targets: list[JSON] = []
    if params.get("tools"):
        targets.append(params["tools"][-1])
    system = params.get("system")
    if isinstance(system, list) and system:
        targets.append(system[-1])
    messages = params.get("messages") or []
    if messages and isinstance(messages[-1]["content"], list):
        markable = [b for b in messages[-1]["content"] if b.get("type") not in _NO_CACHE_MARK]
        if markable:
            targets.append(markable[-1])
    for target in targets[:MAX_CACHE_BREAKPOINTS]:
        target["cache_control"] = cache_mark(ttl)


def _mark_last(content: list[JSON], mark: JSON) -> None:
    """Put the cache breakpoint on the last block that may carry one."""
    for block in reversed(content):
        if block.get("type") not in _NO_CACHE_MARK:
            block["cache_control"] = dict(mark)
            return


def tool_to_api(spec: ToolSpec) -> JSON:
    if spec.anthropic_type:  # Claude's own definition: by type and name, no schema
        return {"type": spec.anthropic_type, "name": spec.name}
    out: JSON = {
        "name": spec.name,
        "description": spec.description,
        "input_schema": dict(spec.input_schema),
    }
    if spec.strict:
        out["strict"] = True
    if spec.eager_input_streaming:
        out["eager_input_streaming"] = True
    if spec.defer_loading:
        out["defer_loading"] = True
    if spec.allowed_callers:
        out["allowed_callers"] = list(spec.allowed_callers)
    return out


def message_to_api(message: Message) -> JSON:
    content: list[JSON] = []
    for block in message.content:
        api = block_to_api(block)
        if api is not None:
            content.append(api)
    return {"role": message.role, "content": content}


def block_to_api(block: Block) -> JSON | None:
    """One content block; None for a text block that is empty or only whitespace (the API
    rejects those: "text content blocks must contain non-whitespace text")."""
    if isinstance(block, TextBlock):
        if not block.text or block.text.isspace():
            return None
        if block.citations:
            return {"type": "text", "text": block.text, "citations": list(block.citations)}
        return {"type": "text", "text": block.text}
    if isinstance(block, ThinkingBlock):
        return {"type": "thinking", "thinking": block.thinking, "signature": block.signature}
    if isinstance(block, RedactedThinkingBlock):
        return {"type": "redacted_thinking", "data": block.data}
    if isinstance(block, ToolUseBlock | ServerToolUseBlock):
        use: JSON = {
            "type": "tool_use" if isinstance(block, ToolUseBlock) else "server_tool_use",
            "id": block.id,
            "name": block.name,
            "input": arguments_object(block.arguments),
        }
        if isinstance(block, ToolUseBlock) and block.caller is not None:
            use["caller"] = dict(block.caller)
        return use
    if isinstance(block, ServerToolResultBlock):
        return {"type": block.type, "tool_use_id": block.tool_use_id, "content": block.content}
    if isinstance(block, CompactionBlock):
        out: JSON = {"type": "compaction", "content": block.content}
        if block.encrypted_content is not None:
            out["encrypted_content"] = block.encrypted_content
        return out
    if isinstance(block, OtherBlock):
        # Another provider's block ("openai.reasoning": a conversation begun on OpenAI's
        # Responses API) means nothing to the Messages API and would be refused: left out.
        return None if "." in block.type else dict(block.data)
    if isinstance(block, ToolResultBlock):
        return tool_result_to_api(block.result)
    if isinstance(block, ImageBlock):
        return part_to_api(block.part)
    raise TypeError(f"cannot send a {type(block).__name__} to the Anthropic API")


def arguments_object(raw: str) -> JSON:
    """The ``input`` object for a tool-use block from the raw argument text the model
    produced. The API needs an object: duplicate keys resolve to the last one, and text
    that is not a JSON object (the call already failed validation) becomes ``{}``."""
    try:
        value = json.loads(raw or "{}", parse_constant=_reject_constant)
    except (ValueError, RecursionError):
        return {}
    return value if isinstance(value, dict) else {}


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def tool_result_to_api(result: ToolResult) -> JSON:
    content: list[JSON] = []
    if result.content and not result.content.isspace():
        content.append({"type": "text", "text": result.content})
    content.extend(part_to_api(p) for p in result.parts)
    out: JSON = {"type": "tool_result", "tool_use_id": result.tool_use_id}
    if content:
        out["content"] = content
    if result.is_error:
        out["is_error"] = True
    return out


def part_to_api(part: Part) -> JSON:
    """An image, a PDF or a text document; anything else becomes a note saying so."""
    media_type = part.media_type.split(";")[0].strip().lower()
    if part.file_id and (media_type in IMAGE_TYPES or part.kind == "document"):
        source: JSON = {"type": "file", "file_id": part.file_id}
        if part.kind == "image":
            return {"type": "image", "source": source}
        return _titled({"type": "document", "source": source}, part)
    if part.kind == "image" and media_type in IMAGE_TYPES:
        return {"type": "image", "source": _base64_source(media_type, part.data)}
    if part.kind == "document" and media_type == "application/pdf":
        return _titled({"type": "document", "source": _base64_source(media_type, part.data)}, part)
    if part.kind == "document" and _is_text(media_type):
        text = part.data.decode("utf-8", errors="replace")
        source = {"type": "text", "media_type": "text/plain", "data": text}
        return _titled({"type": "document", "source": source}, part)
    name = f" {part.title!r}" if part.title else ""
    return {
        "type": "text",
        "text": f"[{part.kind}{name} ({part.media_type}, {len(part.data)} bytes) not shown: "
        "the Anthropic API takes JPEG, PNG, GIF and WebP images, and PDF or text documents]",
    }


def _is_text(media_type: str) -> bool:
    return media_type.startswith("text/") or media_type in (
        "application/json",
        "application/xml",
        "application/x-yaml",
    )


def _base64_source(media_type: str, data: bytes) -> JSON:
    return {"type": "base64", "media_type": media_type, "data": base64.b64encode(data).decode()}


def _titled(doc: JSON, part: Part) -> JSON:
    if part.title:
        doc["title"] = part.title
    if part.citations:
        doc["citations"] = {"enabled": True}
    return doc


# ---- back from the API's JSON ------------------------------------------------------------


def request_from_api(body: Mapping[str, Any]) -> ModelRequest:
    """A Messages API request body as a :class:`ModelRequest`."""
    tools = body.get("tools") or ()
    known = {"model", "system", "messages", "tools", "max_tokens", "stream", "thinking"}
    return ModelRequest(
        system=_system_text(body.get("system")),
        messages=tuple(message_from_api(m) for m in body.get("messages") or ()),
        tools=tuple(
            tool_from_api(t) for t in tools if "input_schema" in t or _is_anthropic_tool(t)
        ),
        max_tokens=int(body.get("max_tokens") or 0),
        thinking=body.get("thinking"),
        server_tools=tuple(
            t for t in tools if "input_schema" not in t and not _is_anthropic_tool(t)
        ),
        options={k: v for k, v in body.items() if k not in known},
        cache_ttl=_cache_ttl(body),
    )


def _cache_ttl(body: Mapping[str, Any]) -> str | None:
    """The ``ttl`` of the request's cache breakpoints (the first one that has one)."""
    found = re.search(r'"cache_control":\s*\{[^}]*"ttl":\s*"([^"]+)"', dumps(dict(body)))
    return found.group(1) if found else None


def _is_anthropic_tool(tool: Mapping[str, Any]) -> bool:
    return str(tool.get("type", "")).startswith(("text_editor_", "bash_2"))


def _system_text(system: object) -> str:
    if isinstance(system, str):
        return system
    if isinstance(system, Sequence):
        return "".join(b.get("text", "") for b in system if isinstance(b, Mapping))
    return ""


def tool_from_api(tool: Mapping[str, Any]) -> ToolSpec:
    if "input_schema" not in tool:
        return ToolSpec(
            name=tool["name"], description="", input_schema={}, anthropic_type=tool["type"]
        )
    return ToolSpec(
        name=tool["name"],
        description=tool.get("description", ""),
        input_schema=tool["input_schema"],
        strict=bool(tool.get("strict", False)),
        eager_input_streaming=bool(tool.get("eager_input_streaming", False)),
        defer_loading=bool(tool.get("defer_loading", False)),
        allowed_callers=tuple(tool.get("allowed_callers") or ()),
    )


def message_from_api(message: Mapping[str, Any]) -> Message:
    content = message.get("content", "")
    if isinstance(content, str):
        blocks: tuple[Block, ...] = (TextBlock(text=content),)
    else:
        blocks = tuple(b for b in (block_from_api(c) for c in content) if b is not None)
    return Message(role=message["role"], content=blocks)


def block_from_api(block: Mapping[str, Any]) -> Block | None:
    """One API content block (a kind we do not model becomes an :class:`OtherBlock`)."""
    kind = block.get("type")
    if kind == "text":
        return TextBlock(text=block.get("text", ""), citations=tuple(block.get("citations") or ()))
    if kind == "tool_use":
        caller = block.get("caller")
        return ToolUseBlock(
            id=block["id"],
            name=block["name"],
            arguments=json.dumps(block.get("input", {})),
            caller=dict(caller) if isinstance(caller, Mapping) else None,
        )
    if kind == "thinking":
        return ThinkingBlock(
            thinking=block.get("thinking", ""), signature=block.get("signature", "")
        )
    if kind == "redacted_thinking":
        return RedactedThinkingBlock(data=block.get("data", ""))
    if kind == "server_tool_use":
        return ServerToolUseBlock(
            id=block["id"], name=block["name"], arguments=json.dumps(block.get("input", {}))
        )
    if isinstance(kind, str) and kind.endswith("_tool_result") and "tool_use_id" in block:
        return ServerToolResultBlock(
            type=kind, tool_use_id=block["tool_use_id"], content=block.get("content")
        )
    if kind == "compaction":
        return CompactionBlock(
            content=block.get("content"), encrypted_content=block.get("encrypted_content")
        )
    if kind == "tool_result":
        return ToolResultBlock(result=tool_result_from_api(block))
    if kind in ("image", "document"):
        part = part_from_api(block)
        if part:
            return ImageBlock(part=part)
    data = {k: v for k, v in block.items() if k != "cache_control"}
    return OtherBlock(type=str(kind), data=data)


def tool_result_from_api(block: Mapping[str, Any]) -> ToolResult:
    content = block.get("content", "")
    texts: list[str] = []
    parts: list[Part] = []
    if isinstance(content, str):
        texts.append(content)
    else:
        for item in content:
            if item.get("type") == "text":
                texts.append(item.get("text", ""))
            elif (part := part_from_api(item)) is not None:
                parts.append(part)
    return ToolResult(
        tool_use_id=block["tool_use_id"],
        content="\n".join(texts),
        parts=tuple(parts),
        is_error=bool(block.get("is_error", False)),
    )


def part_from_api(block: Mapping[str, Any]) -> Part | None:
    source = block.get("source") or {}
    kind: Literal["image", "document"] = "image" if block.get("type") == "image" else "document"
    file_id = ""
    if source.get("type") == "base64":
        data = base64.b64decode(source.get("data", ""))
    elif source.get("type") == "text":
        data = str(source.get("data", "")).encode()
    elif source.get("type") == "file":
        data, file_id = b"", str(source.get("file_id", ""))
    else:
        return None
    return Part(
        kind=kind,
        media_type=source.get("media_type", ""),
        data=data,
        title=block.get("title", "") or "",
        citations=bool((block.get("citations") or {}).get("enabled")),
        file_id=file_id,
    )
