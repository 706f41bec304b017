"""Coalesce frequent updates (streamed text, progress) into a few widget updates."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

BASE_INTERVAL = 0.08
"""About 12 updates a second: at least 10 even when the loop is late."""


def stream_interval(age: float) -> float:
    """The wait between updates of a stream (``age`` seconds old): the same all along. An
    update re-sends only the last bounded piece of the text (see ``_view.TEXT_CHUNK``),
    so a long answer costs no more per update than a short one."""
    return BASE_INTERVAL


class Throttle:
    """Call ``flush`` at most once per ``interval(age)`` seconds after :meth:`poke`; a
    pending flush is scheduled on ``loop`` so the last change is always shown."""

    def __init__(
        self,
        flush: Callable[[], None],
        *,
        loop: asyncio.AbstractEventLoop | None,
        interval: Callable[[float], float] = stream_interval,
    ) -> None:
        self._flush = flush
        self._loop = loop
        self._interval = interval
        self._started: float | None = None
        self._last = 0.0
        self._timer: asyncio.TimerHandle | None = None
        self._dirty = False

    def poke(self) -> None:
        now = time.monotonic()
        if self._started is None:
            self._started = now
        self._dirty = True
        wait = self._interval(now - self._started) - (now - self._last)
        if wait <= 0 or self._loop is None:
            self.flush()
        elif self._timer is None:
            self._timer = self._loop.call_later(wait, self._on_timer)

    def _on_timer(self) -> None:
        self._timer = None
        self.flush()

    def flush(self) -> None:
        """Show the latest state now (if anything changed)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if not self._dirty:
            return
        self._dirty = False
        self._last = time.monotonic()
        self._flush()

    def cancel(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
