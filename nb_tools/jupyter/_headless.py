"""Is anyone there to click? A headless run (nbclient, papermill, ``jupyter execute``) has
no frontend showing the cell, so an approval card would wait forever.

The signal: ipywidgets' ``_view_count``. Set to 0 on a widget before it is displayed, every
frontend built on ``@jupyter-widgets/base`` (JupyterLab, Notebook 7, VS Code) adds one when
it shows a view of it and sends the new count back (checked in jupyterlab_widgets 3 /
@jupyter-widgets/base 6, the ``"displayed"`` handler of ``WidgetView``). A kernel that
nothing renders never hears back.

A kernel started by Jupyter Server (``JPY_SESSION_NAME`` set) is taken to have a person at
the notebook even before a view is counted: JupyterLab may not render a cell scrolled out
of view (its notebook windowing) until the user scrolls to it. ``NB_TOOLS_HEADLESS=1`` / ``0``
overrides the detection.
"""

from __future__ import annotations

import asyncio
import inspect
import os
import time
from typing import Any

from nb_tools.agent import ApprovalRequest, Approver, Decision

FRONTEND_WAIT_SECONDS = 3.0
"""How long after the live view is displayed an approval waits for a frontend to report
that it shows it, before the run counts as headless."""

HEADLESS_BY = "headless"
HEADLESS_MESSAGE = (
    "nobody can approve it: this is a headless run (no notebook frontend is showing the "
    "cell, e.g. nbclient or papermill). Choose a policy for unattended runs with the "
    "NB_TOOLS_APPROVAL environment variable (auto, read-only or deny) or %%agent --approval"
)

_frontend_seen = False  # a frontend has shown one of our widgets in this kernel


def _override() -> bool | None:
    value = os.environ.get("NB_TOOLS_HEADLESS", "").strip().lower()
    if value in ("1", "true", "yes"):
        return True
    if value in ("0", "false", "no"):
        return False
    return None


def frontend_known() -> bool:
    """Whether a notebook frontend is known to show this kernel, without waiting: an
    override, a frontend that showed one of our widgets, or Jupyter Server's session."""
    override = _override()
    if override is not None:
        return not override
    return _frontend_seen or bool(os.environ.get("JPY_SESSION_NAME"))


class FrontendWatch:
    """Watches one displayed widget (the run's live view) for a frontend's view of it.

    Create it before the widget is displayed; ``guard(approver)`` is the approver that
    denies at once (:data:`HEADLESS_MESSAGE`) when the run is headless."""

    def __init__(self, widget: Any) -> None:
        self.widget = widget
        self.shown_at = time.monotonic()
        self.seen = False  # set from the comm handler (maybe on a subshell thread)
        if widget is None:  # nothing to watch: assume someone is there (the old behaviour)
            self.seen = True
            return
        try:
            widget._view_count = 0
            widget.observe(self._on_count, names="_view_count")
        except Exception:  # not an ipywidgets widget: nothing to watch
            self.seen = True

    def _on_count(self, change: dict[str, Any]) -> None:
        global _frontend_seen
        if (change.get("new") or 0) > 0:
            _frontend_seen = self.seen = True

    async def headless(self) -> bool:
        """Whether nobody can click: an override, else no frontend has shown a view of the
        widget within ``FRONTEND_WAIT_SECONDS`` of its display."""
        override = _override()
        if override is not None:
            return override
        if _frontend_seen or os.environ.get("JPY_SESSION_NAME"):
            return False
        deadline = self.shown_at + FRONTEND_WAIT_SECONDS
        while not self.seen:
            if time.monotonic() >= deadline:
                return True
            await asyncio.sleep(0.05)  # the kernel handles the comm update meanwhile
        return False

    def guard(self, approver: Approver) -> Approver:
        """``approver``, except that in a headless run it denies at once. The pipeline's
        ``ask`` calls the result: it checks the answer and wakes while it waits."""

        async def guarded(request: ApprovalRequest) -> bool | Decision:
            if await self.headless():
                return Decision(approved=False, by=HEADLESS_BY, message=HEADLESS_MESSAGE)
            answer = approver(request)
            return await answer if inspect.isawaitable(answer) else answer

        return guarded
