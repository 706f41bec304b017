"""Provider-neutral message types and the provider interface.

The Anthropic provider lives in :mod:`nb_tools.model.anthropic` and is imported lazily.
"""

from nb_tools.model._provider import (
    ModelError,
    ModelEvent,
    ModelRequest,
    Provider,
    ResponseEvent,
    TextDeltaEvent,
    ToolArgumentsDeltaEvent,
    ToolUseStartEvent,
)
from nb_tools.model._types import (
    Block,
    ImageBlock,
    Message,
    Part,
    Role,
    TextBlock,
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
    "ImageBlock",
    "Message",
    "ModelError",
    "ModelEvent",
    "ModelRequest",
    "Part",
    "Provider",
    "ResponseEvent",
    "Role",
    "TextBlock",
    "TextDeltaEvent",
    "ToolArgumentsDeltaEvent",
    "ToolCall",
    "ToolGrammar",
    "ToolResult",
    "ToolResultBlock",
    "ToolSpec",
    "ToolUseBlock",
    "ToolUseStartEvent",
    "Usage",
]
