"""The provider interface: one streamed model turn at a time."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import Protocol, TypeAlias

from nb_tools.model._types import Message, ToolSpec, Usage


@dataclass(frozen=True, kw_only=True)
class ModelRequest:
    system: str
    messages: Sequence[Message]
    tools: Sequence[ToolSpec]
    max_tokens: int = 8192


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
class ResponseEvent:
    """The last event of a turn: the whole assistant message (tool-use blocks carry the
    raw argument text exactly as streamed), why it stopped, and what it cost."""

    message: Message
    stop_reason: str
    usage: Usage


ModelEvent: TypeAlias = TextDeltaEvent | ToolUseStartEvent | ToolArgumentsDeltaEvent | ResponseEvent


class ModelError(Exception):
    """A model request that failed after the provider's retries (HTTP status, overload,
    a cut stream). ``status`` is the HTTP status when there was one."""

    def __init__(self, message: str, *, status: int | None = None, retryable: bool = False):
        super().__init__(message)
        self.status = status
        self.retryable = retryable


class Provider(Protocol):
    """A model behind one interface. ``stream`` yields deltas and ends with exactly one
    :class:`ResponseEvent`, or raises :class:`ModelError`."""

    @property
    def model(self) -> str: ...

    def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]: ...
