"""Stopping a sync tool that runs in a worker thread: the thread itself stops (an
exception raised at its next bytecode), or the call is reported as still running."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from pathlib import Path

import pytest

from nb_tools import tool
from nb_tools.agent import BACKGROUND_TEXT, Agent, ToolCallFinished
from nb_tools.testing import ScriptedModel, call, reply
from nb_tools.tool._interrupt import still_running


def _size(path: Path) -> int:
    return len(path.read_text()) if path.exists() else 0


async def _wait_for(cond: object, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not cond():  # type: ignore[operator]
        if time.monotonic() > deadline:
            raise AssertionError("condition never held")
        await asyncio.sleep(0.02)


async def test_stop_interrupts_a_sync_tool_that_writes_a_file(tmp_path: Path) -> None:
    log = tmp_path / "ticks.txt"
    finished_cleanup = threading.Event()

    @tool(register=False)
    def ticker() -> str:
        """Appends a line every 0.1 s, forever."""
        try:
            while True:
                with log.open("a") as f:
                    f.write("tick\n")
                time.sleep(0.1)
        finally:
            finished_cleanup.set()

    model = ScriptedModel([reply("", call("ticker", id="t1")), reply("ok")])
    events: list[object] = []
    agent = Agent(model, tools=[ticker], approval="auto", on_event=events.append)
    task = asyncio.ensure_future(agent.run("tick"))
    await _wait_for(lambda: _size(log) >= 10)  # two lines written: it runs
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert finished_cleanup.wait(5.0), "the tool's thread was not interrupted"
    size = _size(log)
    await asyncio.sleep(0.5)
    assert _size(log) == size, "the file kept growing after the stop"
    [done] = [e for e in events if isinstance(e, ToolCallFinished)]
    assert done.status == "cut_off"
    assert not still_running("t1")


async def test_a_thread_blocked_in_c_is_reported_as_running_in_the_background() -> None:
    left, right = socket.socketpair()
    entered = threading.Event()

    @tool(register=False)
    def wait_for_data() -> str:
        """Blocks in a socket read (C), where no exception can be raised."""
        entered.set()
        return left.recv(10).decode()

    model = ScriptedModel([reply("", call("wait_for_data", id="w1")), reply("ok")])
    events: list[object] = []
    agent = Agent(model, tools=[wait_for_data], approval="auto", on_event=events.append)
    task = asyncio.ensure_future(agent.run("wait"))
    await _wait_for(entered.is_set)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    try:
        [done] = [e for e in events if isinstance(e, ToolCallFinished)]
        assert done.status == "running_in_background"
        assert done.result.content == BACKGROUND_TEXT
        assert still_running("w1")
    finally:
        right.send(b"x")  # let the thread end: it then raises the pending interrupt
        left.close()
        right.close()
    await _wait_for(lambda: not still_running("w1"))


async def test_an_interrupt_never_escapes_after_the_function_returned() -> None:
    """Many short calls cancelled at random points: no worker thread dies and the pool
    still runs calls afterwards."""
    from nb_tools.tool._executor import run_in_thread

    def spin(n: int) -> int:
        total = 0
        for i in range(n):
            total += i
        return total

    for _ in range(30):
        task = asyncio.ensure_future(run_in_thread(spin, 20000))
        await asyncio.sleep(0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    assert await run_in_thread(spin, 10) == 45
