"""Our messages and tool specs as OpenAI request bodies: Chat Completions (every
OpenAI-compatible server) and the Responses API.

Blocks that only another provider understands (Claude's thinking, server tools,
compaction) are left out of the request: they stay in the conversation, and go back to the
provider they came from. A Responses reasoning item is kept as an :class:`OtherBlock` of
type :data:`REASONING` and sent back to the Responses API exactly as received.

What a Chat Completions server sent beyond the format (its reasoning, a call's
``extra_content``: an :class:`OtherBlock` of type ``openai.chat.extra``) goes back on the
same assistant message and the same calls, field for field.

A freeform tool (``ToolSpec.grammar``) is a custom tool with that grammar on the Responses
API; on Chat Completions it is a function with one string parameter, ``input``. Either way
its call reaches the tool as ``{"input": "<the text>"}``.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from nb_tools.model._openai_chat import CHAT_EXTRA
from nb_tools.model._provider import ModelRequest
from nb_tools.model._types import (
    ImageBlock,
    Message,
    OtherBlock,
    Part,
    TextBlock,
    ToolResult,
    ToolResultBlock,
    ToolSpec,
    ToolUseBlock,
)

__all__ = [
    "FREEFORM_SCHEMA",
    "OUTPUT_SCHEMA",
    "REASONING",
    "chat_body",
    "freeform_arguments",
    "responses_body",
]

REASONING = "openai.reasoning"
"""The ``OtherBlock.type`` of a Responses API reasoning item."""

FREEFORM_SCHEMA: Mapping[str, Any] = {
    "type": "object",
    "properties": {"input": {"type": "string", "description": "The tool's input text."}},
    "required": ["input"],
    "additionalProperties": False,
}
"""The parameters of a freeform tool where the provider has no freeform tools."""

_NO_IMAGES = "[{n} image(s) left out: this server does not take images in tool results]"


def freeform_arguments(text: str) -> str:
    """A freeform call's text as the arguments our tools receive."""
    return json.dumps({"input": text}, ensure_ascii=False)


def _data_url(part: Part) -> str:
    return f"data:{part.media_type};base64,{base64.b64encode(part.data).decode('ascii')}"


def _images(parts: Sequence[Part]) -> list[Part]:
    return [p for p in parts if p.kind == "image"]


# ---- Chat Completions --------------------------------------------------------------------


def chat_tool(spec: ToolSpec) -> dict[str, Any]:
    function: dict[str, Any] = {"name": spec.name, "description": spec.description}
    if spec.grammar is not None:
        grammar_note = f" Its input follows this {spec.grammar.syntax} grammar:\n" + (
            spec.grammar.definition
        )
        function["description"] = spec.description + (
            grammar_note if spec.grammar.definition else ""
        )
        function["parameters"] = dict(FREEFORM_SCHEMA)
    else:
        function["parameters"] = dict(spec.input_schema)
        if spec.strict:
            function["strict"] = True
    return {"type": "function", "function": function}


def chat_body(
    request: ModelRequest,
    model: str,
    *,
    images_in_tool_results: bool,
    max_tokens_field: str = "max_tokens",
    stream_usage: bool = True,
) -> dict[str, Any]:
    """The ``POST /chat/completions`` body for ``request`` (streamed)."""
    messages: list[dict[str, Any]] = []
    if request.system:
        messages.append({"role": "system", "content": request.system})
    for message in request.messages:
        messages.extend(_chat_messages(message, images_in_tool_results))
    body: dict[str, Any] = {"model": model, "messages": messages, "stream": True}
    if request.max_tokens is not None:
        body[max_tokens_field] = request.max_tokens
    if stream_usage:
        body["stream_options"] = {"include_usage": True}
    if request.tools:
        body["tools"] = [chat_tool(spec) for spec in request.tools]
    for key in ("temperature", "top_p", "tool_choice"):
        value = request.options.get(key)
        if value is not None:
            body[key] = _chat_tool_choice(value) if key == "tool_choice" else value
    if request.options.get("stop_sequences"):
        body["stop"] = list(request.options["stop_sequences"])
    schema = request.options.get(OUTPUT_SCHEMA)
    if schema is not None:
        body["response_format"] = {"type": "json_schema", "json_schema": _json_schema(schema)}
    return body


OUTPUT_SCHEMA = "output_schema"
"""``ModelRequest.options[OUTPUT_SCHEMA]``: ``{"name": ..., "schema": {...}}``, a JSON Schema
the reply's text must follow, for a provider whose ``features.structured_outputs`` is on
(Chat Completions: ``response_format``; Responses: ``text.format``)."""


def _json_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "name": str(schema.get("name") or "output"),
        "schema": dict(schema["schema"]),
        "strict": bool(schema.get("strict", True)),
    }


def _chat_tool_choice(choice: Any) -> Any:
    """Claude's ``tool_choice`` spelled for Chat Completions."""
    if not isinstance(choice, Mapping):
        return choice
    kind = choice.get("type")
    if kind == "tool":
        return {"type": "function", "function": {"name": choice.get("name")}}
    return {"any": "required", "auto": "auto", "none": "none"}.get(str(kind), "auto")


def _chat_messages(message: Message, images_in_tool_results: bool) -> Iterator[dict[str, Any]]:
    if message.role == "assistant":
        extra: Mapping[str, Any] = next(
            (b.data for b in message.content if isinstance(b, OtherBlock) and b.type == CHAT_EXTRA),
            {},
        )
        call_extra = extra.get("tool_calls") or {}
        text = "".join(b.text for b in message.content if isinstance(b, TextBlock))
        calls = [
            {
                **call_extra.get(b.id, {}),
                "id": b.id,
                "type": "function",
                "function": {"name": b.name, "arguments": b.arguments or "{}"},
            }
            for b in message.content
            if isinstance(b, ToolUseBlock)
        ]
        out: dict[str, Any] = {"role": "assistant", "content": text or None}
        if calls:
            out["tool_calls"] = calls
        for key, value in (extra.get("message") or {}).items():
            out.setdefault(key, value)
        if text or calls:
            yield out
        return
    # A user message: tool results first (each its own "tool" message, right after the
    # assistant's calls), then what the user said, then the results' images.
    parts: list[dict[str, Any]] = []
    result_images: list[Part] = []
    for block in message.content:
        if isinstance(block, ToolResultBlock):
            images = _images(block.result.parts)
            content = block.result.content
            if images and not images_in_tool_results:
                content = f"{content}\n{_NO_IMAGES.format(n=len(images))}"
            elif images:
                content = f"{content}\n[{len(images)} image(s) in the next message]"
                result_images.extend(images)
            yield {"role": "tool", "tool_call_id": block.result.tool_use_id, "content": content}
        elif isinstance(block, TextBlock) and block.text.strip():
            parts.append({"type": "text", "text": block.text})
        elif isinstance(block, ImageBlock):
            parts.append({"type": "image_url", "image_url": {"url": _data_url(block.part)}})
    parts.extend({"type": "image_url", "image_url": {"url": _data_url(p)}} for p in result_images)
    if parts:
        only_text = all(p["type"] == "text" for p in parts)
        content: Any = "".join(p["text"] for p in parts) if only_text else parts
        yield {"role": "user", "content": content}


# ---- Responses ---------------------------------------------------------------------------


def responses_tool(spec: ToolSpec) -> dict[str, Any]:
    if spec.grammar is not None:
        fmt: dict[str, Any] = (
            {
                "type": "grammar",
                "syntax": spec.grammar.syntax,
                "definition": spec.grammar.definition,
            }
            if spec.grammar.definition
            else {"type": "text"}
        )
        return {
            "type": "custom",
            "name": spec.name,
            "description": spec.description,
            "format": fmt,
        }
    return {
        "type": "function",
        "name": spec.name,
        "description": spec.description,
        "parameters": dict(spec.input_schema),
        # The Responses API defaults to strict; our non-strict schemas would be refused.
        "strict": bool(spec.strict),
    }


def responses_body(request: ModelRequest, model: str) -> dict[str, Any]:
    """The ``POST /responses`` body for ``request`` (streamed, stateless: reasoning comes
    back encrypted and is sent again with the next turn)."""
    freeform = {spec.name for spec in request.tools if spec.grammar is not None}
    freeform_ids = {
        block.id
        for message in request.messages
        for block in message.content
        if isinstance(block, ToolUseBlock) and block.name in freeform
    }
    items: list[dict[str, Any]] = []
    for message in request.messages:
        items.extend(_response_items(message, freeform_ids))
    body: dict[str, Any] = {
        "model": model,
        "input": items,
        "stream": True,
        "store": False,
        "include": ["reasoning.encrypted_content"],
    }
    if request.max_tokens is not None:
        body["max_output_tokens"] = request.max_tokens
    schema = request.options.get(OUTPUT_SCHEMA)
    if schema is not None:
        body["text"] = {"format": {"type": "json_schema", **_json_schema(schema)}}
    if request.system:
        body["instructions"] = request.system
    if request.tools:
        body["tools"] = [responses_tool(spec) for spec in request.tools]
    for key in ("temperature", "top_p"):
        if request.options.get(key) is not None:
            body[key] = request.options[key]
    return body


def _response_items(message: Message, freeform_ids: set[str]) -> Iterator[dict[str, Any]]:
    if message.role == "assistant":
        for block in message.content:
            if isinstance(block, TextBlock) and block.text.strip():
                yield {"role": "assistant", "content": block.text}
            elif isinstance(block, ToolUseBlock):
                if block.id in freeform_ids:
                    yield {
                        "type": "custom_tool_call",
                        "call_id": block.id,
                        "name": block.name,
                        "input": freeform_input(block.arguments),
                    }
                else:
                    yield {
                        "type": "function_call",
                        "call_id": block.id,
                        "name": block.name,
                        "arguments": block.arguments or "{}",
                    }
            elif isinstance(block, OtherBlock) and block.type == REASONING:
                yield dict(block.data)
        return
    content: list[dict[str, Any]] = []
    for block in message.content:
        if isinstance(block, ToolResultBlock):
            yield _tool_output(block.result, freeform_ids)
        elif isinstance(block, TextBlock) and block.text.strip():
            content.append({"type": "input_text", "text": block.text})
        elif isinstance(block, ImageBlock):
            content.append({"type": "input_image", "image_url": _data_url(block.part)})
    if content:
        yield {"role": "user", "content": content}


def _tool_output(result: ToolResult, freeform_ids: set[str]) -> dict[str, Any]:
    images = _images(result.parts)
    output: Any = result.content
    if images:
        output = [{"type": "input_text", "text": result.content}] + [
            {"type": "input_image", "image_url": _data_url(p)} for p in images
        ]
    call_id = result.tool_use_id
    kind = "custom_tool_call_output" if call_id in freeform_ids else "function_call_output"
    return {"type": kind, "call_id": call_id, "output": output}


def freeform_input(arguments: str) -> str:
    """A freeform (custom) tool's text from the arguments kept for it: ``{"input": ...}``
    gives its string; other text is the input itself."""
    try:
        value = json.loads(arguments)
    except ValueError:
        return arguments
    if isinstance(value, dict) and isinstance(value.get("input"), str):
        return value["input"]
    return arguments
