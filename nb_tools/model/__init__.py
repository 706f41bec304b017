"""Provider-neutral message types and the provider interface.

The providers live in :mod:`nb_tools.model.anthropic` and :mod:`nb_tools.model.openai`;
:func:`provider_for` picks one from a model name. No SDK is imported until a request is made.
"""

from nb_tools.model._provider import (
    ModelError,
    ModelEvent,
    ModelRequest,
    Provider,
    ResponseEvent,
    TextDeltaEvent,
    ThinkingDeltaEvent,
    ToolArgumentsDeltaEvent,
    ToolUseStartEvent,
)
from nb_tools.model._resolve import provider_for, provider_name, split_model
from nb_tools.model._types import (
    Block,
    CompactionBlock,
    ImageBlock,
    Message,
    OtherBlock,
    Part,
    RedactedThinkingBlock,
    Role,
    ServerToolResultBlock,
    ServerToolUseBlock,
    TextBlock,
    ThinkingBlock,
    ToolCall,
    ToolGrammar,
    ToolResult,
    ToolResultBlock,
    ToolSpec,
    ToolUseBlock,
    Usage,
)

__all__ = [
    "Block",
    "CompactionBlock",
    "ImageBlock",
    "Message",
    "ModelError",
    "ModelEvent",
    "ModelRequest",
    "OtherBlock",
    "Part",
    "Provider",
    "RedactedThinkingBlock",
    "ResponseEvent",
    "Role",
    "ServerToolResultBlock",
    "ServerToolUseBlock",
    "TextBlock",
    "TextDeltaEvent",
    "ThinkingBlock",
    "ThinkingDeltaEvent",
    "ToolArgumentsDeltaEvent",
    "ToolCall",
    "ToolGrammar",
    "ToolResult",
    "ToolResultBlock",
    "ToolSpec",
    "ToolUseBlock",
    "ToolUseStartEvent",
    "Usage",
    "provider_for",
    "provider_name",
    "split_model",
]
