"""Claude through the official ``anthropic`` SDK, behind the :class:`Provider` interface.

The SDK costs about a second to import, so it is imported when the first client is made,
not when this module is. Tool arguments are passed on as the raw ``partial_json`` text the
API streamed, so our validator sees duplicate keys and the like exactly as the model wrote
them; the SDK's own parsed ``input`` would have resolved them already.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from nb_tools.model._anthropic_convert import request_params
from nb_tools.model._defaults import (
    BLOCK_ENV,
    default_model,
    is_loopback_url,
    real_requests_blocked,
)
from nb_tools.model._pricing import price_for, with_cost
from nb_tools.model._provider import (
    ModelError,
    ModelEvent,
    ModelRequest,
    ResponseEvent,
    TextDeltaEvent,
    ToolArgumentsDeltaEvent,
    ToolUseStartEvent,
)
from nb_tools.model._types import Block, Message, TextBlock, ToolUseBlock, Usage

if TYPE_CHECKING:
    from anthropic import AsyncAnthropic

__all__ = ["AnthropicProvider"]

log = logging.getLogger("nb_tools.model")

DEFAULT_BASE_URL = "https://api.anthropic.com"
# Sent when the endpoint is on loopback (a fake or a local proxy) and no key is configured,
# so the SDK constructs and the request goes out.
LOOPBACK_KEY = "sk-ant-loopback-no-key"

_STATUS_WORDS = {
    400: "rejected the request",
    401: "refused the credentials",
    403: "denied permission",
    404: "found no such model or endpoint",
    408: "timed out",
    413: "found the request too large",
    429: "rate limit reached",
    500: "internal error",
    502: "bad gateway",
    503: "unavailable",
    504: "gateway timeout",
    529: "overloaded",
}
_STATUS_BY_ERROR_TYPE = {
    "invalid_request_error": 400,
    "authentication_error": 401,
    "permission_error": 403,
    "not_found_error": 404,
    "request_too_large": 413,
    "rate_limit_error": 429,
    "api_error": 500,
    "overloaded_error": 529,
}
_WAY_OUT = {
    401: "set ANTHROPIC_API_KEY or pass api_key=",
    403: "check the key's workspace and permissions",
    404: "check the model name",
    413: "shorten the conversation or the tool output",
    429: "wait a little and run the turn again",
    529: "wait a little and run the turn again",
}


class AnthropicProvider:
    """Claude via ``anthropic.AsyncAnthropic``: streams one turn per :meth:`stream`.

    ``model`` defaults to :func:`nb_tools.model._defaults.default_model` ($NB_TOOLS_MODEL or
    the newest Sonnet the SDK knows). ``api_key`` and ``base_url`` default to the SDK's
    environment (ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL); an endpoint on loopback (the fake
    server, a local proxy) needs no key. The SDK retries 408/409/429/5xx/529
    and connection failures ``max_retries`` times; what still fails becomes a
    :class:`ModelError`. ``cache`` marks prompt-cache breakpoints on the tools, the system
    prompt and the newest message.
    """

    def __init__(
        self,
        model: str | None = None,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        max_retries: int = 4,
        timeout: float = 600.0,
        client: AsyncAnthropic | None = None,
        cache: bool = True,
    ) -> None:
        self._model = model or default_model()
        self._api_key = api_key
        self._base_url = base_url
        self.max_retries = client.max_retries if client is not None else max_retries
        self._timeout = timeout
        self._client = client
        self.cache = cache
        # False when the model has no known price: its cost is reported as 0.
        self.priced = price_for(self._model) is not None
        self._warned_unpriced = False

    @property
    def model(self) -> str:
        return self._model

    @property
    def base_url(self) -> str:
        """Where requests go: the client's URL, else ``base_url``, $ANTHROPIC_BASE_URL or
        the public endpoint."""
        if self._client is not None:
            return str(self._client.base_url)
        return self._base_url or os.environ.get("ANTHROPIC_BASE_URL") or DEFAULT_BASE_URL

    @property
    def client(self) -> AsyncAnthropic:
        """The SDK client, made (and the SDK imported) on first use."""
        if self._client is None:
            import anthropic

            api_key = self._api_key
            if api_key is None and not _env_credentials() and is_loopback_url(self.base_url):
                api_key = LOOPBACK_KEY
            self._client = anthropic.AsyncAnthropic(
                api_key=api_key,
                base_url=self._base_url,
                max_retries=self.max_retries,
                timeout=self._timeout,
            )
        return self._client

    def __repr__(self) -> str:
        return f"AnthropicProvider(model={self._model!r}, base_url={self.base_url!r})"

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        """Stream one turn: text and tool-argument deltas, then one :class:`ResponseEvent`."""
        self._check_allowed()
        import anthropic
        import httpx2

        params = request_params(request, model=self._model, cache=self.cache)
        turn = _Turn()
        try:
            stream = await self.client.messages.create(**params, stream=True)
            async with stream:
                async for event in stream:
                    for out in turn.feed(event):
                        yield out
        except anthropic.APIStatusError as err:
            raise self._status_error(err) from err
        except anthropic.APIConnectionError as err:
            raise ModelError(
                f"Could not reach the Anthropic API at {self.base_url} after "
                f"{self.max_retries} retries ({err.__cause__ or err}); check the network "
                "connection or ANTHROPIC_BASE_URL",
                retryable=True,
            ) from err
        except (httpx2.HTTPError, json.JSONDecodeError) as err:
            raise _cut_error(f"{type(err).__name__}: {err}") from err
        except anthropic.APIError as err:
            raise ModelError(
                f"Anthropic API sent a response nb_tools could not read ({err}); "
                "run the turn again",
                retryable=True,
            ) from err
        except anthropic.CredentialsError as err:
            raise ModelError(
                f"Anthropic API credentials could not be resolved ({err}); set "
                "ANTHROPIC_API_KEY, or pass AnthropicProvider(api_key=...)"
            ) from err
        except TypeError as err:
            # SDK 2.14 raises TypeError("Could not resolve authentication method...")
            # while building a request that has no credentials.
            if "authentication" not in str(err):
                raise
            raise ModelError(
                "No Anthropic API credentials: set ANTHROPIC_API_KEY, or pass "
                "AnthropicProvider(api_key=...)"
            ) from err
        if not turn.stopped:
            raise _cut_error("the stream ended before message_stop")
        yield ResponseEvent(
            message=turn.message(),
            stop_reason=turn.stop_reason or "end_turn",
            usage=self._priced(turn.usage),
        )

    def _check_allowed(self) -> None:
        url = self.base_url
        if real_requests_blocked() and not is_loopback_url(url):
            raise ModelError(
                f"real model requests are blocked in tests ({BLOCK_ENV}=1): {url} is not "
                "on loopback; use nb_tools.testing.FakeMessagesServer and pass "
                "base_url=server.base_url, or ScriptedModel"
            )

    def _priced(self, usage: Usage) -> Usage:
        if not self.priced and not self._warned_unpriced:
            self._warned_unpriced = True
            log.warning("no price known for model %r: its cost is reported as $0", self._model)
        return with_cost(self._model, usage)

    def _status_error(self, err: Any) -> ModelError:
        error_type, detail = _error_detail(err.body, err.message)
        status = int(err.status_code)
        if status < 400:
            # An `event: error` inside a 200 stream: the SDK does not retry those.
            status = _STATUS_BY_ERROR_TYPE.get(error_type, 500)
            return ModelError(
                f"Anthropic API stream failed mid-way with {error_type or 'an error'} "
                f"({status}): {detail}; run the turn again",
                status=status,
                retryable=_retryable(status),
            )
        retryable = _retryable(status)
        words = _STATUS_WORDS.get(status, "error")
        after = f" after {self.max_retries} retries" if retryable else ""
        way_out = _WAY_OUT.get(status)
        if status == 404:
            way_out = f"check the model name {self._model!r}"
        message = f"Anthropic API {words} ({status}){after}: {detail}"
        return ModelError(
            f"{message}; {way_out}" if way_out else message, status=status, retryable=retryable
        )


@dataclass
class _Block:
    """One content block being streamed: text, or a tool call (``id`` set)."""

    chunks: list[str] = field(default_factory=list)
    id: str = ""
    name: str = ""
    initial: str = ""  # a tool_use start that already carried its input (not streamed)

    def to_block(self) -> Block | None:
        text = "".join(self.chunks)
        if not self.id:
            return TextBlock(text=text) if text else None
        return ToolUseBlock(id=self.id, name=self.name, arguments=text or self.initial or "{}")


class _Turn:
    """Accumulates one streamed turn from the SDK's raw events."""

    def __init__(self) -> None:
        self.blocks: dict[int, _Block] = {}
        self.usage = Usage()
        self.stop_reason: str | None = None
        self.stopped = False

    def feed(self, event: Any) -> list[ModelEvent]:
        kind = event.type
        if kind == "message_start":
            self.usage = _usage(event.message.usage, self.usage)
        elif kind == "content_block_start":
            return self._start(event.index, event.content_block)
        elif kind == "content_block_delta":
            return self._delta(event.index, event.delta)
        elif kind == "message_delta":
            self.stop_reason = event.delta.stop_reason or self.stop_reason
            self.usage = _usage(event.usage, self.usage)
        elif kind == "message_stop":
            self.stopped = True
        return []

    def _start(self, index: int, block: Any) -> list[ModelEvent]:
        if block.type == "text":
            self.blocks[index] = _Block(chunks=[block.text])
            return [TextDeltaEvent(text=block.text)] if block.text else []
        if block.type == "tool_use":
            initial = json.dumps(block.input) if block.input else ""
            self.blocks[index] = _Block(id=block.id, name=block.name, initial=initial)
            return [ToolUseStartEvent(id=block.id, name=block.name)]
        return []  # thinking, redacted thinking, server tools: not part of our messages

    def _delta(self, index: int, delta: Any) -> list[ModelEvent]:
        block = self.blocks.get(index)
        if block is None:
            return []
        if delta.type == "text_delta" and not block.id:
            block.chunks.append(delta.text)
            return [TextDeltaEvent(text=delta.text)]
        if delta.type == "input_json_delta" and block.id and delta.partial_json:
            block.chunks.append(delta.partial_json)
            return [ToolArgumentsDeltaEvent(id=block.id, partial_json=delta.partial_json)]
        return []

    def message(self) -> Message:
        blocks = (self.blocks[i].to_block() for i in sorted(self.blocks))
        return Message(role="assistant", content=tuple(b for b in blocks if b is not None))


def _usage(api: Any, previous: Usage) -> Usage:
    """Merge the SDK's usage object into ours (counts are running totals, not increments;
    an absent optional count keeps the previous value)."""

    def count(name: str, old: int) -> int:
        value = getattr(api, name, None)
        return old if value is None else int(value)

    return Usage(
        input_tokens=count("input_tokens", previous.input_tokens),
        output_tokens=count("output_tokens", previous.output_tokens),
        cache_creation_input_tokens=count(
            "cache_creation_input_tokens", previous.cache_creation_input_tokens
        ),
        cache_read_input_tokens=count("cache_read_input_tokens", previous.cache_read_input_tokens),
    )


def _error_detail(body: object, fallback: str) -> tuple[str, str]:
    """(error type, message) from the API's ``{"type": "error", "error": {...}}`` body."""
    if isinstance(body, dict):
        error = body.get("error", body)
        if isinstance(error, dict):
            return str(error.get("type", "")), str(error.get("message", fallback))
    return "", fallback


def _retryable(status: int) -> bool:
    return status in (408, 409, 429) or status >= 500


def _cut_error(reason: str) -> ModelError:
    return ModelError(
        f"Anthropic API stream was cut mid-way ({reason}); the partial reply was dropped "
        "and the conversation is unchanged, so the turn can be run again",
        retryable=True,
    )


def _env_credentials() -> bool:
    return any(
        os.environ.get(name)
        for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_PROFILE")
    )
