"""OpenAI models, and every OpenAI-compatible server, through the official ``openai`` SDK.

Two APIs behind the one :class:`Provider` interface:

- **Chat Completions** (``api="chat"``): what every OpenAI-compatible server speaks
  (Ollama, vLLM, LM Studio, llama.cpp's server, and OpenAI). Tool-call arguments are passed
  on as the raw text the server streamed, so our validator still sees duplicate keys where
  the server passes the model's text through.
- **Responses** (``api="responses"``, OpenAI): function tools, freeform custom tools with a
  grammar (``ToolSpec.grammar``), and reasoning items, kept and sent back each turn.

The SDK is imported when the first client is made (like ``anthropic``), so importing this
module costs nothing. The SDK sends each request (auth, retries with retry-after,
timeouts); what still fails becomes a :class:`ModelError` that says what to do.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from nb_tools.model._defaults import BLOCK_ENV, is_loopback_url, real_requests_blocked
from nb_tools.model._openai_convert import REASONING, chat_body, freeform_arguments, responses_body
from nb_tools.model._openai_pricing import openai_cost
from nb_tools.model._provider import (
    ModelError,
    ModelEvent,
    ModelRequest,
    ResponseEvent,
    TextDeltaEvent,
    ThinkingDeltaEvent,
    ToolArgumentsDeltaEvent,
    ToolUseStartEvent,
)
from nb_tools.model._retry_handover import RetryHandover
from nb_tools.model._types import Block, Message, OtherBlock, TextBlock, ToolUseBlock, Usage

if TYPE_CHECKING:
    from openai import AsyncOpenAI

__all__ = ["OLLAMA_BASE_URL", "OpenAIProvider"]

OLLAMA_BASE_URL = "http://localhost:11434/v1"
LOOPBACK_KEY = "sk-loopback-no-key"

Api = Literal["chat", "responses"]

_CHAT_STOP = {
    "stop": "end_turn",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "length": "max_tokens",
    "content_filter": "refusal",
}
_WAY_OUT = {
    401: "set OPENAI_API_KEY (or the server's own key variable) or pass api_key=",
    403: "check the key's project and permissions",
    404: "check the model name (and, for a local server, that the model is pulled)",
    429: "wait a little and run the turn again, or check the account's quota",
}


class OpenAIProvider(RetryHandover):
    """A model behind the OpenAI SDK's ``AsyncOpenAI`` client.

    ``model``: the model name. ``api``: ``"chat"`` (Chat Completions, any OpenAI-compatible
    server) or ``"responses"`` (OpenAI's Responses API). ``base_url``: the server
    (default: the SDK's, ``$OPENAI_BASE_URL`` or OpenAI). ``api_key``: default
    ``$OPENAI_API_KEY``; a server on loopback needs none. ``name`` labels the provider in
    transcripts ("openai", "ollama", "openai-compatible"). ``images_in_tool_results``:
    whether the server takes a tool result's images (default: only OpenAI itself; others
    get a note that they were left out).
    """

    def __init__(
        self,
        model: str,
        *,
        api: Api = "chat",
        base_url: str | None = None,
        api_key: str | None = None,
        name: str = "openai",
        images_in_tool_results: bool | None = None,
        max_retries: int = 4,
        timeout: float = 600.0,
        client: AsyncOpenAI | None = None,
    ) -> None:
        if api not in ("chat", "responses"):
            raise ValueError(f"OpenAIProvider: api must be 'chat' or 'responses', not {api!r}")
        self._model = model
        self.api: Api = api
        self.name = name
        self._base_url = base_url
        self._api_key = api_key
        self.images_in_tool_results = (
            images_in_tool_results if images_in_tool_results is not None else name == "openai"
        )
        self.max_retries = max_retries
        self.timeout = timeout
        self._client = client

    @property
    def model(self) -> str:
        return self._model

    def __repr__(self) -> str:
        return f"OpenAIProvider({self._model!r}, api={self.api!r}, name={self.name!r})"

    @property
    def client(self) -> AsyncOpenAI:
        if self._client is None:
            self._client = self._make_client()
        return self._client

    def _make_client(self) -> AsyncOpenAI:
        base_url = self._base_url or os.environ.get("OPENAI_BASE_URL") or None
        if real_requests_blocked() and not (base_url and is_loopback_url(base_url)):
            raise ModelError(
                f"OpenAIProvider: {BLOCK_ENV} is set and {base_url or 'the OpenAI API'} is "
                "not on loopback; point base_url at a local fake server"
            )
        key = self._api_key or os.environ.get("OPENAI_API_KEY")
        if not key:
            if base_url and is_loopback_url(base_url):
                key = LOOPBACK_KEY
            else:
                raise ModelError(
                    f"OpenAIProvider: no API key for {base_url or 'the OpenAI API'}: set "
                    "OPENAI_API_KEY or pass api_key=",
                    status=401,
                )
        client_class = _sdk().AsyncOpenAI
        retries = self.sdk_retries()
        return client_class(
            api_key=key, base_url=base_url, max_retries=retries, timeout=self.timeout
        )

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        openai = _sdk()

        try:
            if self.api == "chat":
                body = chat_body(
                    request,
                    self._model,
                    images_in_tool_results=self.images_in_tool_results,
                    max_tokens_field="max_completion_tokens"
                    if self.name == "openai"
                    else "max_tokens",
                )
                stream = await self.client.chat.completions.create(**body)
                turn: _ChatTurn | _ResponsesTurn = _ChatTurn()
            else:
                body = responses_body(request, self._model)
                stream = await self.client.responses.create(**body)
                turn = _ResponsesTurn()
            async for chunk in stream:
                for event in turn.add(chunk):
                    yield event
        except ModelError:
            raise
        except openai.APIStatusError as err:
            # the cause keeps the response, whose retry-after the agent's retries read
            raise _status_error(err, self.max_retries) from err
        except openai.APITimeoutError:
            raise ModelError(
                f"{self.name}: the request timed out after {self.timeout:g} s; run the turn "
                "again, or raise timeout=",
                status=408,
                retryable=True,
            ) from None
        except openai.APIConnectionError as err:
            where = self._base_url or os.environ.get("OPENAI_BASE_URL") or "the OpenAI API"
            raise ModelError(
                f"{self.name}: could not reach {where} ({err}); check that the server runs "
                "and the base URL",
                retryable=True,
            ) from None
        except Exception as err:  # the body broke off mid-stream (httpx, SSE decoding)
            raise ModelError(
                f"{self.name}: the reply stream broke off ({type(err).__name__}: {err}); "
                "run the turn again",
                retryable=True,
            ) from None
        if not turn.complete:
            raise ModelError(
                f"{self.name}: the reply stream ended before the reply did (no finish); run "
                "the turn again",
                retryable=True,
            )
        yield turn.finish(self._model)


def _sdk() -> Any:
    """The ``openai`` SDK, or an error that says how to install it."""
    try:
        import openai
    except ImportError:
        raise ModelError(
            "OpenAIProvider needs the openai SDK: pip install 'nb_tools[openai]' (or openai)"
        ) from None
    return openai


def _status_error(err: Any, retries: int) -> ModelError:
    status = int(getattr(err, "status_code", 0) or 0)
    body = getattr(err, "body", None)
    detail = ""
    if isinstance(body, Mapping):
        inner = body.get("error", body)
        if isinstance(inner, Mapping):
            detail = str(inner.get("message") or "")
    retryable = status in (408, 409, 429) or status >= 500
    way = _WAY_OUT.get(status, "run the turn again" if status >= 500 else "")
    after = f" after {retries} retries" if retryable else ""
    text = f"the server answered {status}{after}" + (f": {detail}" if detail else "")
    return ModelError(text + (f"; {way}" if way else ""), status=status, retryable=retryable)


@dataclass
class _Call:
    id: str
    name: str
    arguments: list[str] = field(default_factory=list)


class _ChatTurn:
    """Accumulates a streamed Chat Completion."""

    def __init__(self) -> None:
        self.text: list[str] = []
        self.refusal: list[str] = []
        self.calls: dict[int, _Call] = {}
        self.finish_reason: str | None = None
        self.usage = Usage()

    @property
    def complete(self) -> bool:
        return self.finish_reason is not None

    def add(self, chunk: Any) -> list[ModelEvent]:
        events: list[ModelEvent] = []
        if getattr(chunk, "usage", None) is not None:
            self.usage = _chat_usage(chunk.usage)
        for choice in chunk.choices or ():
            if choice.index != 0:  # we never ask for n > 1
                continue
            delta = choice.delta
            if delta is not None and delta.content:
                self.text.append(delta.content)
                events.append(TextDeltaEvent(text=delta.content))
            if delta is not None and getattr(delta, "refusal", None):
                self.refusal.append(delta.refusal)
            for tc in (delta.tool_calls if delta is not None else None) or ():
                call = self.calls.get(tc.index)
                if call is None:
                    name = (tc.function.name if tc.function else None) or ""
                    call = _Call(id=tc.id or f"call_{tc.index}", name=name)
                    self.calls[tc.index] = call
                    events.append(ToolUseStartEvent(id=call.id, name=call.name))
                piece = tc.function.arguments if tc.function else None
                if piece:
                    call.arguments.append(piece)
                    events.append(ToolArgumentsDeltaEvent(id=call.id, partial_json=piece))
            if choice.finish_reason:
                self.finish_reason = choice.finish_reason
        return events

    def finish(self, model: str) -> ResponseEvent:
        blocks: list[Block] = []
        text = "".join(self.text) or "".join(self.refusal)
        if text:
            blocks.append(TextBlock(text=text))
        blocks.extend(
            ToolUseBlock(id=c.id, name=c.name, arguments="".join(c.arguments) or "{}")
            for _, c in sorted(self.calls.items())
        )
        # A reason this version does not know ends the reply as an ordinary end.
        stop = _CHAT_STOP.get(self.finish_reason or "", "end_turn")
        if self.calls and stop == "end_turn":
            stop = "tool_use"  # some servers say "stop" after tool calls
        if self.refusal and not self.text:
            stop = "refusal"
        return ResponseEvent(
            message=Message(role="assistant", content=tuple(blocks)),
            stop_reason=stop,
            usage=openai_cost(model, self.usage),
        )


def _chat_usage(usage: Any) -> Usage:
    details = getattr(usage, "prompt_tokens_details", None)
    cached = int(getattr(details, "cached_tokens", 0) or 0)
    out_details = getattr(usage, "completion_tokens_details", None)
    return Usage(
        input_tokens=int(usage.prompt_tokens or 0) - cached,
        cache_read_input_tokens=cached,
        output_tokens=int(usage.completion_tokens or 0),
        thinking_tokens=int(getattr(out_details, "reasoning_tokens", 0) or 0),
    )


class _ResponsesTurn:
    """Accumulates a streamed Responses API response from its events."""

    def __init__(self) -> None:
        self.items: dict[int, dict[str, Any]] = {}
        self.call_ids: dict[str, str] = {}  # item id -> call id
        self.status = "completed"
        self.incomplete_reason = ""
        self.usage = Usage()
        self.refused = False
        self.complete = False

    def add(self, event: Any) -> list[ModelEvent]:
        kind = getattr(event, "type", "")
        if kind == "response.output_text.delta":
            return [TextDeltaEvent(text=event.delta)]
        if kind in ("response.reasoning_summary_text.delta", "response.reasoning_text.delta"):
            return [ThinkingDeltaEvent(text=event.delta)]
        if kind == "response.output_item.added":
            item = event.item
            if item.type in ("function_call", "custom_tool_call"):
                self.call_ids[item.id or ""] = item.call_id
                return [ToolUseStartEvent(id=item.call_id, name=item.name)]
            return []
        if kind == "response.function_call_arguments.delta":
            call_id = self.call_ids.get(event.item_id, event.item_id)
            return [ToolArgumentsDeltaEvent(id=call_id, partial_json=event.delta)]
        if kind == "response.output_item.done":
            self.items[event.output_index] = event.item.model_dump(mode="json", exclude_none=True)
            return []
        if kind in ("response.completed", "response.incomplete", "response.failed"):
            self.complete = True
            response = event.response
            self.status = response.status or self.status
            details = getattr(response, "incomplete_details", None)
            self.incomplete_reason = str(getattr(details, "reason", "") or "")
            if response.usage is not None:
                self.usage = _responses_usage(response.usage)
            if kind == "response.failed":
                error = getattr(response, "error", None)
                message = getattr(error, "message", "") or "the response failed"
                raise ModelError(f"the server's response failed: {message}", retryable=True)
            return []
        if kind == "error":
            raise ModelError(
                f"the server sent an error mid-stream: {getattr(event, 'message', event)}",
                retryable=True,
            )
        return []

    def finish(self, model: str) -> ResponseEvent:
        blocks: list[Block] = []
        calls = 0
        for _, item in sorted(self.items.items()):
            kind = item.get("type")
            if kind == "message":
                for part in item.get("content", ()):
                    if part.get("type") == "output_text" and part.get("text"):
                        blocks.append(TextBlock(text=part["text"]))
                    elif part.get("type") == "refusal":
                        self.refused = True
                        blocks.append(TextBlock(text=part.get("refusal") or "(refused)"))
            elif kind == "function_call":
                calls += 1
                blocks.append(
                    ToolUseBlock(
                        id=item["call_id"],
                        name=item["name"],
                        arguments=item.get("arguments") or "{}",
                    )
                )
            elif kind == "custom_tool_call":
                calls += 1
                blocks.append(
                    ToolUseBlock(
                        id=item["call_id"],
                        name=item["name"],
                        arguments=freeform_arguments(item.get("input", "")),
                    )
                )
            elif kind == "reasoning":
                blocks.append(OtherBlock(type=REASONING, data=_reasoning_input(item)))
        if self.refused:
            stop = "refusal"
        elif self.status == "incomplete":
            stop = {"max_output_tokens": "max_tokens", "content_filter": "refusal"}.get(
                self.incomplete_reason, "max_tokens"
            )
        else:
            stop = "tool_use" if calls else "end_turn"
        return ResponseEvent(
            message=Message(role="assistant", content=tuple(blocks)),
            stop_reason=stop,
            usage=openai_cost(model, self.usage),
        )


def _reasoning_input(item: Mapping[str, Any]) -> dict[str, Any]:
    """A reasoning output item as the next request's input takes it back."""
    kept = {k: item[k] for k in ("type", "id", "summary", "encrypted_content") if k in item}
    kept.setdefault("summary", [])
    return kept


def _responses_usage(usage: Any) -> Usage:
    details = getattr(usage, "input_tokens_details", None)
    cached = int(getattr(details, "cached_tokens", 0) or 0)
    out_details = getattr(usage, "output_tokens_details", None)
    return Usage(
        input_tokens=int(usage.input_tokens or 0) - cached,
        cache_read_input_tokens=cached,
        output_tokens=int(usage.output_tokens or 0),
        thinking_tokens=int(getattr(out_details, "reasoning_tokens", 0) or 0),
    )
