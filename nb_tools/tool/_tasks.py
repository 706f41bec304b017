"""Run awaitables side by side, and stop them all when one fails or the caller is cancelled;
wait for one while staying interruptible (:func:`wait_waking`)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import Any, TypeVar

T = TypeVar("T")
R = TypeVar("R")

WAKE_SECONDS = 0.25
"""How often :func:`wait_waking` wakes. In a kernel a bare ``await`` on a future that a
widget click resolves reacts to Interrupt only after several seconds; waking this often
lands it in under a second (measured with ipykernel 7.4)."""


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


def parallel_groups(items: Sequence[T], parallel: Callable[[T], bool]) -> list[list[T]]:
    """Split ``items`` into the groups a batch runs: each run of adjacent items for which
    ``parallel`` holds is one group (run together); every other item is a group alone."""
    out: list[list[T]] = []
    last_parallel = False
    for item in items:
        is_parallel = parallel(item)
        if is_parallel and last_parallel:
            out[-1].append(item)
        else:
            out.append([item])
        last_parallel = is_parallel
    return out


async def run_grouped(
    items: Sequence[T], parallel: Callable[[T], bool], run: Callable[[T], Awaitable[R]]
) -> list[R]:
    """``run`` each of ``items``, results in order: each run of adjacent ``parallel`` items
    together (:func:`gather_or_cancel`), the others one at a time. The one batch schedule
    (``Executor.execute_batch``, the agent's turn)."""
    results: list[R] = []
    for group in parallel_groups(items, parallel):
        if len(group) == 1:
            results.append(await run(group[0]))
        else:
            results.extend(await gather_or_cancel(run(item) for item in group))
    return results


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
