"""Red team: the live ``notebook_read``/``notebook_edit`` hand a call on another notebook
to the disk tools (``--builtins``), but the approval pipeline asks the LIVE tool its
votes. Before the fix the live tools had no ``is_protected_call``: a notebook under
``.git/`` (or ``.jupyter/``, ``.ssh/``, ...) was read without a click, and written under
``--approval auto`` without a person, though the disk tools ask for both; and the card's
diff was made from the open notebook's cells, not from the file that was written."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from approvals_helpers import Approver, call, drive

from nb_tools.builtin import builtin_tools
from nb_tools.jupyter._live_notebook import LiveNotebook, LiveNotebookEdit, LiveNotebookRead

SECRET = "ghp_redteam_0123456789"


def tools(ws: Path) -> list:
    disk = {t.info().name: t for t in builtin_tools(ws, include=["notebook_read", "notebook_edit"])}
    nb = LiveNotebook()
    nb.take_snapshot({"path": "analysis.ipynb", "cells": [{"id": "c1", "source": "x = 1"}]})
    return [
        LiveNotebookRead(nb, disk["notebook_read"]),
        LiveNotebookEdit(nb, disk["notebook_edit"]),
    ]


@pytest.fixture
def secret_notebook(ws: Path) -> Path:
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell(f"TOKEN = {SECRET!r}")
    cell.id = "c1"
    nb.cells = [cell]
    path = ws / ".git" / "notes.ipynb"
    path.parent.mkdir()
    nbformat.write(nb, path)
    return path


async def test_a_protected_notebook_is_not_read_without_a_click(
    ws: Path, secret_notebook: Path
) -> None:
    approver = Approver(answers=[False])
    out = await drive(
        [call("notebook_read", id="r1", notebook_path=".git/notes.ipynb")],
        tools=tools(ws),
        approver=approver,
    )
    assert approver.asked == ["r1"], "a protected read must go to a person"
    text, is_error = out.result("r1")
    assert SECRET not in text and is_error


async def test_a_protected_notebook_is_not_written_under_auto(
    ws: Path, secret_notebook: Path
) -> None:
    before = secret_notebook.read_bytes()
    approver = Approver(answers=[True, False])  # the read: yes; the write: no
    edit = dict(notebook_path=".git/notes.ipynb", cell_id="c1", new_source="import os")
    out = await drive(
        [call("notebook_read", id="r1", notebook_path=".git/notes.ipynb")],
        turns=[[call("notebook_edit", edit, id="e1")]],
        tools=tools(ws),
        approval="auto",
        approver=approver,
    )
    assert approver.asked == ["r1", "e1"]
    assert secret_notebook.read_bytes() == before
    assert out.status("e1") == "denied"
    # the card's diff is the file's, not the open notebook's cell c1 ("x = 1")
    (change,) = approver.requests[1].preview or (None,)
    assert change is not None and SECRET in (change.before or "")
