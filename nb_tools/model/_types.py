"""Provider-neutral message types: plain data, importing nothing else of ours."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

Role: TypeAlias = Literal["user", "assistant"]


@dataclass(frozen=True, kw_only=True)
class Part:
    """Output beyond text in a tool result or a message: an image or a document.

    ``data`` holds the raw bytes (not base64); providers encode them as they need.
    """

    kind: Literal["image", "document"]
    media_type: str
    data: bytes
    title: str = ""


@dataclass(frozen=True, kw_only=True)
class ToolGrammar:
    """A freeform tool's input grammar (``syntax`` is "lark" or "regex")."""

    syntax: Literal["lark", "regex"]
    definition: str = ""


@dataclass(frozen=True, kw_only=True)
class ToolSpec:
    """A tool as a provider sees it."""

    name: str
    description: str
    input_schema: Mapping[str, Any]
    strict: bool = False
    grammar: ToolGrammar | None = None


@dataclass(frozen=True, kw_only=True)
class ToolCall:
    """One tool call the model made; ``arguments`` is the raw JSON text it produced."""

    id: str
    name: str
    arguments: str


@dataclass(frozen=True, kw_only=True)
class ToolResult:
    """The answer to one tool call. ``metadata`` is for the application, never sent."""

    tool_use_id: str
    content: str
    parts: tuple[Part, ...] = ()
    is_error: bool = False
    metadata: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class TextBlock:
    text: str


@dataclass(frozen=True, kw_only=True)
class ToolUseBlock:
    """A tool call inside an assistant message (``arguments`` is the raw JSON text)."""

    id: str
    name: str
    arguments: str


@dataclass(frozen=True, kw_only=True)
class ToolResultBlock:
    """A tool result inside a user message."""

    result: ToolResult


@dataclass(frozen=True, kw_only=True)
class ImageBlock:
    """An image inside a user message."""

    part: Part


Block: TypeAlias = TextBlock | ToolUseBlock | ToolResultBlock | ImageBlock


@dataclass(frozen=True, kw_only=True)
class Message:
    role: Role
    content: tuple[Block, ...]

    @property
    def text(self) -> str:
        return "".join(b.text for b in self.content if isinstance(b, TextBlock))

    @property
    def tool_calls(self) -> tuple[ToolCall, ...]:
        return tuple(
            ToolCall(id=b.id, name=b.name, arguments=b.arguments)
            for b in self.content
            if isinstance(b, ToolUseBlock)
        )


@dataclass(frozen=True, kw_only=True)
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0
    cost_usd: float = 0.0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cache_creation_input_tokens=self.cache_creation_input_tokens
            + other.cache_creation_input_tokens,
            cache_read_input_tokens=self.cache_read_input_tokens + other.cache_read_input_tokens,
            cost_usd=self.cost_usd + other.cost_usd,
        )
