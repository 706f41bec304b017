"""Run a coroutine to its end from synchronous code, also inside a running event loop."""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


def run_blocking(coro: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run(coro)``, except that inside a running loop (a Jupyter cell) the
    coroutine runs on a fresh loop in a helper thread, with this thread's context
    variables, while this thread waits. Its result or exception comes back here."""
    import asyncio

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    box: list[tuple[bool, Any]] = []
    ctx = contextvars.copy_context()

    def run() -> None:
        try:
            box.append((True, ctx.run(asyncio.run, coro)))
        except BaseException as exc:  # handed to the waiting thread
            box.append((False, exc))

    thread = threading.Thread(target=run, name="nb_tools-run-blocking", daemon=True)
    thread.start()
    thread.join()
    ok, value = box[0]
    if not ok:
        raise value
    return value  # type: ignore[no-any-return]
