"""The way back from a live ``notebook_edit``: a replaced cell gets its source back, an
inserted cell goes, each only while the cell still holds what the edit put there (the
frontend checks ``expect``). Deleted and moved cells are taken back with one ``z`` in the
notebook (the run's edits are one undo step), not from here."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from nb_tools.tool import Change, RevertRefused

__all__ = ["CellUndo"]


@dataclass(eq=False, kw_only=True)
class CellUndo:
    path: str  # "notebook.ipynb#cell", as the card showed it
    kind: str  # "replace cell" or "insert cell"
    cell_id: str
    before: str | None
    after: str
    notebook: Any  # the LiveNotebook

    def diff(self) -> str:
        return Change(path=self.path, before=self.before, after=self.after).diff()

    async def revert(self) -> str:
        from nb_tools.jupyter._live_notebook import FrontendError

        nb = self.notebook
        if not await nb.wait_for_frontend():
            raise RevertRefused(f"{self.path}: the open notebook is not connected")
        if self.kind == "insert cell":
            edit = {"action": "delete", "cell_id": self.cell_id, "expect": self.after}
        else:
            edit = {
                "action": "replace",
                "cell_id": self.cell_id,
                "source": self.before or "",
                "cell_type": None,
                "expect": self.after,
            }
        try:
            reply = await nb.request("edit", turn=f"restore {time.time():.6f}", edits=[edit])
        except FrontendError as exc:
            raise RevertRefused(f"{self.path}: {exc}") from None
        nb.take_snapshot(reply.get("snapshot"))
        return f"restored {self.path}"
