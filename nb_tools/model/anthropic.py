"""Claude through the official ``anthropic`` SDK, behind the :class:`Provider` interface.

The SDK costs about a second to import, so it is imported when the first client is made,
not when this module is. Tool arguments are passed on as the raw ``partial_json`` text the
API streamed, so our validator sees duplicate keys and the like exactly as the model wrote
them; the SDK's own parsed ``input`` would have resolved them already.

The SDK's client sends each request (``client.post``: auth, headers, retries, timeouts,
status errors, tracing span); the body is encoded by :class:`RequestEncoder`, which
reuses the JSON of what did not change since the last turn, and the event stream is read
by :class:`SSEDecoder` and ``json.loads``, not as a pydantic object per event: that was
most of a turn's client time. Retries still work for a streamed request, as the SDK
checks the status before handing over the body. Inside :meth:`concurrent_requests`
(``nb_tools.map``'s rows) the SDK's client runs over aiohttp, one per event loop
(:mod:`nb_tools.model._anthropic_http`).
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import warnings
from collections.abc import AsyncIterator, Mapping
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from nb_tools.model._anthropic_convert import RequestEncoder
from nb_tools.model._anthropic_errors import (
    STATUS_WORDS,
    WAY_OUT,
    cut_error,
    error_detail,
    mid_stream_error,
    retryable_status,
)
from nb_tools.model._anthropic_features import (
    BETA_FILES_API,
    output_format,
    structured_outputs,
)
from nb_tools.model._anthropic_http import LoopClients, shared_tls_http_client
from nb_tools.model._anthropic_http import tls_context as tls_context  # the warm-up's
from nb_tools.model._credentials import credential_notes
from nb_tools.model._defaults import (
    BLOCK_ENV,
    default_model,
    is_loopback_url,
    real_requests_blocked,
)
from nb_tools.model._limits import CLAUDE_FEATURES, limits_for
from nb_tools.model._pricing import Price, price_for, priced
from nb_tools.model._provider import (
    ModelError,
    ModelEvent,
    ModelLimits,
    ModelRequest,
    ResponseEvent,
    ServerToolEvent,
    TextDeltaEvent,
    ThinkingDeltaEvent,
    ToolArgumentsDeltaEvent,
    ToolUseStartEvent,
)
from nb_tools.model._retry_handover import RetryHandover
from nb_tools.model._sse_parse import SSEDecoder
from nb_tools.model._types import (
    Block,
    CompactionBlock,
    Message,
    OtherBlock,
    Part,
    RedactedThinkingBlock,
    ServerToolResultBlock,
    ServerToolUseBlock,
    TextBlock,
    ThinkingBlock,
    ToolUseBlock,
    Usage,
)

if TYPE_CHECKING:
    from anthropic import AsyncAnthropic


__all__ = ["AnthropicProvider"]

log = logging.getLogger("nb_tools.model")

DEFAULT_BASE_URL = "https://api.anthropic.com"
# Sent when the endpoint is on loopback (a fake or a local proxy) and no key is configured,
# so the SDK constructs and the request goes out.
LOOPBACK_KEY = "sk-ant-loopback-no-key"

_raw_decode = json.JSONDecoder().raw_decode
# The events a turn is built from; others (ping, content_block_stop, kinds added later)
# are skipped without parsing their data, which need not even be JSON.
_TURN_EVENTS = frozenset(
    {"message_start", "content_block_start", "content_block_delta", "message_delta", "message_stop"}
)


class AnthropicProvider(RetryHandover):
    """Claude via ``anthropic.AsyncAnthropic``: streams one turn per :meth:`stream`.

    ``model`` defaults to :func:`nb_tools.model._defaults.default_model` ($NB_TOOLS_MODEL or
    the newest Sonnet the SDK knows). ``api_key`` and ``base_url`` default to the SDK's
    environment (ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL); an endpoint on loopback (the fake
    server, a local proxy) needs no key. The SDK retries 408/409/429/5xx/529
    and connection failures ``max_retries`` times; what still fails becomes a
    :class:`ModelError`. ``cache`` marks prompt-cache breakpoints on the tools, the system
    prompt and the newest message. ``price``: USD per million tokens
    (:class:`~nb_tools.model.Price`); default: the model's list price
    (:mod:`nb_tools.model._pricing`).
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
        price: Price | None = None,
    ) -> None:
        self._model = model or default_model()
        self._price = price
        self._api_key = api_key
        self._base_url = base_url
        self.max_retries = client.max_retries if client is not None else max_retries
        self._timeout = timeout
        self._client = client
        self._own_client = client is None
        self._loop_clients = LoopClients(self._new_client)
        self.cache = cache
        # False when the model has no known price: its cost is reported as 0.
        self.priced = self.price() is not None
        self._warned_unpriced = False
        self._warn_deprecated = True
        self._encoder = RequestEncoder(self._model)
        self._options: dict[str, Any] | None = None
        self._files: dict[str, str] = {}  # content hash -> file_id (Files API uploads)
        self._notes: list[str] = []  # for the run's notices: see take_notes
        self._said: set[str] = set()

    name = "anthropic"
    features = CLAUDE_FEATURES

    @property
    def model(self) -> str:
        return self._model

    def limits(self) -> ModelLimits:
        return limits_for(self._model)

    def price(self) -> Price | None:
        """The ``price=`` given, else the Claude model's list price (by family and
        version), else None."""
        return self._price if self._price is not None else price_for(self._model)

    @property
    def base_url(self) -> str:
        """Where requests go: the client's URL, else ``base_url``, $ANTHROPIC_BASE_URL or
        the public endpoint."""
        if self._client is not None:
            return str(self._client.base_url)
        return self._base_url or os.environ.get("ANTHROPIC_BASE_URL") or DEFAULT_BASE_URL

    @property
    def client(self) -> AsyncAnthropic:
        """The SDK client, made (and the SDK imported) on first use; inside
        :meth:`concurrent_requests`, that event loop's client over aiohttp."""
        if self._own_client:
            scoped = self._loop_clients.get()
            if scoped is not None:
                return scoped  # type: ignore[no-any-return]
        if self._client is None:
            self._client = self._new_client(shared_tls_http_client())
        return self._client

    def _new_client(self, http: Any) -> AsyncAnthropic:
        import anthropic

        api_key = self._api_key
        if api_key is None and not _env_credentials() and is_loopback_url(self.base_url):
            api_key = LOOPBACK_KEY
        with credential_notes() as notes:
            client = anthropic.AsyncAnthropic(
                api_key=api_key,
                base_url=self._base_url,
                max_retries=self.sdk_retries(),
                timeout=self._timeout,
                **({"http_client": http} if http is not None else {}),
            )
        new = [n for n in notes if n not in self._said]
        self._said.update(new)
        self._notes.extend(new)
        return client

    def concurrent_requests(self) -> AbstractAsyncContextManager[None]:
        """``async with provider.concurrent_requests():`` for many requests at once from
        this event loop (``nb_tools.map``'s rows): inside, they go over the SDK's aiohttp
        transport (``anthropic[aiohttp]``; about half the client CPU per request of the
        default httpx one), on a client of this loop's, closed when the block ends. Without
        aiohttp, or with a ``client=`` of your own, nothing changes."""
        return self._loop_clients.scope()

    def take_notes(self) -> list[str]:
        """What the user should know about this provider, each said once: which credential
        is used when another one is configured too (the SDK's warning when the client was
        made, as a notice). The run asks after each turn."""
        notes, self._notes = self._notes, []
        return notes

    async def upload_file(self, part: Part) -> str:
        """Upload an attachment to the Files API once (per provider, by content) and return
        its ``file_id``; the requests then name the file instead of sending its bytes."""
        self._check_allowed()
        import hashlib

        import anthropic

        key = hashlib.sha256(part.media_type.encode() + b"\0" + part.data).hexdigest()
        known = self._files.get(key)
        if known is not None:
            return known
        name = part.title or ("attachment.pdf" if part.kind == "document" else "attachment")
        try:
            meta = await self.client.beta.files.upload(
                file=(name, part.data, part.media_type), betas=[BETA_FILES_API]
            )
        except anthropic.APIStatusError as err:
            raise self._status_error(err) from err
        except anthropic.APIConnectionError as err:
            raise ModelError(f"the file upload failed: {err}", retryable=True) from err
        self._files[key] = str(meta.id)
        return self._files[key]

    def output_options(self, schema: Mapping[str, Any]) -> dict[str, Any] | None:
        """The request options asking for JSON matching ``schema`` (structured outputs:
        ``output_config.format``), or None when this model has none."""
        if not structured_outputs(self._model):
            return None
        return {"output_config": {"format": output_format(schema)}}

    def __repr__(self) -> str:
        return f"AnthropicProvider(model={self._model!r}, base_url={self.base_url!r})"

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        """Stream one turn: text and tool-argument deltas, then one :class:`ResponseEvent`.

        The SDK sends the request (auth, headers, retries of 408/409/429/5xx/529 with
        their ``retry-after``, timeouts, status errors); the body is encoded here, reusing
        the JSON of the unchanged conversation, and the event stream is read here with a
        small SSE decoder and ``json.loads``, without a pydantic object per event.
        """
        self._check_allowed()
        import anthropic
        import httpx2

        if self._warn_deprecated:
            self._warn_deprecated = False
            _warn_if_deprecated(self._model)
        body = self._encoder.encode(request, cache=self.cache)
        turn = _Turn()
        decoder = SSEDecoder()
        try:
            response = await self.client.post(
                "/v1/messages",
                cast_to=httpx2.Response,
                content=body,
                options=self._request_options(request),
                stream=True,
            )
            # The bytes as they come when nothing needs decoding (one generator fewer per
            # chunk); a transport may also hand over a response it has read already.
            encoding = response.headers.get("content-encoding", "").strip().lower()
            raw = encoding in ("", "identity") and not response.is_stream_consumed
            chunks = response.aiter_raw() if raw else response.aiter_bytes()
            try:
                async for chunk in chunks:
                    for name, data in decoder.feed(chunk):
                        if name not in _TURN_EVENTS:
                            if name == "error":
                                raise self._event_error(data)
                            continue  # ping, content_block_stop, events added later
                        if data and (events := turn.feed_data(data)):
                            for out in events:
                                yield out
                for name, data in decoder.finish():
                    if name == "error":
                        raise self._event_error(data)
                    if name in _TURN_EVENTS and data:
                        turn.feed_data(data)
            finally:
                await response.aclose()
        except anthropic.APIStatusError as err:
            raise self._status_error(err) from err
        except anthropic.APIConnectionError as err:
            raise ModelError(
                f"Could not reach the Anthropic API at {self.base_url} after "
                f"{self.max_retries} retries ({err.__cause__ or err}); check the network "
                "connection or ANTHROPIC_BASE_URL",
                retryable=True,
            ) from err
        except httpx2.HTTPError as err:
            raise cut_error(f"{type(err).__name__}: {err}") from err
        except _UnreadableEvent as err:
            raise cut_error(str(err)) from err.__cause__
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
        # A stream whose message_delta came (it carries the stop reason and the final
        # usage) is whole even when its message_stop did not: the SDK's recorded streams
        # end that way, and its accumulator accepts them.
        if not turn.stopped and turn.stop_reason is None:
            raise cut_error("the stream ended before message_stop")
        yield ResponseEvent(
            message=turn.message(),
            stop_reason=turn.stop_reason or "end_turn",
            usage=self._priced(turn.usage),
            stop_details=turn.stop_details,
            stop_sequence=turn.stop_sequence,
            container=turn.container,
        )

    async def count_tokens(self, request: ModelRequest) -> int:
        """The request's input tokens, from the API's token counting (free, rate-limited
        apart from messages)."""
        self._check_allowed()
        import anthropic
        import httpx2

        from nb_tools.model._anthropic_convert import dumps, request_params

        params = request_params(request, model=self._model, cache=False)
        params.pop("max_tokens", None)
        try:
            response = await self.client.post(
                "/v1/messages/count_tokens",
                cast_to=httpx2.Response,
                content=dumps(params).encode(),
                options=self._request_options(request),
            )
        except anthropic.APIStatusError as err:
            raise self._status_error(err) from err
        except anthropic.APIConnectionError as err:
            raise ModelError(f"token counting failed: {err}", retryable=True) from err
        return int(response.json()["input_tokens"])

    def _request_options(self, request: ModelRequest) -> Any:
        options = self._span_options(request.max_tokens)
        if request.betas:
            options = {**options, "headers": {"anthropic-beta": ",".join(request.betas)}}
        return options

    def _span_options(self, max_tokens: int) -> Any:
        """What ``messages.create`` tells the SDK for its tracing span (read only by a
        client that records spans): the body is sent as bytes, so the request attributes
        the SDK would read from a dict body come along here."""
        options = self._options
        if options is None or options["span_attributes"]["gen_ai.request.max_tokens"] != max_tokens:
            options = self._options = {
                "span_name": "anthropic.messages.create",
                "span_route": "/v1/messages",
                "span_attributes": {
                    "gen_ai.request.model": self._model,
                    "gen_ai.request.max_tokens": max_tokens,
                },
            }
        return options

    def _check_allowed(self) -> None:
        url = self.base_url
        if real_requests_blocked() and not is_loopback_url(url):
            raise ModelError(
                f"real model requests are blocked in tests ({BLOCK_ENV}=1): {url} is not "
                "on loopback; use nb_tools.testing.FakeMessagesServer and pass "
                "base_url=server.base_url, or ScriptedModel"
            )

    # -- Message Batches (nb_tools.map(backend="batch")) -----------------------------------

    BATCH_PRICE = 0.5
    """A batched request costs half the list price."""

    def batch_params(self, request: ModelRequest) -> dict[str, Any]:
        """The ``params`` of one request of a Message Batch: the body ``stream`` would
        send (cache breakpoints included), without ``stream``."""
        params: dict[str, Any] = json.loads(self._encoder.encode(request, cache=self.cache))
        params.pop("stream", None)
        return params

    def batch_response(self, message: Mapping[str, Any]) -> ResponseEvent:
        """A batch result's message as the turn's :class:`ResponseEvent`, at batch price."""
        from nb_tools.model._anthropic_convert import message_from_api

        usage = self._priced(_usage(message.get("usage"), Usage()))
        usage = dataclasses.replace(usage, cost_usd=usage.cost_usd * self.BATCH_PRICE)
        return ResponseEvent(
            message=message_from_api({**message, "role": "assistant"}),
            stop_reason=message.get("stop_reason") or "end_turn",
            usage=usage,
            stop_details=message.get("stop_details"),
            stop_sequence=message.get("stop_sequence"),
            container=message.get("container"),
        )

    def _priced(self, usage: Usage) -> Usage:
        if not self.priced and not self._warned_unpriced:
            self._warned_unpriced = True
            log.warning("no price known for model %r: its cost is reported as $0", self._model)
        return priced(usage, self.price())

    def _status_error(self, err: Any) -> ModelError:
        error_type, detail = error_detail(err.body, err.message)
        status = int(err.status_code)
        if status < 400:
            return mid_stream_error(error_type, detail)
        retryable = retryable_status(status)
        words = STATUS_WORDS.get(status, "error")
        after = f" after {self.max_retries} retries" if retryable else ""
        way_out = WAY_OUT.get(status)
        if status == 404:
            way_out = f"check the model name {self._model!r}"
        if status == 400 and "prompt is too long" in detail:
            way_out = "the conversation is past the model's context window: start a new one"
        message = f"Anthropic API {words} ({status}){after}: {detail}"
        return ModelError(
            f"{message}; {way_out}" if way_out else message,
            status=status,
            retryable=retryable,
            error_type=error_type,
        )

    @staticmethod
    def _event_error(data: bytes) -> ModelError:
        """An ``event: error`` inside a 200 stream (the API overloaded mid-way, say); the
        SDK does not retry those, so the caller may run the turn again."""
        text = data.decode("utf-8", errors="replace")
        try:
            body: object = json.loads(text)
        except ValueError:
            body = text
        error_type, detail = error_detail(body, text or "Error code: 200")
        return mid_stream_error(error_type, detail)


@dataclass
class _Block:
    """One content block being streamed: ``kind`` is the API's block type; ``chunks``
    collect its text, thinking or raw argument JSON; ``start`` is its start object."""

    kind: str
    start: Mapping[str, Any]
    chunks: list[str] = field(default_factory=list)
    signature: str = ""
    citations: list[Any] = field(default_factory=list)
    initial: str = ""  # a tool_use start that already carried its input (not streamed)
    compaction: Mapping[str, Any] | None = None

    @property
    def id(self) -> str:
        return str(self.start.get("id", "")) if self.kind == "tool_use" else ""

    def to_block(self) -> Block | None:
        text = "".join(self.chunks)
        start, kind = self.start, self.kind
        if kind == "text":
            if not text and not self.citations:
                return None
            return TextBlock(text=text, citations=tuple(self.citations))
        if kind == "tool_use":
            caller = start.get("caller")
            return ToolUseBlock(
                id=start["id"],
                name=start["name"],
                arguments=text or self.initial or "{}",
                caller=dict(caller) if isinstance(caller, Mapping) else None,
            )
        if kind == "thinking":
            return ThinkingBlock(thinking=text, signature=self.signature)
        if kind == "redacted_thinking":
            return RedactedThinkingBlock(data=str(start.get("data", "")))
        if kind == "server_tool_use":
            return ServerToolUseBlock(
                id=start["id"], name=start["name"], arguments=text or self.initial or "{}"
            )
        if kind.endswith("_tool_result") and "tool_use_id" in start:
            return ServerToolResultBlock(
                type=kind, tool_use_id=start["tool_use_id"], content=start.get("content")
            )
        if kind == "compaction":
            data = self.compaction or start
            return CompactionBlock(
                content=data.get("content"), encrypted_content=data.get("encrypted_content")
            )
        return OtherBlock(type=kind, data=dict(start))


class _UnreadableEvent(Exception):
    """An event of the stream that is not the JSON the Messages API sends."""


class _Turn:
    """Accumulates one streamed turn from the API's events (as parsed JSON)."""

    def __init__(self) -> None:
        self.blocks: dict[int, _Block] = {}
        self.usage = Usage()
        self.stop_reason: str | None = None
        self.stop_details: Mapping[str, Any] | None = None
        self.stop_sequence: str | None = None
        self.container: Mapping[str, Any] | None = None
        self.stopped = False

    def feed_data(self, data: bytes) -> list[ModelEvent]:
        """One event's ``data`` as it came off the wire."""
        try:
            text = data.decode()
            try:  # json.loads without its two wrapper calls, for the usual compact JSON
                event, end = _raw_decode(text)
                exact = end == len(text)
            except ValueError:
                exact = False
            if not exact:  # whitespace around it, or not JSON: json.loads says which
                event = json.loads(text)
        except ValueError as err:  # JSONDecodeError, UnicodeDecodeError
            raise _UnreadableEvent(f"an event is not UTF-8 JSON: {err}") from err
        if type(event) is not dict:
            raise _UnreadableEvent(f"an event is not a JSON object: {data[:200]!r}")
        return self._feed(event)

    def feed(self, event: Mapping[str, Any] | Any) -> list[ModelEvent]:
        """One event: its parsed JSON, or the SDK's object for it."""
        return self._feed(event if isinstance(event, Mapping) else event.model_dump())

    def _feed(self, event: Mapping[str, Any]) -> list[ModelEvent]:
        try:
            kind = event.get("type")
            if kind == "content_block_delta":
                return self._delta(event["index"], event["delta"])
            if kind == "content_block_start":
                return self._start(event["index"], event["content_block"])
            if kind == "message_start":
                self.usage = _usage(event["message"].get("usage"), self.usage)
                self.container = event["message"].get("container") or self.container
            elif kind == "message_delta":
                delta = event.get("delta") or {}
                self.stop_reason = delta.get("stop_reason") or self.stop_reason
                self.stop_details = delta.get("stop_details") or self.stop_details
                self.stop_sequence = delta.get("stop_sequence") or self.stop_sequence
                self.container = delta.get("container") or self.container
                self.usage = _usage(event.get("usage"), self.usage)
            elif kind == "message_stop":
                self.stopped = True
        except (KeyError, TypeError, AttributeError, ValueError) as err:
            raise _UnreadableEvent(
                f"a {kind!r} event lacks what it should carry ({type(err).__name__}: {err})"
            ) from err
        return []

    def _start(self, index: int, block: Mapping[str, Any]) -> list[ModelEvent]:
        kind = str(block["type"])
        if kind == "text":
            text = block.get("text") or ""
            self.blocks[index] = _Block(
                kind=kind, start=block, chunks=[text], citations=list(block.get("citations") or ())
            )
            return [TextDeltaEvent(text=text)] if text else []
        if kind in ("tool_use", "server_tool_use"):
            value = block.get("input")
            initial = json.dumps(value) if value else ""
            tool_id, name = block["id"], block["name"]
            self.blocks[index] = _Block(kind=kind, start=block, initial=initial)
            return [ToolUseStartEvent(id=tool_id, name=name)] if kind == "tool_use" else []
        if kind == "thinking":
            text = block.get("thinking") or ""
            self.blocks[index] = _Block(
                kind=kind, start=block, chunks=[text], signature=block.get("signature") or ""
            )
            return [ThinkingDeltaEvent(text=text)] if text else []
        self.blocks[index] = new = _Block(kind=kind, start=block)
        if kind.endswith("_tool_result") and "tool_use_id" in block:
            use = next(
                (b for b in self.blocks.values() if b.start.get("id") == block["tool_use_id"]),
                None,
            )
            use_block, result = use.to_block() if use else None, new.to_block()
            if isinstance(use_block, ServerToolUseBlock) and isinstance(
                result, ServerToolResultBlock
            ):
                return [ServerToolEvent(use=use_block, result=result)]
        return []

    def _delta(self, index: int, delta: Mapping[str, Any]) -> list[ModelEvent]:
        block = self.blocks.get(index)
        if block is None:
            return []
        kind = delta["type"]
        if kind == "text_delta" and block.kind == "text":
            text = delta["text"]
            block.chunks.append(text)
            return [TextDeltaEvent(text=text)]
        if kind == "input_json_delta":
            partial = delta.get("partial_json")
            if partial and block.kind in ("tool_use", "server_tool_use"):
                block.chunks.append(partial)
                if block.kind == "tool_use":
                    return [ToolArgumentsDeltaEvent(id=block.id, partial_json=partial)]
        elif kind == "thinking_delta" and block.kind == "thinking":
            text = delta["thinking"]
            block.chunks.append(text)
            return [ThinkingDeltaEvent(text=text)] if text else []
        elif kind == "signature_delta" and block.kind == "thinking":
            block.signature = delta["signature"]  # the SDK keeps the last one, as here
        elif kind == "citations_delta" and block.kind == "text":
            block.citations.append(delta["citation"])
        elif kind == "compaction_delta" and block.kind == "compaction":
            block.compaction = delta
        return []

    def message(self) -> Message:
        blocks = (self.blocks[i].to_block() for i in sorted(self.blocks))
        return Message(role="assistant", content=tuple(b for b in blocks if b is not None))


_USAGE_FIELDS = (
    "input_tokens",
    "output_tokens",
    "cache_creation_input_tokens",
    "cache_read_input_tokens",
)


def _usage(api: Mapping[str, Any] | None, previous: Usage) -> Usage:
    """Merge the API's usage object into ours (counts are running totals, not increments;
    an absent or null count keeps the previous value)."""
    if not api:
        return previous
    counts = {}
    for name in _USAGE_FIELDS:
        value = api.get(name)
        counts[name] = getattr(previous, name) if value is None else int(value)
    details = api.get("output_tokens_details") or {}
    thinking = details.get("thinking_tokens")
    counts["thinking_tokens"] = previous.thinking_tokens if thinking is None else int(thinking)
    hour = (api.get("cache_creation") or {}).get("ephemeral_1h_input_tokens")
    counts["cache_creation_1h_input_tokens"] = (
        previous.cache_creation_1h_input_tokens if hour is None else int(hour)
    )
    server = api.get("server_tool_use") or {}
    for name in ("web_search_requests", "web_fetch_requests"):
        value = server.get(name)
        counts[name] = getattr(previous, name) if value is None else int(value)
    return Usage(**counts)


def _warn_if_deprecated(model: str) -> None:
    """The warning ``messages.create`` gives for a deprecated model (the SDK's table is
    private: anthropic._data, checked against 2.14; without it, no warning)."""
    try:
        from anthropic._data import DEPRECATED_MODELS
    except ImportError:
        return
    if model in DEPRECATED_MODELS:
        warnings.warn(
            f"The model '{model}' is deprecated and will reach end-of-life on "
            f"{DEPRECATED_MODELS[model]}.\nPlease migrate to a newer model. Visit "
            "https://docs.anthropic.com/en/docs/resources/model-deprecations for more "
            "information.",
            DeprecationWarning,
            stacklevel=3,
        )


def _env_credentials() -> bool:
    return any(
        os.environ.get(name)
        for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_PROFILE")
    )
