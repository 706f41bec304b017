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

import logging
import os
from collections.abc import AsyncIterator, Mapping
from typing import TYPE_CHECKING, Any, Literal

from nb_tools.model._defaults import BLOCK_ENV, is_loopback_url, real_requests_blocked
from nb_tools.model._openai_chat import ChatTurn
from nb_tools.model._openai_convert import REASONING, chat_body, freeform_arguments, responses_body
from nb_tools.model._openai_errors import connection_error, status_error, stream_error
from nb_tools.model._openai_limits import openai_limits, served_limits
from nb_tools.model._openai_pricing import openai_price
from nb_tools.model._pricing import Price, priced
from nb_tools.model._provider import (
    ModelError,
    ModelEvent,
    ModelLimits,
    ModelRequest,
    RequestFeatures,
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

log = logging.getLogger("nb_tools.model")

OLLAMA_BASE_URL = "http://localhost:11434/v1"
LOOPBACK_KEY = "sk-loopback-no-key"

Api = Literal["chat", "responses"]


class OpenAIProvider(RetryHandover):
    """A model behind the OpenAI SDK's ``AsyncOpenAI`` client.

    ``model``: the model name. ``api``: ``"chat"`` (Chat Completions, any OpenAI-compatible
    server) or ``"responses"`` (OpenAI's Responses API). ``base_url``: the server
    (default: the SDK's, ``$OPENAI_BASE_URL`` or OpenAI). ``api_key``: default
    ``$OPENAI_API_KEY``; a server on loopback needs none. ``name`` labels the provider in
    transcripts ("openai", "ollama", "openai-compatible"). ``images_in_tool_results``:
    whether the server takes a tool result's images (default: only OpenAI itself; others
    get a note that they were left out). ``structured_outputs``: whether the server takes
    a JSON Schema for the reply (``response_format``; default: only OpenAI itself).
    ``price``: USD per million tokens (:class:`~nb_tools.model.Price`); default: OpenAI's
    list price for OpenAI's models (:mod:`nb_tools.model._openai_pricing`), none for
    another server's (a run with ``budget_usd`` then refuses to start).

    Limits: OpenAI's models from a table; another server's model from what its
    ``GET /v1/models`` reports (vLLM's ``max_model_len``), asked once before the first
    request, else unknown. A request leaves ``max_tokens`` out unless the user set it.
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
        structured_outputs: bool | None = None,
        max_retries: int = 4,
        timeout: float = 600.0,
        client: AsyncOpenAI | None = None,
        price: Price | None = None,
    ) -> None:
        if api not in ("chat", "responses"):
            raise ValueError(f"OpenAIProvider: api must be 'chat' or 'responses', not {api!r}")
        self._model = model
        self._price = price
        self.api: Api = api
        self.name = name
        self._base_url = base_url
        self._api_key = api_key
        self.images_in_tool_results = (
            images_in_tool_results if images_in_tool_results is not None else name == "openai"
        )
        self.structured_outputs = (
            structured_outputs if structured_outputs is not None else name == "openai"
        )
        self.max_retries = max_retries
        self.timeout = timeout
        self._client = client
        self._served: ModelLimits | None = None
        self._asked_models = name == "openai"  # OpenAI's /v1/models says no limits

    @property
    def model(self) -> str:
        return self._model

    @property
    def features(self) -> RequestFeatures:  # type: ignore[override]
        return RequestFeatures(
            images_in_tool_results=self.images_in_tool_results,
            structured_outputs=self.structured_outputs,
            optional_max_tokens=True,
        )

    def price(self) -> Price | None:
        """The ``price=`` given, else OpenAI's list price for OpenAI's own models (None
        for another server's: it is not OpenAI's to price)."""
        if self._price is not None:
            return self._price
        return openai_price(self._model) if self.name == "openai" else None

    def limits(self) -> ModelLimits:
        if self._served is not None:
            return self._served
        return openai_limits(self._model) if self.name == "openai" else ModelLimits()

    def __repr__(self) -> str:
        return f"OpenAIProvider({self._model!r}, api={self.api!r}, name={self.name!r})"

    @property
    def client(self) -> AsyncOpenAI:
        if self._client is None:
            self._client = self._make_client()
        return self._client

    @property
    def where(self) -> str:
        return self._base_url or os.environ.get("OPENAI_BASE_URL") or "the OpenAI API"

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

    async def served_limits(self) -> ModelLimits | None:
        """What the server's ``GET /models`` says of this model (asked once; a server that
        does not answer, or reports nothing, leaves the limits unknown)."""
        if not self._asked_models:
            self._asked_models = True
            try:
                page = await self.client.with_options(max_retries=0, timeout=10.0).models.list()
                for entry in page.data:
                    if entry.id == self._model:
                        self._served = served_limits(entry.to_dict())
            except Exception as err:  # optional: the request itself says what is wrong
                log.info("%s: GET /models failed (%s); limits unknown", self.name, err)
        return self._served

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        openai = _sdk()
        await self.served_limits()
        if self.api == "chat":
            body = chat_body(
                request,
                self._model,
                images_in_tool_results=self.images_in_tool_results,
                max_tokens_field="max_completion_tokens" if self.name == "openai" else "max_tokens",
            )
            create = self.client.chat.completions.create
            turn: ChatTurn | _ResponsesTurn = ChatTurn()
        else:
            body = responses_body(request, self._model)
            create = self.client.responses.create
            turn = _ResponsesTurn()
        opened = False
        try:
            stream = await create(**body)
            opened = True
            async for chunk in stream:
                for event in turn.add(chunk.to_dict() if isinstance(turn, ChatTurn) else chunk):
                    yield event
        except ModelError:
            raise
        except openai.APIStatusError as err:
            # the cause keeps the response, whose retry-after the agent's retries read
            error = status_error(err, self.max_retries, name=self.name, where=self.where)
            raise error from err
        except openai.APITimeoutError:
            raise ModelError(
                f"{self.name}: the request timed out after {self.timeout:g} s; run the turn "
                "again, or raise timeout=",
                status=408,
                retryable=True,
            ) from None
        except Exception as err:  # the server was not reached, or the body broke off
            if not opened and isinstance(err, openai.APIConnectionError):
                raise connection_error(err, name=self.name, where=self.where) from None
            started = isinstance(turn, ChatTurn) and turn.started
            raise stream_error(err, name=self.name, started=started) from None
        if not turn.complete:
            raise ModelError(
                f"{self.name}: the reply stream ended before the reply did (no finish "
                "reason); run the turn again",
                retryable=True,
            )
        yield turn.finish(self._model, self.price())


def _sdk() -> Any:
    """The ``openai`` SDK, or an error that says how to install it."""
    try:
        import openai
    except ImportError:
        raise ModelError(
            "OpenAIProvider needs the openai SDK: pip install 'nb_tools[openai]' (or openai)"
        ) from None
    return openai


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

    def finish(self, model: str, price: Price | None = None) -> ResponseEvent:
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
            usage=priced(self.usage, price),
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
