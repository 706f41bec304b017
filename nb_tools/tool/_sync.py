"""Run a coroutine to its end from synchronous code, also inside a running event loop."""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


def run_blocking(coro: Coroutine[Any, Any, T], *, name: str = "nb_tools-run-blocking") -> T:
    """``asyncio.run(coro)``, except that inside a running loop (a Jupyter cell) the
    coroutine runs as a task on a fresh loop in a helper thread named ``name``, with this
    thread's context variables, while this thread waits. Its result or exception comes
    back here. A KeyboardInterrupt while waiting cancels the task, waits for it to wind
    down (so a stop can finish what it must), then propagates."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    box: dict[str, Any] = {}
    ready, done = threading.Event(), threading.Event()
    ctx = contextvars.copy_context()

    def worker() -> None:
        loop = asyncio.new_event_loop()
        try:
            task = loop.create_task(coro, context=ctx)
            box["loop"], box["task"] = loop, task
            ready.set()
            box["result"] = loop.run_until_complete(task)
        except BaseException as exc:  # handed to the waiting thread
            box["error"] = exc
        finally:
            ready.set()
            loop.close()
            done.set()

    thread = threading.Thread(target=worker, name=name, daemon=True)
    # Wait on an Event, not Thread.join: on Python 3.11 a join interrupted by Ctrl-C
    # can mark a live thread as finished (the bpo-45274 fix), and the stop would then
    # not wait for the task to wind down. Ctrl-C may even land inside start().
    try:
        thread.start()
        while not done.wait(0.1):
            pass
    except KeyboardInterrupt:
        if ready.wait(5.0):  # else the thread never started
            if "task" in box:
                with contextlib.suppress(RuntimeError):  # the loop already closed
                    box["loop"].call_soon_threadsafe(box["task"].cancel)
            done.wait()
        else:
            coro.close()  # never scheduled: no "never awaited" warning
        raise
    if "error" in box:
        raise box["error"]
    result: T = box["result"]
    return result
