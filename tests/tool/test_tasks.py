"""gather_or_cancel / cancel_and_drain: the one place calls in parallel are stopped."""

from __future__ import annotations

import asyncio

import pytest

from nb_tools.tool._tasks import cancel_and_drain, gather_or_cancel


async def test_results_in_order() -> None:
    async def value(n: int) -> int:
        await asyncio.sleep(0)
        return n

    assert await gather_or_cancel(value(n) for n in range(3)) == [0, 1, 2]


async def test_a_failure_cancels_the_others_and_waits_for_them() -> None:
    ended: list[str] = []

    async def slow() -> None:
        try:
            await asyncio.Event().wait()
        finally:
            await asyncio.sleep(0.01)  # winding down must be awaited before the error leaves
            ended.append("slow")

    async def fail() -> None:
        await asyncio.sleep(0)
        raise ValueError("broken")

    with pytest.raises(ValueError, match="broken"):
        await gather_or_cancel([slow(), fail()])
    assert ended == ["slow"]


async def test_cancel_and_drain_collects_exceptions_of_finished_tasks() -> None:
    async def fail() -> None:
        raise ValueError("seen")

    done = asyncio.ensure_future(fail())
    pending = asyncio.ensure_future(asyncio.Event().wait())
    await asyncio.sleep(0)
    await cancel_and_drain([done, pending])
    assert pending.cancelled()
    assert isinstance(done.exception(), ValueError)
