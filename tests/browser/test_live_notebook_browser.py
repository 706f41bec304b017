"""The agent in the open notebook, in JupyterLab 4 and Notebook 7 with the real extension:
it reads an unsaved edit, looks at ``df`` without a click, inserts and runs a cleaning cell
once approved (the card shows the cell diff), one ``z`` undoes the run's edits, nothing
reaches the disk until Ctrl+S, and then the file holds the new cell with its outputs."""

from __future__ import annotations

import json
from typing import Any

import nbformat
import pytest
from browser_ui import OUTPUTS, SLOW, cell, enabled_button, open_notebook, run_cells, shot
from browser_ui import wait_idle as wait_kernel_idle
from playwright.sync_api import expect

from nb_tools.testing import call, reply

SETUP = (
    "%load_ext nb_tools\n"
    "import pandas as pd\n"
    'df = pd.DataFrame({"region": ["N", "S", None, "N"], "amount": [10.0, -5.0, 7.5, None]})'
)
ASK = "%%agent\nWhat's wrong with my sales DataFrame?"
CLEAN = (
    'clean = df.dropna()\nclean = clean[clean["amount"] > 0]\nprint(len(clean), "rows left")\nclean'
)
DRAFT = "# Sales\nDraft: amounts must be positive"


def make_notebook(server: Any, name: str) -> bytes:
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell(SETUP, id="setup"),
        nbformat.v4.new_markdown_cell("# Sales", id="notes"),
        nbformat.v4.new_code_cell(ASK, id="ask"),
    ]
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    nbformat.write(nb, server.root / name)
    return (server.root / name).read_bytes()


def cells_now(page: Any) -> list[dict[str, Any]]:
    return page.evaluate(
        """() => window.jupyterapp.shell.currentWidget.content.model.sharedModel.cells.map(
             c => ({id: c.id, type: c.cell_type, source: c.getSource(),
                    count: c.cell_type === 'code' ? c.execution_count : null,
                    outputs: c.cell_type === 'code' ? c.toJSON().outputs : []}))"""
    )


def tool_result_texts(fake_model: Any, since: int) -> list[str]:
    texts = []
    for req in fake_model.requests[since:]:
        last = req.body["messages"][-1]
        if last["role"] != "user" or isinstance(last["content"], str):
            continue
        for block in last["content"]:
            if block.get("type") == "tool_result":
                c = block["content"]
                texts.append(c if isinstance(c, str) else "".join(x.get("text", "") for x in c))
    return texts


@pytest.mark.parametrize("kind", ["lab", "notebook"])
def test_done_when_sales_dataframe_cleaned_in_the_open_notebook(
    kind: str, request: pytest.FixtureRequest, page: Any, script: Any, fake_model: Any
) -> None:
    server = request.getfixturevalue("lab" if kind == "lab" else "notebook7")
    if kind == "notebook":
        page.console.allowed = ("Cannot read properties of undefined (reading 'schema')",)
    name = f"sales_{kind}.ipynb"
    on_disk = make_notebook(server, name)
    script.push(
        reply("Let me look.", call("notebook_read"), call("list_variables")),
        reply("", call("describe", raw=json.dumps({"name": "df"}))),
        reply(
            "`df` has a missing region, a missing amount and a negative amount. "
            "Here is a cleaning cell.",
            call(
                "notebook_edit",
                cell_id="notes",
                edit_mode="insert",
                cell_type="code",
                new_source=CLEAN,
                run=True,
            ),
        ),
        reply("Added and ran the cleaning cell: 1 row is left."),
    )
    seen = len(fake_model.requests)
    open_notebook(page, server, name)
    # an unsaved edit the agent must see
    page.evaluate(
        "t => window.jupyterapp.shell.currentWidget.content.widgets[1].model.sharedModel"
        ".setSource(t)",
        DRAFT,
    )
    run_cells(page, 0, 2)
    ask = cell(page, 2)
    approve = enabled_button(ask, "Approve")
    approve.wait_for(timeout=SLOW)
    # the looks ran without a click; the card shows the new cell as a diff
    texts = tool_result_texts(fake_model, seen)
    assert "Draft: amounts must be positive" in texts[0]  # the unsaved edit, read live
    assert "df: DataFrame 4x2" in texts[1]
    assert "amount: float64, 1 null" in texts[2]
    diff = ask.locator(f"{OUTPUTS} pre.nbtools-diff")
    expect(diff).to_contain_text("+clean = df.dropna()")
    approve.scroll_into_view_if_needed()
    shot(page, f"{kind}-live-edit-approval")
    approve.click()
    wait_kernel_idle(page)
    ask = cell(page, 3)  # the new cell went in above it
    expect(ask.locator(OUTPUTS)).to_contain_text("1 row is left", timeout=SLOW)
    # the answer shows before the cell's execute_reply numbers it: wait for the number
    # (the kernel's status also blinks idle on comm messages, so idle alone is no sign)
    page.wait_for_function(
        "() => window.jupyterapp.shell.currentWidget.content.model.sharedModel.cells[3]"
        ".execution_count != null",
        timeout=SLOW,
    )

    cells = cells_now(page)
    assert [c["id"] for c in cells][:2] == ["setup", "notes"]
    new = cells[2]
    assert new["type"] == "code" and new["source"] == CLEAN
    # its own execution count, and the agent cell ends with the next one
    assert isinstance(new["count"], int) and new["count"] + 1 == cells[3]["count"]
    kinds = [o["output_type"] for o in new["outputs"]]
    assert kinds == ["stream", "execute_result"], new["outputs"]
    assert "1 rows left" in new["outputs"][0]["text"]
    expect(cell(page, 2).locator(OUTPUTS)).to_contain_text("1 rows left")
    cell(page, 2).scroll_into_view_if_needed()
    shot(page, f"{kind}-live-edit-cell-added")
    assert (server.root / name).read_bytes() == on_disk  # nothing written behind the user

    # one z (command mode) takes the run's edit back; the user's own draft stays
    cell(page, 0).locator(".jp-InputPrompt").click()
    page.keyboard.press("Escape")
    page.keyboard.press("z")
    expect(page.locator(".jp-Notebook .jp-Cell")).to_have_count(3)
    after_undo = cells_now(page)
    assert [c["id"] for c in after_undo] == ["setup", "notes", "ask"]
    assert after_undo[1]["source"] == DRAFT
    shot(page, f"{kind}-live-edit-undone")
    page.keyboard.press("Shift+z")  # redo, then save
    expect(page.locator(".jp-Notebook .jp-Cell")).to_have_count(4)
    assert (server.root / name).read_bytes() == on_disk
    page.keyboard.press("Control+s")
    page.wait_for_function(
        "() => !window.jupyterapp.shell.currentWidget.context.model.dirty", timeout=SLOW
    )
    saved = nbformat.read(server.root / name, as_version=4)
    assert [c.id for c in saved.cells][:2] == ["setup", "notes"]
    assert saved.cells[1].source == DRAFT
    added = saved.cells[2]
    assert added.source == CLEAN and isinstance(added.execution_count, int)
    assert [o.output_type for o in added.outputs] == ["stream", "execute_result"]
    expect(page.locator(".jp-Dialog")).to_have_count(0)  # no "File Changed" dialog
    assert script.remaining == 0
    assert page.console.unexpected() == []


def test_two_views_of_one_notebook_apply_an_edit_once(lab: Any, page: Any, script: Any) -> None:
    name = "two_views.ipynb"
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell("%load_ext nb_tools", id="setup"),
        nbformat.v4.new_code_cell("%%agent --approval auto\nadd a note", id="ask"),
    ]
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    nbformat.write(nb, lab.root / name)
    script.push(
        reply("", call("notebook_read")),
        reply(
            "",
            call(
                "notebook_edit",
                cell_id="setup",
                edit_mode="insert",
                cell_type="markdown",
                new_source="A note",
            ),
        ),
        reply("Noted."),
    )
    open_notebook(page, lab, name)
    page.evaluate("() => window.jupyterapp.commands.execute('docmanager:clone')")
    expect(page.locator(".jp-Notebook")).to_have_count(2)
    run_cells(page, 0, 1)
    page.wait_for_function(
        "() => window.jupyterapp.shell.currentWidget.content.model.sharedModel.cells.length > 2",
        timeout=SLOW,
    )
    wait_kernel_idle(page)
    assert [c["source"] for c in cells_now(page)] == [
        "%load_ext nb_tools",
        "A note",
        "%%agent --approval auto\nadd a note",
    ]
    for view in page.locator(".jp-Notebook").all():
        expect(view.locator(".jp-Cell")).to_have_count(3)
    new_id = cells_now(page)[1]["id"]  # the card named the cell that went in
    expect(page.locator(".jp-nbtools-Transcript").first).to_contain_text(f"cell {new_id}")
    assert script.remaining == 0
    shot(page, "lab-two-views-one-edit")
