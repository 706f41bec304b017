"""Run the session's agent for one prompt in the cell: resolve the model, show the live
view, wait (waking every 0.25 s so Interrupt acts) and end with the transcript."""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from nb_tools.agent import attachment_parts, check_policy, configure_request
from nb_tools.agent._budget import money
from nb_tools.jupyter._session import DEMO_MODEL, Session, get_session, has_credentials
from nb_tools.model import Provider, provider_name
from nb_tools.tool import Registry
from nb_tools.tool._tasks import wait_waking
from nb_tools.transcript import TranscriptRecorder, shown_in

if TYPE_CHECKING:
    from nb_tools.agent import Agent, RunResult

BUDGET_ENV = "NB_TOOLS_BUDGET_USD"
PAUSES = ("max_turns", "budget")
"""Stop reasons after which the cell asks "Continue?" (when a person approves calls)."""
DEFAULT_MAX_TURNS = 25
SETTLE_SECONDS = 10.0
"""How long a stopped run may take to answer its calls and emit ``RunFinished``."""


class RunInterrupted(KeyboardInterrupt):
    """Ends a cell whose run was interrupted, after its transcript is shown."""

    def _render_traceback_(self) -> list[str]:  # IPython shows this instead of a traceback
        return [
            "Interrupted: the run stopped and its transcript is above. The conversation "
            "is kept; the next %%agent cell continues it."
        ]


def default_approval() -> str:
    from nb_tools.agent import default_policy

    return default_policy()


def default_budget() -> float | None:
    """``$NB_TOOLS_BUDGET_USD`` as a number (USD per run), or None."""
    raw = os.environ.get(BUDGET_ENV, "").strip()
    if not raw:
        return None
    try:
        value = float(raw.lstrip("$"))
    except ValueError:
        raise ValueError(
            f"{BUDGET_ENV}={raw!r} is not a number of US dollars; set it to e.g. 0.50 or unset it"
        ) from None
    if value <= 0:
        raise ValueError(f"{BUDGET_ENV} must be more than 0, got {raw!r}")
    return value


def pause_text(agent: Agent, recorder: TranscriptRecorder, reason: str | None) -> str:
    """What the Continue prompt says (at a budget: the run's notice of what was spent
    against what was allowed)."""
    if reason == "budget":
        notes = [i["text"] for i in recorder.items if i.get("notice") == "budget"]
        why = notes[-1] if notes else "Paused at this run's budget."
        return f"{why} Continue for another {money(agent.budget_usd or 0)}?"
    return f"Paused at the turn limit ({agent.max_turns} turns). Continue for as many more?"


def resolve_model(
    session: Session, name: str | None, base_url: str | None = None
) -> tuple[object, Provider | str | None]:
    """``(key, model)`` for ``Agent(model=...)``: ``--model`` wins, then ``use_model()``,
    then ``$NB_TOOLS_MODEL`` when it names a provider (``ollama:qwen3``), then Claude when
    credentials (or a base URL) are set, else the offline demo model. A name with a
    provider prefix, or any name with ``base_url``, is made into its provider here."""
    choice: Provider | str | None = name or session.model
    if choice is None and ":" in os.environ.get("NB_TOOLS_MODEL", ""):
        choice = os.environ["NB_TOOLS_MODEL"].strip()
    if isinstance(choice, str) and (":" in choice or base_url):
        from nb_tools.model import provider_for

        return (("spec", choice.strip(), base_url), provider_for(choice, base_url=base_url))
    if isinstance(choice, str) and choice.strip() == DEMO_MODEL:
        choice = None
        demo = True
    else:
        demo = choice is None and not has_credentials()
    if demo:
        from nb_tools.jupyter._demo import DemoModel

        return ("demo", DemoModel())
    if choice is None:
        return ("anthropic-default", None)
    if isinstance(choice, str):
        return (("anthropic", choice), choice)
    return (("provider", id(choice)), choice)


def agent_for(session: Session, model: str | None, base_url: str | None = None) -> Agent:
    """The session's agent for ``model``; a different model gets a new agent that keeps
    the conversation and the session's rules ("Always allow" choices are among them)."""
    from nb_tools.agent import Agent

    key, provider = resolve_model(session, model, base_url)
    old = session.agent
    if old is not None and session.agent_model_key == key:
        return old
    agent = Agent(
        provider,
        tools=session.run_tools,
        rules=session.rules,
        messages=old.messages if old is not None else (),
        system=old.system if old is not None else None,  # --system outlives --model
    )
    session.agent = agent
    session.agent_model_key = key
    return agent


def builtin_registry(session: Session) -> Registry:
    """The built-in coding tools rooted at the kernel's working folder (the notebook's),
    made once per folder so their read state (read before write) lasts the session."""
    root = os.getcwd()
    cached = session.builtins.get(root)
    if cached is not None:
        return cached
    try:
        from nb_tools.builtin import builtin_tools
    except ImportError as exc:
        raise RuntimeError(
            f"--builtins: the built-in tools are not available ({exc}); run without "
            "--builtins or update nb_tools"
        ) from exc
    # Jupyter Server >= 2 tells the kernel which notebook it runs (for notebook_edit).
    reg = Registry(*builtin_tools(root=root, current_notebook=current_notebook()))
    session.builtins[root] = reg
    return reg


def in_kernel() -> bool:
    ip = sys.modules.get("IPython")
    if ip is None:
        return False
    shell = ip.get_ipython()
    return shell is not None and getattr(shell, "kernel", None) is not None


def current_cell() -> str | None:
    """The id of the notebook cell running now, when the front end sent it (JupyterLab,
    Notebook 7, VS Code and nbclient do)."""
    ip = sys.modules.get("IPython")
    shell = ip.get_ipython() if ip is not None else None
    header = getattr(shell, "parent_header", None) or {}
    cell = header.get("metadata", {}).get("cellId") if isinstance(header, dict) else None
    return cell if isinstance(cell, str) and cell else None


def keep(session: Session, recorder: TranscriptRecorder, transcript: dict[str, Any]) -> None:
    """The session keeps the run's transcript (its conversation: references to the message
    objects the run added, not a copy) and the conversation as the run left it, for the next
    run to continue."""
    conv = transcript.get("conversation")
    ref = recorder.ref
    added = ref.messages[conv["start"] :] if ref is not None and conv is not None else None
    session.keep_run(transcript, added)
    if ref is not None:
        session.conversation = ref


async def run_agent(
    prompt: str,
    *,
    model: str | Provider | None = None,
    approval: str | None = None,
    max_turns: int | None = None,
    new: bool = False,
    system: str | None = None,
    tools: list[str] | None = None,
    builtins: bool = False,
    show: bool | None = None,
    thinking: str | int | None = None,
    server_tools: list[str] | None = None,
    cache_ttl: str | None = None,
    tool_search: Any = None,
    memory: bool | None = None,
    mcp_servers: list[dict[str, str]] | None = None,
    citations: bool | None = None,
    upload_attachments: bool | None = None,
    attachments: Sequence[object] = (),
    base_url: str | None = None,
    python: bool = True,
    budget: float | None = None,
    continue_run: bool = False,
    result_limit: int | None = None,
    instructions: bool = True,
    output: Any = None,
) -> RunResult:
    """Run ``prompt`` in the notebook's conversation (what ``%%agent`` does), showing the
    live widgets and ending with the transcript. ``await nb_tools.run_agent("...")``.

    ``model``: a Claude model name, ``openai:NAME``, ``ollama:NAME``,
    ``openai-compatible:NAME`` (with ``base_url``), a Provider, or "demo"; default:
    ``use_model()``'s, else ``$NB_TOOLS_MODEL``, else Claude when
    ANTHROPIC_API_KEY/ANTHROPIC_BASE_URL is set, else the offline demo.
    ``approval``: "ask" (buttons in the cell), "auto", "deny", "read-only"; default
    ``$NB_TOOLS_APPROVAL`` or "ask". ``new``: start a new conversation. ``tools``: only
    these tools of the session registry. ``builtins``: add the built-in coding tools.
    ``thinking`` (a budget, "adaptive", "0" for off), ``server_tools`` (names; [] for
    none), ``cache_ttl`` ("5m", "1h") and ``tool_search`` ("auto", True, False) are kept
    for later runs, as is ``memory`` (True: Claude's memory tool on ``.nb_tools/memories``
    of the current folder), ``mcp_servers`` (the MCP connector's remote servers) and
    ``citations`` (attached documents may be cited), ``upload_attachments`` (the Files
    API);
    ``attachments`` (paths, bytes, PIL images) go with this prompt.
    ``python``: offer the ``python`` tool (the kernel's ``list_variables``/``describe``,
    and the live notebook tools when the open notebook is connected, are always there).
    ``budget``: USD per run (default ``$NB_TOOLS_BUDGET_USD``): the run pauses before a turn
    that would pass it. ``continue_run``: go on from where the last run stopped (after the
    turn limit or a budget), ``prompt`` may then be empty. ``output``: a type (pydantic
    model, dataclass, TypedDict) or JSON Schema: the result's ``output`` is a validated
    value of it (``Agent.run(output=...)``).
    """
    session = get_session()
    if session.running is not None:
        raise RuntimeError(
            "nb_tools: another agent run is in progress in this kernel; stop it (Stop "
            "button or Interrupt) before starting a new one"
        )
    policy = check_policy(approval or default_approval())
    if max_turns is not None and max_turns < 1:
        raise ValueError(f"--max-turns must be at least 1, got {max_turns}")
    if budget is not None and budget <= 0:
        raise ValueError(f"--budget must be more than 0 USD, got {budget}")
    budget = budget if budget is not None else default_budget()
    if isinstance(model, str) or model is None:
        agent = agent_for(session, model, base_url)
    else:
        saved, session.model = session.model, model
        try:
            agent = agent_for(session, None)
        finally:
            session.model = saved
    from nb_tools.jupyter._kernel_tools import agent_tools

    names, extra = agent_tools(
        tools,
        builtin_registry(session) if builtins else None,
        python=python,
        hidden=session.hidden_kernel_tools(),
    )
    session.refresh_tools(names, extra)
    if new:
        session.reset()
    agent.approval = policy
    agent.max_turns = max_turns or DEFAULT_MAX_TURNS  # per run, like --approval
    agent.budget_usd = budget
    from nb_tools.jupyter._trim import default_result_limit, trim_for_model

    if result_limit is not None and result_limit < 200:
        raise ValueError(f"--result-limit must be at least 200 bytes, got {result_limit}")
    agent.middlewares = (trim_for_model(result_limit or default_result_limit()),)
    if system is not None:
        agent.system = system
    configure_request(
        agent,
        thinking=thinking,
        server_tools=server_tools,
        cache_ttl=cache_ttl,
        tool_search=tool_search,
        mcp_servers=mcp_servers,
    )
    if memory:
        agent.memory = Path.cwd()
    if citations:
        agent.citations = True
    if upload_attachments:
        agent.upload_attachments = True
    attached = attachment_parts(attachments)
    show = in_kernel() if show is None else show
    if continue_run and new:
        raise ValueError("%%agent: --continue and --new cannot go together")
    if continue_run:
        prompt = ""  # an empty request continues the conversation as it is
    cell = current_cell()
    before = session.conversation
    recorder = TranscriptRecorder(
        prompt or None,
        model=agent.provider.model,
        provider=provider_name(agent.provider),
        previous=None if shown_in(before, cell) else before,  # that transcript is replaced
        cell=cell,
    )
    prompt = add_context(agent, prompt, recorder, instructions=instructions)
    session.running = recorder
    try:
        if show:
            result = await _run_shown(session, agent, prompt, recorder, attached, output)
            from nb_tools.jupyter._review import show_review

            show_review(result)
            return result
        return await _run_quiet(session, agent, prompt, recorder, attached, output)
    finally:
        session.running = None


def add_context(
    agent: Agent, prompt: str, recorder: TranscriptRecorder, *, instructions: bool
) -> str:
    """Set the agent's project instructions and notebook context; return ``prompt`` with
    what its mentions and the cell position add (said in the transcript)."""
    from nb_tools.agent import RunNotice, find_instructions
    from nb_tools.jupyter._live_notebook import live
    from nb_tools.jupyter._prompt_context import (
        notebook_context,
        prompt_context,
        running_cell_id,
    )

    folder = os.getcwd()
    agent.instructions = find_instructions(folder, project_root(folder)) if instructions else None
    snapshot = live().snapshot
    path = snapshot.get("path") if snapshot else None
    agent.context = notebook_context(path or current_notebook())
    shell = _shell()
    if shell is None or not prompt.strip():
        return prompt
    ctx = prompt_context(prompt, shell=shell, snapshot=snapshot, agent_cell=running_cell_id(shell))
    if ctx.added or ctx.unknown:
        recorder.record(RunNotice(kind="context", message=ctx.note()))
    return f"{ctx.text}\n\n{prompt}" if ctx.text else prompt


def project_root(folder: str) -> str:
    """The workspace root instructions are read up to: the repository holding ``folder``
    (the nearest parent with a ``.git``), else ``folder``; never above the home folder."""
    here = Path(folder).resolve()
    home = Path.home().resolve()
    for parent in (here, *here.parents):
        if (parent / ".git").exists():
            return str(parent)
        if parent == home or parent == Path(parent.anchor):
            break
    return str(here)


def current_notebook() -> str | None:
    """The notebook this kernel runs, as Jupyter Server says (``JPY_SESSION_NAME``)."""
    name = os.environ.get("JPY_SESSION_NAME", "")
    return name if name.endswith(".ipynb") else None


def _shell() -> Any:
    ip = sys.modules.get("IPython")
    return ip.get_ipython() if ip is not None else None


async def _run_quiet(
    session: Session,
    agent: Agent,
    prompt: str,
    recorder: TranscriptRecorder,
    attachments: Sequence[object] = (),
    output: Any = None,
) -> RunResult:
    def handler(event: Any) -> None:
        recorder.record(event)
        session.record(event)

    try:
        return await agent.run(prompt, on_event=handler, attachments=attachments, output=output)
    finally:
        keep(session, recorder, recorder.to_dict())


async def _run_shown(
    session: Session,
    agent: Agent,
    prompt: str,
    recorder: TranscriptRecorder,
    attachments: Sequence[object] = (),
    output: Any = None,
) -> RunResult:
    from nb_tools.jupyter._view import RunView

    loop = asyncio.get_running_loop()
    task: asyncio.Future[RunResult] | None = None

    def stop() -> None:  # the run's own stop; before it starts, cancel its task
        if not agent.stop() and task is not None:
            loop.call_soon_threadsafe(task.cancel)

    def stop_after_turn() -> None:
        agent.stop(after_turn=True)

    view = RunView(
        recorder,
        on_stop=stop,
        on_stop_after_turn=stop_after_turn,
        loop=loop,
        tools=agent.tools.get,
    )

    def handler(event: Any) -> None:
        session.record(event)
        view.on_event(event)

    from nb_tools.jupyter._headless import FrontendWatch

    # Before view.show(): is anyone there to click? (the view's root widget)
    watch = FrontendWatch(view.box)
    previous_approver = agent.approver
    agent.approver = watch.guard(view.ask) if agent.approval != "deny" else None
    failure: BaseException | None = None
    interrupted = False
    try:
        view.show()
        task = asyncio.ensure_future(
            agent.run(prompt, on_event=handler, attachments=attachments, output=output)
        )
        try:
            while True:
                await wait_waking(asyncio.wait({task}))  # the run's end, not its result
                reason = recorder.stop_reason
                if task.cancelled() or task.exception() is not None:
                    break
                if reason not in PAUSES or agent.approval != "ask":
                    break
                if not await view.ask_continue(pause_text(agent, recorder, reason)):
                    break
                recorder.resume()
                task = asyncio.ensure_future(agent.run("", on_event=handler, output=output))
        except (asyncio.CancelledError, KeyboardInterrupt):
            # Interrupt: stop the run cleanly (it answers its calls and emits RunFinished),
            # show the transcript, then end the cell with a one-line RunInterrupted so
            # "Run All" stops here as it does for any interrupted cell.
            interrupted = True
            task.cancel()
            with contextlib.suppress(BaseException):
                await asyncio.wait({task}, timeout=SETTLE_SECONDS)
        if task.done() and not task.cancelled() and task.exception() is not None:
            failure = task.exception()
            recorder.finish("error", f"{type(failure).__name__}: {failure}")
        else:
            recorder.finish("stopped")
    finally:
        agent.approver = previous_approver
        transcript = recorder.to_dict()
        keep(session, recorder, transcript)
        view.finish(transcript)
    if failure is not None:
        raise failure
    if interrupted:
        raise RunInterrupted()
    if task.cancelled() or not task.done():
        result = agent.last_result
        if result is None:
            raise RuntimeError("nb_tools: the run was stopped before it started")
        return result
    return task.result()
