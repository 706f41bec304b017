"""After a run that changed files or cells: the review list in the cell, and
``%nbtools restore``.

The list names each change (what, where, by which tool) with its diff on demand, **Keep**
and **Revert**, and **Restore everything**; changes that cannot be undone (code run by
``python``, a shell call) are listed with why. It is a live view: when its kernel goes
away the extension replaces it by a line saying how the run's changes can still be seen
(the transcript), so a saved notebook holds no dead widget.
"""

from __future__ import annotations

import asyncio
from html import escape
from typing import TYPE_CHECKING, Any

from IPython.core.error import UsageError

if TYPE_CHECKING:
    from nb_tools.agent import RestoreReport, RunChange, RunResult
    from nb_tools.jupyter._session import Session

__all__ = ["ReviewList", "restore_command", "show_review"]

LOST_REVIEW_TEXT = (
    "nb_tools: the review of this run's changes needs its kernel, which stopped; the "
    "transcript above shows every change."
)
_MUTED = "color:var(--jp-content-font-color2,#57606a)"


def _label(change: RunChange) -> str:
    if not change.path:
        return f"{change.tool}: {change.note}"
    return f"{change.kind} {change.path} ({change.tool})"


class ReviewList:
    """The review list of ``result``'s changes (see the module doc)."""

    def __init__(self, result: RunResult, loop: asyncio.AbstractEventLoop) -> None:
        import ipywidgets as widgets

        self.result = result
        self._loop = loop
        undoable = [c for c in result.changes if c.undoable]
        count = len(result.changes)
        self.header = widgets.HTML(
            f"<b>This run changed {count} thing{'s' if count != 1 else ''}</b>"
            + (f' <span style="{_MUTED}">({len(undoable)} can be reverted)</span>')
        )
        self.restore_all = widgets.Button(
            description="Restore everything",
            layout=widgets.Layout(width="auto"),
            icon="undo",
            button_style="warning",
            tooltip="Put back every file and cell this run changed, newest first",
            disabled=not undoable,
        )
        self.restore_all.on_click(lambda _b: self._soon(self._restore(None)))
        self.rows: dict[int, Any] = {}
        self.status: dict[int, Any] = {}
        rows = []
        for i, change in enumerate(result.changes):
            rows.append(self._row(i, change))
        self.widget = widgets.VBox([widgets.HBox([self.header, self.restore_all]), *rows])
        self.widget.add_class("nbtools-review")

    def _row(self, i: int, change: RunChange) -> Any:
        import ipywidgets as widgets

        label = widgets.HTML(f"<code>{escape(_label(change))}</code>")
        status = widgets.HTML("")
        self.status[i] = status
        if not change.undoable:
            row = widgets.HBox([label, status])
            self.rows[i] = row
            return row
        diff = widgets.HTML("", layout=widgets.Layout(display="none"))
        small = widgets.Layout(width="auto")
        show = widgets.Button(
            description="Diff", icon="eye", tooltip="Show the change", layout=small
        )
        keep = widgets.Button(
            description="Keep", icon="check", tooltip="Keep this change", layout=small
        )
        revert = widgets.Button(
            description="Revert",
            icon="undo",
            tooltip="Put this file or cell back as it was",
            layout=small,
        )

        def toggle(_b: Any) -> None:
            if diff.layout.display == "none":
                from nb_tools.transcript import diff_html

                diff.value = diff_html(change.undo.diff())  # type: ignore[union-attr]
                diff.layout.display = ""
            else:
                diff.layout.display = "none"

        def kept(_b: Any) -> None:
            keep.disabled = revert.disabled = True
            status.value = f'<span style="{_MUTED}">kept</span>'

        show.on_click(toggle)
        keep.on_click(kept)
        revert.on_click(lambda _b: self._soon(self._restore([change])))
        row = widgets.VBox([widgets.HBox([label, show, keep, revert, status]), diff])
        self.rows[i] = (row, keep, revert)
        return row

    def _soon(self, coro: Any) -> None:
        """A click may come on another thread: run the restore on the kernel's loop."""
        self._loop.call_soon_threadsafe(asyncio.ensure_future, coro)

    async def _restore(self, only: list[RunChange] | None) -> RestoreReport:
        report = await self.result.arestore(only)
        for i, change in enumerate(self.result.changes):
            if change in report.restored:
                self._done(i, "reverted")
            for refused, why in report.refused:
                if refused is change:
                    self.status[i].value = f'<span style="{_MUTED}">{escape(why)}</span>'
        if only is None:
            self.restore_all.disabled = True
        return report

    def _done(self, i: int, text: str) -> None:
        entry = self.rows.get(i)
        if isinstance(entry, tuple):
            _, keep, revert = entry
            keep.disabled = revert.disabled = True
        self.status[i].value = f"<b>{escape(text)}</b>"


def show_review(result: RunResult) -> ReviewList | None:
    """Display the review list under a run that changed something."""
    from IPython.display import display

    from nb_tools.jupyter._view import LIVE_MIME

    if not any(c.undoable for c in result.changes):
        return None  # nothing to take back: the transcript lists what ran
    from nb_tools.jupyter._headless import frontend_known

    if not frontend_known():
        return None  # nobody to click (nbclient, papermill): %nbtools restore still works
    review = ReviewList(result, asyncio.get_running_loop())
    data = dict(review.widget._repr_mimebundle_() or {})
    data["text/plain"] = LOST_REVIEW_TEXT
    data[LIVE_MIME] = {"version": 1, "lost": LOST_REVIEW_TEXT}
    display(data, raw=True)
    return review


async def restore_command(words: list[str], session: Session) -> str:
    """``%nbtools restore [PATH ...]``: put back what the last run changed (every change,
    or those at the paths named)."""
    agent = session.agent
    result = agent.last_result if agent is not None else None
    if result is None:
        raise UsageError("%nbtools restore: no agent run yet in this kernel")
    only = None
    if words:
        only = [c for c in result.changes if c.path in words]
        missing = [w for w in words if not any(c.path == w for c in result.changes)]
        if missing:
            paths = ", ".join(c.path for c in result.changes if c.path) or "none"
            raise UsageError(
                f"%nbtools restore: the last run changed no {', '.join(missing)} (it changed: "
                f"{paths})"
            )
    return str(await result.arestore(only))
