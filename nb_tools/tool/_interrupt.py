"""Stop a sync tool that runs in a worker thread: raise an exception inside that thread.

Python has no public way to stop a thread. CPython's ``PyThreadState_SetAsyncExc`` (a
stable C API function, reached through ``ctypes.pythonapi``) schedules an exception that
the thread raises at its next bytecode. Checked on CPython 3.11.7; the signature
``(unsigned long thread_id, PyObject *exc)`` is the same from 3.7 through 3.13. On other
interpreters (PyPy) nothing is raised and the call is reported as still running.

What it cannot do: a thread blocked inside C (a blocking socket read, one long
``time.sleep``, a C extension's loop) raises only when it next runs Python bytecode. The
caller waits a bounded time (``INTERRUPT_WAIT_SECONDS``) and then reports the call as
still running in the background instead of pretending it stopped. Such a thread keeps its
pool worker until it returns.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")

INTERRUPT_WAIT_SECONDS = 1.0
"""How long a cancelled call waits for its interrupted thread to end before it reports
the call as still running in the background."""


class ToolInterrupted(BaseException):
    """Raised inside a sync tool's thread when its call is stopped (Stop, Interrupt, or the
    tool's timeout). A ``BaseException``, so a tool's ``except Exception`` does not swallow
    it; ``finally`` blocks and context managers still run."""


def _set_async_exc(thread_id: int, exc: type[BaseException] | None) -> bool:
    """Schedule ``exc`` in the thread (``None`` clears a scheduled one); ``False`` when the
    interpreter cannot do it."""
    try:
        import ctypes

        set_async_exc = ctypes.pythonapi.PyThreadState_SetAsyncExc
    except (ImportError, AttributeError):
        return False
    set_async_exc.argtypes = (ctypes.c_ulong, ctypes.py_object)
    set_async_exc.restype = ctypes.c_int
    obj: Any = exc if exc is not None else ctypes.py_object()  # NULL clears
    return bool(set_async_exc(thread_id, obj) == 1)


# Calls that were interrupted but whose thread did not end in time, by call id.
_background: dict[str, Slot] = {}
_background_lock = threading.Lock()


class Slot:
    """One interruptible run of a function in a worker thread.

    The worker runs ``slot.run(fn, *args)``; any thread may call ``interrupt()``. The
    exception is scheduled only while ``fn`` runs, and a scheduled exception that was not
    yet raised when ``fn`` returns is cleared, so it never escapes into the pool's code.
    """

    def __init__(self, call_id: str | None = None) -> None:
        self.call_id = call_id
        self._lock = threading.Lock()
        self._thread_id: int | None = None
        self._running = False
        self._sent = False
        self.done = threading.Event()
        self.interrupted = False
        """Whether the exception was scheduled (the function may still have finished first)."""

    def run(self, fn: Callable[..., T], *args: Any) -> T:
        try:
            with self._lock:
                self._thread_id = threading.get_ident()
                self._running = True
            try:
                return fn(*args)
            finally:
                with self._lock:
                    self._running = False
                    if self._sent:  # not raised yet (or raised already: clearing is a no-op)
                        _set_async_exc(threading.get_ident(), None)
        except ToolInterrupted:
            raise ToolInterrupted("the call was stopped") from None
        finally:
            self.done.set()
            if self.call_id is not None:
                with _background_lock:
                    if _background.get(self.call_id) is self:
                        del _background[self.call_id]

    def interrupt(self) -> bool:
        """Raise ``ToolInterrupted`` in the thread running the function; ``False`` when it
        is not running (not started or already returned) or the interpreter cannot."""
        with self._lock:
            if not self._running or self._sent or self._thread_id is None:
                return False
            self._sent = _set_async_exc(self._thread_id, ToolInterrupted)
            self.interrupted = self._sent
            return self._sent

    def mark_background(self) -> None:
        """Record that the call's thread outlived the wait (see :func:`still_running`)."""
        if self.call_id is None or self.done.is_set():
            return
        with _background_lock:
            _background[self.call_id] = self
        if self.done.is_set():  # it ended meanwhile
            with _background_lock:
                _background.pop(self.call_id, None)


def still_running(call_id: str) -> bool:
    """Whether the stopped call ``call_id`` is a sync tool whose thread is still running
    (interrupted, but blocked where Python cannot raise: it runs on in the background)."""
    with _background_lock:
        slot = _background.get(call_id)
    return slot is not None and not slot.done.is_set()


async def wait_stopped(slot: Slot, timeout: float = INTERRUPT_WAIT_SECONDS) -> bool:
    """After ``slot.interrupt()``: wait up to ``timeout`` s for the thread to end; ``True``
    if it ended. Polls (a thread cannot wake the loop without a callback it might never
    make)."""
    import asyncio

    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not slot.done.is_set():
        if loop.time() >= deadline:
            return False
        await asyncio.sleep(0.01)
    return True
