"""``notebook_run``: which cells, stopping at the first error with its cell id, the card's
cells being what runs, and the saved-file path without the extension (a real kernel)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import nbformat
import pytest
from kernel_helpers import Kernel

from nb_tools.jupyter._live_notebook import LiveNotebook
from nb_tools.jupyter._notebook_run import NotebookRunTool, select_cells
from nb_tools.testing import call, reply


def cell(cid: str, source: str, count: int | None = None, kind: str = "code") -> dict:
    return {"id": cid, "cell_type": kind, "source": source, "execution_count": count}


CELLS = [
    cell("a", "x = 1", 1),
    cell("md", "# notes", kind="markdown"),
    cell("b", "y = x + 1", 2),
    cell("c", "z = y * 2", 1),  # ran before b last ran: stale from here
    cell("agent", "%%agent\nrun it", 4),
    cell("d", "w = 0", 5),
]


@pytest.mark.parametrize(
    ("which", "kw", "ids"),
    [
        ("stale", {}, ["c", "d"]),
        ("all", {}, ["a", "b", "c", "d"]),
        ("stale", {"from_id": "b", "to_id": "c"}, ["b", "c"]),
    ],
)
def test_which_cells_run(which: str, kw: dict, ids: list[str]) -> None:
    assert [c["id"] for c in select_cells(CELLS, which, **kw)] == ids


def test_up_to_date_cells_and_bad_ids() -> None:
    fresh = [cell("a", "x = 1", 1), cell("b", "y = 2", 2)]
    assert select_cells(fresh) == []
    with pytest.raises(ValueError, match="no cell 'zz'"):
        select_cells(fresh, from_id="zz")


def write_notebook(path: Path, cells: list[dict]) -> None:
    nb = nbformat.v4.new_notebook()
    for c in cells:
        maker = (
            nbformat.v4.new_code_cell if c["cell_type"] == "code" else nbformat.v4.new_markdown_cell
        )
        new = maker(c["source"])
        new["id"] = c["id"]
        if c["cell_type"] == "code":
            new["execution_count"] = c["execution_count"]
        nb.cells.append(new)
    nbformat.write(nb, str(path))


def test_a_cell_changed_after_the_card_is_refused(tmp_path: Path, monkeypatch) -> None:
    path = tmp_path / "nb.ipynb"
    write_notebook(path, [cell("a", "print('shown')")])
    monkeypatch.setenv("JPY_SESSION_NAME", str(path))
    tool = NotebookRunTool(LiveNotebook(), shell=object())
    args = json.dumps({"cells": "all"})
    assert "print('shown')" in tool.preview(args).after
    write_notebook(path, [cell("a", "import os; os.remove('x')")])

    async def no_frontend(timeout: float = 0) -> bool:
        return False

    tool.nb.wait_for_frontend = no_frontend  # type: ignore[method-assign]
    result = asyncio.run(tool.call(args))
    assert result.is_error and "cell(s) a changed since you approved" in result.content


@pytest.mark.kernel
def test_run_until_the_first_error_from_the_saved_file(kernel: Kernel, server) -> None:
    cwd = Path(kernel.ok("import os; print(os.getcwd())").stdout.strip())
    path = cwd / "analysis.ipynb"
    write_notebook(
        path,
        [
            cell("load", "x = 20"),
            cell("calc", "y = x + 1\nprint('y is', y)"),
            cell("bad", "ratio = y / (x - 20)"),
            cell("after", "after_ran = True"),
        ],
    )
    kernel.ok(f"%load_ext nb_tools\nos.environ['JPY_SESSION_NAME'] = {str(path)!r}")
    server.push(reply("", call("notebook_run", cells="all")), reply("Cell bad divides by zero."))
    n = len(server.requests)
    kernel.ok("%%agent --new --approval auto\nRun the notebook")
    [block] = [
        b
        for b in server.requests[n + 1].body["messages"][-1]["content"]
        if b.get("type") == "tool_result"
    ]
    text = block["content"] if isinstance(block["content"], str) else block["content"][0]["text"]
    assert text.startswith("notebook_run: 2 of 4 cell(s) of ")
    assert "cell bad failed" in text and "ZeroDivisionError" in text
    assert "outputs are not put in the open notebook" in text
    assert kernel.ok("print(y, 'after_ran' in globals())").stdout.strip() == "21 False"
