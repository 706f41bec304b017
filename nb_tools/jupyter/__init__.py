"""The notebook layer: ``%load_ext nb_tools``, ``%%agent``, the live widgets, ``%tools`` and
transcripts. The only package that imports IPython and ipywidgets (the widgets, the
provider's SDK and the run's modules in a background thread after ``%load_ext``, so loading
the extension stays instant and the first run starts fast)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from nb_tools.jupyter._map_cell import amap_in_cell, in_kernel_cell
from nb_tools.jupyter._session import get_session, reset_session
from nb_tools.jupyter._transform import agent_cell_transformer

if TYPE_CHECKING:
    from nb_tools.agent import RunResult
    from nb_tools.model import Provider

TRANSCRIPT_MIME = "application/vnd.nbtools.transcript+json"
"""The MIME type every run's transcript is displayed with (docs/transcript.md)."""


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext nb_tools``: ``%%agent``, ``%tools``, ``%nbtools``, ``%mcp`` and the input
    transformer that turns ``%%agent`` cells and ``%agent``/``%mcp`` lines into awaits."""
    from nb_tools.jupyter._fix import watch_errors
    from nb_tools.jupyter._magics import AgentMagics
    from nb_tools.jupyter._rules_mcp import RulesMCPMagics

    ipython.register_magics(AgentMagics)
    ipython.register_magics(RulesMCPMagics)
    watch_errors(ipython)
    cleanup = ipython.input_transformers_cleanup
    if agent_cell_transformer not in cleanup:
        cleanup.append(agent_cell_transformer)
    get_session()
    from nb_tools.jupyter._warm import warm

    warm()  # the provider's SDK, in the background: the first run's first token comes fast


def unload_ipython_extension(ipython: Any) -> None:
    """``%unload_ext nb_tools``: remove the magics and the transformer, drop the session.
    Attached MCP servers stay attached (``%mcp remove`` or ``nb_tools.mcp.detach``)."""
    from nb_tools.jupyter._fix import watch_errors

    watch_errors(ipython, on=False)
    cleanup = ipython.input_transformers_cleanup
    while agent_cell_transformer in cleanup:
        cleanup.remove(agent_cell_transformer)
    magics = ipython.magics_manager.magics
    for kind, name in (
        ("line", "agent"),
        ("cell", "agent"),
        ("line", "tools"),
        ("line", "nbtools"),
        ("line", "mcp"),
    ):
        magics[kind].pop(name, None)
    reset_session()


async def run_agent(prompt: str, **options: Any) -> RunResult:
    """``await nb_tools.run_agent("...")``: what ``%%agent`` does, from Python. Options:
    ``model``, ``approval``, ``max_turns``, ``new``, ``system``, ``tools``, ``builtins``,
    ``show``."""
    from nb_tools.jupyter._runner import run_agent as run

    return await run(prompt, **options)


async def run_cell_magic_async(line: str, cell: str) -> None:
    """What a rewritten ``%%agent`` cell awaits."""
    from nb_tools.jupyter._magics import run_magic

    await run_magic(line, cell)


async def run_restore_async(line: str) -> None:
    """What a rewritten ``%nbtools restore ...`` line awaits."""
    from nb_tools.jupyter._review import restore_command
    from nb_tools.jupyter._rules_mcp import split_rules

    print(await restore_command(split_rules(line), get_session()))


async def run_line_magic_async(line: str) -> None:
    """What a rewritten ``%agent ...`` line awaits."""
    from nb_tools.jupyter._magics import run_magic

    await run_magic(line, None)


async def run_mcp_magic_async(line: str) -> None:
    """What a rewritten ``%mcp ...`` line awaits."""
    from nb_tools.jupyter._rules_mcp import mcp_command

    print(await mcp_command(line))


def use_model(model: Provider | str | None) -> None:
    """Set the model of the session's next runs: a Provider (e.g. ``ScriptedModel``), a
    Claude model name, "demo" (the offline demo model), or ``None`` for the default."""
    get_session().model = model


def save_transcript(path: Any, *, runs: Any = None, title: str | None = None) -> Any:
    """Write this session's runs (or the given transcript dicts) as a new ``.ipynb``."""
    from nb_tools.jupyter._save import save_transcript as save

    return save(path, runs=runs, title=title)


def kernel_tools(*, python: bool = True) -> list[Any]:
    """The tools on this kernel for an ``Agent`` of your own: ``python`` (unless
    ``python=False``), ``list_variables``, ``describe``, and the live ``notebook_read`` /
    ``notebook_edit`` when the open notebook's frontend is connected."""
    from nb_tools.jupyter._kernel_tools import kernel_tools as make

    return make(python=python)


def transcripts() -> list[dict[str, Any]]:
    """The transcripts of this session's runs, oldest first."""
    return get_session().transcripts


__all__ = [
    "TRANSCRIPT_MIME",
    "amap_in_cell",
    "in_kernel_cell",
    "kernel_tools",
    "load_ipython_extension",
    "run_agent",
    "run_cell_magic_async",
    "run_line_magic_async",
    "run_mcp_magic_async",
    "run_restore_async",
    "save_transcript",
    "transcripts",
    "unload_ipython_extension",
    "use_model",
]
