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
    citations: bool = False
    """A document the model may cite (Claude: ``citations: {"enabled": true}``); the text
    of its answer then carries citations of it."""
    file_id: str = ""
    """Where a provider's file store holds ``data`` (Claude's Files API), once uploaded:
    the request then names the file instead of sending the bytes."""


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
    anthropic_type: str = ""
    """An Anthropic-defined tool's type (``text_editor_20250728``, ``bash_20250124``): the
    Anthropic provider then declares it by type and name, with Claude's trained schema."""
    eager_input_streaming: bool = False
    """Claude: stream the arguments without buffering whole values."""
    defer_loading: bool = False
    """Claude: leave the tool out of the prompt until tool search finds it."""
    allowed_callers: tuple[str, ...] = ()
    """Claude: who may call the tool ("direct", "code_execution_20260120"); (): the default."""


@dataclass(frozen=True, kw_only=True)
class ToolCall:
    """One tool call the model made; ``arguments`` is the raw JSON text it produced."""

    id: str
    name: str
    arguments: str


@dataclass(frozen=True, kw_only=True)
class ToolResult:
    """The answer to one tool call. ``metadata`` is for the application, never sent.
    ``content`` is kept sendable: a lone surrogate (a file name that is not UTF-8, read
    with ``surrogateescape``) becomes U+FFFD, since a request holding one cannot be
    encoded and every later turn of the conversation would fail with it."""

    tool_use_id: str
    content: str
    parts: tuple[Part, ...] = ()
    is_error: bool = False
    metadata: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "content", sendable(self.content))


def sendable(text: str) -> str:
    """``text`` with each lone surrogate replaced by U+FFFD and each pair of surrogates
    joined into its character (text that encodes as UTF-8 is returned unchanged)."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    return text


@dataclass(frozen=True, kw_only=True)
class TextBlock:
    """Text; ``citations`` are the API's citation objects for it, kept as received."""

    text: str
    citations: tuple[Mapping[str, Any], ...] = ()


@dataclass(frozen=True, kw_only=True)
class ThinkingBlock:
    """The model's extended thinking, sent back exactly as received (text and signature):
    the API rejects a changed or missing thinking block in a tool loop."""

    thinking: str
    signature: str


@dataclass(frozen=True, kw_only=True)
class RedactedThinkingBlock:
    """Thinking the API encrypted (``data`` is opaque); sent back unchanged."""

    data: str


@dataclass(frozen=True, kw_only=True)
class ServerToolUseBlock:
    """A call of a tool the API runs itself (web_search, web_fetch, code_execution, ...);
    ``arguments`` is the raw JSON text of its input."""

    id: str
    name: str
    arguments: str


@dataclass(frozen=True, kw_only=True)
class ServerToolResultBlock:
    """What a server tool returned: ``type`` is the API's block type
    (``web_search_tool_result``, ``web_fetch_tool_result``, ``code_execution_tool_result``,
    ``bash_code_execution_tool_result``, ...), ``content`` its JSON content as received."""

    type: str
    tool_use_id: str
    content: Any = None


@dataclass(frozen=True, kw_only=True)
class CompactionBlock:
    """The API's summary of the conversation before it (server-side compaction); sent back
    as received, and the API ignores what came before it."""

    content: str | None = None
    encrypted_content: str | None = None


@dataclass(frozen=True, kw_only=True)
class OtherBlock:
    """A content block of a kind this version does not model, kept and sent back as the
    API sent it (``data`` is the whole block's JSON object)."""

    type: str
    data: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class ToolUseBlock:
    """A tool call inside an assistant message (``arguments`` is the raw JSON text).
    ``caller``: who made it, as the API said (``{"type": "direct"}``, or the code-execution
    tool for a programmatic call: ``{"type": "code_execution_20260120", "tool_id": ...}``),
    kept and sent back as received; None when the API did not say."""

    id: str
    name: str
    arguments: str
    caller: Mapping[str, Any] | None = None


@dataclass(frozen=True, kw_only=True)
class ToolResultBlock:
    """A tool result inside a user message."""

    result: ToolResult


@dataclass(frozen=True, kw_only=True)
class ImageBlock:
    """An image inside a user message."""

    part: Part


Block: TypeAlias = (
    TextBlock
    | ToolUseBlock
    | ToolResultBlock
    | ImageBlock
    | ThinkingBlock
    | RedactedThinkingBlock
    | ServerToolUseBlock
    | ServerToolResultBlock
    | CompactionBlock
    | OtherBlock
)


@dataclass(frozen=True, kw_only=True)
class Message:
    role: Role
    content: tuple[Block, ...]

    @property
    def text(self) -> str:
        return "".join(b.text for b in self.content if isinstance(b, TextBlock))

    @property
    def thinking(self) -> str:
        return "".join(b.thinking for b in self.content if isinstance(b, ThinkingBlock))

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
    thinking_tokens: int = 0  # part of output_tokens (the API bills them as output)
    web_search_requests: int = 0
    web_fetch_requests: int = 0
    cache_creation_1h_input_tokens: int = 0
    """The part of ``cache_creation_input_tokens`` written with the 1-hour TTL (priced at
    2x input, the 5-minute writes at 1.25x)."""
    estimated: bool = False  # some of it was estimated (a reply cut off by a stop)

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cache_creation_input_tokens=self.cache_creation_input_tokens
            + other.cache_creation_input_tokens,
            cache_read_input_tokens=self.cache_read_input_tokens + other.cache_read_input_tokens,
            cost_usd=self.cost_usd + other.cost_usd,
            thinking_tokens=self.thinking_tokens + other.thinking_tokens,
            web_search_requests=self.web_search_requests + other.web_search_requests,
            web_fetch_requests=self.web_fetch_requests + other.web_fetch_requests,
            cache_creation_1h_input_tokens=self.cache_creation_1h_input_tokens
            + other.cache_creation_1h_input_tokens,
            estimated=self.estimated or other.estimated,
        )
