"""The tool loop: ask the model, decide on and run its tool calls, send the results back,
until the model stops, the turn limit is reached, an API error ends the run, or the user
stops it. The conversation is kept; the next run continues it."""

from __future__ import annotations

import asyncio
import inspect
import os
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from nb_tools.agent._approval import Approver, Permission, Policy, check_policy
from nb_tools.agent._conversation import Conversation
from nb_tools.agent._events import Event, RunFinished
from nb_tools.agent._instructions import ProjectInstructions
from nb_tools.agent._output import DEFAULT_RETRIES, INVALID_OUTPUT
from nb_tools.agent._result import RunResult
from nb_tools.agent._run import EventHandler, Run
from nb_tools.agent._settings import AgentSettings
from nb_tools.agent._turns import RequestOptions, ToolSearch
from nb_tools.model import Message, ModelRequest, Provider, Usage
from nb_tools.model._anthropic_features import DEFAULT_CACHE_TTL
from nb_tools.sandbox import check_mode
from nb_tools.tool import Middleware, Registry, Tool, default_registry
from nb_tools.tool._sync import run_blocking
from nb_tools.tool._tasks import cancel_and_drain

if TYPE_CHECKING:
    from nb_tools.permissions import PermissionRules
    from nb_tools.sandbox import SandboxMode, SandboxPolicy


class Agent:
    """A conversation with a model that can call tools.

    ``model``: a :class:`~nb_tools.model.Provider`, or a model name for which the provider is
    made on the first run: ``claude-…`` (Anthropic), ``openai:NAME``, ``ollama:NAME``,
    ``openai-compatible:NAME`` (see :func:`~nb_tools.model.provider_for`); ``None``:
    ``$NB_TOOLS_MODEL``, else Claude's default.
    ``tools``: a ``Registry`` or tools; ``None`` reads :func:`default_registry` at each run.
    ``approval``: "ask" (``approver`` decides; none configured means deny), "auto",
    "deny" or "read-only" (plan mode: only read-only calls that need no approval run).
    ``rules``: :class:`~nb_tools.permissions.PermissionRules` (deny wins over ask over
    allow; an "ask" rule asks a person even under "auto"; every decision names its rule,
    ``rule:deny bash(rm:*) [project]``). ``permission``: a callable
    ``(call, info) -> Decision | None`` consulted after the rules. Every call goes through
    one pipeline (:mod:`nb_tools.agent._approval` gives the order), then the person.
    ``on_event`` receives every event (sync or async). ``sandbox``: where approved shell
    calls run ("workspace-write", "read-only", "off" or a ``SandboxPolicy``; ``None``: the
    session default); a call that runs without approval always runs read-only.
    ``messages``: a conversation to continue (another agent's ``messages``, or a
    :class:`Conversation`, which is then shared).
    ``cache_ttl``: how long the prompt-cache breakpoints live, "1h" (the default: a person
    often pauses more than five minutes between cells) or "5m"; None sends the API's
    default (five minutes) without a ``ttl``. ``mcp_servers``: remote MCP servers
    Claude's API connects to itself (the MCP connector: ``[{"name": "crm", "url":
    "https://...", "authorization_token": "..."}]``); the rules act on them as on local MCP
    tools (``deny mcp__crm__delete`` disables that tool; see
    :mod:`nb_tools.agent._mcp_connector`). ``citations``: attached documents go with
    citations enabled, so the answer cites them. ``upload_attachments``: attachments, and a
    tool result's images and documents of 32 KiB or more, are uploaded once to Claude's
    Files API and named by ``file_id`` in every request after (:mod:`nb_tools.agent._uploads`).
    ``memory``: True (the current folder) or a
    workspace folder: Claude's memory tool keeps its files in ``<folder>/.nb_tools/memories``
    across conversations and notebooks. ``tool_search``: "auto" (MCP tools are
    deferred, ``defer_loading``, when there are more than 30 tools), True (always defer
    them) or False (no tool is deferred); the tool-search tool is declared whenever one is.

    ``max_tokens``: the output limit of each reply; ``None`` takes the provider's default
    for the model (Claude: 8192; an OpenAI or OpenAI-compatible server: the field is left
    out, so the server gives what its model and context allow).

    A turn is one model request. ``max_turns`` bounds the turns of one run: when the last
    allowed turn makes tool calls, they are still decided, run and answered, so the
    conversation stays valid, and the run ends with "max_turns"; ``run("")`` continues.
    A turn's approvals are all decided (in call order) before any of its calls runs.
    """

    def __init__(
        self,
        model: str | Provider | None = None,
        *,
        tools: Registry | Iterable[Tool] | None = None,
        system: str | None = None,
        approval: Policy = "ask",
        approver: Approver | None = None,
        permission: Permission | None = None,
        rules: PermissionRules | None = None,
        max_turns: int = 25,
        max_tokens: int | None = None,
        middlewares: Sequence[Middleware] = (),
        on_event: EventHandler | None = None,
        messages: Iterable[Message] | Conversation = (),
        thinking: int | str | Mapping[str, Any] | None = None,
        effort: str | None = None,
        server_tools: Sequence[str | Mapping[str, Any]] = (),
        tool_choice: str | Mapping[str, Any] | None = None,
        disable_parallel_tool_use: bool = False,
        temperature: float | None = None,
        top_p: float | None = None,
        stop_sequences: Sequence[str] = (),
        compaction: bool = True,
        clear_tool_results: bool = True,
        sandbox: SandboxMode | SandboxPolicy | None = None,
        budget_usd: float | None = None,
        cache_ttl: str | None = DEFAULT_CACHE_TTL,
        tool_search: ToolSearch = "auto",
        memory: bool | str | os.PathLike[str] = False,
        mcp_servers: Sequence[Mapping[str, Any]] = (),
        citations: bool = False,
        upload_attachments: bool = False,
    ) -> None:
        if max_turns < 1:
            raise ValueError(f"Agent: max_turns must be >= 1, got {max_turns}")
        self.approval: Policy = check_policy(approval)
        self.request_options = RequestOptions.make(
            thinking=thinking,
            effort=effort,
            server_tools=server_tools,
            tool_choice=tool_choice,
            disable_parallel_tool_use=disable_parallel_tool_use,
            temperature=temperature,
            top_p=top_p,
            stop_sequences=stop_sequences,
            compaction=compaction,
            clear_tool_results=clear_tool_results,
            cache_ttl=cache_ttl,
            tool_search=tool_search,
            mcp_servers=mcp_servers,
        )
        """Thinking, server tools, sampling and the rest (see :mod:`nb_tools.agent._turns`)."""
        self._model_name: str | None = model if isinstance(model, str) else None
        self._provider: Provider | None = None if model is None or isinstance(model, str) else model
        if self._provider is not None:
            check_provider(self._provider)
        if tools is None or isinstance(tools, Registry):
            self._tools: Registry | None = tools
        else:
            self._tools = Registry(*tools)
        self.system = system
        self.approver = approver
        self.permission = permission
        self.rules = rules
        """Allow / ask / deny rules (:mod:`nb_tools.permissions`), checked before the tool's
        own approval setting and the policy. "Always allow" adds a session rule here (and
        makes an empty rule set first when there is none): the one home of what the person
        allowed, with the meaning of any allow rule under every policy."""
        self.max_turns = max_turns
        self.budget_usd = budget_usd
        """A run pauses (stop_reason "budget") before a turn whose estimated cost would take
        the run past this many USD (``nb_tools.agent._budget``); ``run("")`` goes on."""
        self.max_tokens = max_tokens
        self.middlewares: tuple[Middleware, ...] = tuple(middlewares)
        self.on_event = on_event
        self.sandbox = check_mode(sandbox) if isinstance(sandbox, str) else sandbox
        """Where approved shell calls run: "workspace-write", "read-only", "off" or a
        ``SandboxPolicy`` (``None``: the session default, ``%nbtools sandbox``); calls that
        run without approval always run read-only."""
        self.conversation = (
            messages if isinstance(messages, Conversation) else Conversation(messages)
        )
        """The messages and the tokens spent (:class:`Conversation`); runs add to it."""
        self.last_result: RunResult | None = None
        self._run: Run | None = None
        self.upload_attachments = upload_attachments
        """Attachments, and large images and documents in tool results, go to the
        provider's file store once (Claude's Files API) and the requests name them by
        ``file_id`` instead of carrying their bytes every turn (a failed upload goes
        inline, with a notice)."""
        self.citations = citations
        """Attached documents (PDFs, text) are sent with citations enabled: the answer's
        text blocks cite them (``TextBlock.citations``, ``CitationsReceived`` events)."""
        self.memory: Path | None = (
            None if memory is False else Path.cwd() if memory is True else Path(memory)
        )
        """The workspace whose ``.nb_tools/memories`` folder Claude's memory tool keeps
        (``nb_tools.builtin.MemoryTool``, added to every run's tools); None: no memory."""
        self.instructions: ProjectInstructions | None = None
        """The project's instruction files (``AGENTS.md``…), read into the system prompt
        after ``system`` (:func:`~nb_tools.agent.find_instructions`); ``%%agent`` reads them
        from the notebook's folder up to the workspace root before each run."""
        self.context: str = ""
        """Where the agent works (the open notebook's path), at the end of the system
        prompt; what changes from run to run (the cell) goes with the prompt instead, so
        the cached prefix stays the same."""

    def system_sections(self) -> tuple[str, ...]:
        """What follows ``system`` in the system prompt sent: instructions, then context."""
        block = self.instructions.block() if self.instructions is not None else ""
        return (block, self.context)

    # -- state ---------------------------------------------------------------------------

    @property
    def messages(self) -> tuple[Message, ...]:
        return self.conversation.messages

    @property
    def usage(self) -> Usage:
        """Tokens used by every run of this conversation so far."""
        return self.conversation.usage

    @property
    def running(self) -> bool:
        """Whether a run is in progress."""
        return self._run is not None

    @property
    def tools(self) -> Registry:
        return self._tools if self._tools is not None else default_registry()

    @property
    def model_name(self) -> str | None:
        """The model's name without making the provider: the provider's, else the name
        given (``None``: the default, chosen on the first run)."""
        if self._provider is not None:
            return self._provider.model
        return self._model_name

    @property
    def provider(self) -> Provider:
        """The provider, created on first use when the agent was given a model name."""
        if self._provider is None:
            from nb_tools.model import provider_for

            self._provider = provider_for(self._model_name)
        return self._provider

    def reset(self) -> None:
        """Forget the conversation (usage and the rules, "Always allow" ones included, are
        kept)."""
        if self._run is not None:
            raise RuntimeError("Agent.reset: a run is in progress; stop it first")
        self.conversation.clear()
        self.last_result = None

    # -- saving and inspecting --------------------------------------------------------------

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the conversation to ``path`` as JSON: every message with all its blocks,
        the usage, and every setting of ``Agent(...)`` (the model name, the system prompt,
        the policy and the rules in force, the request options, the budget, memory,
        citations, uploads; :data:`nb_tools.agent._saved_settings.SETTINGS` lists each
        argument and how it is kept). Code (tools, the approver, the permission callable,
        middlewares, event handlers), the sandbox and MCP authorization tokens are not
        saved: give them again to :meth:`load`."""
        from nb_tools.agent._persist import save

        save(self, path)

    @classmethod
    def load(
        cls, path: str | os.PathLike[str], *, trust_settings: bool = False, **kwargs: Any
    ) -> Agent:
        """An agent continuing the conversation saved by :meth:`save`; ``kwargs`` (e.g.
        ``tools=``, ``model=``, ``approver=``, ``approval=``) are passed to ``Agent(...)``
        and win over what was saved. The next request carries the same messages, byte for
        byte.

        A conversation file may come from someone else, so what loosens the approval
        boundary is not taken from it: the approval policy, the rules, the server tools,
        the MCP connector's servers and the memory folder come from ``kwargs`` (default
        ``"ask"``, no rules, none). With ``trust_settings=True`` the file's rules, server
        tools, MCP servers and memory are used too, and its policy is used when it is
        stricter than the caller's (``deny`` / ``read-only`` < ``ask`` < ``auto``): a
        file never loosens the session's policy. The other settings (thinking, sampling,
        cache TTL, tool search, budget, citations, uploads, ...) always come back."""
        from nb_tools.agent._persist import load

        return load(cls, path, trust_settings=trust_settings, **kwargs)

    @classmethod
    def from_notebook(
        cls, path: str | os.PathLike[str], cell: int | str | None = None, **kwargs: Any
    ) -> Agent:
        """An agent continuing the conversation as it was after the ``%%agent`` run shown
        in ``cell`` (an index from 0, or a cell id; default: the last run) of a saved
        notebook, read from its transcript output. ``kwargs`` go to ``Agent(...)``."""
        from nb_tools.agent._persist import from_notebook

        return from_notebook(cls, path, cell, **kwargs)

    def request_preview(self, prompt: str = "", *, output: Any = None) -> ModelRequest:
        """The exact request the model would get if ``prompt`` were run now (with
        ``output=T`` as in ``run(prompt, output=T)``): the system prompt, the conversation
        with ``prompt`` appended as the run would append it, the tool specs as sent (the
        memory tool and ``final_result`` included when the run adds them), ``max_tokens``,
        the request options (thinking, tool choice, structured outputs, MCP servers, ...)
        and the betas, built by the code that builds the run's first request. Nothing is
        sent or changed: with ``upload_attachments``, parts the run would upload first
        are shown with their bytes, and a long conversation is shown before the run's
        client-side clearing or summary. The provider turns it into its wire format
        (``AnthropicProvider``: a Messages API body)."""
        from nb_tools.agent._prepare import prepare

        last = self.last_result
        conversation = Conversation(self.conversation.messages)
        conversation.add_prompt(prompt, last_stop_reason=last.stop_reason if last else None)
        settings = self.settings(output=output)
        ready = prepare(settings, conversation)
        return ready.driver.build(ready.registry, conversation.messages, None)

    # -- running -------------------------------------------------------------------------

    def settings(
        self, *, output: Any = None, output_retries: int = DEFAULT_RETRIES
    ) -> AgentSettings:
        """What a run started now would read (:class:`AgentSettings`: frozen; changing the
        agent afterwards does not change it). ``output``: the run's output type."""
        from nb_tools.agent._output import OutputType

        out = output if output is None or isinstance(output, OutputType) else OutputType.of(output)
        return AgentSettings.of(self, output=out, output_retries=output_retries)

    async def run(
        self,
        prompt: str,
        *,
        on_event: EventHandler | None = None,
        attachments: Sequence[object] = (),
        output: Any = None,
        output_retries: int = DEFAULT_RETRIES,
    ) -> RunResult:
        """Send ``prompt`` and run the tool loop until the model stops. Cancelling the task
        stops the run: calls in flight are cancelled, every call left is answered as
        stopped (or cut off), ``RunFinished`` is emitted, ``last_result`` is set, and the
        ``CancelledError`` propagates. An empty prompt continues the conversation as it is
        (e.g. after "max_turns" or a reply cut at "max_tokens"). ``attachments``: images and
        PDFs sent with the prompt (paths, bytes, PIL images or ``Part`` objects).

        ``output``: a pydantic model, dataclass, TypedDict or object JSON Schema; the run
        ends with ``RunResult.output``, a validated value of it (see
        :mod:`nb_tools.agent._output`: the provider's structured outputs, else a strict
        ``final_result`` tool). An answer that does not validate goes back to the model
        with its problems, at most ``output_retries`` times; then :class:`OutputError`
        is raised (its ``result`` is the run's result)."""
        from nb_tools.agent._context import attachment_parts
        from nb_tools.agent._output import OutputError, OutputType

        out = OutputType.of(output) if output is not None else None
        if output_retries < 0:
            raise ValueError(f"Agent.run: output_retries must be >= 0, got {output_retries}")

        if self._run is not None:
            raise RuntimeError(
                "Agent.run: this agent is already running; await or cancel that run first "
                "(or use a second Agent)"
            )
        handlers = [h for h in (self.on_event, on_event) if h is not None]
        settings = AgentSettings.of(self, output=out, output_retries=output_retries)
        last = self.last_result
        run = Run(
            settings,
            self.conversation,
            handlers,
            last_stop_reason=last.stop_reason if last is not None else None,
        )
        with self.conversation.in_use("Agent.run"):
            self._run = run
            try:
                result = await run.go(prompt, attachment_parts(attachments))
            finally:
                self._run = None
                if run.ended is not None:
                    self.last_result = run.ended
                if self.rules is None and run.rules is not None:
                    self.rules = run.rules  # made by "Always allow": a session rule
        if result.stop_reason == INVALID_OUTPUT:
            problems = run.output.problems if run.output is not None else []
            raise OutputError(result.error or "invalid output", problems, result)
        return result

    def stop(self, *, after_turn: bool = False) -> bool:
        """Stop the run in progress, from any thread (a button, a tool, another task).
        Now: calls in flight are cancelled, every call is answered (as stopped, or cut off
        if it had begun), and ``run`` returns with stop_reason "stopped". ``after_turn``:
        the turn in progress finishes (its calls decided, run and answered) and the run
        returns with "stopped_after_turn" before the next request. ``run("")`` continues
        either way. Returns whether a run was in progress."""
        run = self._run
        if run is None:
            return False
        run.stop(after_turn=after_turn)
        return True

    async def events(self, prompt: str) -> AsyncIterator[Event]:
        """The events of a run of ``prompt`` as an async iterator, ending with
        ``RunFinished``. Closing the iterator early stops the run (use
        ``contextlib.aclosing`` to close it at once when you ``break``)."""
        queue: asyncio.Queue[Event] = asyncio.Queue()
        task = asyncio.ensure_future(self.run(prompt, on_event=queue.put_nowait))
        try:
            while True:
                getter = asyncio.ensure_future(queue.get())
                done, _ = await asyncio.wait({getter, task}, return_when=asyncio.FIRST_COMPLETED)
                if getter not in done:
                    getter.cancel()
                    if queue.empty():  # the run ended without RunFinished: re-raise its error
                        task.result()
                        return
                    continue
                event = getter.result()
                yield event
                if isinstance(event, RunFinished):
                    break
            await task
        finally:
            await cancel_and_drain([task])

    def run_sync(self, prompt: str, *, on_event: EventHandler | None = None) -> RunResult:
        """``run`` from synchronous code. Inside a running event loop (a Jupyter cell) the
        run goes on a fresh loop in a worker thread (event handlers and the approver are
        then called on that thread); KeyboardInterrupt stops it."""
        return run_blocking(self.run(prompt, on_event=on_event), name="nb_tools-agent-run")


def check_provider(provider: object) -> None:
    """A ``TypeError`` naming what ``provider`` lacks of the :class:`Provider` interface."""
    members = ("name", "model", "features", "limits", "price", "count_tokens", "take_over_retries")
    absent = object()
    missing = [
        m for m in (*members, "stream") if inspect.getattr_static(provider, m, absent) is absent
    ]
    if missing:
        raise TypeError(
            f"Agent: {type(provider).__name__} is not a Provider: it lacks "
            f"{', '.join(missing)}; subclass nb_tools.model.BaseProvider, which declares "
            "them (see 'Adding a provider' in the docs)"
        )
