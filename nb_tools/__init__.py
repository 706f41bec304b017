"""nb_tools: give a language model your Python functions as tools inside a notebook.

``%load_ext nb_tools`` registers the magics; ``@tool`` turns a function into a tool in the
session registry; ``%%agent`` runs Claude's tool loop in the cell.

Importing this package stays cheap: IPython, ipywidgets and anthropic are imported only
when something needs them.
"""

from __future__ import annotations

import sys
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
    from nb_tools.agent import Agent, Conversation, RunResult, call_tool, last_map, map
    from nb_tools.jupyter import run_agent

__version__ = "0.1.0"

__getattr__ = lazy_exports(
    __name__,
    {
        "Agent": "nb_tools.agent",
        "Conversation": "nb_tools.agent",
        "RunResult": "nb_tools.agent",
        "call_tool": "nb_tools.agent",
        "last_map": "nb_tools.agent",
        "map": "nb_tools.agent",
        "run_agent": "nb_tools.jupyter",
    },
)


def _jupyter_labextension_paths() -> list[dict[str, str]]:
    """Where ``jupyter labextension develop`` finds the built extension."""
    return [{"src": "../labextension/dist", "dest": "nb-tools-labextension"}]


async def amap(prompt: Any, inputs: Any, *, show: bool | None = None, **options: Any) -> Any:
    """``await nb_tools.amap(prompt, inputs, ...)``: :func:`nb_tools.agent.amap` (the options
    are its own, see ``docs/map.md``). Awaited in a notebook cell (an IPython kernel),
    the map runs as ``%%agent --over`` does: the plan card before the first request, the
    progress view, and on Interrupt the partial table shown and kept in
    :func:`nb_tools.last_map` before the cell ends. ``show=False``: no view, in a cell too."""
    if show is not False and "ipykernel" in sys.modules:
        from nb_tools.jupyter import amap_in_cell, in_kernel_cell

        if in_kernel_cell():
            return await amap_in_cell(prompt, inputs, **options)
    from nb_tools.agent import amap as run

    return await run(prompt, inputs, **options)


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
    "last_map",
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
