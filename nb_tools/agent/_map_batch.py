"""``nb_tools.map(backend="batch")``: each round of the rows' tool loops is one Message
Batch (half the price). Every row runs its usual loop; its model request, instead of
going out alone, waits in :class:`BatchRounds` until every row in flight waits for the
model, then they all go as one batch; the rows' tools run in the kernel between rounds,
and a finished row drops out. The provider must offer ``batch_params(request)`` and
``batch_response(message)`` (the Anthropic provider does).

With a checkpoint, each batch is written to it when it is created (its id, and for each of
its requests the row, the row's key, a hash of the request, the conversation it continues
and the row's cost so far) and marked done once its results are handed out. A new run with
the same checkpoint (after a kernel restart) finds the batch still pending, continues
those rows' conversations from there, and when a row's rebuilt request is the one that
batch holds, polls that batch for its answer instead of sending the request again.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import itertools
import json
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from nb_tools.agent._map_gate import GatedProvider, Limiter
from nb_tools.model import ModelError, ModelEvent, ModelRequest, Provider

if TYPE_CHECKING:
    from nb_tools.agent._map_checkpoint import Checkpoint
    from nb_tools.model import Message

POLL_SECONDS = 2.0

Round = dict[str, tuple[dict[str, Any], "asyncio.Future[Any]"]]


def request_hash(params: dict[str, Any]) -> str:
    """What identifies a batch request across processes (its JSON, keys sorted)."""
    text = json.dumps(params, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:32]


@dataclass(frozen=True, kw_only=True)
class Resumable:
    """A request of a batch a previous run left pending: its batch, its ``custom_id`` and
    the hash of its params."""

    batch_id: str
    custom_id: str
    request_hash: str


def has_batches(provider: Provider) -> bool:
    return callable(getattr(provider, "batch_params", None)) and callable(
        getattr(provider, "batch_response", None)
    )


class BatchRounds:
    """Collects the rows' next requests and sends each round as one batch."""

    def __init__(
        self,
        provider: Any,
        limiter: Limiter,
        poll_seconds: float = POLL_SECONDS,
        on_poll: Callable[[str, Any], None] | None = None,
    ) -> None:
        self.provider = provider
        self.limiter = limiter
        self.poll_seconds = poll_seconds
        self.on_poll = on_poll
        self.active = 0
        self.pending: Round = {}
        self.batch_ids: list[str] = []
        self._ids = itertools.count()
        self._sending: set[asyncio.Task[None]] = set()
        self.checkpoint: Checkpoint | None = None
        """Where each batch is recorded (set by the map when it has a checkpoint)."""
        self.row_keys: Sequence[str | None] = ()
        """Each row's key (the checkpoint's), by position."""
        self.resumable: dict[int, Resumable] = {}
        """Rows whose next request a pending batch of a previous run holds, by position."""
        self.resumed_ids: list[str] = []
        """The pending batches of a previous run polled (none created again)."""
        self._resumed: dict[str, asyncio.Future[dict[str, Any]]] = {}  # id -> its results
        self._waiting_rows = 0
        self._records: dict[str, dict[str, Any]] = {}  # custom_id -> its checkpoint record
        self.row_cost: dict[int, float] = {}
        """Each row's cost so far (a resumed row's from the runs before), for its record."""

    def row_finished(self) -> None:
        self.active -= 1
        self._maybe_send()

    async def ask(
        self, params: dict[str, Any], row: int | None = None, messages: Sequence[Message] = ()
    ) -> Any:
        """The reply to ``params`` (row ``row``'s request continuing ``messages``), from
        the next round's batch, or from a previous run's pending batch that holds it."""
        resumable = self.resumable.pop(row, None) if row is not None else None
        recorded = self.checkpoint is not None and row is not None
        digest = request_hash(params) if resumable is not None or recorded else ""
        if resumable is not None and resumable.request_hash == digest:
            return await self._resumed_answer(resumable)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        cid = f"req_{next(self._ids)}" if row is None else f"row{row}_{next(self._ids)}"
        self.pending[cid] = (params, future)
        if recorded and row is not None:
            from nb_tools.agent._persist import encode_messages

            self._records[cid] = {
                "row": row,
                "key": self.row_keys[row] if row < len(self.row_keys) else None,
                "hash": digest,
                "messages": encode_messages(messages),
                "cost_usd": self.row_cost.get(row, 0.0),
            }
        self._maybe_send()
        return await future

    def _start(self, coro: Any) -> None:
        task = asyncio.ensure_future(coro)
        self._sending.add(task)
        task.add_done_callback(self._sending.discard)

    def _maybe_send(self) -> None:
        # Rows waiting on a resumed batch count as asked: the others need not wait for them.
        if self.pending and len(self.pending) + self._waiting_rows >= self.active:
            round_, self.pending = self.pending, {}
            self._start(self._send(round_))

    async def _send(self, round_: Round) -> None:
        batches = self.provider.client.messages.batches
        batch_id = None
        try:
            requests = [{"custom_id": cid, "params": params} for cid, (params, _) in round_.items()]
            self.limiter.requests += len(requests)
            batch = await batches.create(requests=requests)
            batch_id = batch.id
            self.batch_ids.append(batch_id)
            if self.checkpoint is not None:
                records = {cid: self._records.pop(cid) for cid in round_ if cid in self._records}
                self.checkpoint.write_batch(batch_id, records)
            await self._collect(batch, round_)
            batch_id = None
        except asyncio.CancelledError:
            raise
        except Exception as err:
            _fail(round_, f"Message Batch failed: {err}")
        finally:
            for cid, (_, future) in round_.items():
                self._records.pop(cid, None)
                if not future.done():
                    future.cancel()
            # Cancelled mid-round: stop the batch too, unless a checkpoint lets a later
            # run resume it.
            if batch_id is not None and self.checkpoint is None:
                with contextlib.suppress(Exception):
                    await asyncio.shield(batches.cancel(batch_id))

    async def _resumed_answer(self, resumable: Resumable) -> Any:
        """The answer a previous run's pending batch holds for this request: the batch is
        polled once for every row it answers."""
        batch_id = resumable.batch_id
        results = self._resumed.get(batch_id)
        if results is None:
            results = self._resumed[batch_id] = asyncio.ensure_future(self._fetch(batch_id))
            self.resumed_ids.append(batch_id)
        self._waiting_rows += 1  # counts as asked: the other rows' round need not wait
        try:
            found = await asyncio.shield(results)
        except asyncio.CancelledError:
            raise
        except Exception as err:
            raise ModelError(f"resuming Message Batch {batch_id} failed: {err}") from err
        finally:
            self._waiting_rows -= 1
        result = found.get(resumable.custom_id)
        if result is None:
            raise ModelError(f"batch {batch_id}: no result for {resumable.custom_id}")
        return _answer(batch_id, result)

    async def _fetch(self, batch_id: str) -> dict[str, Any]:
        batches = self.provider.client.messages.batches
        batch = await batches.retrieve(batch_id)
        while batch.processing_status != "ended":
            if self.on_poll is not None:
                self.on_poll(batch_id, batch.request_counts)
            await asyncio.sleep(self.poll_seconds)
            batch = await batches.retrieve(batch_id)
        found = {item.custom_id: item.result async for item in await batches.results(batch_id)}
        if self.checkpoint is not None:
            self.checkpoint.batch_done(batch_id)
        return found

    async def _collect(self, batch: Any, round_: Round) -> None:
        batches = self.provider.client.messages.batches
        batch_id = batch.id
        while batch.processing_status != "ended":
            if self.on_poll is not None:
                self.on_poll(batch_id, batch.request_counts)
            await asyncio.sleep(self.poll_seconds)
            batch = await batches.retrieve(batch_id)
        async for item in await batches.results(batch_id):
            entry = round_.get(item.custom_id)
            if entry is None or entry[1].done():
                continue
            try:
                entry[1].set_result(_answer(batch_id, item.result))
            except ModelError as err:
                entry[1].set_exception(err)
        if self.checkpoint is not None:
            self.checkpoint.batch_done(batch_id)

    async def close(self) -> None:
        for fetch in self._resumed.values():
            fetch.cancel()
        for task in list(self._sending):
            task.cancel()
        await asyncio.gather(*self._sending, *self._resumed.values(), return_exceptions=True)


class BatchedProvider(GatedProvider):
    """``provider`` whose turns go through :class:`BatchRounds`."""

    def __init__(self, provider: Provider, limiter: Limiter, rounds: BatchRounds) -> None:
        super().__init__(provider, limiter)
        self.rounds = rounds

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        from nb_tools.agent._map import current_row

        inner: Any = self.inner
        params = inner.batch_params(request)
        message = await self.rounds.ask(params, current_row.get(), request.messages)
        response = inner.batch_response(message)
        row = current_row.get()
        if row is not None:
            costs = self.rounds.row_cost
            costs[row] = costs.get(row, 0.0) + response.usage.cost_usd
        await self.limiter.succeeded(response.usage.cost_usd)
        yield response


def _fail(round_: Round, message: str) -> None:
    for _, future in round_.values():
        if not future.done():
            future.set_exception(ModelError(message))


def _answer(batch_id: str, result: Any) -> Any:
    """A batch result as the message's JSON, or the ``ModelError`` saying why not."""
    if result.type == "succeeded":
        return result.message.model_dump(mode="json", exclude_none=True)
    detail = getattr(getattr(result, "error", None), "error", None)
    raise ModelError(f"batch {batch_id}: request {result.type}: {detail or ''}")
