"""What a run reports while it goes: the notebook layer is one consumer, a script another."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, TypeAlias

from nb_tools.agent._notices import (
    CitationsReceived,
    ContextCompacted,
    RunNotice,
    ServerToolUsed,
    ThinkingDelta,
)
from nb_tools.model import ToolCall, ToolResult, Usage
from nb_tools.tool import Change, Info, Progress

if TYPE_CHECKING:
    from nb_tools.agent._approval import AskReason, Source
    from nb_tools.agent._result import RunResult

ToolStatus: TypeAlias = Literal[
    "ok", "error", "denied", "stopped", "cut_off", "running_in_background", "pending"
]
"""How a tool call ended: "ok"; "error" (the tool failed, or its arguments were invalid);
"denied"; "stopped" (a stop came before it started, or it was read-only); "cut_off" (a
stop came while it ran: not run again); "running_in_background" (stopped, but its thread
was blocked outside Python and may still change things). "pending" is the transcript's
only: announced, never finished (e.g. the kernel died)."""


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
class ToolArgumentsDelta:
    """A piece of a tool call's arguments (raw JSON text) as the model writes them, so a
    view can show the call before the reply is complete (a writer's diff grows while the
    model writes the file). The first event of a call may carry an empty piece: the call
    has begun. The call itself comes with :class:`ToolCallStarted` once the reply is
    complete; its id is usually ``call_id`` but may differ (ids are made unique in the
    conversation). A call the reply drops (a stop, a retry, a cut) gets no
    ``ToolCallStarted``. Transcripts do not keep these: the finished call has the whole
    arguments."""

    call_id: str
    name: str
    partial_json: str


@dataclass(frozen=True, kw_only=True)
class ToolProgress:
    call_id: str
    progress: Progress


@dataclass(frozen=True, kw_only=True)
class ApprovalRequested:
    """A person is asked. ``reason``: why (a rule, a protected path, the policy);
    ``always_allow_rule``: what "Always allow" would add (``None``: not offered)."""

    call: ToolCall
    info: Info | None
    preview: tuple[Change, ...] | None
    reason: AskReason | None = None
    always_allow_rule: str | None = None


@dataclass(frozen=True, kw_only=True)
class ApprovalDecided:
    """``source`` says who decided, typed (rule, permission, protection, policy, person,
    error); ``by`` is its display label: "user", "policy:auto", "rule:allow
    bash(git log:*) [project]", "rule:allow web_fetch(domain:x.org) [session]" (a rule
    "Always allow" added), …; ``rule`` is the rule that decided, or the rule "Always
    allow" added."""

    call_id: str
    approved: bool
    by: str
    message: str | None = None
    source: Source | None = None
    rule: str | None = None


@dataclass(frozen=True, kw_only=True)
class ToolCallFinished:
    call: ToolCall
    result: ToolResult
    duration: float
    status: ToolStatus  # never "pending"


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
    | ToolArgumentsDelta
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
