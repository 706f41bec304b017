"""Run awaitables side by side, and stop them all when one fails or the caller is cancelled;
wait for one while staying interruptible (:func:`wait_waking`)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Iterable
from typing import Any, TypeVar

T = TypeVar("T")

WAKE_SECONDS = 0.25
"""How often :func:`wait_waking` wakes. In a kernel a bare ``await`` on a future that a
widget click resolves reacts to Interrupt only after several seconds; waking this often
lands it in under a second (measured with ipykernel 7.4, /work/shared/FACTS.md)."""


async def cancel_and_drain(tasks: Iterable[asyncio.Future[Any]]) -> None:
    """Cancel those of ``tasks`` still running and wait until every one has ended. Their
    results and exceptions are collected here, so none is reported as never retrieved."""
    tasks = list(tasks)
    for task in tasks:
        if not task.done():
            task.cancel()
    if tasks:
        await asyncio.gather(*tasks, return_exceptions=True)


async def gather_or_cancel(awaitables: Iterable[Awaitable[T]]) -> list[T]:
    """``asyncio.gather`` that, when one awaitable fails or the caller is cancelled,
    cancels the others and waits for them to end before the exception propagates."""
    tasks = [asyncio.ensure_future(a) for a in awaitables]
    try:
        return list(await asyncio.gather(*tasks))
    except BaseException:
        await cancel_and_drain(tasks)
        raise


async def wait_waking(awaitable: Awaitable[T], *, timeout: float | None = None) -> T:
    """The result of ``awaitable``, waking every :data:`WAKE_SECONDS` so that Interrupt
    and cancellation act at once while it waits (for a person's click, a frontend's
    reply). This is nb_tools' one wake loop: what it awaits must not wake on its own.

    ``timeout`` (seconds) raises ``TimeoutError`` when no answer came by then. On
    cancellation, a timeout or an interrupt the awaitable is cancelled too."""
    task = asyncio.ensure_future(awaitable)
    loop = asyncio.get_running_loop()
    deadline = None if timeout is None else loop.time() + timeout
    try:
        while True:
            wake = WAKE_SECONDS if deadline is None else min(WAKE_SECONDS, deadline - loop.time())
            if wake <= 0:
                raise TimeoutError(f"no answer within {timeout} s")
            done, _ = await asyncio.wait({task}, timeout=wake)
            if done:
                return task.result()
    finally:
        if not task.done():
            task.cancel()
