"""What the fake OpenAI server sends and checks: a scripted :class:`Reply` as Chat
Completions chunks or Responses API events (streamed as SSE, or whole), request bodies
read back into our types, and the rules the real APIs enforce on a conversation."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from nb_tools.model import (
    Message,
    ModelRequest,
    TextBlock,
    ToolGrammar,
    ToolResult,
    ToolResultBlock,
    ToolSpec,
    ToolUseBlock,
    Usage,
)
from nb_tools.model._openai_convert import freeform_input
from nb_tools.testing._script import Reply
from nb_tools.testing._sse import usage_for as messages_usage_for

JSON = dict[str, Any]

_WORDS = re.compile(r"\S+\s*|\s+")
ARGUMENT_CHUNK = 7

_CHAT_FINISH = {
    "end_turn": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "refusal": "content_filter",
    "stop_sequence": "stop",
}


def openai_error(status: int, message: str) -> JSON:
    kind = {
        400: "invalid_request_error",
        401: "invalid_api_key",
        404: "not_found_error",
        429: "rate_limit_exceeded",
    }.get(status, "server_error")
    return {"error": {"message": message, "type": kind, "param": None, "code": None}}


def usage_for(reply: Reply, body: Mapping[str, Any]) -> Usage:
    """``reply.usage``, else rough counts of a Chat Completions or Responses request."""
    return messages_usage_for(reply, body, ("messages", "input", "tools"))


def _pieces(text: str) -> list[str]:
    return [text[i : i + ARGUMENT_CHUNK] for i in range(0, len(text), ARGUMENT_CHUNK)]


# ---- Chat Completions -------------------------------------------------------------------


def chat_chunks(
    reply: Reply,
    *,
    completion_id: str,
    model: str,
    tool_ids: Sequence[str],
    usage: Usage,
    include_usage: bool,
    reasoning_field: str = "",
) -> list[JSON]:
    """The ``chat.completion.chunk`` objects of a streamed reply, in order; with
    ``reasoning_field`` ("reasoning_content", "reasoning"), the reply's thinking streams
    first under that delta field, as vLLM, llama.cpp, DeepSeek and Ollama send it."""
    created = int(time.time())

    def chunk(delta: JSON, finish: str | None = None) -> JSON:
        return {
            "id": completion_id,
            "object": "chat.completion.chunk",
            "created": created,
            "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }

    chunks = [chunk({"role": "assistant", "content": ""})]
    if reasoning_field and reply.thinking:
        chunks.extend(chunk({reasoning_field: w}) for w in _WORDS.findall(reply.thinking))
    chunks.extend(chunk({"content": word}) for word in _WORDS.findall(reply.text))
    for index, (call, tool_id) in enumerate(zip(reply.calls, tool_ids, strict=True)):
        head = {"index": index, "id": tool_id, "type": "function"}
        head["function"] = {"name": call.name, "arguments": ""}
        chunks.append(chunk({"tool_calls": [head]}))
        chunks.extend(
            chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
            for piece in _pieces(call.argument_text)
        )
    chunks.append(chunk({}, _CHAT_FINISH.get(reply.effective_stop_reason, "stop")))
    if include_usage:
        chunks.append(
            {
                "id": completion_id,
                "object": "chat.completion.chunk",
                "created": created,
                "model": model,
                "choices": [],
                "usage": _chat_usage(usage),
            }
        )
    return chunks


def chat_completion(
    reply: Reply, *, completion_id: str, model: str, tool_ids: Sequence[str], usage: Usage
) -> JSON:
    """A whole (unstreamed) ``chat.completion``."""
    message: JSON = {"role": "assistant", "content": reply.text or None}
    if reply.calls:
        message["tool_calls"] = [
            {
                "id": tool_id,
                "type": "function",
                "function": {"name": call.name, "arguments": call.argument_text},
            }
            for call, tool_id in zip(reply.calls, tool_ids, strict=True)
        ]
    return {
        "id": completion_id,
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": _CHAT_FINISH.get(reply.effective_stop_reason, "stop"),
            }
        ],
        "usage": _chat_usage(usage),
    }


def _chat_usage(usage: Usage) -> JSON:
    prompt = usage.input_tokens + usage.cache_read_input_tokens
    return {
        "prompt_tokens": prompt,
        "completion_tokens": usage.output_tokens,
        "total_tokens": prompt + usage.output_tokens,
        "prompt_tokens_details": {"cached_tokens": usage.cache_read_input_tokens},
    }


def encode_chat(data: Mapping[str, Any] | None) -> bytes:
    return b"data: [DONE]\n\n" if data is None else f"data: {json.dumps(data)}\n\n".encode()


# ---- Responses ---------------------------------------------------------------------------


def response_events(
    reply: Reply,
    *,
    response_id: str,
    model: str,
    tool_ids: Sequence[str],
    usage: Usage,
    custom_tools: set[str],
    reasoning: str = "",
) -> list[JSON]:
    """The Responses API events of a streamed reply, in order (each carries its ``type``;
    the SSE event name is the same)."""
    events: list[JSON] = []
    output: list[JSON] = []
    base: JSON = {
        "id": response_id,
        "object": "response",
        "created_at": int(time.time()),
        "model": model,
        "status": "in_progress",
        "output": [],
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
    }

    def emit(kind: str, **fields: Any) -> None:
        events.append({"type": kind, "sequence_number": len(events), **fields})

    def added_then_deltas(item: JSON, delta_kind: str, pieces: Iterable[str], **at: Any) -> None:
        """Announce ``item`` at the next output index, then stream ``pieces`` into it."""
        index = len(output)
        emit("response.output_item.added", output_index=index, item=dict(item))
        for piece in pieces:
            emit(delta_kind, item_id=item["id"], output_index=index, **at, delta=piece)

    emit("response.created", response=dict(base))
    if reasoning:
        index = len(output)
        item: JSON = {
            "type": "reasoning",
            "id": f"rs_{response_id}_{index}",
            "summary": [],
            "encrypted_content": f"enc:{response_id}:{index}",
        }
        words = _WORDS.findall(reasoning)
        added_then_deltas(item, "response.reasoning_summary_text.delta", words, summary_index=0)
        item["summary"] = [{"type": "summary_text", "text": reasoning}]
        emit("response.output_item.done", output_index=index, item=item)
        output.append(item)
    refusal = reply.effective_stop_reason == "refusal"
    if reply.text:
        index = len(output)
        item_id = f"msg_{response_id}_{index}"
        kind = "refusal" if refusal else "output_text"
        part: JSON = {"type": kind, kind if refusal else "text": ""}
        if not refusal:
            part["annotations"] = []
        item = {
            "type": "message",
            "id": item_id,
            "role": "assistant",
            "status": "in_progress",
            "content": [],
        }
        emit("response.output_item.added", output_index=index, item=dict(item))
        emit(
            "response.content_part.added",
            item_id=item_id,
            output_index=index,
            content_index=0,
            part=dict(part),
        )
        delta_kind = "response.refusal.delta" if refusal else "response.output_text.delta"
        for word in _WORDS.findall(reply.text):
            emit(
                delta_kind,
                item_id=item_id,
                output_index=index,
                content_index=0,
                delta=word,
                logprobs=[],
            )
        part[kind if refusal else "text"] = reply.text
        emit(
            "response.content_part.done",
            item_id=item_id,
            output_index=index,
            content_index=0,
            part=part,
        )
        item = {**item, "status": "completed", "content": [part]}
        emit("response.output_item.done", output_index=index, item=item)
        output.append(item)
    for call, tool_id in zip(reply.calls, tool_ids, strict=True):
        index = len(output)
        item_id = f"fc_{response_id}_{index}"
        if call.name in custom_tools:
            text = freeform_input(call.argument_text)  # call(t, input=...) or raw=...
            item = {
                "type": "custom_tool_call",
                "id": item_id,
                "call_id": tool_id,
                "name": call.name,
                "input": "",
            }
            added_then_deltas(item, "response.custom_tool_call_input.delta", _pieces(text))
            item["input"] = text
        else:
            text = call.argument_text
            item = {
                "type": "function_call",
                "id": item_id,
                "call_id": tool_id,
                "name": call.name,
                "arguments": "",
                "status": "in_progress",
            }
            added_then_deltas(item, "response.function_call_arguments.delta", _pieces(text))
            emit(
                "response.function_call_arguments.done",
                item_id=item_id,
                output_index=index,
                arguments=text,
                name=call.name,
            )
            item = {**item, "arguments": text, "status": "completed"}
        emit("response.output_item.done", output_index=index, item=item)
        output.append(item)
    final = {**base, "output": output, "usage": _responses_usage(usage)}
    if reply.effective_stop_reason == "max_tokens":
        final |= {"status": "incomplete", "incomplete_details": {"reason": "max_output_tokens"}}
        emit("response.incomplete", response=final)
    else:
        final["status"] = "completed"
        emit("response.completed", response=final)
    return events


def _responses_usage(usage: Usage) -> JSON:
    prompt = usage.input_tokens + usage.cache_read_input_tokens
    return {
        "input_tokens": prompt,
        "input_tokens_details": {"cached_tokens": usage.cache_read_input_tokens},
        "output_tokens": usage.output_tokens,
        "output_tokens_details": {"reasoning_tokens": usage.thinking_tokens},
        "total_tokens": prompt + usage.output_tokens,
    }


def encode_response_event(data: Mapping[str, Any]) -> bytes:
    return f"event: {data['type']}\ndata: {json.dumps(data)}\n\n".encode()


# ---- requests read back, and checked -----------------------------------------------------


def request_from_chat(body: Mapping[str, Any]) -> ModelRequest:
    """A Chat Completions body as our :class:`ModelRequest` (for responders and checks)."""
    system: list[str] = []
    messages: list[Message] = []
    for m in body.get("messages", ()):
        role = m.get("role")
        if role in ("system", "developer"):
            system.append(_text_of(m.get("content")))
        elif role == "assistant":
            blocks: list[Any] = []
            if m.get("content"):
                blocks.append(TextBlock(text=_text_of(m["content"])))
            for tc in m.get("tool_calls") or ():
                fn = tc.get("function", {})
                blocks.append(
                    ToolUseBlock(
                        id=tc["id"], name=fn.get("name", ""), arguments=fn.get("arguments", "")
                    )
                )
            messages.append(Message(role="assistant", content=tuple(blocks)))
        elif role == "tool":
            result = ToolResult(
                tool_use_id=m.get("tool_call_id", ""), content=_text_of(m.get("content"))
            )
            _append_user(messages, ToolResultBlock(result=result))
        else:
            _append_user(messages, TextBlock(text=_text_of(m.get("content"))))
    tools = [
        ToolSpec(
            name=t["function"]["name"],
            description=t["function"].get("description", ""),
            input_schema=t["function"].get("parameters", {}),
            strict=bool(t["function"].get("strict", False)),
        )
        for t in body.get("tools", ())
        if t.get("type") == "function"
    ]
    return ModelRequest(
        system="\n".join(system),
        messages=messages,
        tools=tools,
        max_tokens=int(body.get("max_tokens") or body.get("max_completion_tokens") or 8192),
    )


def request_from_responses(body: Mapping[str, Any]) -> ModelRequest:
    """A Responses API body as our :class:`ModelRequest`."""
    messages: list[Message] = []
    for item in body.get("input", ()):
        kind = item.get("type", "message")
        if kind == "message" and item.get("role") == "assistant":
            _append_assistant(messages, TextBlock(text=_text_of(item.get("content"))))
        elif kind == "message":
            _append_user(messages, TextBlock(text=_text_of(item.get("content"))))
        elif kind == "function_call":
            _append_assistant(
                messages,
                ToolUseBlock(
                    id=item["call_id"], name=item["name"], arguments=item.get("arguments", "")
                ),
            )
        elif kind == "custom_tool_call":
            arguments = json.dumps({"input": item.get("input", "")})
            _append_assistant(
                messages, ToolUseBlock(id=item["call_id"], name=item["name"], arguments=arguments)
            )
        elif kind in ("function_call_output", "custom_tool_call_output"):
            result = ToolResult(tool_use_id=item["call_id"], content=_text_of(item.get("output")))
            _append_user(messages, ToolResultBlock(result=result))
    tools = []
    for t in body.get("tools", ()):
        if t.get("type") == "function":
            tools.append(
                ToolSpec(
                    name=t["name"],
                    description=t.get("description", ""),
                    input_schema=t.get("parameters", {}),
                    strict=bool(t.get("strict")),
                )
            )
        elif t.get("type") == "custom":
            fmt = t.get("format") or {}
            grammar = ToolGrammar(
                syntax=fmt.get("syntax", "lark"), definition=fmt.get("definition", "")
            )
            tools.append(
                ToolSpec(
                    name=t["name"],
                    description=t.get("description", ""),
                    input_schema={},
                    grammar=grammar,
                )
            )
    return ModelRequest(
        system=str(body.get("instructions") or ""),
        messages=messages,
        tools=tools,
        max_tokens=int(body.get("max_output_tokens") or 8192),
    )


def _text_of(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    return "".join(p.get("text", "") for p in content if isinstance(p, Mapping) and "text" in p)


def _append_user(messages: list[Message], block: Any) -> None:
    if messages and messages[-1].role == "user":
        last = messages[-1]
        messages[-1] = Message(role="user", content=(*last.content, block))
    else:
        messages.append(Message(role="user", content=(block,)))


def _append_assistant(messages: list[Message], block: Any) -> None:
    if messages and messages[-1].role == "assistant":
        last = messages[-1]
        messages[-1] = Message(role="assistant", content=(*last.content, block))
    else:
        messages.append(Message(role="assistant", content=(block,)))


def missing_reasoning(body: Mapping[str, Any], field: str) -> str | None:
    """DeepSeek's thinking-mode rule: an assistant message that made tool calls carries
    its reasoning back (its 400's words), or None."""
    for i, m in enumerate(body.get("messages") or ()):
        if m.get("role") == "assistant" and m.get("tool_calls") and field not in m:
            return (
                f"Missing `{field}` field in the assistant message at message index {i}. For "
                "more information, please refer to "
                "https://api-docs.deepseek.com/guides/thinking_mode#tool-calls"
            )
    return None


def check_chat(body: object) -> str | None:
    """What the real Chat Completions API would refuse in ``body``, or None."""
    if not isinstance(body, Mapping) or not isinstance(body.get("model"), str):
        return "the body must be a JSON object with a model"
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return "messages must be a non-empty list"
    open_calls: set[str] = set()
    for i, m in enumerate(messages):
        role = m.get("role") if isinstance(m, Mapping) else None
        if role not in ("system", "developer", "user", "assistant", "tool"):
            return f"messages[{i}]: unknown role {role!r}"
        if role == "tool":
            call_id = m.get("tool_call_id")
            if call_id not in open_calls:
                return (
                    f"messages[{i}]: a 'tool' message must answer a tool_call of the "
                    f"assistant message before it (no open call {call_id!r})"
                )
            open_calls.discard(call_id)
            continue
        if open_calls:
            return (
                f"messages[{i}]: the tool_calls {sorted(open_calls)} of an earlier "
                "assistant message have no 'tool' message answering them"
            )
        if role == "assistant":
            calls = m.get("tool_calls") or []
            if not calls and not m.get("content"):
                return f"messages[{i}]: an assistant message needs content or tool_calls"
            open_calls = {c.get("id") for c in calls}
    if open_calls:
        return f"the tool_calls {sorted(open_calls)} have no 'tool' message answering them"
    return None


def check_responses(body: object) -> str | None:
    """What the real Responses API would refuse in ``body``, or None."""
    if not isinstance(body, Mapping) or not isinstance(body.get("model"), str):
        return "the body must be a JSON object with a model"
    items = body.get("input")
    if not isinstance(items, list) or not items:
        return "input must be a non-empty list"
    calls: dict[str, str] = {}
    for i, item in enumerate(items):
        kind = item.get("type", "message") if isinstance(item, Mapping) else None
        if kind in ("function_call", "custom_tool_call"):
            calls[item.get("call_id")] = kind
        elif kind in ("function_call_output", "custom_tool_call_output"):
            want = "function_call" if kind == "function_call_output" else "custom_tool_call"
            if calls.get(item.get("call_id")) != want:
                return (
                    f"input[{i}]: no {want} item with call_id {item.get('call_id')!r} "
                    f"precedes this {kind}"
                )
        elif kind == "reasoning":
            if not item.get("encrypted_content") and not item.get("id"):
                return f"input[{i}]: a reasoning item needs its id or encrypted_content"
        elif kind != "message":
            return f"input[{i}]: unknown item type {kind!r}"
    return None
