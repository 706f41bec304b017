"""The provider interface: one streamed model turn at a time."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeAlias

from nb_tools.model._types import (
    Message,
    ServerToolResultBlock,
    ServerToolUseBlock,
    ToolSpec,
    Usage,
)


@dataclass(frozen=True, kw_only=True)
class ModelRequest:
    system: str
    messages: Sequence[Message]
    tools: Sequence[ToolSpec]
    max_tokens: int = 8192
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


class Provider(Protocol):
    """A model behind one interface. ``stream`` yields deltas and ends with exactly one
    :class:`ResponseEvent`, or raises :class:`ModelError`."""

    @property
    def model(self) -> str: ...

    def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]: ...
