"""Progress from inside a tool to whoever runs the call.

The runner installs a sink with :func:`progress_sink`; the executor binds the id of the
call it runs; :func:`progress` sends a :class:`Progress` to the sink under that id. Both
are context variables, so they follow the call into tasks and ``asyncio.to_thread``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass


@dataclass(frozen=True, kw_only=True)
class Progress:
    """A chunk of a tool's output (``text``) and/or how far it is (``fraction`` in 0..1)."""

    text: str = ""
    fraction: float | None = None


ProgressSink = Callable[[str, Progress], None]
"""Receives ``(call_id, progress)``."""

_sink: ContextVar[ProgressSink | None] = ContextVar("nb_tools_progress_sink", default=None)
call_id_var: ContextVar[str | None] = ContextVar("nb_tools_call_id", default=None)
"""The id of the call the current code runs for; the executor sets it around each call."""


@contextmanager
def progress_sink(sink: ProgressSink | None) -> Iterator[None]:
    """Send the progress of calls run inside this block to ``sink``."""
    token = _sink.set(sink)
    try:
        yield
    finally:
        _sink.reset(token)


@contextmanager
def bind_call(call_id: str) -> Iterator[None]:
    """Mark the code inside this block as running the call ``call_id`` (executor use)."""
    token = call_id_var.set(call_id)
    try:
        yield
    finally:
        call_id_var.reset(token)


def current_call_id() -> str | None:
    return call_id_var.get()


def capture_progress() -> Callable[[Progress], None] | None:
    """The current call's progress sink bound to its call id, for code that reports from
    another thread or event loop (e.g. an MCP connection). ``None`` outside a run."""
    sink = _sink.get()
    call_id = call_id_var.get()
    if sink is None or call_id is None:
        return None

    def send(update: Progress) -> None:
        _deliver(sink, call_id, update)

    return send


def progress_wanted() -> bool:
    """Whether :func:`progress` goes anywhere now (a sink and a call): a tool may skip the
    work of making progress nobody receives."""
    return _sink.get() is not None and call_id_var.get() is not None


def progress(chunk: str = "", *, fraction: float | None = None) -> None:
    """Stream a chunk of output (and optionally a fraction done) from inside a tool to
    whoever runs the call, e.g. the cell's tool card. A no-op outside a run."""
    sink = _sink.get()
    call_id = call_id_var.get()
    if sink is None or call_id is None:
        return
    if fraction is not None:
        fraction = min(1.0, max(0.0, float(fraction)))
    _deliver(sink, call_id, Progress(text=chunk, fraction=fraction))


def _deliver(sink: ProgressSink, call_id: str, update: Progress) -> None:
    """A broken display must never break the tool: log the sink's error and go on."""
    try:
        sink(call_id, update)
    except Exception:
        import logging

        logging.getLogger("nb_tools").exception("progress sink failed for call %s", call_id)
