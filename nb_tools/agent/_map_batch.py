"""``nb_tools.map(backend="batch")``: each round of the rows' tool loops is one Message
Batch (half the price). Every row runs its usual loop; its model request, instead of
going out alone, waits in :class:`BatchRounds` until every row in flight waits for the
model, then they all go as one batch; the rows' tools run in the kernel between rounds,
and a finished row drops out. The provider must offer ``batch_params(request)`` and
``batch_response(message)`` (the Anthropic provider does)."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections.abc import AsyncIterator, Callable
from typing import Any

from nb_tools.agent._map_gate import GatedProvider, Limiter
from nb_tools.model import ModelError, ModelEvent, ModelRequest, Provider

POLL_SECONDS = 2.0


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
        self.pending: dict[str, tuple[dict[str, Any], asyncio.Future[Any]]] = {}
        self.batch_ids: list[str] = []
        self._ids = itertools.count()
        self._sending: set[asyncio.Task[None]] = set()

    def row_finished(self) -> None:
        self.active -= 1
        self._maybe_send()

    async def ask(self, params: dict[str, Any]) -> Any:
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self.pending[f"req_{next(self._ids)}"] = (params, future)
        self._maybe_send()
        return await future

    def _maybe_send(self) -> None:
        if self.pending and len(self.pending) >= self.active:
            round_, self.pending = self.pending, {}
            task = asyncio.ensure_future(self._send(round_))
            self._sending.add(task)
            task.add_done_callback(self._sending.discard)

    async def _send(self, round_: dict[str, tuple[dict[str, Any], asyncio.Future[Any]]]) -> None:
        batches = self.provider.client.messages.batches
        batch_id = None
        try:
            requests = [{"custom_id": cid, "params": params} for cid, (params, _) in round_.items()]
            self.limiter.requests += len(requests)
            batch = await batches.create(requests=requests)
            batch_id = batch.id
            self.batch_ids.append(batch_id)
            while batch.processing_status != "ended":
                if self.on_poll is not None:
                    self.on_poll(batch_id, batch.request_counts)
                await asyncio.sleep(self.poll_seconds)
                batch = await batches.retrieve(batch_id)
            async for item in await batches.results(batch_id):
                entry = round_.get(item.custom_id)
                if entry is None or entry[1].done():
                    continue
                result = item.result
                if result.type == "succeeded":
                    entry[1].set_result(result.message.model_dump(mode="json", exclude_none=True))
                else:
                    detail = getattr(getattr(result, "error", None), "error", None)
                    entry[1].set_exception(
                        ModelError(f"batch {batch_id}: request {result.type}: {detail or ''}")
                    )
            batch_id = None
        except asyncio.CancelledError:
            raise
        except Exception as err:
            for _, future in round_.values():
                if not future.done():
                    future.set_exception(ModelError(f"Message Batch failed: {err}"))
        finally:
            for _, future in round_.values():
                if not future.done():
                    future.cancel()
            if batch_id is not None:  # cancelled mid-round: stop the batch too
                with contextlib.suppress(Exception):
                    await asyncio.shield(batches.cancel(batch_id))

    async def close(self) -> None:
        for task in list(self._sending):
            task.cancel()
        await asyncio.gather(*self._sending, return_exceptions=True)


class BatchedProvider(GatedProvider):
    """``provider`` whose turns go through :class:`BatchRounds`."""

    def __init__(self, provider: Provider, limiter: Limiter, rounds: BatchRounds) -> None:
        super().__init__(provider, limiter)
        self.rounds = rounds

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        inner: Any = self.inner
        message = await self.rounds.ask(inner.batch_params(request))
        response = inner.batch_response(message)
        await self.limiter.succeeded(response.usage.cost_usd)
        yield response
