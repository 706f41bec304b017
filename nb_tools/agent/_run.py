"""One run of an agent: turns until one of them finishes the run, or the turn limit, a
budget or a stop ends it. A turn (:meth:`Run.turn`) is one model request and the tool calls of
its reply, decided, run and answered; it returns what it decided (:data:`TurnOutcome`). The
conversation changes only through :class:`~nb_tools.agent._conversation.Conversation`, and a
stop at any await leaves it valid: every call of the last reply answered.

A run reads its configuration from a frozen :class:`~nb_tools.agent._settings.AgentSettings`
(``self.settings``), never from the live ``Agent``; what it changes is its own state (usage,
turns, pending calls), the conversation it was given, and the rule set's session rules."""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
import os
import threading
import time
import warnings
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias

from nb_tools.agent._approval import (
    Allow,
    ApprovalRequest,
    Ask,
    Settled,
    denial_text,
    source_label,
)
from nb_tools.agent._budget import estimated_usage, over_budget
from nb_tools.agent._deciders import (
    ask_person,
    decided_event,
    deciders_for,
    is_invalid_arguments,
    remembered_rule,
    run_deciders,
)
from nb_tools.agent._driver import TurnDriver, server_tool_used
from nb_tools.agent._events import (
    ApprovalRequested,
    Event,
    ModelFailed,
    RunFinished,
    TextDelta,
    ToolArgumentsDelta,
    ToolCallFinished,
    ToolCallStarted,
    ToolProgress,
    ToolStatus,
    TurnStarted,
    UsageUpdated,
)
from nb_tools.agent._instructions import instructions_note
from nb_tools.agent._journal import RunChange, changes_of
from nb_tools.agent._notices import RunNotice, ThinkingDelta
from nb_tools.agent._output import (
    FINAL_TOOL,
    INVALID_OUTPUT,
    OutputState,
)
from nb_tools.agent._prepare import prepare
from nb_tools.agent._replay import ReplayedCall, remember_tools, replay_code
from nb_tools.agent._result import RunResult
from nb_tools.agent._retry import stream_with_retries, take_over_retries
from nb_tools.agent._schedule import CallPlan, Tracker, approve, plan, run_approved
from nb_tools.agent._turns import sendable
from nb_tools.agent._uploads import Uploader
from nb_tools.model import (
    ModelError,
    ModelRequest,
    Part,
    Provider,
    ResponseEvent,
    ServerToolEvent,
    TextDeltaEvent,
    ThinkingDeltaEvent,
    ToolArgumentsDeltaEvent,
    ToolResult,
    ToolUseStartEvent,
    Usage,
)
from nb_tools.tool import Executor, Progress, Registry, progress_sink
from nb_tools.tool._interrupt import still_running
from nb_tools.tool._votes import is_read_only_call

if TYPE_CHECKING:
    from nb_tools.agent._conversation import Conversation
    from nb_tools.agent._settings import AgentSettings
    from nb_tools.permissions import PermissionRules

EventHandler: TypeAlias = Callable[[Event], "Awaitable[None] | None"]

STOPPED_TEXT = "stopped by the user before this call finished"
PROMPT_NOT_KEPT = " (the prompt was not kept: run the cell again to send it)"
CUT_OFF_TEXT = (
    "cut off: the user stopped the run while this call was running; it may have partially "
    "run (check its effects before calling it again)"
)
BACKGROUND_TEXT = (
    "still running in the background: the user stopped the run, but this call could not be "
    "interrupted (it is blocked outside Python) and may still change things; check its "
    "effects before calling it again"
)


@dataclass(frozen=True)
class GoOn:
    """The turn is done and the model should be asked again. ``max_tokens``: that request's
    limit (a tool call cut at ``max_tokens`` is asked for again with more room);
    ``mid_turn``: the model's own turn is not over (a paused turn, a cut call asked again),
    so a stop "after this turn" waits for it."""

    max_tokens: int | None = None
    mid_turn: bool = False


@dataclass(frozen=True)
class Finished:
    """The turn ended the run: the model's ``stop_reason`` ("end_turn", "refusal", …) or
    the loop's ("error", "budget"), with ``error`` saying what went wrong."""

    stop_reason: str
    error: str | None = None


TurnOutcome: TypeAlias = GoOn | Finished


class Run:
    """One run's state, so a stop can finish the conversation properly. ``settings``: what
    the run reads (frozen); ``conversation``: the messages it adds to;
    ``last_stop_reason``: how the conversation's previous run ended (a prompt after a
    cut reply is worded so the model continues). ``shared_spend``: what every run sharing
    the budget has spent so far, this one included (a map's rows), read before each turn."""

    registry: Registry
    executor: Executor
    driver: TurnDriver

    def __init__(
        self,
        settings: AgentSettings,
        conversation: Conversation,
        handlers: list[EventHandler],
        *,
        last_stop_reason: str | None = None,
        shared_spend: Callable[[], float] | None = None,
    ) -> None:
        self.settings = settings
        self.provider: Provider = settings.provider
        self.conversation = conversation
        self.handlers = handlers
        self.last_stop_reason = last_stop_reason
        self.shared_spend = shared_spend
        self.rules: PermissionRules | None = settings.rules
        """The rule set "Always allow" adds session rules to (made on the first one when
        the settings have none; the agent takes it over when the run ends)."""
        self.usage = Usage()
        self.last_usage: Usage | None = None  # the last reply's (for the budget)
        self.turns = 0
        self.text = ""  # the run's last assistant text
        self.replayed: list[ReplayedCall] = []  # finished calls, for RunResult.to_code
        self.call_order: dict[str, int] = {}  # call id -> its place among the run's calls
        self.journal: list[RunChange] = []  # what the run's calls changed, in order
        self.partial: list[str] = []  # text streamed in the current turn
        self.pending: list[CallPlan] = []  # calls of the last assistant message, unanswered
        self.tracker = Tracker()
        self.reported: set[str] = set()
        self.loop = asyncio.get_running_loop()
        self.loop_thread = threading.get_ident()
        self.task: asyncio.Task[Any] | None = None
        self.background: set[asyncio.Future[Any]] = set()
        self.retries: int | None = None  # model retries made here (ModelRetrying events)
        self.stop_after_turn = False
        self.stop_asked = False
        self.finishing = False  # the turns are over: a stop now changes nothing
        self.ended: RunResult | None = None  # how the run ended, once it has
        self.output: OutputState | None = None  # with run(output=T)
        self.before_prompt: tuple[Any, ...] | None = None  # until the first reply is kept
        self._deciders: tuple[Any, Path, Any] | None = None  # (rules, root, deciders)
        self.in_flight: ModelRequest | None = None  # sent, its reply not complete yet
        self.received = 0  # characters of the reply in flight received so far

    # -- stopping, from any thread -----------------------------------------------------------

    def stop(self, *, after_turn: bool = False) -> None:
        """Stop now (calls in flight are cancelled and answered as stopped or cut off) or
        once the turn in progress is done (its calls run and are answered)."""
        if after_turn:
            self.stop_after_turn = True
            return
        self.stop_asked = True
        self.loop.call_soon_threadsafe(self._cancel)

    def _cancel(self) -> None:
        """On the run's loop: cancel the run unless its turns are over (a stop that comes
        while ``RunFinished`` goes out must not cancel whoever awaits ``run``)."""
        if self.task is not None and not self.finishing:
            self.task.cancel()

    # -- events --------------------------------------------------------------------------

    async def emit(self, event: Event) -> None:
        if isinstance(event, ToolCallStarted):
            self.call_order.setdefault(event.call.id, len(self.call_order))
        elif isinstance(event, ToolCallFinished):
            self.replayed.append(self._replayed(event))
            if event.status == "ok":
                self.journal += self._changes(event)
        for handler in self.handlers:
            try:
                out = handler(event)
                if inspect.isawaitable(out):
                    await out
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                _warn_handler(handler, type(event).__name__, exc)

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
                _warn_handler(handler, type(event).__name__, exc)

    def _background_done(self, task: asyncio.Future[Any]) -> None:
        self.background.discard(task)
        exc = None if task.cancelled() else task.exception()
        if exc is not None:
            _warn_handler("an async handler", "ToolProgress", exc)

    def _replayed(self, event: ToolCallFinished) -> ReplayedCall:
        call = event.call
        ran = event.status == "ok"
        tool = self.registry.get(call.name) if ran or event.status == "denied" else None
        return ReplayedCall(
            id=call.id,
            name=call.name,
            arguments=call.arguments,
            status=event.status,
            code=replay_code(tool, call.arguments),
        )

    def _changes(self, event: ToolCallFinished) -> list[RunChange]:
        call = event.call
        tool = self.registry.get(call.name)
        planned = next((p for p in self.pending if p.call.id == call.id and p.tool is tool), None)
        if planned is not None:  # the vote the call was planned with: asked once per call
            read_only = planned.read_only
        else:
            try:
                read_only = tool is not None and is_read_only_call(tool, call.arguments)
            except Exception:  # a vote that fails counts as "may have changed something"
                read_only = False
        code = replay_code(tool, call.arguments) is not None
        return changes_of(call.id, call.name, event.result.metadata, code=code, read_only=read_only)

    def on_progress(self, call_id: str, progress: Progress) -> None:
        self.emit_soon(ToolProgress(call_id=call_id, progress=progress))

    # -- the run -------------------------------------------------------------------------

    def start(self, prompt: str, attachments: Sequence[Any] = ()) -> None:
        """Add the prompt and get the tools and the request builder; with an output type,
        ask for it the provider's way or add the ``final_result`` tool."""
        settings = self.settings
        ready = prepare(settings, self.conversation)
        self.uploader = Uploader(self.provider, self.emit)
        self.registry, self.driver, self.output = ready.registry, ready.driver, ready.output
        self.executor = Executor(self.registry, *settings.middlewares)
        remember_tools(self.registry)
        if settings.citations:
            attachments = [
                dataclasses.replace(p, citations=True)
                if isinstance(p, Part) and p.kind == "document"
                else p
                for p in attachments
            ]
        self.before_prompt = self.conversation.mark()
        self.conversation.add_prompt(prompt, attachments, last_stop_reason=self.last_stop_reason)

    async def go(self, prompt: str, attachments: Sequence[Any] = ()) -> RunResult:
        """Add the prompt, then drive turns to the end. A stop asked with :meth:`stop`
        returns a "stopped" result; a cancellation from outside ends the same way, then
        propagates."""
        self.task = asyncio.current_task()
        try:
            self.start(prompt, attachments)
            result = await self._turns()
            self.finishing = True
        except asyncio.CancelledError:
            result = await self._end_early("stopped")
            if self.stop_asked and self.task is not None and self.task.uncancel() == 0:
                return result
            raise
        except Exception as exc:  # a bug (ours or a hook's): keep the conversation valid
            await self._end_early("error", f"{type(exc).__name__}: {exc}")
            raise
        await self._finish(result)
        return result

    async def _turns(self) -> RunResult:
        max_tokens: int | None = None
        instructions = self.settings.instructions
        if instructions is not None and (instructions.files or instructions.skipped):
            await self.emit(RunNotice(kind="instructions", message=instructions_note(instructions)))
        take_notes = getattr(self.provider, "take_notes", None)  # e.g. which credential
        while True:
            outcome = await self.turn(max_tokens)
            for note in take_notes() if take_notes is not None else ():
                await self.emit(RunNotice(kind="credentials", message=note))
            if isinstance(outcome, Finished):
                return self.result(outcome.stop_reason, outcome.error)
            if self.stop_after_turn and not outcome.mid_turn:
                return self.result("stopped_after_turn")  # asked for: no "Continue?"
            if self.turns >= self.settings.max_turns and outcome.max_tokens is None:
                return self.result("max_turns")  # a cut call's one retry still goes
            max_tokens = outcome.max_tokens

    async def turn(self, max_tokens: int | None = None) -> TurnOutcome:
        """One model request and its reply's tool calls, decided, run and answered."""
        if self.settings.upload_attachments:  # files in the newest message, sent once
            await self.uploader.send_new(self.conversation)
        try:
            request, notes = await self.driver.request(self.registry, max_tokens)
        except ModelError as exc:
            return await self._failed(str(exc), exc.status)
        budget = self.settings.budget_usd
        if budget is not None:
            if self.shared_spend is not None:  # less what the others spent
                budget = max(0.0, budget - (self.shared_spend() - self.usage.cost_usd))
            why = over_budget(budget, self.usage, self.provider, request, self.last_usage)
            if why is not None:
                await self.emit(RunNotice(kind="budget", message=why))
                return Finished("budget")
        self.turns += 1
        if self.handlers:
            await self.emit(TurnStarted(turn=self.turns))
        for note in notes:
            await self.emit(note)
        self.in_flight, self.received = request, 0
        try:
            response = await self._stream(request)
        except ModelError as exc:
            return await self._failed(str(exc), exc.status)
        except Exception as exc:  # a provider bug must not lose the conversation
            return await self._failed(f"{type(exc).__name__}: {exc}", None)
        # No await from here until the calls are pending: a stop must find every tool_use
        # of the added reply in ``pending``.
        self.partial = []
        self.in_flight = None
        message = response.message
        verdict, notes = self.driver.judge(response, request)
        self.before_prompt = None  # the model answered: the prompt is part of the conversation
        if verdict.keep and sendable(message):
            message = self.conversation.add_reply(message)  # with unique call ids
            if message.text:
                self.text = message.text
        elif verdict.drop_prompt:
            self.conversation.drop_refused_prompt()
        self.tracker = Tracker()
        self.reported = set()
        calls = message.tool_calls if verdict.keep and verdict.run else ()
        self.pending = [plan(self.registry, c) for c in calls]
        if response.container:
            self.conversation.container = dict(response.container)
        self.usage = self.usage + response.usage
        self.last_usage = response.usage
        self.conversation.count(response.usage)
        for note in notes:
            await self.emit(note)
        if self.handlers:
            await self.emit(UsageUpdated(turn=self.turns, usage=response.usage, total=self.usage))
        if self.pending:
            await self._run_calls()
            return self._after_final_call()
        if verdict.again:
            return GoOn(max_tokens=verdict.max_tokens, mid_turn=True)
        reason = verdict.stop_reason or response.stop_reason
        out = self.output
        if out is not None and not out.done and reason == "end_turn" and verdict.error is None:
            return await self._check_answer(message.text)
        return Finished(reason, verdict.error)

    def _after_final_call(self) -> TurnOutcome:
        """After a turn's calls: the run ends once ``final_result`` got a valid answer, or
        when its answers failed more often than the retries allow."""
        out = self.output
        if out is None or out.native:
            return GoOn()
        if out.done:
            return Finished("end_turn")
        if out.exhausted:
            return Finished(INVALID_OUTPUT, out.error_text())
        return GoOn()

    async def _check_answer(self, text: str) -> TurnOutcome:
        """A final text when the run wants an output: with structured outputs it is the
        JSON; else the model should have called ``final_result``. Not valid: ask again
        (a notice says why), or end the run once the retries are spent."""
        out = self.output
        if out is None:
            return Finished("end_turn")
        if out.native:
            if out.accept(text):
                return Finished("end_turn")
        else:
            out.failures += 1
            out.problems = [f"the model answered in text instead of calling {FINAL_TOOL}"]
        if out.exhausted:
            return Finished(INVALID_OUTPUT, out.error_text())
        await self.emit(
            RunNotice(
                kind="output_retry",
                message=f"the answer is not a valid {out.type.name} ("
                + "; ".join(out.problems)
                + f"); asking again ({out.failures} of {out.retries})",
            )
        )
        self.conversation.add_prompt(out.retry_text())
        return GoOn()

    def result(self, stop_reason: str, error: str | None = None) -> RunResult:
        out = self.output

        return RunResult(
            text=self.text,
            messages=self.conversation.messages,
            usage=self.usage,
            stop_reason=stop_reason,
            error=error,
            turns=self.turns,
            system=self.settings.system,
            changes=tuple(self.journal),
            calls=tuple(sorted(self.replayed, key=lambda c: self.call_order.get(c.id, 1 << 30))),
            output=out.value if out is not None and out.done else None,
        )

    async def _failed(self, message: str, status: int | None) -> Finished:
        self.partial = []
        self.in_flight = None
        mark, self.before_prompt = self.before_prompt, None
        if mark is not None and self.conversation.take_back(mark):
            message += PROMPT_NOT_KEPT
        await self.emit(ModelFailed(message=message, status=status))
        return Finished("error", message)

    async def _end_early(self, stop_reason: str, error: str | None = None) -> RunResult:
        self.finishing = True
        result, events = self._stop(stop_reason, error)  # the conversation is valid here
        for event in events:
            await self.emit(event)
        await self._finish(result)
        return result

    async def _finish(self, result: RunResult) -> None:
        self.ended = result
        if self.background:  # async handlers of progress events
            await asyncio.wait(set(self.background), timeout=1.0)
        await self.emit(RunFinished(result=result))

    async def _stream(self, request: ModelRequest) -> ResponseEvent:
        provider = self.provider
        response: ResponseEvent | None = None
        if self.retries is None:
            self.retries = take_over_retries(provider)
        stream = stream_with_retries(provider, request, self.retries, self.emit)
        names: dict[str, str] = {}  # call id -> tool name, for ToolArgumentsDelta
        # The deltas change nothing but what handlers see: without one, none is made.
        listening = bool(self.handlers)
        try:
            async for event in stream:
                if isinstance(event, TextDeltaEvent):
                    self.partial.append(event.text)
                    self.received += len(event.text)
                    if listening:
                        await self.emit(TextDelta(text=event.text))
                elif isinstance(event, ThinkingDeltaEvent):
                    self.received += len(event.text)
                    if listening:
                        await self.emit(ThinkingDelta(text=event.text))
                elif isinstance(event, ToolUseStartEvent):
                    names[event.id] = event.name
                    if listening:
                        await self.emit(
                            ToolArgumentsDelta(call_id=event.id, name=event.name, partial_json="")
                        )
                elif isinstance(event, ToolArgumentsDeltaEvent):
                    self.received += len(event.partial_json)
                    if listening:
                        name = names.get(event.id, "")
                        await self.emit(
                            ToolArgumentsDelta(
                                call_id=event.id, name=name, partial_json=event.partial_json
                            )
                        )
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

    async def _run_calls(self) -> None:
        approved: list[CallPlan] = []
        for p in self.pending:
            await self.emit(
                ToolCallStarted(
                    call=p.call, info=p.info, preview=p.preview, needs_approval=p.needs_approval
                )
            )
            decision = await self._decide(p)
            if decision is None or isinstance(decision, Allow):
                approved.append(
                    approve(p, decision, sandbox=self.settings.sandbox, rules=self.rules)
                )
                continue
            status: ToolStatus = "error" if is_invalid_arguments(decision) else "denied"
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

        # No handler: no sink, so the tools skip making progress nobody would receive.
        with progress_sink(self.on_progress if self.handlers else None):
            await run_approved(self.executor, approved, self.tracker, finished)
        self._answer_pending()

    async def _report(
        self, p: CallPlan, result: ToolResult, duration: float, status: ToolStatus
    ) -> None:
        self.reported.add(p.call.id)
        await self.emit(
            ToolCallFinished(call=p.call, result=result, duration=duration, status=status)
        )

    async def _decide(self, p: CallPlan) -> Settled | None:
        """The approval pipeline (:mod:`nb_tools.agent._deciders`), then the person.
        ``None``: no decider had anything to say; the call runs without approval."""
        settings = self.settings
        kept = self._deciders
        if kept is None or kept[0] is not self.rules:  # made once, again after a new rule set
            root = self.rules.root if self.rules is not None else _cwd()
            deciders = deciders_for(
                policy=settings.approval,
                rules=self.rules,
                permission=settings.permission,
                root=root,
            )
            kept = self._deciders = (self.rules, root, deciders)
        _, root, deciders = kept
        verdict = await run_deciders(deciders, p)
        if verdict is None:
            return None
        if isinstance(verdict, Ask):
            verdict = await ask_person(p, verdict, settings.approver, root, self._requested)
            remembered = remembered_rule(verdict)
            if remembered is not None:  # one home: a session rule, read by the Rules decider
                if self.rules is None:
                    from nb_tools.permissions import PermissionRules

                    self.rules = PermissionRules(root=root)
                self.rules.allow(remembered, source="session")
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

    def _answer_pending(self) -> list[tuple[CallPlan, ToolResult, ToolStatus]]:
        """Answer every pending call in one user message (a stop answers the calls without
        a result); return the answers made up here, for their events."""
        made: list[tuple[CallPlan, ToolResult, ToolStatus]] = []
        results: list[ToolResult] = []
        for p in self.pending:
            result = self.tracker.results.get(p.call.id)
            if result is None:
                started = p.call.id in self.tracker.started
                status: ToolStatus = "cut_off" if started and not p.read_only else "stopped"
                text = CUT_OFF_TEXT if status == "cut_off" else STOPPED_TEXT
                if started and still_running(p.call.id):  # a sync tool blocked in C
                    status, text = "running_in_background", BACKGROUND_TEXT
                result = ToolResult(
                    tool_use_id=p.call.id, content=text, is_error=True, metadata={"status": status}
                )
                made.append((p, result, status))
            elif p.call.id not in self.reported:
                made.append((p, result, "error" if result.is_error else "ok"))
            results.append(result)
        self.conversation.answer(results)
        self.pending = []
        return made

    # -- stop ----------------------------------------------------------------------------

    def _stop(self, stop_reason: str, error: str | None) -> tuple[RunResult, list[Event]]:
        """Leave the conversation valid after a cancellation (no await in here); return
        the result and the events still to emit."""
        partial = "".join(self.partial)
        if partial.strip():  # a reply cut mid-stream: keep its text, drop unfinished calls
            self.conversation.add_partial_reply(partial)
            self.text = partial
        self.partial = []
        events: list[Event] = []
        if self.in_flight is not None:  # sent and partly answered: it is billed all the same
            cut = estimated_usage(self.provider.price(), self.in_flight, self.received)
            self.in_flight = None
            self.usage = self.usage + cut
            self.last_usage = cut
            self.conversation.count(cut)
            events.append(UsageUpdated(turn=self.turns, usage=cut, total=self.usage))
        now = time.perf_counter()
        events += [
            ToolCallFinished(
                call=p.call,
                result=result,
                status=status,
                duration=now - self.tracker.started.get(p.call.id, now),
            )
            for p, result, status in self._answer_pending()
        ]
        return self.result(stop_reason, error), events


_last_cwd: tuple[str, Path] = ("", Path())


def _cwd() -> Path:
    """``Path.cwd()``, the ``Path`` made once per working directory: making one is most of
    what ``Path.cwd()`` costs, and every run without rules asks."""
    global _last_cwd
    here = os.getcwd()
    kept = _last_cwd
    if kept[0] != here:
        kept = _last_cwd = (here, Path(here))
    return kept[1]


def _warn_handler(handler: object, what: str, exc: BaseException) -> None:
    warnings.warn(
        f"nb_tools: the event handler {handler!r} raised {type(exc).__name__}: {exc} while "
        f"handling {what}; the run goes on",
        RuntimeWarning,
        stacklevel=3,
    )


__all__ = ["EventHandler", "Finished", "GoOn", "Run", "TurnOutcome"]
