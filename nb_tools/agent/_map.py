"""Agents over many inputs: ``nb_tools.map(prompt, inputs, ...)`` runs one conversation
per row of a table and returns a table (see ``docs/map.md``).

Every row's run reads one frozen :class:`~nb_tools.agent._settings.AgentSettings` (model,
tools, system prompt, policy, rules, limits, output type), the same value for every row: no
agent, registry or schema is made per row, and every request shares the same system prompt
and tools: one prompt-cache prefix, written by the first request (which goes alone) and
read by the rest. A row's state is its own: its conversation and its run. The rows run
concurrently in the kernel's event loop; their model requests go through one gate
(:mod:`nb_tools.agent._map_gate`) that adapts to the provider's rate limits.
pandas is imported only to build the result.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import dataclasses
import os
import threading
import time
import warnings
from collections.abc import Awaitable, Callable, Iterable, Sequence
from concurrent.futures import Executor as FuturesExecutor
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from nb_tools.agent._approval import APPROVAL_ENV, Approver, Policy, check_policy, default_policy
from nb_tools.agent._conversation import Conversation
from nb_tools.agent._events import ApprovalDecided, Event, ToolCallStarted
from nb_tools.agent._instructions import system_with
from nb_tools.agent._map_checkpoint import Checkpoint, restore, unreadable
from nb_tools.agent._map_gate import GatedProvider, Limiter
from nb_tools.agent._map_plan import MapPlan, confirm_plan
from nb_tools.agent._map_rows import (
    RESULT_COLUMNS,
    Prompt,
    RowOutcome,
    jsonable,
    read_inputs,
    render_prompts,
    row_key,
)
from nb_tools.agent._output import INVALID_OUTPUT, OutputError, OutputType
from nb_tools.agent._run import Run
from nb_tools.agent._settings import AgentSettings
from nb_tools.model import Provider, Usage
from nb_tools.tool import Middleware, Registry, Tool, default_registry
from nb_tools.tool._sync import run_blocking

if TYPE_CHECKING:
    from nb_tools.permissions import PermissionRules


current_row: contextvars.ContextVar[int | None] = contextvars.ContextVar(
    "nb_tools_map_row", default=None
)
"""The position of the row whose conversation is running (an approver reads it)."""
DEFAULT_CONCURRENCY = 8
BACKENDS = ("kernel", "batch")

_STOP_TEXT = {
    "max_turns": "the turn limit was reached before an answer",
    "max_tokens": "the reply was cut at max_tokens",
    "refusal": "the model refused",
    "stopped": "stopped while running (the map was stopped)",
    "stopped_after_turn": "stopped while running (the map was stopped)",
}
_STOPPED = ("stopped", "stopped_after_turn")


MapSettings = AgentSettings
"""The settings every row reads (the name :func:`map` gave them before runs read
:class:`AgentSettings`)."""


@dataclass(kw_only=True)
class MapInfo:
    """What a map run leaves besides its table: ``result.attrs["nb_tools"]``.

    ``conversations[i]`` is row ``i``'s conversation (input order; None for a row that
    sent nothing): continue it with ``Agent(messages=info.conversations[i])``."""

    conversations: list[Conversation | None]
    settings: AgentSettings
    """The one settings value every row read (its ``provider`` is the map's gated one)."""
    requests: int = 0
    """Model requests sent (retries after a rate limit included)."""
    rate_limited: int = 0
    """Requests the provider refused with 429/529 (each waited and went again)."""
    lowest_concurrency: int = 0
    """The lowest the adaptive concurrency went."""
    restored: int = 0
    """Rows taken from the checkpoint (no request sent for them)."""
    spent_usd: float = 0.0
    checkpoint: str | None = None
    notices: list[str] = field(default_factory=list)
    batch_ids: list[str] = field(default_factory=list)
    """With ``backend="batch"``: the Message Batches sent, one per round."""
    resumed_batch_ids: list[str] = field(default_factory=list)
    """With ``backend="batch"`` and a checkpoint: the batches a previous run left pending
    that this run polled for their answers (instead of sending those requests again)."""

    def __deepcopy__(self, memo: dict[int, Any]) -> MapInfo:
        return self  # pandas deep-copies attrs on every operation; this is a record

    def __repr__(self) -> str:
        return (
            f"MapInfo({len(self.conversations)} rows, {self.requests} requests, "
            f"${self.spent_usd:.4f}, {self.rate_limited} rate-limited)"
        )


@dataclass(frozen=True, kw_only=True)
class MapProgress:
    """Where a map run is, for a progress view (``amap(on_progress=...)``): called when a
    row starts and when it finishes."""

    rows: int
    done: int
    running: int
    failed: int
    """Rows that finished with a status other than "ok"."""
    spent_usd: float
    budget_usd: float | None
    elapsed: float
    eta: float | None
    """Seconds until every row is done at the pace so far (None before a row finished)."""
    statuses: tuple[str, ...] = ()
    """Each row's status so far: "queued", "running", or how it ended ("ok", ...)."""


def _policy(approval: Policy | None) -> Policy:
    return check_policy(approval or default_policy())


def _may_ask(registry: Registry, rules: PermissionRules | None) -> list[str]:
    """The tools whose calls may wait for a person (under "ask")."""
    names = []
    for t in registry.list():
        info = t.info()
        if info.requires_approval or hasattr(t, "requires_approval_for"):
            names.append(info.name)
    if rules is not None:
        tools = {t.info().name for t in registry.list()}
        names += [r.text for r in rules.rules if r.action == "ask" and r.tool in tools]
    return names


def _registry(tools: Registry | Iterable[Tool] | None) -> Registry:
    if tools is None:
        return default_registry().clone()
    if isinstance(tools, Registry):
        return tools
    return Registry(*tools)


def _provider(model: str | Provider | None) -> Provider:
    if model is None or isinstance(model, str):
        from nb_tools.model import provider_for

        return provider_for(model)
    from nb_tools.agent._agent import check_provider

    check_provider(model)
    return model


def _concurrent_requests(provider: Provider) -> AbstractAsyncContextManager[Any]:
    """The provider's scope for many requests at once from this event loop, if it has one
    (``AnthropicProvider.concurrent_requests``: its aiohttp transport)."""
    scope = getattr(provider, "concurrent_requests", None)
    return scope() if callable(scope) else contextlib.nullcontext()


def _outcome(result: Any, output: OutputType | None, denied: list[str]) -> RowOutcome:
    stop = result.stop_reason
    error: str | None = None
    if stop == "budget":
        status = "budget"
        error = "the row's turns would have passed the map's budget"
    elif stop in _STOPPED:
        status, error = "stopped", _STOP_TEXT[stop]
    elif stop in ("end_turn", "stop_sequence", "pause_turn"):
        status = "ok"
        if output is not None and result.output is None:
            status, error = "error", f"the run ended without a {output.name}"
    else:
        status = "error"
        error = result.error or _STOP_TEXT.get(stop, f"the run ended with {stop}")
    if denied:
        status = "denied" if status in ("ok", "error") else status
        error = "; ".join(denied) + (f"; {error}" if error else "")
    value = result.output if output is not None else result.text
    return RowOutcome(
        status=status,
        output=value,
        output_json=jsonable(value),
        error=error,
        turns=result.turns,
        cost_usd=result.usage.cost_usd,
        messages=tuple(result.messages),
        usage=result.usage,
    )


class _Map:
    """One map run: the rows, their outcomes as they finish, the shared gate."""

    def __init__(
        self,
        settings: AgentSettings,
        prompts: list[str | None],
        concurrency: int,
        budget_usd: float | None,
        checkpoint: Checkpoint | None,
        limiter: Limiter,
    ) -> None:
        self.settings = settings
        self.prompts = prompts
        self.limiter = limiter
        self.rounds: Any = None
        self.concurrency = concurrency
        self.budget_usd = budget_usd
        self.checkpoint = checkpoint
        self.outcomes: list[RowOutcome | None] = [None] * len(prompts)
        self.conversations: list[Conversation | None] = [None] * len(prompts)
        self.running: set[int] = set()
        self.statuses: list[str] = ["queued"] * len(prompts)
        """Each row's status, kept as rows start and finish (a progress report reads it
        without looking at every row: a map of 20,000 rows reports 40,000 times)."""
        self.done = 0
        self.failed = 0
        self.runs: dict[int, Run] = {}
        self.resumed: dict[int, list[Any]] = {}
        """Rows a previous run's pending batch holds: the conversation they continue."""
        self.before: dict[int, RowOutcome] = {}
        """Those rows' turns and cost in the runs before this one (their outcome adds them)."""
        self.notices: list[str] = []
        self.stop_flag = threading.Event()
        self.on_progress: Any = None
        self.on_row_event: Callable[[int, Event], None] | None = None
        self.on_restored: Callable[[int, Conversation], None] | None = None
        self.started = time.monotonic()
        self.finished_here = 0

    def _set(self, i: int, outcome: RowOutcome) -> None:
        """Row ``i`` ended with ``outcome`` (its only write)."""
        if self.outcomes[i] is None:
            self.done += 1
            self.failed += outcome.status != "ok"
        self.outcomes[i] = outcome
        self.statuses[i] = outcome.status

    def _start(self, i: int) -> None:
        self.running.add(i)
        self.statuses[i] = "running"

    def progress(self) -> MapProgress:
        elapsed = time.monotonic() - self.started
        left = len(self.outcomes) - self.done
        eta = elapsed / self.finished_here * left if self.finished_here else None
        return MapProgress(
            rows=len(self.outcomes),
            done=self.done,
            running=len(self.running),
            failed=self.failed,
            spent_usd=self.limiter.spent_usd,
            budget_usd=self.budget_usd,
            elapsed=elapsed,
            eta=eta,
            statuses=tuple(self.statuses),
        )

    def _report(self) -> None:
        if self.on_progress is not None:
            self.on_progress(self.progress())

    def restore(self) -> int:
        if self.checkpoint is None:
            return 0
        done = self.checkpoint.read()
        parse = self.settings.output.parse if self.settings.output is not None else None
        n = 0
        for i, prompt in enumerate(self.prompts):
            data = done.get((i, row_key(prompt)))
            if data is not None and prompt is not None:
                try:
                    outcome = restore(data, parse)
                except Exception as err:  # an untrusted line: the row runs again
                    self.notices.append(unreadable(self.checkpoint.path, i, err))
                    continue
                self._set(i, outcome)
                usage = outcome.usage or Usage(cost_usd=outcome.cost_usd)
                self.conversations[i] = Conversation(outcome.messages, usage=usage)
                if self.on_restored is not None:
                    self.on_restored(i, self.conversations[i])
                n += 1
        if self.rounds is not None:
            self._resume_batches()
        return n

    def _resume_batches(self) -> None:
        """Rows whose request a previous run's batch holds (it has not been marked done)
        continue their conversation from that request, and get its answer from that batch
        (:mod:`nb_tools.agent._map_batch`)."""
        from nb_tools.agent._map_batch import Resumable
        from nb_tools.agent._persist import decode_messages

        if self.checkpoint is None:
            return
        for batch_id, requests in self.checkpoint.pending_batches().items():
            for custom_id, record in requests.items():
                try:
                    i = int(record["row"])
                    ok = 0 <= i < len(self.prompts) and self.outcomes[i] is None
                    if not ok or record.get("key") != row_key(self.prompts[i]):
                        continue
                    messages = decode_messages(record.get("messages") or [])
                    before = RowOutcome(
                        status="running",
                        turns=sum(m.role == "assistant" for m in messages),
                        cost_usd=float(record.get("cost_usd") or 0.0),
                    )
                except (KeyError, TypeError, ValueError):
                    continue  # a record this version cannot read: the row starts again
                self.resumed[i] = messages
                self.before[i] = before
                self.rounds.row_cost[i] = before.cost_usd
                self.rounds.resumable[i] = Resumable(
                    batch_id=batch_id, custom_id=custom_id, request_hash=str(record.get("hash"))
                )

    def _budget_left(self) -> float | None:
        if self.budget_usd is None:
            return None
        return self.budget_usd - self.limiter.spent_usd

    async def run_row(self, i: int) -> None:
        try:
            await self._run_row(i)
        finally:
            if self.rounds is not None:  # a batch round waits for no finished row
                self.rounds.row_finished()

    async def _run_row(self, i: int) -> None:
        prompt = self.prompts[i]
        if prompt is None:
            self._set(i, RowOutcome(status="skipped", error="the prompt callable gave None"))
            return
        left = self._budget_left()
        if left is not None and left <= 0:
            self._set(
                i,
                RowOutcome(
                    status="budget",
                    error=f"not started: the map's budget (${self.budget_usd}) is spent",
                ),
            )
            return
        if self.stop_flag.is_set():
            self._set(i, RowOutcome(status="skipped", error="not started: the map was stopped"))
            return
        denied: list[str] = []
        names: dict[str, str] = {}

        def watch(event: Event) -> None:
            if isinstance(event, ToolCallStarted):
                names[event.call.id] = event.call.name
            elif isinstance(event, ApprovalDecided) and not event.approved:
                denied.append(f"denied {names.get(event.call_id, 'a call')} ({event.by})")
            if self.on_row_event is not None:
                self.on_row_event(i, event)

        current_row.set(i)
        resumed = self.resumed.pop(i, None)
        conversation = Conversation(resumed or ())
        self.conversations[i] = conversation
        limiter = self.limiter
        run = Run(self.settings, conversation, [watch], shared_spend=lambda: limiter.spent_usd)
        # A resumed row continues the conversation its pending batch request carried.
        text = "" if resumed else prompt
        self._start(i)
        self.runs[i] = run
        self._report()
        try:
            try:
                result = await run.go(text)
            except Exception as err:  # a row's failure is its row's, never the map's
                outcome = RowOutcome(
                    status="error",
                    error=f"{type(err).__name__}: {err}",
                    cost_usd=conversation.usage.cost_usd,
                    messages=conversation.messages,
                )
            else:
                if result.stop_reason == INVALID_OUTPUT:
                    problems = run.output.problems if run.output is not None else []
                    err = OutputError(result.error or "invalid output", problems, result)
                    outcome = RowOutcome(
                        status="error",
                        error=str(err),
                        turns=result.turns,
                        cost_usd=conversation.usage.cost_usd,
                        messages=conversation.messages,
                    )
                else:
                    outcome = _outcome(result, self.settings.output, denied)
        finally:
            self.running.discard(i)
            self.runs.pop(i, None)
        before = self.before.pop(i, None)
        if before is not None:  # a resumed row's turns and cost are the whole row's
            outcome = dataclasses.replace(
                outcome,
                turns=outcome.turns + before.turns,
                cost_usd=outcome.cost_usd + before.cost_usd,
            )
        self._set(i, outcome)
        self.finished_here += 1
        if self.checkpoint is not None:
            self.checkpoint.write(i, row_key(prompt), outcome)
        self._report()

    async def _watch_stop(self) -> None:
        """Stop the rows in flight once :attr:`stop_flag` is set (from any thread)."""
        while not self.stop_flag.is_set():
            await asyncio.sleep(0.1)
        for run in list(self.runs.values()):
            run.stop()

    async def go(self) -> None:
        todo = [i for i, o in enumerate(self.outcomes) if o is None]
        if self.rounds is not None:
            self.rounds.active = len(todo)  # every row is in the first round
        queue: asyncio.Queue[int] = asyncio.Queue()
        for i in todo:
            queue.put_nowait(i)

        async def worker() -> None:
            while not self.stop_flag.is_set():
                try:
                    i = queue.get_nowait()
                except asyncio.QueueEmpty:
                    return
                await self.run_row(i)

        workers = [asyncio.ensure_future(worker()) for _ in range(min(self.concurrency, len(todo)))]
        watcher = asyncio.ensure_future(self._watch_stop())
        try:
            await asyncio.gather(*workers)
        finally:
            for w in (*workers, watcher):
                w.cancel()
            await asyncio.gather(*workers, watcher, return_exceptions=True)
        for i, o in enumerate(self.outcomes):
            if o is None:
                self._set(i, RowOutcome(status="skipped", error="not started: the map was stopped"))

    def mark_cut_short(self) -> None:
        """The map was cancelled (an interrupt): rows that were running are "stopped", with
        their conversation so far; rows not started are "skipped"."""
        for i, o in enumerate(self.outcomes):
            if o is not None:
                continue
            conversation = self.conversations[i]
            if conversation is None:
                self._set(
                    i, RowOutcome(status="skipped", error="not started: the map was interrupted")
                )
                continue
            before = self.before.get(i) or RowOutcome(status="running")
            messages = conversation.messages  # a resumed row's: from its first prompt
            self._set(
                i,
                RowOutcome(
                    status="stopped",
                    error="stopped while running (the map was interrupted)",
                    turns=sum(m.role == "assistant" for m in messages),
                    cost_usd=before.cost_usd + conversation.usage.cost_usd,
                    messages=messages,
                ),
            )


async def amap(
    prompt: Prompt,
    inputs: Any,
    *,
    tools: Registry | Iterable[Tool] | None = None,
    output: Any = None,
    model: str | Provider | None = None,
    system: str | None = None,
    concurrency: int = DEFAULT_CONCURRENCY,
    approval: Policy | None = None,
    approver: Approver | None = None,
    rules: PermissionRules | None = None,
    budget_usd: float | None = None,
    max_turns: int = 10,
    checkpoint: str | os.PathLike[str] | None = None,
    tool_executor: FuturesExecutor | None = None,
    backend: str = "kernel",
    middlewares: Sequence[Middleware] = (),
    on_progress: Callable[[MapProgress], None] | None = None,
    stop: threading.Event | None = None,
    batch_poll_seconds: float = 2.0,
    confirm: Callable[[MapPlan], bool | Awaitable[bool]] | None = None,
    on_row_event: Callable[[int, Event], None] | None = None,
    on_restored: Callable[[int, Conversation], None] | None = None,
) -> Any:
    """``await nb_tools.amap(...)``: :func:`map` in a running event loop (a notebook cell).
    Cancelling it stops every row and raises; finished rows are in the checkpoint already.
    ``stop`` (a ``threading.Event``, set from anywhere: a Stop button) ends it cleanly
    instead: rows in flight are stopped (status "stopped"), rows
    not started get "skipped", and the table is returned. ``on_progress`` gets a
    :class:`MapProgress` as rows start and finish. ``confirm`` gets the
    :class:`~nb_tools.agent.MapPlan` before the first request and returns (or awaits)
    True to go on; False returns None without sending a model request.
    ``on_row_event(i, event)`` sees every event of row ``i``'s run;
    ``on_restored(i, conversation)`` each row taken from the checkpoint, before the plan.
    Cancelled, it still builds the table so far (:func:`last_map`), then raises."""
    if concurrency < 1:
        raise ValueError(f"nb_tools.map: concurrency must be >= 1, got {concurrency}")
    if budget_usd is not None and budget_usd <= 0:
        raise ValueError(f"nb_tools.map: budget_usd must be more than 0, got {budget_usd}")
    if max_turns < 1:
        raise ValueError(f"nb_tools.map: max_turns must be >= 1, got {max_turns}")
    if backend not in BACKENDS:
        raise ValueError(f"nb_tools.map: unknown backend {backend!r}; use one of {BACKENDS}")
    table = read_inputs(inputs)
    clash = [c for c in table.columns if c in RESULT_COLUMNS]
    if clash:
        raise ValueError(
            f"nb_tools.map: the inputs have column(s) {', '.join(clash)}, which the result "
            f"adds ({', '.join(RESULT_COLUMNS)}); rename them first"
        )
    prompts = render_prompts(prompt, table)
    registry = _registry(tools)
    policy = _policy(approval)
    if policy == "ask" and approver is None:
        asking = _may_ask(registry, rules)
        if asking:
            raise ValueError(
                f"nb_tools.map: approval is 'ask' but no approver is given, and calls of "
                f"{', '.join(asking)} may need a person for every row. Choose a policy for "
                "the rows: approval='auto' (run them), 'read-only' or 'deny' (or set "
                f"{APPROVAL_ENV}), or pass approver= (a callable deciding each request)"
            )
    out = OutputType.of(output) if output is not None else None
    mws = tuple(middlewares)
    notices: list[str] = []
    if tool_executor is not None:
        from nb_tools.agent._map_ship import ship_to

        mws = (*mws, ship_to(tool_executor, registry))
    provider = _provider(model)
    if budget_usd is not None and provider.price() is None:
        from nb_tools.agent._budget import unpriced

        raise ValueError(f"nb_tools.map: {unpriced(budget_usd, provider)}")
    from nb_tools.agent._map_batch import has_batches

    batched = backend == "batch" and has_batches(provider)
    if backend == "batch" and not batched:
        notice = (
            f"nb_tools.map: backend='batch': the {provider.name} provider has no batch API; "
            "the rows run in the kernel"
        )
        notices.append(notice)
        warnings.warn(notice, stacklevel=2)
    store = Checkpoint(checkpoint) if checkpoint is not None else None
    if batched:
        concurrency = max(concurrency, len(prompts))  # a round holds every row in flight
    limiter = Limiter(concurrency=concurrency)
    rounds: Any = None
    gated: Provider
    if batched:
        from nb_tools.agent._map_batch import BatchedProvider, BatchRounds

        rounds = BatchRounds(provider, limiter, poll_seconds=batch_poll_seconds)
        gated = BatchedProvider(provider, limiter, rounds)
    else:
        gated = GatedProvider(provider, limiter)
    settings = AgentSettings(
        provider=gated,
        tools=registry.clone(),
        system=system,
        system_prompt=system_with(system, ()),
        approval=policy,
        approver=approver,
        rules=rules,
        max_turns=max_turns,
        budget_usd=budget_usd,
        middlewares=mws,
        output=out,
    )
    run = _Map(settings, prompts, concurrency, budget_usd, store, limiter)
    run.rounds = rounds
    if rounds is not None and store is not None:
        rounds.checkpoint = store
        rounds.row_keys = [row_key(p) for p in prompts]
    run.on_progress = on_progress
    run.on_row_event = on_row_event
    run.on_restored = on_restored
    if stop is not None:
        run.stop_flag = stop
    restored = run.restore()
    if confirm is not None and not await confirm_plan(
        confirm,
        settings,
        prompts,
        [i for i, o in enumerate(run.outcomes) if o is None],
        budget_usd=budget_usd,
        concurrency=concurrency,
        backend="batch" if batched else "kernel",
    ):
        if run.rounds is not None:
            await run.rounds.close()
        if store is not None:
            store.close()
        return None
    cut: BaseException | None = None
    try:
        async with _concurrent_requests(provider):
            await run.go()
    except (asyncio.CancelledError, KeyboardInterrupt) as err:
        cut = err  # the table so far is still built (nb_tools.last_map()), then it goes on
        run.mark_cut_short()
    finally:
        if run.rounds is not None:
            await run.rounds.close()
        if store is not None:
            store.close()
    notices += run.notices
    info = MapInfo(
        conversations=run.conversations,
        settings=settings,
        requests=run.limiter.requests,
        rate_limited=run.limiter.rate_limited,
        lowest_concurrency=run.limiter.lowest,
        restored=restored,
        spent_usd=run.limiter.spent_usd,
        checkpoint=str(checkpoint) if checkpoint is not None else None,
        notices=notices,
        batch_ids=list(run.rounds.batch_ids) if run.rounds is not None else [],
        resumed_batch_ids=list(run.rounds.resumed_ids) if run.rounds is not None else [],
    )
    from nb_tools.agent._map_frame import to_frame

    outcomes = [o if o is not None else RowOutcome(status="skipped") for o in run.outcomes]
    frame = to_frame(table, outcomes, out, info)
    if cut is not None:
        raise cut
    return frame


def map(prompt: Prompt, inputs: Any, **options: Any) -> Any:
    """Run ``prompt`` over every row of ``inputs``, one agent conversation per row, and
    return a pandas DataFrame in input order: the input's columns, then ``output`` (with
    ``output=T`` having fields, one column per field too), ``status`` ("ok", "error",
    "denied", "budget", "skipped"), ``error``, ``turns``, ``cost_usd``. The rows'
    conversations: ``result.attrs["nb_tools"].conversations[i]``.

    ``inputs``: a DataFrame, a list of dicts or a list of strings (column "input").
    ``prompt``: a ``str.format`` template naming columns (``"Classify: {ticket}"``; a
    column it names that the inputs lack fails before any request) or a callable of the
    row (a dict) returning the prompt, or None to skip the row. The options are
    :func:`amap`'s, described in ``docs/map.md``. Inside a running event loop (a notebook
    cell) this runs on a helper thread; prefer ``await nb_tools.amap(...)`` there."""
    return run_blocking(amap(prompt, inputs, **options), name="nb_tools-map")
