"""The provider interface: one streamed model turn at a time, and what a provider declares
about itself (its name, a model's limits, the request features it sends, token counting,
who retries), so the agent asks the provider and never applies one vendor's table to
another's models."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeAlias, runtime_checkable

from nb_tools.model._pricing import Price
from nb_tools.model._types import (
    Message,
    ServerToolResultBlock,
    ServerToolUseBlock,
    ToolSpec,
    Usage,
)

DEFAULT_MAX_TOKENS = 8192
"""A request's ``max_tokens`` when neither the user nor the provider's limits say one and
the provider needs a number."""


@dataclass(frozen=True, kw_only=True)
class ModelRequest:
    system: str
    messages: Sequence[Message]
    tools: Sequence[ToolSpec]
    max_tokens: int | None = DEFAULT_MAX_TOKENS
    """The reply's output limit; None leaves it to the server (only for a provider whose
    :attr:`RequestFeatures.optional_max_tokens` says it may)."""
    thinking: Mapping[str, Any] | None = None
    """The API's ``thinking`` object (``{"type": "enabled", "budget_tokens": N}`` or
    ``{"type": "adaptive"}``), or None."""
    server_tools: Sequence[Mapping[str, Any]] = ()
    """Tools the API runs itself, declared as the API defines them (``{"type":
    "web_search_20250305", "name": "web_search"}``)."""
    options: Mapping[str, Any] = field(default_factory=dict)
    """Other top-level request fields, sent as given: ``tool_choice``, ``temperature``,
    ``top_p``, ``stop_sequences``, ``output_config``, ``context_management``, ..."""
    betas: Sequence[str] = ()
    """Beta features the request needs (the ``anthropic-beta`` header)."""
    cache_ttl: str | None = None
    """How long prompt-cache breakpoints live ("5m", "1h"); None: the provider's default."""


@dataclass(frozen=True, kw_only=True)
class TextDeltaEvent:
    text: str


@dataclass(frozen=True, kw_only=True)
class ToolUseStartEvent:
    id: str
    name: str


@dataclass(frozen=True, kw_only=True)
class ToolArgumentsDeltaEvent:
    id: str
    partial_json: str


@dataclass(frozen=True, kw_only=True)
class ThinkingDeltaEvent:
    """A piece of the model's extended thinking as it streams."""

    text: str


@dataclass(frozen=True, kw_only=True)
class ServerToolEvent:
    """A tool the API ran itself, with its result, as soon as the result arrives."""

    use: ServerToolUseBlock
    result: ServerToolResultBlock


@dataclass(frozen=True, kw_only=True)
class ResponseEvent:
    """The last event of a turn: the whole assistant message (tool-use blocks carry the
    raw argument text exactly as streamed), why it stopped, and what it cost."""

    message: Message
    stop_reason: str
    usage: Usage
    stop_details: Mapping[str, Any] | None = None
    """The API's ``stop_details`` (a refusal's category and explanation), as received."""
    stop_sequence: str | None = None
    container: Mapping[str, Any] | None = None
    """The code-execution container the API used (``{"id", "expires_at"}``), as received:
    the next requests of the conversation name it, so its files persist."""


ModelEvent: TypeAlias = (
    TextDeltaEvent
    | ToolUseStartEvent
    | ToolArgumentsDeltaEvent
    | ThinkingDeltaEvent
    | ServerToolEvent
    | ResponseEvent
)


class ModelError(Exception):
    """A model request that failed after the provider's retries (HTTP status, overload,
    a cut stream). ``status`` is the HTTP status when there was one."""

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        retryable: bool = False,
        error_type: str = "",
    ):
        super().__init__(message)
        self.status = status
        self.retryable = retryable
        self.error_type = error_type
        """The API's error type ("billing_error", "overloaded_error", ...), when known."""


@dataclass(frozen=True, kw_only=True)
class ModelLimits:
    """What a model takes. ``None`` where the provider does not know: the agent then does
    without (no summary of older turns before the server says the context is full)."""

    context_window: int | None = None
    """Input plus output tokens, when known."""
    max_output_tokens: int | None = None
    """The most a reply may ask for (``max_tokens``), when known."""
    default_max_tokens: int | None = None
    """What a request asks for when the user set no ``max_tokens``; None: the field is left
    out and the server decides (its own limit, or what the context has room for)."""
    thinking: bool = False
    """The request's ``thinking`` object applies (a budget of thinking tokens)."""
    adaptive_thinking: bool = False
    effort: bool = False
    """The request's ``output_config.effort`` applies."""
    server_compaction: bool = False
    """The server summarises a long conversation itself (else the agent does, client-side)."""
    clear_tool_uses: bool = False
    """The server clears old tool results itself (else the agent does, client-side)."""
    claude4: bool = False
    """Claude 4 and later: interleaved thinking, the newest Anthropic-defined tools."""


@dataclass(frozen=True, kw_only=True)
class RequestFeatures:
    """Which parts of a :class:`ModelRequest` a provider sends to its server; the agent
    leaves out (and says so) what the provider would drop."""

    server_tools: bool = False
    """``ModelRequest.server_tools`` (tools the API runs itself)."""
    context_management: bool = False
    """Server-side context editing (``context_management`` and its betas)."""
    betas: bool = False
    """``ModelRequest.betas`` (beta headers)."""
    anthropic_tools: bool = False
    """Anthropic-defined tools declared by type (``text_editor_20250728``, ``bash_...``)."""
    images: bool = True
    """Images in user messages."""
    images_in_tool_results: bool = False
    """Images inside a tool result (else the provider puts a note in their place)."""
    structured_outputs: bool = False
    """A JSON Schema the reply must follow (Claude's structured outputs, OpenAI's
    ``response_format: json_schema``), passed as ``options["output_schema"]``."""
    optional_max_tokens: bool = False
    """``ModelRequest.max_tokens`` may be None (the field is then left out)."""
    server_token_counting: bool = False
    """``count_tokens`` asks the server (else it is the rough estimate)."""


@runtime_checkable
class Provider(Protocol):
    """A model behind one interface. ``stream`` yields deltas and ends with exactly one
    :class:`ResponseEvent`, or raises :class:`ModelError`.

    Subclass :class:`BaseProvider` to get the declarations' defaults (see "Adding a
    provider" in the docs)."""

    @property
    def name(self) -> str:
        """The provider's label in transcripts ("anthropic", "openai", "ollama", ...)."""
        ...

    @property
    def model(self) -> str: ...

    @property
    def features(self) -> RequestFeatures: ...

    def limits(self) -> ModelLimits:
        """The limits of :attr:`model` (they may grow more exact once the server said more,
        e.g. after its first reply)."""
        ...

    async def count_tokens(self, request: ModelRequest) -> int:
        """The request's input tokens: the server's count where it has one, else the rough
        estimate (:func:`nb_tools.model.estimate_tokens`)."""
        ...

    def price(self) -> Price | None:
        """What :attr:`model` costs (USD per million tokens), or None when unknown: its
        replies then cost $0 and a run with a budget refuses to start."""
        ...

    def take_over_retries(self) -> int:
        """For a caller that retries failed requests itself and shows each retry (the
        agent): how many retries to make; 0 when the provider keeps its own."""
        ...

    def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]: ...


class BaseProvider:
    """The declarations' defaults for a provider: write ``model`` and ``stream``, set
    ``name``, and override what your server does better (its limits, its features, its
    token counting, its retries)."""

    name: str = "provider"
    features: RequestFeatures = RequestFeatures()

    @property
    def model(self) -> str:
        raise NotImplementedError(f"{type(self).__name__} must define model")

    def limits(self) -> ModelLimits:
        """Unknown: the agent asks for no particular output size and keeps no context line."""
        return ModelLimits()

    async def count_tokens(self, request: ModelRequest) -> int:
        from nb_tools.model._tokens import estimate_tokens

        return estimate_tokens(request)

    def price(self) -> Price | None:
        """Unknown: replies cost $0 and a budget cannot be kept (the run says so)."""
        return None

    def take_over_retries(self) -> int:
        return 0

    def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        raise NotImplementedError(f"{type(self).__name__} must define stream")
