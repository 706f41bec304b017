"""Coding-agent tools on a workspace root: files, patch, glob, grep, shell, web fetch, todo
and notebook cells (see ``docs/builtins.md``).

``builtin_tools(root)`` returns the set, sharing one :class:`Workspace` (confinement) and
one :class:`ReadState` (what was read, for the read-before-write rule). Each tool is also
importable on its own. The Anthropic-defined client tools (:class:`TextEditorTool`,
:class:`BashAdapterTool`) are not in the default set, since the API declares them by type
(``ANTHROPIC_TYPE``) and the adapter's name ``bash`` would clash with our ``bash``; make
them yourself from the same workspace and state.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from pathlib import Path

from nb_tools.builtin._bash import BashTool
from nb_tools.builtin._bash_adapter import BashAdapterTool
from nb_tools.builtin._bash_readonly import is_read_only
from nb_tools.builtin._files import EditFileTool, ReadFileTool, WriteFileTool
from nb_tools.builtin._glob import GlobTool
from nb_tools.builtin._grep import GrepTool
from nb_tools.builtin._memory import MemoryTool
from nb_tools.builtin._notebook import NotebookEditTool, NotebookReadTool
from nb_tools.builtin._patch import ApplyPatchTool
from nb_tools.builtin._readstate import ReadState
from nb_tools.builtin._rg import find_rg
from nb_tools.builtin._text_editor import TextEditorTool
from nb_tools.builtin._todo import Todo, TodoWriteTool
from nb_tools.builtin._web import WebFetchTool
from nb_tools.builtin._workspace import Workspace, WorkspaceError
from nb_tools.sandbox import SandboxMode, SandboxPolicy
from nb_tools.tool import Tool

__all__ = [
    "TOOL_NAMES",
    "ApplyPatchTool",
    "BashAdapterTool",
    "BashTool",
    "EditFileTool",
    "GlobTool",
    "GrepTool",
    "MemoryTool",
    "NotebookEditTool",
    "NotebookReadTool",
    "ReadFileTool",
    "ReadState",
    "TextEditorTool",
    "Todo",
    "TodoWriteTool",
    "WebFetchTool",
    "Workspace",
    "WorkspaceError",
    "WriteFileTool",
    "builtin_tools",
    "find_rg",
    "is_read_only",
]

TOOL_NAMES = (
    "read_file",
    "write_file",
    "edit_file",
    "apply_patch",
    "glob",
    "grep",
    "bash",
    "web_fetch",
    "todo_write",
    "notebook_read",
    "notebook_edit",
)
"""The names ``builtin_tools`` returns, in that order."""


def builtin_tools(
    root: str | os.PathLike[str] = ".",
    *,
    allow_hosts: Iterable[str] = (),
    allow_private_network: bool = False,
    current_notebook: str | os.PathLike[str] | None = None,
    include: Iterable[str] | None = None,
    exclude: Iterable[str] | None = None,
    sandbox: SandboxMode | SandboxPolicy | None = None,
) -> list[Tool]:
    """The built-in tools on the workspace ``root``, sharing one workspace and one read
    state. ``allow_hosts``: hosts ``web_fetch`` may fetch without asking;
    ``allow_private_network``: let ``web_fetch`` reach loopback and private addresses
    (tests only); ``current_notebook``: the notebook the kernel runs, for
    ``notebook_edit``; ``include`` / ``exclude``: tool names to keep / drop (an unknown
    name is an error); ``sandbox``: where approved ``bash`` calls run (see
    :class:`BashTool`; ``None`` follows the agent and the session default)."""
    wanted = _select(include, exclude)
    workspace = Workspace(root)
    state = ReadState()
    notebook = Path(current_notebook) if current_notebook is not None else None
    factories: dict[str, Callable[[], Tool]] = {
        "read_file": lambda: ReadFileTool(workspace, state),
        "write_file": lambda: WriteFileTool(workspace, state),
        "edit_file": lambda: EditFileTool(workspace, state),
        "apply_patch": lambda: ApplyPatchTool(workspace, state),
        "glob": lambda: GlobTool(workspace),
        "grep": lambda: GrepTool(workspace),
        "bash": lambda: BashTool(workspace, sandbox=sandbox),
        "web_fetch": lambda: WebFetchTool(
            allow_hosts=allow_hosts, allow_private_network=allow_private_network
        ),
        "todo_write": lambda: TodoWriteTool(),
        "notebook_read": lambda: NotebookReadTool(workspace, state),
        "notebook_edit": lambda: NotebookEditTool(workspace, state, current_notebook=notebook),
    }
    return [factories[name]() for name in TOOL_NAMES if name in wanted]


def _select(include: Iterable[str] | None, exclude: Iterable[str] | None) -> set[str]:
    inc = list(include) if include is not None else list(TOOL_NAMES)
    exc = list(exclude) if exclude is not None else []
    unknown = sorted({n for n in inc + exc if n not in TOOL_NAMES})
    if unknown:
        raise ValueError(
            f"builtin_tools: unknown tool name(s) {', '.join(map(repr, unknown))}; the "
            f"built-in tools are {', '.join(TOOL_NAMES)}"
        )
    return set(inc) - set(exc)
