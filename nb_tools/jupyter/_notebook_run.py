"""``notebook_run``: run the notebook's code cells in the kernel, in order, until one fails.

Which cells: ``all``; ``stale`` (the default: from the first code cell that has not run in
this kernel, or ran before a cell above it last ran, to the end); or a range by cell id.
Agent cells (``%%agent``, ``%agent``, ``run_agent(``) are never run: they would start a
run inside the run. Each cell runs through the ``python`` tool's path (your namespace,
Interrupt stops it) and, on the open notebook (the extension), its outputs and execution
count go into the cell, one undo step with the run's other edits. The run stops at the
first error and returns it with the cell's id, so the agent can fix that cell
(``notebook_edit``) and run again: "run, fix, run", each step approved by you.

It asks like ``python``: the card lists the cells and their code, and the call runs exactly
those cells with those sources; a cell changed (or gone) since the card is refused.
Without the extension it runs the saved notebook's cells from disk and says that their
outputs are not put in the document.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from nb_tools.jupyter._live_notebook import (
    NO_FRONTEND,
    FrontendError,
    LiveNotebook,
    output_text,
)
from nb_tools.tool import Change, Info, Result, Schema, Subject

__all__ = ["NotebookRunTool", "select_cells"]

SELECTIONS = ("stale", "all")
_AGENT_CELL = re.compile(r"^\s*%%?agent\b|run_agent\(", re.M)


def _source(cell: Mapping[str, Any]) -> str:
    src = cell.get("source")
    return "".join(src) if isinstance(src, list) else str(src or "")


def is_agent_cell(cell: Mapping[str, Any]) -> bool:
    return bool(_AGENT_CELL.search(_source(cell)))


def select_cells(
    cells: Sequence[Mapping[str, Any]],
    which: str = "stale",
    *,
    from_id: str | None = None,
    to_id: str | None = None,
) -> list[Mapping[str, Any]]:
    """The code cells to run, in order (agent cells left out). Raises ``ValueError``."""
    ids = [c.get("id") for c in cells]
    for name, cid in (("from_cell_id", from_id), ("to_cell_id", to_id)):
        if cid is not None and cid not in ids:
            raise ValueError(f"notebook_run: no cell {cid!r} ({name}); notebook_read lists them")
    start = ids.index(from_id) if from_id is not None else 0
    end = ids.index(to_id) + 1 if to_id is not None else len(cells)
    if start >= end:
        raise ValueError("notebook_run: from_cell_id comes after to_cell_id")
    code = [
        (i, c)
        for i, c in enumerate(cells)
        if start <= i < end and c.get("cell_type", "code") == "code" and not is_agent_cell(c)
    ]
    if which == "all" or from_id is not None or to_id is not None:
        return [c for _, c in code]
    if which != "stale":
        raise ValueError(f"notebook_run: cells={which!r}; use one of {', '.join(SELECTIONS)}")
    latest = 0
    for n, (_, c) in enumerate(code):
        count = c.get("execution_count")
        if not isinstance(count, int) or count < latest:
            return [cell for _, cell in code[n:]]
        latest = count
    return []


class NotebookRunTool:
    """The ``notebook_run`` tool (see the module doc)."""

    preview_language = "python"

    def __init__(self, notebook: LiveNotebook, shell: Any = None) -> None:
        self.nb = notebook
        self._shell = shell
        self._shown: dict[str, list[tuple[str, str]]] = {}

    def info(self) -> Info:
        return Info(
            name="notebook_run",
            description=(
                "Run the notebook's code cells in the kernel, in order, stopping at the "
                "first error, which is returned with its cell id (fix it with notebook_edit, "
                "then run again). cells=stale (default) runs from the first cell not run "
                "since the cells above it, to the end; all runs every code cell; "
                "from_cell_id/to_cell_id run a range. Agent cells are skipped. The user "
                "approves each run."
            ),
            parameters=Schema.object(
                {
                    "cells": Schema.enum("Which cells (default stale)", *SELECTIONS),
                    "from_cell_id": Schema.string("Run from this cell (inclusive)"),
                    "to_cell_id": Schema.string("Run up to this cell (inclusive)"),
                }
            ),
            requires_approval=True,
            # it runs the cells as they are when it runs, not code the card could pin
            subject=Subject(arg="cells", kind="text", runs_code=lambda args: True),
        )

    # -- what runs -----------------------------------------------------------------------

    def _cells(self, live: bool) -> tuple[list[Mapping[str, Any]], str, bool]:
        """(cells, the notebook's name, live) from the open notebook's latest snapshot
        (``live``), else from the saved file."""
        snap = self.nb.snapshot
        if live and snap is not None:
            return list(snap.get("cells") or []), str(snap.get("path") or "notebook"), True
        path = os.environ.get("JPY_SESSION_NAME", "")
        if not path.endswith(".ipynb") or not Path(path).is_file():
            raise ValueError(NO_FRONTEND.format(tool="notebook_run", what="run"))
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        cells = [dict(c, id=c.get("id") or f"cell{i}") for i, c in enumerate(data["cells"])]
        return cells, os.path.basename(path), False

    def _sources(self, live: bool) -> list[tuple[str, str]]:
        cells, _, _ = self._cells(live)
        return [(str(c.get("id")), _source(c)) for c in cells]

    def _plan(
        self, args: str | bytes, live: bool = True
    ) -> tuple[list[tuple[str, str]], str, bool]:
        parsed = json.loads(args or "{}")
        cells, name, is_live = self._cells(live)
        chosen = select_cells(
            cells,
            str(parsed.get("cells") or "stale"),
            from_id=parsed.get("from_cell_id"),
            to_id=parsed.get("to_cell_id"),
        )
        return [(str(c.get("id")), _source(c)) for c in chosen], name, is_live

    def preview(self, args: str | bytes) -> Change:
        """The cells that will run and their code, as the card shows them."""
        plan, name, _ = self._plan(args)
        if len(self._shown) > 64:
            self._shown.clear()
        self._shown[_key(args)] = plan
        shown = "\n\n".join(f"# cell {cid}\n{src}" for cid, src in plan) or "# (no cell to run)"
        label = f"run {len(plan)} cell(s) of {name} in order, stopping at the first error"
        return Change(path=name, before=None, after=shown, label=label)

    # -- running -------------------------------------------------------------------------

    async def call(self, args: str | bytes) -> Result:
        from nb_tools.jupyter._kernel_tools import _shell
        from nb_tools.jupyter._live_notebook import _count_as_cell, _for_notebook
        from nb_tools.jupyter._python_tool import run_code

        live = await self.nb.wait_for_frontend()
        if live:
            try:
                self.nb.take_snapshot((await self.nb.request("snapshot")).get("snapshot"))
            except FrontendError as exc:
                return Result.error(f"notebook_run: could not read the open notebook: {exc}")
        try:
            plan, name, is_live = self._plan(args, live)
        except (ValueError, OSError) as exc:
            return Result.error(str(exc))
        shown = self._shown.pop(_key(args), None)
        if shown is not None:  # run what the card listed, if those cells are unchanged
            now = {cid: src for cid, src in self._sources(live)}
            changed = [cid for cid, src in shown if now.get(cid) != src]
            if changed:
                return Result.error(
                    f"notebook_run: cell(s) {', '.join(changed)} changed since you approved "
                    "the run; nothing ran. Read the notebook and ask again."
                )
            plan = shown
        if not plan:
            return Result(content="notebook_run: no cell to run (every cell is up to date)")
        ip = _shell(self._shell)
        lines: list[str] = []
        for n, (cid, source) in enumerate(plan, 1):
            count = _count_as_cell(ip)
            outputs, ok, interrupted = await run_code(ip, source)
            outputs = _for_notebook(outputs, count)
            if is_live:
                edit = {
                    "action": "replace",
                    "cell_id": cid,
                    "source": source,
                    "cell_type": None,
                    "expect": source,
                    "outputs": outputs,
                    "execution_count": count,
                }
                try:
                    reply = await self.nb.request("edit", turn=self.nb.turn, edits=[edit])
                    self.nb.take_snapshot(reply.get("snapshot"))
                except FrontendError as exc:
                    lines.append(f"cell {cid}: ran, but its outputs were not put in it: {exc}")
            if interrupted:
                lines.append(f"cell {cid}: interrupted by the user (KeyboardInterrupt); stopped")
                return Result(content=_summary(name, n - 1, len(plan), lines, is_live))
            if not ok:
                error = "\n".join(output_text(o) for o in outputs if o["output_type"] == "error")
                lines.append(f"cell {cid} failed (cell {n} of {len(plan)} run):\n{error}")
                return Result(content=_summary(name, n - 1, len(plan), lines, is_live))
        return Result(content=_summary(name, len(plan), len(plan), lines, is_live))


def _summary(name: str, ran: int, planned: int, lines: list[str], is_live: bool) -> str:
    head = f"notebook_run: {ran} of {planned} cell(s) of {name} ran without error"
    if not is_live:
        head += (
            " (from the saved file: the extension is not connected, so outputs are not put "
            "in the open notebook)"
        )
    return "\n".join([head, *lines])


def _key(args: str | bytes) -> str:
    return args.decode("utf-8", "replace") if isinstance(args, bytes) else str(args)
