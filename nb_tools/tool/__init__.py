"""The core runtime: tools, schemas, validation, the registry and the executor.

Pure Python: no Jupyter and no provider SDK imports here.
"""

from nb_tools.model import ToolGrammar
from nb_tools.tool._collect import tools_from
from nb_tools.tool._decorator import FunctionTool, tool
from nb_tools.tool._derive import schema_of, type_schema
from nb_tools.tool._executor import Executor
from nb_tools.tool._middleware import Middleware, Next, allow, chain, truncate_output
from nb_tools.tool._names import MCP_NAME_PREFIX, split_mcp_name, validate_name
from nb_tools.tool._progress import Progress, ProgressSink, progress, progress_sink
from nb_tools.tool._registry import Registry, default_registry, strict_validator
from nb_tools.tool._schema import Schema
from nb_tools.tool._subject import (
    Headline,
    Subject,
    SubjectKind,
    declared_properties,
    headline_of,
    info_of,
    subject_of,
)
from nb_tools.tool._truncate import truncate
from nb_tools.tool._types import (
    AnthropicDefined,
    ApprovalByArguments,
    Call,
    Change,
    FromMCPServer,
    Info,
    MultiPreviewer,
    Previewer,
    ProtectedCall,
    ReadOnlyCall,
    Result,
    Tool,
    ToolPanic,
    ValidationError,
)
from nb_tools.tool._undo import RevertRefused, Undo
from nb_tools.tool._votes import is_read_only_call, needs_approval, preview_changes

__all__ = [
    "MCP_NAME_PREFIX",
    "AnthropicDefined",
    "ApprovalByArguments",
    "Call",
    "Change",
    "Executor",
    "FromMCPServer",
    "FunctionTool",
    "Headline",
    "Info",
    "Middleware",
    "MultiPreviewer",
    "Next",
    "Previewer",
    "Progress",
    "ProgressSink",
    "ProtectedCall",
    "ReadOnlyCall",
    "Registry",
    "Result",
    "RevertRefused",
    "Schema",
    "Subject",
    "SubjectKind",
    "Tool",
    "ToolGrammar",
    "ToolPanic",
    "Undo",
    "ValidationError",
    "allow",
    "chain",
    "declared_properties",
    "default_registry",
    "headline_of",
    "info_of",
    "is_read_only_call",
    "needs_approval",
    "preview_changes",
    "progress",
    "progress_sink",
    "schema_of",
    "split_mcp_name",
    "strict_validator",
    "subject_of",
    "tool",
    "tools_from",
    "truncate",
    "truncate_output",
    "type_schema",
    "validate_name",
]
