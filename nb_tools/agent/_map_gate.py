"""The model requests of :func:`nb_tools.map`'s rows, gated: how many go out at once adapts
to the provider's rate limits, a request refused for a rate limit waits and goes again
(the row never fails for it), the first request goes alone so the shared prefix (system
prompt, tools) is written to the prompt cache once, and every reply's cost adds to the
shared spend the budget reads.

The limit follows AIMD (as TCP does): a 429 or 529 halves it (never below 1) and waits
the server's ``retry-after``; each success raises it by ``1/limit`` (about one per round
of requests) back up to ``concurrency``.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

from nb_tools.agent._retry import MAX_WAIT_SECONDS, backoff, retry_after
from nb_tools.model import (
    ModelError,
    ModelEvent,
    ModelLimits,
    ModelRequest,
    Price,
    Provider,
    RequestFeatures,
    ResponseEvent,
)

RATE_LIMITED = frozenset({429, 529})
"""Statuses that mean "too many at once": the limit drops and the request waits."""

MAX_RATE_WAIT_SECONDS = 600.0
"""A request refused for rate limits longer than this in total fails (the server is not
coming back)."""


@dataclass(kw_only=True)
class Limiter:
    """How many model requests of a map may be in flight (``limit``), and the counts a
    progress view and the tests read."""

    concurrency: int
    limit: float = 0.0
    in_flight: int = 0
    requests: int = 0
    rate_limited: int = 0
    lowest: int = 0
    spent_usd: float = 0.0
    _changed: asyncio.Condition = field(default_factory=asyncio.Condition)
    _warm: asyncio.Event = field(default_factory=asyncio.Event)
    _warming: bool = False

    def __post_init__(self) -> None:
        self.limit = float(self.concurrency)
        self.lowest = self.concurrency

    @contextlib.asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        """Hold one of the ``limit`` places while a request is out. Until the first reply
        came back, only one request goes (it writes the prompt cache the others read)."""
        async with self._changed:
            while True:
                if not self._warm.is_set():
                    if not self._warming:
                        self._warming = True
                        break
                elif self.in_flight < int(self.limit):
                    break
                await self._changed.wait()
            self.in_flight += 1
            self.requests += 1
        try:
            yield
        finally:
            async with self._changed:
                self.in_flight -= 1
                self._changed.notify_all()

    async def succeeded(self, cost_usd: float) -> None:
        async with self._changed:
            self.spent_usd += cost_usd
            self.limit = min(float(self.concurrency), self.limit + 1.0 / max(self.limit, 1.0))
            self._warm.set()
            self._changed.notify_all()

    async def refused(self) -> None:
        """A 429/529: halve the limit."""
        async with self._changed:
            self.rate_limited += 1
            self.limit = max(1.0, min(self.limit, float(self.in_flight)) / 2)
            self.lowest = min(self.lowest, int(self.limit))
            self._changed.notify_all()

    async def failed(self) -> None:
        """Another failure: let the others go (the cache is as warm as it will get)."""
        async with self._changed:
            self._warm.set()
            self._changed.notify_all()


class GatedProvider:
    """``provider`` with its requests gated by ``limiter``; the rest is the provider's."""

    def __init__(self, provider: Provider, limiter: Limiter) -> None:
        self.inner = provider
        self.limiter = limiter

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def model(self) -> str:
        return self.inner.model

    @property
    def features(self) -> RequestFeatures:
        return self.inner.features

    def limits(self) -> ModelLimits:
        return self.inner.limits()

    async def count_tokens(self, request: ModelRequest) -> int:
        return await self.inner.count_tokens(request)

    def take_over_retries(self) -> int:
        return self.inner.take_over_retries()

    def price(self) -> Price | None:
        return self.inner.price()

    def __getattr__(self, name: str) -> object:
        # Optional provider hooks (output_options, upload_file, ...) pass through.
        return getattr(self.inner, name)

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        waited = 0.0
        attempt = 0
        while True:
            async with self.limiter.slot():
                started = False
                try:
                    async for event in self.inner.stream(request):
                        if isinstance(event, ResponseEvent):
                            await self.limiter.succeeded(event.usage.cost_usd)
                        started = True
                        yield event
                    return
                except ModelError as exc:
                    if started or exc.status not in RATE_LIMITED:
                        await self.limiter.failed()
                        raise
                    await self.limiter.refused()
                    attempt += 1
                    wait = retry_after(exc)
                    wait = backoff(attempt) if wait is None else min(wait, MAX_WAIT_SECONDS)
                    waited += wait
                    if waited > MAX_RATE_WAIT_SECONDS:
                        raise
            await asyncio.sleep(wait)
