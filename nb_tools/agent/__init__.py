"""The tool loop: turns, events, approval policy, scheduling of parallel calls,
cancellation and resume, usage.

``import nb_tools.agent`` does not import ``anthropic``: the Anthropic provider is created
on an agent's first run when it was given a model name (or none).
"""

from nb_tools.agent._agent import (
    BACKGROUND_TEXT,
    CUT_OFF_TEXT,
    STOPPED_TEXT,
    Agent,
    EventHandler,
    RunResult,
)
from nb_tools.agent._approval import (
    POLICIES,
    ApprovalRequest,
    Approver,
    Decision,
    Permission,
    Policy,
    decide,
    denial_text,
    is_protected_call,
)
from nb_tools.agent._events import (
    ApprovalDecided,
    ApprovalRequested,
    Event,
    ModelFailed,
    RunFinished,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
    ToolProgress,
    TurnStarted,
    UsageUpdated,
)

__all__ = [
    "BACKGROUND_TEXT",
    "CUT_OFF_TEXT",
    "POLICIES",
    "STOPPED_TEXT",
    "Agent",
    "ApprovalDecided",
    "ApprovalRequest",
    "ApprovalRequested",
    "Approver",
    "Decision",
    "Event",
    "EventHandler",
    "ModelFailed",
    "Permission",
    "Policy",
    "RunFinished",
    "RunResult",
    "TextDelta",
    "ToolCallFinished",
    "ToolCallStarted",
    "ToolProgress",
    "TurnStarted",
    "UsageUpdated",
    "decide",
    "denial_text",
    "is_protected_call",
]
