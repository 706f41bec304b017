"""What a run reports while it goes: the notebook layer is one consumer, a script another."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeAlias

from nb_tools.agent._notices import (
    CitationsReceived,
    ContextCompacted,
    RunNotice,
    ServerToolUsed,
    ThinkingDelta,
)
from nb_tools.model import ToolCall, ToolResult, Usage
from nb_tools.tool._progress import Progress
from nb_tools.tool._types import Change, Info

if TYPE_CHECKING:
    from nb_tools.agent._agent import RunResult


@dataclass(frozen=True, kw_only=True)
class TextDelta:
    text: str


@dataclass(frozen=True, kw_only=True)
class TurnStarted:
    turn: int


@dataclass(frozen=True, kw_only=True)
class ToolCallStarted:
    """A call is about to be decided on / run. ``preview`` holds a writer's changes."""

    call: ToolCall
    info: Info | None
    preview: tuple[Change, ...] | None
    needs_approval: bool


@dataclass(frozen=True, kw_only=True)
class ToolProgress:
    call_id: str
    progress: Progress


@dataclass(frozen=True, kw_only=True)
class ApprovalRequested:
    call: ToolCall
    info: Info | None
    preview: tuple[Change, ...] | None


@dataclass(frozen=True, kw_only=True)
class ApprovalDecided:
    """``by`` names who decided: "user", "policy:auto", "policy:deny", "policy:read-only",
    or a permission rule such as "rule:allow bash(git log:*)"."""

    call_id: str
    approved: bool
    by: str
    message: str | None = None


@dataclass(frozen=True, kw_only=True)
class ToolCallFinished:
    call: ToolCall
    result: ToolResult
    duration: float
    status: str  # "ok" | "error" | "denied" | "stopped" | "cut_off" | "running_in_background"


@dataclass(frozen=True, kw_only=True)
class UsageUpdated:
    turn: int
    usage: Usage  # this turn's
    total: Usage  # the run's so far


@dataclass(frozen=True, kw_only=True)
class ModelFailed:
    """An API error that survived the retries; the run ends, the conversation is intact."""

    message: str
    status: int | None = None


@dataclass(frozen=True, kw_only=True)
class ModelRetrying:
    """A model request failed in a way worth retrying (overloaded, rate limited, a dropped
    connection); the agent tries again after ``wait`` seconds. ``attempt`` counts from 1;
    ``reason`` is short ("overloaded", "rate limited", ...)."""

    attempt: int
    wait: float
    reason: str


@dataclass(frozen=True, kw_only=True)
class RunFinished:
    """The last event of every run. ``result.stop_reason`` says how it ended:
    "end_turn", "max_turns", "stopped", "error", "max_tokens", …"""

    result: RunResult


Event: TypeAlias = (
    TextDelta
    | TurnStarted
    | ToolCallStarted
    | ToolProgress
    | ApprovalRequested
    | ApprovalDecided
    | ToolCallFinished
    | UsageUpdated
    | ModelFailed
    | ModelRetrying
    | RunFinished
    | ThinkingDelta
    | ContextCompacted
    | RunNotice
    | ServerToolUsed
    | CitationsReceived
)
