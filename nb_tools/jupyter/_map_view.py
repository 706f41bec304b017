"""The live view of ``%%agent --over``: rows done / running / failed, cost against the
budget, an ETA, and a Stop button that ends the map cleanly (rows in flight are stopped
and marked, the rest skipped, the table still shown). When the map ends, the view is
replaced by the table, so a saved notebook holds no widget view."""

from __future__ import annotations

import contextlib
import html
import threading
import time
from typing import Any

import ipywidgets as widgets
from IPython.display import display

from nb_tools.agent import MapProgress

REFRESH_SECONDS = 0.25
"""At most this often the text is sent to the frontend (a row's start and end is not)."""


def progress_text(p: MapProgress) -> str:
    """One line: "12/40 rows done · 8 running · 1 failed · $0.0312 of $2.00 · ETA 14 s"."""
    bits = [f"{p.done}/{p.rows} rows done", f"{p.running} running"]
    if p.failed:
        bits.append(f"{p.failed} failed")
    cost = f"${p.spent_usd:.4f}"
    if p.budget_usd is not None:
        cost += f" of ${p.budget_usd:.2f}"
    bits.append(cost)
    if p.eta is not None and p.done < p.rows:
        bits.append(f"ETA {p.eta:.0f} s")
    return " · ".join(bits)


class MapView:
    """The progress line and the Stop button; ``stop`` is the map's stop event."""

    def __init__(self) -> None:
        self.stop = threading.Event()
        self.text = widgets.HTML(value="starting…")
        self.button = widgets.Button(description="Stop", button_style="warning", icon="stop")
        self.button.on_click(lambda _: self._stop())
        self.box = widgets.HBox([self.text, self.button])
        self.handle: Any = None
        self._last = 0.0
        self.latest: MapProgress | None = None

    def _stop(self) -> None:
        self.stop.set()
        self.button.disabled = True
        self.button.description = "Stopping…"

    def show(self) -> None:
        self.handle = display(self.box, display_id=True)

    def update(self, p: MapProgress) -> None:
        self.latest = p
        now = time.monotonic()
        if now - self._last >= REFRESH_SECONDS or p.done == p.rows:
            self._last = now
            self.text.value = html.escape(progress_text(p))

    def finish(self, result: Any) -> None:
        """Replace the view by the table (None: by nothing) and close the widgets."""
        if self.handle is not None:
            if result is None:
                self.handle.update({"text/plain": ""}, raw=True)
            else:
                self.handle.update(result)
        elif result is not None:
            display(result)
        with contextlib.suppress(Exception):
            self.button.close()
            self.text.close()
            self.box.close()
