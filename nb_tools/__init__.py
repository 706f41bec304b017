"""nb_tools: give a language model your Python functions as tools inside a notebook.

``%load_ext nb_tools`` registers the magics; ``@tool`` turns a function into a tool in the
session registry; ``%%agent`` runs Claude's tool loop in the cell.

Importing this package stays cheap: IPython, ipywidgets and anthropic are imported only
when something needs them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from nb_tools._lazy import lazy_exports
from nb_tools.tool import (
    MCP_NAME_PREFIX,
    ApprovalByArguments,
    Call,
    Change,
    Executor,
    FunctionTool,
    Info,
    Middleware,
    MultiPreviewer,
    Next,
    Previewer,
    Progress,
    ProtectedCall,
    ReadOnlyCall,
    Registry,
    Result,
    Schema,
    Tool,
    ToolGrammar,
    ToolPanic,
    ValidationError,
    allow,
    chain,
    default_registry,
    needs_approval,
    progress,
    schema_of,
    split_mcp_name,
    tool,
    tools_from,
    truncate,
    truncate_output,
    validate_name,
)

if TYPE_CHECKING:
    from nb_tools.agent import Agent, Conversation, RunResult, amap, call_tool, map
    from nb_tools.jupyter import run_agent

__version__ = "0.1.0"

__getattr__ = lazy_exports(
    __name__,
    {
        "Agent": "nb_tools.agent",
        "Conversation": "nb_tools.agent",
        "RunResult": "nb_tools.agent",
        "call_tool": "nb_tools.agent",
        "amap": "nb_tools.agent",
        "map": "nb_tools.agent",
        "run_agent": "nb_tools.jupyter",
    },
)


def _jupyter_labextension_paths() -> list[dict[str, str]]:
    """Where ``jupyter labextension develop`` finds the built extension."""
    return [{"src": "../labextension/dist", "dest": "nb-tools-labextension"}]


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext nb_tools``."""
    from nb_tools.jupyter import load_ipython_extension as load

    load(ipython)


def unload_ipython_extension(ipython: Any) -> None:
    """``%unload_ext nb_tools``."""
    from nb_tools.jupyter import unload_ipython_extension as unload

    unload(ipython)


__all__ = [
    "MCP_NAME_PREFIX",
    "Agent",
    "ApprovalByArguments",
    "Call",
    "Change",
    "Conversation",
    "Executor",
    "FunctionTool",
    "Info",
    "Middleware",
    "MultiPreviewer",
    "Next",
    "Previewer",
    "Progress",
    "ProtectedCall",
    "ReadOnlyCall",
    "Registry",
    "Result",
    "RunResult",
    "Schema",
    "Tool",
    "ToolGrammar",
    "ToolPanic",
    "ValidationError",
    "allow",
    "amap",
    "call_tool",
    "chain",
    "default_registry",
    "map",
    "needs_approval",
    "progress",
    "run_agent",
    "schema_of",
    "split_mcp_name",
    "tool",
    "tools_from",
    "truncate",
    "truncate_output",
    "validate_name",
]
