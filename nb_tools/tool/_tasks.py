"""Run awaitables side by side, and stop them all when one fails or the caller is cancelled."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Iterable
from typing import Any, TypeVar

T = TypeVar("T")


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
