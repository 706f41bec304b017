"""The tool loop: turns, events, approval policy, scheduling of parallel calls,
cancellation and resume, usage.

``import nb_tools.agent`` does not import ``anthropic``: the Anthropic provider is created
on an agent's first run when it was given a model name (or none).
"""

from nb_tools.agent._agent import Agent
from nb_tools.agent._approval import (
    APPROVAL_ENV,
    POLICIES,
    Allow,
    ApprovalRequest,
    Approver,
    Ask,
    AskReason,
    Decision,
    Deny,
    ErrorSource,
    Permission,
    PermissionSource,
    PersonSource,
    Policy,
    PolicySource,
    ProtectionSource,
    RuleSource,
    Source,
    Verdict,
    check_policy,
    default_policy,
    denial_text,
    source_label,
)
from nb_tools.agent._context import attachment_parts
from nb_tools.agent._conversation import Conversation
from nb_tools.agent._deciders import Decider, decide
from nb_tools.agent._events import (
    ApprovalDecided,
    ApprovalRequested,
    Event,
    ModelFailed,
    ModelRetrying,
    RunFinished,
    TextDelta,
    ToolArgumentsDelta,
    ToolCallFinished,
    ToolCallStarted,
    ToolProgress,
    TurnStarted,
    UsageUpdated,
)
from nb_tools.agent._instructions import Instructions, ProjectInstructions, find_instructions
from nb_tools.agent._journal import RestoreReport, RunChange
from nb_tools.agent._map import MapInfo, MapProgress, MapSettings, amap, current_row, map
from nb_tools.agent._map_frame import last_map
from nb_tools.agent._map_plan import MapPlan, plan_text
from nb_tools.agent._map_rows import is_frame, read_inputs, render_prompts
from nb_tools.agent._notices import (
    CitationsReceived,
    ContextCompacted,
    RunNotice,
    ServerToolUsed,
    ThinkingDelta,
)
from nb_tools.agent._output import OutputError
from nb_tools.agent._replay import ToolCallFailed, call_tool
from nb_tools.agent._result import RunResult
from nb_tools.agent._retry import retry_text
from nb_tools.agent._run import (
    BACKGROUND_TEXT,
    CUT_OFF_TEXT,
    STOPPED_TEXT,
    EventHandler,
    Finished,
    GoOn,
    TurnOutcome,
)
from nb_tools.agent._settings import AgentSettings
from nb_tools.agent._turns import RequestOptions, configure_request
from nb_tools.tool._votes import is_protected_call

__all__ = [
    "APPROVAL_ENV",
    "BACKGROUND_TEXT",
    "CUT_OFF_TEXT",
    "POLICIES",
    "STOPPED_TEXT",
    "Agent",
    "AgentSettings",
    "Allow",
    "ApprovalDecided",
    "ApprovalRequest",
    "ApprovalRequested",
    "Approver",
    "Ask",
    "AskReason",
    "CitationsReceived",
    "ContextCompacted",
    "Conversation",
    "Decider",
    "Decision",
    "Deny",
    "ErrorSource",
    "Event",
    "EventHandler",
    "Finished",
    "GoOn",
    "Instructions",
    "MapInfo",
    "MapPlan",
    "MapProgress",
    "MapSettings",
    "ModelFailed",
    "ModelRetrying",
    "OutputError",
    "Permission",
    "PermissionSource",
    "PersonSource",
    "Policy",
    "PolicySource",
    "ProjectInstructions",
    "ProtectionSource",
    "RequestOptions",
    "RestoreReport",
    "RuleSource",
    "RunChange",
    "RunFinished",
    "RunNotice",
    "RunResult",
    "ServerToolUsed",
    "Source",
    "TextDelta",
    "ThinkingDelta",
    "ToolArgumentsDelta",
    "ToolCallFailed",
    "ToolCallFinished",
    "ToolCallStarted",
    "ToolProgress",
    "TurnOutcome",
    "TurnStarted",
    "UsageUpdated",
    "Verdict",
    "amap",
    "attachment_parts",
    "call_tool",
    "check_policy",
    "configure_request",
    "current_row",
    "decide",
    "default_policy",
    "denial_text",
    "find_instructions",
    "is_frame",
    "is_protected_call",
    "last_map",
    "map",
    "plan_text",
    "read_inputs",
    "render_prompts",
    "retry_text",
    "source_label",
]
