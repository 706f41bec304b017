"""run_blocking: one sync-from-async runner for run_sync, execute_sync and %mcp."""

from __future__ import annotations

import _thread
import asyncio
import contextvars
import signal
import threading

import pytest

from nb_tools.tool._sync import run_blocking

var: contextvars.ContextVar[str] = contextvars.ContextVar("test_sync_var", default="unset")


async def answer() -> tuple[str, str]:
    return var.get(), threading.current_thread().name


def test_without_a_loop_runs_here() -> None:
    var.set("here")
    value, thread = run_blocking(answer())
    assert value == "here"
    assert thread == threading.current_thread().name


async def test_inside_a_loop_runs_on_a_named_thread_with_this_context() -> None:
    var.set("cell")
    value, thread = run_blocking(answer(), name="nb_tools-test-runner")
    assert (value, thread) == ("cell", "nb_tools-test-runner")


async def test_inside_a_loop_the_exception_comes_back() -> None:
    async def fail() -> None:
        raise LookupError("no such thing")

    with pytest.raises(LookupError, match="no such thing"):
        run_blocking(fail())


async def test_ctrl_c_while_waiting_cancels_the_task_and_waits_for_it() -> None:
    events: list[str] = []

    async def long_job() -> str:
        _thread.interrupt_main()  # Ctrl-C lands in the waiting (main) thread
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            await asyncio.sleep(0.05)  # winding down takes a moment; the waiter must wait
            events.append("cancelled and wound down")
            raise
        return "never"

    # As in a kernel: SIGINT raises KeyboardInterrupt in the main thread.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt):
            run_blocking(long_job())
    finally:
        signal.signal(signal.SIGINT, previous)
    assert events == ["cancelled and wound down"]
    for thread in threading.enumerate():
        if thread.name == "nb_tools-run-blocking":
            thread.join(5.0)
            assert not thread.is_alive()
