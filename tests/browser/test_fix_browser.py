"""From a red traceback to a fixed, re-run cell: one click on "Fix with agent" and one
Approve, in JupyterLab 4 and Notebook 7 with the real extension; one ``z`` takes the fix
back. And ``notebook_run`` puts each cell's outputs in the open notebook, stopping at the
first error."""

from __future__ import annotations

from typing import Any

import nbformat
import pytest
from browser_ui import OUTPUTS, SLOW, cell, enabled_button, open_notebook, run_cells, shot
from browser_ui import wait_idle as wait_kernel_idle
from playwright.sync_api import expect

from nb_tools.testing import call, reply

SETUP = "%load_ext nb_tools\nprices = [3.0, 4.5]\ncount = 0"
BROKEN = "total = sum(prices)\nmean = total / count\nprint('mean', mean)"
FIXED = "total = sum(prices)\nmean = total / count if count else 0.0\nprint('mean', mean)"


def write(server: Any, name: str, cells: list[Any]) -> None:
    nb = nbformat.v4.new_notebook()
    nb.cells = cells
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    nbformat.write(nb, server.root / name)


def sources(page: Any) -> list[str]:
    return page.evaluate(
        "() => window.jupyterapp.shell.currentWidget.content.model.sharedModel.cells"
        ".map(c => c.getSource())"
    )


@pytest.mark.parametrize("kind", ["lab", "notebook"])
def test_fix_with_agent_is_one_click_and_one_approve(
    kind: str, request: pytest.FixtureRequest, page: Any, script: Any, fake_model: Any
) -> None:
    server = request.getfixturevalue("lab" if kind == "lab" else "notebook7")
    if kind == "notebook":
        page.console.allowed = ("Cannot read properties of undefined (reading 'schema')",)
    name = f"fix_{kind}.ipynb"
    write(
        server,
        name,
        [
            nbformat.v4.new_code_cell(SETUP, id="setup"),
            nbformat.v4.new_code_cell(BROKEN, id="calc"),
        ],
    )
    script.push(
        reply(
            "`count` is 0, so guard the division.",
            call("notebook_edit", cell_id="calc", edit_mode="replace", new_source=FIXED, run=True),
        ),
        reply("Fixed: the mean is 0.0 while there are no items."),
    )
    seen = len(fake_model.requests)
    open_notebook(page, server, name)
    run_cells(page, 0, 1)
    broken = cell(page, 1)
    expect(broken.locator(OUTPUTS)).to_contain_text("ZeroDivisionError", timeout=SLOW)
    fix = enabled_button(broken, "Fix with agent")
    fix.wait_for(timeout=SLOW)
    shot(page, f"{kind}-fix-button")
    fix.click()

    agent = cell(page, 2)
    approve = enabled_button(agent, "Approve")
    approve.wait_for(timeout=SLOW)
    assert sources(page)[2] == "%%agent --fix --cell calc"
    first = fake_model.requests[seen].body["messages"][-1]["content"]
    text = first if isinstance(first, str) else "".join(b.get("text", "") for b in first)
    assert "mean = total / count" in text and "ZeroDivisionError" in text
    assert '<variable name="count">' in text
    expect(agent.locator(f"{OUTPUTS} pre.nbtools-diff")).to_contain_text(
        "+mean = total / count if count else 0.0"
    )
    approve.scroll_into_view_if_needed()
    shot(page, f"{kind}-fix-approval")
    approve.click()
    wait_kernel_idle(page)
    expect(cell(page, 2).locator(OUTPUTS)).to_contain_text("the mean is 0.0", timeout=SLOW)
    expect(cell(page, 1).locator(OUTPUTS)).to_contain_text("mean 0.0", timeout=SLOW)
    expect(cell(page, 1).locator(OUTPUTS)).not_to_contain_text("ZeroDivisionError")
    assert sources(page)[1] == FIXED
    cell(page, 1).scroll_into_view_if_needed()
    shot(page, f"{kind}-fix-done")

    # one z (command mode) takes the fix back
    cell(page, 0).locator(".jp-InputPrompt").click()
    page.keyboard.press("Escape")
    page.keyboard.press("z")
    page.wait_for_function(
        "s => window.jupyterapp.shell.currentWidget.content.model.sharedModel.cells[1]"
        ".getSource() === s",
        arg=BROKEN,
        timeout=SLOW,
    )
    page.keyboard.press("Shift+z")  # redo: the fix is back
    page.wait_for_function(
        "s => window.jupyterapp.shell.currentWidget.content.model.sharedModel.cells[1]"
        ".getSource() === s",
        arg=FIXED,
        timeout=SLOW,
    )
    # the review list under the run: the cell's change, and Restore everything
    review = cell(page, 2).locator(f"{OUTPUTS} .nbtools-review")
    expect(review).to_contain_text("This run changed 1 thing")
    expect(review).to_contain_text("replace cell")
    review.get_by_role("button", name="Diff").click()
    expect(review.locator("pre.nbtools-diff")).to_contain_text("+mean = total / count if count")
    review.scroll_into_view_if_needed()
    shot(page, f"{kind}-review-list")
    review.get_by_role("button", name="Restore everything").click()
    page.wait_for_function(
        "s => window.jupyterapp.shell.currentWidget.content.model.sharedModel.cells[1]"
        ".getSource() === s",
        arg=BROKEN,
        timeout=SLOW,
    )
    expect(review).to_contain_text("reverted")
    shot(page, f"{kind}-review-restored")
    assert script.remaining == 0
    assert page.console.unexpected() == []


@pytest.mark.parametrize("kind", ["lab", "notebook"])
def test_notebook_run_fills_the_cells_and_stops_at_the_error(
    kind: str, request: pytest.FixtureRequest, page: Any, script: Any, fake_model: Any
) -> None:
    lab = request.getfixturevalue("lab" if kind == "lab" else "notebook7")
    if kind == "notebook":
        page.console.allowed = ("Cannot read properties of undefined (reading 'schema')",)
    name = f"run_until_clean_{kind}.ipynb"
    write(
        lab,
        name,
        [
            nbformat.v4.new_code_cell("%load_ext nb_tools", id="setup"),
            nbformat.v4.new_code_cell("x = 20\nprint('x is', x)", id="load"),
            nbformat.v4.new_code_cell("y = x / 0", id="bad"),
            nbformat.v4.new_code_cell("print('never')", id="after"),
            nbformat.v4.new_code_cell("%%agent\nRun my notebook", id="ask"),
        ],
    )
    script.push(reply("", call("notebook_run")), reply("Cell bad divides by zero."))
    open_notebook(page, lab, name)
    run_cells(page, 0)
    run_cells(page, 4)
    ask = cell(page, 4)
    approve = enabled_button(ask, "Approve")
    approve.wait_for(timeout=SLOW)
    expect(ask.locator(OUTPUTS)).to_contain_text("y = x / 0")
    approve.click()
    wait_kernel_idle(page)
    expect(ask.locator(OUTPUTS)).to_contain_text("divides by zero", timeout=SLOW)
    expect(cell(page, 1).locator(OUTPUTS)).to_contain_text("x is 20")
    expect(cell(page, 2).locator(OUTPUTS)).to_contain_text("ZeroDivisionError")
    expect(cell(page, 3).locator(OUTPUTS)).not_to_contain_text("never")
    cell(page, 2).scroll_into_view_if_needed()
    shot(page, f"{kind}-notebook-run")
    assert page.console.unexpected() == []
