"""Events of the Messages API features: thinking as it streams, a compacted conversation,
and notices (a retried cut tool call, a server tool left out, ...)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

CompactionHow: TypeAlias = Literal["server", "summary", "cleared"]
NoticeKind: TypeAlias = Literal[
    "retry_max_tokens",
    "pause_turn",
    "server_tool_skipped",
    "image_resized",
    "image_dropped",
    "instructions",
    "context",
    "output_retry",
    "budget",
    "credentials",
    "upload_failed",
]


@dataclass(frozen=True, kw_only=True)
class ThinkingDelta:
    """A piece of the model's extended thinking (shown collapsed)."""

    text: str


@dataclass(frozen=True, kw_only=True)
class ContextCompacted:
    """The conversation was made shorter: ``how`` is "server" (the API's compaction: a
    ``compaction`` block now stands for what came before it), "summary" (older turns
    replaced by a summary the model wrote) or "cleared" (old large tool results replaced by
    a note). ``tokens_before`` is the conversation's size that triggered it (0: unknown)."""

    how: CompactionHow
    messages_before: int
    messages_after: int
    tokens_before: int = 0
    message: str = ""


@dataclass(frozen=True, kw_only=True)
class RunNotice:
    """Something the run did on its own that the user should know: ``kind`` is
    "retry_max_tokens", "server_tool_skipped", "image_resized", "image_dropped",
    "pause_turn", "instructions" (the project instruction files read into the system
    prompt), "context" (what was added to the prompt: ``@`` mentions, the cell),
    "output_retry", "budget", "upload_failed" (a file sent inline: its upload failed),
    "credentials" (which credential the provider uses when
    another one is configured too)."""

    kind: NoticeKind
    message: str


@dataclass(frozen=True, kw_only=True)
class ServerToolUsed:
    """A tool the API ran itself (web_search, web_fetch, code_execution): its call and, when
    it came in the same reply, its result block (``result_type`` and ``content`` as the API
    sent them)."""

    id: str
    name: str
    arguments: str
    result_type: str = ""
    content: Any = None


@dataclass(frozen=True, kw_only=True)
class CitationsReceived:
    """The citations of a reply's text (the API's citation objects)."""

    citations: tuple[Mapping[str, Any], ...]
