"""Retries of a failed model request that the user can see.

The SDK retries 408/409/429/5xx/529 and connection failures silently: a run looks stuck
for as long as the back-off lasts. A provider that hands its retries over (its
``take_over_retries()`` returns a number: the Anthropic and OpenAI providers) stops
retrying itself, and the agent retries here instead, emitting a ``ModelRetrying`` event
before each wait, so the cell can say "retrying in 2 s: overloaded". A provider whose
``take_over_retries()`` returns 0 keeps its own retries.

Only a request that failed before anything streamed is retried: after text has reached
the screen, running the turn again would show it twice.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from nb_tools.agent._events import ModelRetrying
from nb_tools.model import ModelError, ModelEvent, ModelRequest, Provider

MAX_WAIT_SECONDS = 60.0
"""The longest wait between attempts (a larger retry-after is capped here)."""

_REASONS = {
    408: "request timeout",
    409: "conflict",
    429: "rate limited",
    500: "server error",
    502: "bad gateway",
    503: "service unavailable",
    504: "gateway timeout",
    529: "overloaded",
}


def take_over_retries(provider: Provider) -> int:
    """How many retries the agent makes for ``provider`` (0: it retries itself)."""
    return max(0, int(provider.take_over_retries()))


def retry_after(exc: BaseException) -> float | None:
    """The server's ``retry-after-ms`` / ``retry-after`` (seconds) of a failed request, read
    from the HTTP response the error came from, when there is one."""
    for err in (exc, exc.__cause__):
        headers = getattr(getattr(err, "response", None), "headers", None)
        if headers is None:
            continue
        for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
            value = headers.get(name)
            if value is None:
                continue
            try:
                seconds = float(value) * scale
            except ValueError:
                continue  # an HTTP date: fall back to the back-off
            if seconds >= 0:
                return seconds
    return None


def backoff(attempt: int) -> float:
    """The SDK's schedule: 0.5 s doubling per attempt, up to 8 s, minus up to 25% jitter."""
    base: float = min(0.5 * 2.0 ** (attempt - 1), 8.0)
    return base * (1 - 0.25 * random.random())


def retry_text(event: ModelRetrying) -> str:
    """What the cell shows: "retrying in 2 s: overloaded (attempt 1)"."""
    wait = f"{event.wait:.0f}" if event.wait >= 1 else f"{event.wait:.2g}"
    return f"retrying in {wait} s: {event.reason} (attempt {event.attempt})"


def reason(exc: ModelError) -> str:
    if exc.status is not None:
        return _REASONS.get(exc.status, f"HTTP {exc.status}")
    return "connection failed" if "reach" in str(exc) else "the stream broke"


async def stream_with_retries(
    provider: Provider,
    request: ModelRequest,
    retries: int,
    emit: Callable[[ModelRetrying], Awaitable[None]],
    sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
) -> AsyncIterator[ModelEvent]:
    """``provider.stream(request)``, run again up to ``retries`` times when it fails with a
    retryable ``ModelError`` before yielding anything."""
    attempt = 0
    while True:
        stream = provider.stream(request)
        started = False
        try:
            async for event in stream:
                started = True
                yield event
            return
        except ModelError as exc:
            if started or not exc.retryable or attempt >= retries:
                raise
            attempt += 1
            wait = retry_after(exc)
            wait = backoff(attempt) if wait is None else min(wait, MAX_WAIT_SECONDS)
            await emit(ModelRetrying(attempt=attempt, wait=wait, reason=reason(exc)))
        finally:
            aclose = getattr(stream, "aclose", None)
            if aclose is not None:
                await aclose()
        await sleep(wait)
