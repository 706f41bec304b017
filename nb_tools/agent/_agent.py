"""The tool loop: ask the model, decide on and run its tool calls, send the results back,
until the model stops, the turn limit is reached, an API error ends the run, or the user
stops it. The conversation is kept; the next run continues it."""

from __future__ import annotations

import asyncio
import inspect
import os
import threading
import time
import warnings
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias

from nb_tools.agent._approval import (
    Allow,
    ApprovalRequest,
    Approver,
    Ask,
    Permission,
    Policy,
    Settled,
    check_policy,
    denial_text,
    source_label,
)
from nb_tools.agent._budget import over_budget
from nb_tools.agent._deciders import (
    AlwaysAllow,
    ask_person,
    decided_event,
    deciders_for,
    is_invalid_arguments,
    remembered_rule,
    run_deciders,
)
from nb_tools.agent._driver import (
    TurnDriver,
    drop_refused_prompt,
    server_tool_used,
    user_message_blocks,
)
from nb_tools.agent._events import (
    ApprovalRequested,
    Event,
    ModelFailed,
    RunFinished,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
    ToolProgress,
    TurnStarted,
    UsageUpdated,
)
from nb_tools.agent._notices import ThinkingDelta
from nb_tools.agent._retry import stream_with_retries, take_over_retries
from nb_tools.agent._schedule import CallPlan, Tracker, approve, plan, run_approved
from nb_tools.agent._turns import CONTINUE_TEXT, RequestOptions, sendable
from nb_tools.model import (
    Message,
    ModelError,
    ModelRequest,
    Provider,
    ResponseEvent,
    ServerToolEvent,
    TextBlock,
    TextDeltaEvent,
    ThinkingDeltaEvent,
    ToolResult,
    ToolResultBlock,
    Usage,
)
from nb_tools.sandbox._policy import check_mode
from nb_tools.tool import Executor, Middleware, Registry, Tool, default_registry, progress_sink
from nb_tools.tool._interrupt import still_running
from nb_tools.tool._progress import Progress
from nb_tools.tool._sync import run_blocking
from nb_tools.tool._tasks import cancel_and_drain

if TYPE_CHECKING:
    from nb_tools.permissions import PermissionRules
    from nb_tools.sandbox import SandboxMode, SandboxPolicy

EventHandler: TypeAlias = Callable[[Event], "Awaitable[None] | None"]

STOPPED_TEXT = "stopped by the user before this call finished"
CUT_OFF_TEXT = (
    "cut off: the user stopped the run while this call was running; it may have partially "
    "run (check its effects before calling it again)"
)

BACKGROUND_TEXT = (
    "still running in the background: the user stopped the run, but this call could not be "
    "interrupted (it is blocked outside Python) and may still change things; check its "
    "effects before calling it again"
)


@dataclass(frozen=True, kw_only=True)
class RunResult:
    """How a run ended. ``text`` is the last assistant text of the run, ``messages`` the
    whole conversation after it, ``usage`` this run's tokens. ``stop_reason`` is the
    model's ("end_turn", "max_tokens", "stop_sequence", "refusal", …) or the loop's:
    "max_turns", "stopped" (cancelled), "error" (see ``error``)."""

    text: str
    messages: tuple[Message, ...]
    usage: Usage
    stop_reason: str
    error: str | None = None
    turns: int = 0
    system: str | None = None  # the system prompt in force (saved with transcripts)


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
    ``messages``: a conversation to continue (e.g. another agent's ``messages``).

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
        max_tokens: int = 8192,
        middlewares: Sequence[Middleware] = (),
        on_event: EventHandler | None = None,
        messages: Iterable[Message] = (),
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
        )
        """Thinking, server tools, sampling and the rest (see :mod:`nb_tools.agent._turns`)."""
        self._model_name: str | None = model if isinstance(model, str) else None
        self._provider: Provider | None = None if model is None or isinstance(model, str) else model
        if tools is None or isinstance(tools, Registry):
            self._tools: Registry | None = tools
        else:
            self._tools = Registry(*tools)
        self.system = system
        self.approver = approver
        self.permission = permission
        self.rules = rules
        """Allow / ask / deny rules (:mod:`nb_tools.permissions`), checked before the tool's
        own approval setting and the policy; "Always allow" adds a session rule here."""
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
        self.always_allow: set[str] = set()
        """Rules the user chose with "Always allow" for this session (``bash(git log:*)``,
        ``web_fetch(domain:example.com)``, a bare tool name for tools without specifiers)."""
        self.last_result: RunResult | None = None
        self._messages: list[Message] = list(messages)
        self._usage = Usage()
        self._running = False

    # -- state ---------------------------------------------------------------------------

    @property
    def messages(self) -> tuple[Message, ...]:
        return tuple(self._messages)

    @property
    def usage(self) -> Usage:
        """Tokens used by every run of this agent so far."""
        return self._usage

    @property
    def tools(self) -> Registry:
        return self._tools if self._tools is not None else default_registry()

    @property
    def provider(self) -> Provider:
        """The provider, created on first use when the agent was given a model name."""
        if self._provider is None:
            from nb_tools.model._resolve import provider_for

            self._provider = provider_for(self._model_name)
        return self._provider

    def reset(self) -> None:
        """Forget the conversation (usage and "always allow" choices are kept)."""
        if self._running:
            raise RuntimeError("Agent.reset: a run is in progress; stop it first")
        self._messages.clear()
        self.last_result = None

    # -- saving and inspecting --------------------------------------------------------------

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the conversation to ``path`` as JSON: every message with all its blocks,
        the usage, the model name, the system prompt, the policy and the rules in force.
        Tools are code and are not saved: give them again to :meth:`load`."""
        from nb_tools.agent._persist import save

        save(self, path)

    @classmethod
    def load(cls, path: str | os.PathLike[str], **kwargs: Any) -> Agent:
        """An agent continuing the conversation saved by :meth:`save`; ``kwargs`` (e.g.
        ``tools=``, ``model=``, ``approver=``) are passed to ``Agent(...)`` and win over
        what was saved. The next request carries the same messages, byte for byte."""
        from nb_tools.agent._persist import load

        return load(cls, path, **kwargs)

    @classmethod
    def from_notebook(
        cls, path: str | os.PathLike[str], cell: int | str | None = None, **kwargs: Any
    ) -> Agent:
        """An agent continuing the conversation as it was after the ``%%agent`` run shown
        in ``cell`` (an index from 0, or a cell id; default: the last run) of a saved
        notebook, read from its transcript output. ``kwargs`` go to ``Agent(...)``."""
        from nb_tools.agent._persist import from_notebook

        return from_notebook(cls, path, cell, **kwargs)

    def request_preview(self, prompt: str = "") -> ModelRequest:
        """The exact request the model would get if ``prompt`` were run now: the system
        prompt, the conversation with ``prompt`` appended as the run would append it, the
        tool specs (sorted, as sent), ``max_tokens`` and the request options (thinking,
        tool choice, ...), built as the first turn builds it. Nothing is sent or changed. The
        provider turns it into its wire format (``AnthropicProvider``: a Messages API body)."""
        from nb_tools.agent._driver import TurnDriver

        messages = list(self._messages)
        _append_user_text(messages, prompt, (), self.last_result)
        return TurnDriver(self, self.provider)._build(self.tools, messages, None)

    # -- running -------------------------------------------------------------------------

    async def run(
        self,
        prompt: str,
        *,
        on_event: EventHandler | None = None,
        attachments: Sequence[object] = (),
    ) -> RunResult:
        """Send ``prompt`` and run the tool loop until the model stops. Cancelling the task
        stops the run: calls in flight are cancelled, every call left is answered as
        stopped (or cut off), ``RunFinished`` is emitted, ``last_result`` is set, and the
        ``CancelledError`` propagates. An empty prompt continues the conversation as it is
        (e.g. after "max_turns" or a reply cut at "max_tokens"). ``attachments``: images and
        PDFs sent with the prompt (paths, bytes, PIL images or ``Part`` objects)."""
        from nb_tools.agent._context import attachment_parts

        handlers = [h for h in (self.on_event, on_event) if h is not None]
        run = _Run(self, prompt, handlers)
        run.attachments = attachment_parts(attachments)
        return await run.go()

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


class _Run:
    """One run: the loop's state, so a stop can finish the conversation properly."""

    def __init__(self, agent: Agent, prompt: str, handlers: list[EventHandler]) -> None:
        self.agent = agent
        self.prompt = prompt
        self.handlers = handlers
        self.usage = Usage()
        self.turns = 0
        self.text = ""  # the run's last assistant text
        self.partial: list[str] = []  # text streamed in the current turn
        self.pending: list[CallPlan] = []  # calls of the last assistant message, unanswered
        self.tracker = Tracker()
        self.reported: set[str] = set()
        self.loop = asyncio.get_running_loop()
        self.loop_thread = threading.get_ident()
        self.background: set[asyncio.Future[Any]] = set()
        self.retries: int | None = None  # model retries made here (ModelRetrying events)
        self.attachments: list[Any] = []
        self.always = AlwaysAllow.empty()  # "Always allow" rules, compiled once per run

    # -- events --------------------------------------------------------------------------

    async def emit(self, event: Event) -> None:
        for handler in self.handlers:
            try:
                out = handler(event)
                if inspect.isawaitable(out):
                    await out
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                _warn_handler(handler, event, exc)

    def emit_soon(self, event: Event) -> None:
        """Emit from synchronous code, possibly on another thread (tool progress)."""
        if threading.get_ident() != self.loop_thread:
            self.loop.call_soon_threadsafe(self.emit_soon, event)
            return
        for handler in self.handlers:
            try:
                out = handler(event)
                if inspect.isawaitable(out):
                    task = asyncio.ensure_future(out)
                    self.background.add(task)
                    task.add_done_callback(self._background_done)
            except Exception as exc:
                _warn_handler(handler, event, exc)

    def _background_done(self, task: asyncio.Future[Any]) -> None:
        self.background.discard(task)
        exc = None if task.cancelled() else task.exception()
        if exc is not None:
            _warn_handler("an async handler", "ToolProgress", exc)

    def on_progress(self, call_id: str, progress: Progress) -> None:
        self.emit_soon(ToolProgress(call_id=call_id, progress=progress))

    # -- the loop ------------------------------------------------------------------------

    async def go(self) -> RunResult:
        agent = self.agent
        if agent._running:
            raise RuntimeError(
                "Agent.run: this agent is already running; await or cancel that run first "
                "(or use a second Agent)"
            )
        agent._running = True
        try:
            try:
                result = await self._loop()
            except asyncio.CancelledError:
                await self._end_early("stopped")
                raise
            except Exception as exc:  # a bug (ours or a hook's): keep the conversation valid
                await self._end_early("error", f"{type(exc).__name__}: {exc}")
                raise
            agent.last_result = result
            await self._finish(result)
            return result
        finally:
            agent._running = False

    async def _end_early(self, stop_reason: str, error: str | None = None) -> None:
        result, events = self._stop(stop_reason, error)  # the conversation is valid here
        self.agent.last_result = result
        for event in events:
            await self.emit(event)
        await self._finish(result)

    async def _finish(self, result: RunResult) -> None:
        if self.background:  # async handlers of progress events
            await asyncio.wait(set(self.background), timeout=1.0)
        await self.emit(RunFinished(result=result))

    def _result(self, stop_reason: str, error: str | None = None) -> RunResult:
        return RunResult(
            text=self.text,
            messages=tuple(self.agent._messages),
            usage=self.usage,
            stop_reason=stop_reason,
            error=error,
            turns=self.turns,
            system=self.agent.system,
        )

    async def _loop(self) -> RunResult:
        agent = self.agent
        provider = agent.provider
        registry = agent.tools
        executor = Executor(registry, *agent.middlewares)
        _append_user_text(agent._messages, self.prompt, self.attachments, agent.last_result)
        driver = TurnDriver(agent, provider)
        again_tokens: int | None = None
        last: Usage | None = None
        while True:
            try:
                request, notes = await driver.request(registry, again_tokens)
            except ModelError as exc:
                return await self._failed(str(exc), exc.status)
            if agent.budget_usd is not None and over_budget(
                agent.budget_usd, self.usage, provider.model, request, last
            ):
                return self._result("budget")
            self.turns += 1
            await self.emit(TurnStarted(turn=self.turns))
            for note in notes:
                await self.emit(note)
            try:
                response = await self._stream(provider, request)
            except ModelError as exc:
                return await self._failed(str(exc), exc.status)
            except Exception as exc:  # a provider bug must not lose the conversation
                return await self._failed(f"{type(exc).__name__}: {exc}", None)
            # No await from here until the calls are pending: a stop must find every
            # tool_use of the appended message in ``pending``.
            self.partial = []
            message = response.message
            verdict, notes = driver.judge(response, request)
            if verdict.keep and sendable(message):
                agent._messages.append(message)
                if message.text:
                    self.text = message.text
            elif verdict.drop_prompt:
                drop_refused_prompt(agent._messages)
            self.tracker = Tracker()
            self.reported = set()
            calls = message.tool_calls if verdict.keep and verdict.run else ()
            self.pending = [plan(registry, c) for c in calls]
            self.usage = self.usage + response.usage
            last = response.usage
            agent._usage = agent._usage + response.usage
            for note in notes:
                await self.emit(note)
            await self.emit(UsageUpdated(turn=self.turns, usage=response.usage, total=self.usage))
            again_tokens = verdict.max_tokens
            if not self.pending:
                if not verdict.again:
                    return self._result(verdict.stop_reason or response.stop_reason, verdict.error)
                if self.turns >= agent.max_turns and verdict.max_tokens is None:
                    return self._result("max_turns")  # a cut call's one retry still goes
                continue
            await self._run_calls(executor)
            if self.turns >= agent.max_turns:
                return self._result("max_turns")

    async def _failed(self, message: str, status: int | None) -> RunResult:
        self.partial = []
        await self.emit(ModelFailed(message=message, status=status))
        return self._result("error", message)

    async def _stream(self, provider: Provider, request: ModelRequest) -> ResponseEvent:
        response: ResponseEvent | None = None
        if self.retries is None:
            self.retries = take_over_retries(provider)
        stream = stream_with_retries(provider, request, self.retries, self.emit)
        try:
            async for event in stream:
                if isinstance(event, TextDeltaEvent):
                    self.partial.append(event.text)
                    await self.emit(TextDelta(text=event.text))
                elif isinstance(event, ThinkingDeltaEvent):
                    await self.emit(ThinkingDelta(text=event.text))
                elif isinstance(event, ServerToolEvent):
                    await self.emit(server_tool_used(event.use, event.result))
                elif isinstance(event, ResponseEvent):
                    response = event
        finally:
            aclose = getattr(stream, "aclose", None)
            if aclose is not None:
                await aclose()
        if response is None:
            raise ModelError(
                f"{type(provider).__name__}: the stream ended without a final response"
            )
        return response

    # -- tool calls ----------------------------------------------------------------------

    async def _run_calls(self, executor: Executor) -> None:
        approved: list[CallPlan] = []
        for p in self.pending:
            await self.emit(
                ToolCallStarted(
                    call=p.call, info=p.info, preview=p.preview, needs_approval=p.needs_approval
                )
            )
            decision = await self._decide(p)
            if decision is None or isinstance(decision, Allow):
                by = decision.by if decision is not None else None
                approved.append(approve(p, by, sandbox=self.agent.sandbox))
                continue
            status = "error" if is_invalid_arguments(decision) else "denied"
            result = ToolResult(
                tool_use_id=p.call.id,
                content=denial_text(decision),
                is_error=True,
                metadata={"status": status, "by": source_label(decision.source)},
            )
            self.tracker.results[p.call.id] = result
            await self._report(p, result, 0.0, status)

        async def finished(p: CallPlan, result: ToolResult, duration: float) -> None:
            await self._report(p, result, duration, "error" if result.is_error else "ok")

        with progress_sink(self.on_progress):
            await run_approved(executor, approved, self.tracker, finished)
        self._answer_pending()

    async def _report(self, p: CallPlan, result: ToolResult, duration: float, status: str) -> None:
        self.reported.add(p.call.id)
        await self.emit(
            ToolCallFinished(call=p.call, result=result, duration=duration, status=status)
        )

    async def _decide(self, p: CallPlan) -> Settled | None:
        """The approval pipeline (:mod:`nb_tools.agent._deciders`), then the person.
        ``None``: no decider had anything to say; the call runs without approval."""
        agent = self.agent
        root = agent.rules.root if agent.rules is not None else Path.cwd()
        self.always = self.always.refresh(agent.approval, agent.always_allow, root)
        deciders = deciders_for(
            policy=agent.approval,
            rules=agent.rules,
            permission=agent.permission,
            always_allow=self.always,
            root=root,
        )
        verdict = await run_deciders(deciders, p)
        if verdict is None:
            return None
        if isinstance(verdict, Ask):
            verdict = await ask_person(p, verdict, agent.approver, root, self._requested)
            remembered = remembered_rule(verdict)
            if remembered is not None:
                agent.always_allow.add(remembered)
                if agent.rules is not None:
                    agent.rules.allow(remembered, source="session")
        if not is_invalid_arguments(verdict):
            await self.emit(decided_event(p.call.id, verdict))
        return verdict

    async def _requested(self, request: ApprovalRequest) -> None:
        await self.emit(
            ApprovalRequested(
                call=request.call,
                info=request.info,
                preview=request.preview,
                reason=request.reason,
                always_allow_rule=request.always_allow_rule,
            )
        )

    def _answer_pending(self) -> list[tuple[CallPlan, ToolResult, str]]:
        """Append the user message answering every pending call (a stop answers the calls
        without a result); return the answers made up here, for their events."""
        made: list[tuple[CallPlan, ToolResult, str]] = []
        blocks = []
        for p in self.pending:
            result = self.tracker.results.get(p.call.id)
            if result is None:
                started = p.call.id in self.tracker.started
                status = "cut_off" if started and not p.read_only else "stopped"
                text = CUT_OFF_TEXT if status == "cut_off" else STOPPED_TEXT
                if started and still_running(p.call.id):  # a sync tool blocked in C
                    status, text = "running_in_background", BACKGROUND_TEXT
                result = ToolResult(
                    tool_use_id=p.call.id,
                    content=text,
                    is_error=True,
                    metadata={"status": status},
                )
                made.append((p, result, status))
            elif p.call.id not in self.reported:
                made.append((p, result, "error" if result.is_error else "ok"))
            blocks.append(ToolResultBlock(result=result))
        if self.pending:
            self.agent._messages.append(Message(role="user", content=tuple(blocks)))
        self.pending = []
        return made

    # -- stop ----------------------------------------------------------------------------

    def _stop(self, stop_reason: str, error: str | None) -> tuple[RunResult, list[Event]]:
        """Leave the conversation valid after a cancellation (no await in here); return
        the result and the events still to emit."""
        messages = self.agent._messages
        partial = "".join(self.partial)
        if partial.strip():  # a reply cut mid-stream: keep its text, drop unfinished calls
            messages.append(Message(role="assistant", content=(TextBlock(text=partial),)))
            self.text = partial
        self.partial = []
        now = time.perf_counter()
        events: list[Event] = [
            ToolCallFinished(
                call=p.call,
                result=result,
                status=status,
                duration=now - self.tracker.started.get(p.call.id, now),
            )
            for p, result, status in self._answer_pending()
        ]
        return self._result(stop_reason, error), events


def _append_user_text(
    messages: list[Message],
    text: str,
    parts: Sequence[Any] = (),
    last: RunResult | None = None,
) -> None:
    """Add the prompt keeping roles alternating: after a user message (tool results, or a
    prompt whose request failed) the text joins that message. An empty prompt continues:
    after a reply cut at max_tokens it asks the model to go on."""
    if not text.strip() and not parts:
        if messages and messages[-1].role == "user":
            return
        if messages and last is not None and last.stop_reason == "max_tokens":
            text = CONTINUE_TEXT
        else:
            raise ValueError(
                "Agent.run: the prompt is empty and there is nothing to continue; pass some text"
            )
    blocks = user_message_blocks(text, list(parts))
    if messages and messages[-1].role == "user":
        last_message = messages[-1]
        messages[-1] = Message(role="user", content=(*last_message.content, *blocks))
    else:
        messages.append(Message(role="user", content=blocks))


def _warn_handler(handler: object, event: object, exc: BaseException | None) -> None:
    what = type(event).__name__ if event is not None else "an event"
    warnings.warn(
        f"nb_tools: the event handler {handler!r} raised {type(exc).__name__}: {exc} while "
        f"handling {what}; the run goes on",
        RuntimeWarning,
        stacklevel=3,
    )
