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


# -- wait_waking: the one wake loop -------------------------------------------------------


async def test_wait_waking_returns_the_answer_set_from_another_thread() -> None:
    import threading

    from nb_tools.tool._tasks import wait_waking

    loop = asyncio.get_running_loop()
    answer: asyncio.Future[str] = loop.create_future()
    # As a click handler on a kernel's subshell thread resolves it.
    timer = threading.Timer(0.3, loop.call_soon_threadsafe, (answer.set_result, "yes"))
    timer.start()
    assert await wait_waking(answer) == "yes"


async def test_wait_waking_times_out_and_cancels_what_it_waited_for() -> None:
    from nb_tools.tool._tasks import wait_waking

    answer: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    with pytest.raises(TimeoutError):
        await wait_waking(answer, timeout=0.05)
    assert answer.cancelled()


async def test_cancelling_wait_waking_cancels_the_awaited_task() -> None:
    from nb_tools.tool._tasks import wait_waking

    ended: list[str] = []

    async def forever() -> None:
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            ended.append("cancelled")
            raise

    waiter = asyncio.ensure_future(wait_waking(forever()))
    await asyncio.sleep(0.05)
    waiter.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiter
    await asyncio.sleep(0)  # the inner task takes its cancellation on its next step
    assert ended == ["cancelled"]


async def test_run_grouped_runs_adjacent_parallel_items_together_in_order() -> None:
    from nb_tools.tool._tasks import run_grouped

    running: set[str] = set()
    overlaps: list[tuple[str, ...]] = []

    async def run(item: str) -> str:
        running.add(item)
        await asyncio.sleep(0.02)
        overlaps.append(tuple(sorted(running)))
        running.discard(item)
        return item.upper()

    items = ["r1", "r2", "w1", "r3", "w2", "w3"]
    assert await run_grouped(items, lambda i: i.startswith("r"), run) == [
        "R1",
        "R2",
        "W1",
        "R3",
        "W2",
        "W3",
    ]
    assert ("r1", "r2") in overlaps  # the adjacent read-only pair overlapped
    assert all(len(o) == 1 for o in overlaps if not any(i.startswith("r") for i in o))
