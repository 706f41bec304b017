"""The same quickstart.ipynb in Notebook 7: the approval card works and the transcript is
rendered by our extension (Notebook 7 runs JupyterLab extensions), live and reopened."""

from __future__ import annotations

from typing import Any

import pytest
from browser_ui import (
    KNOWN_NOTEBOOK7_ERROR,
    OUTPUTS,
    SLOW,
    TRANSCRIPT,
    cell,
    copy_notebook,
    enabled_button,
    find_cell,
    open_notebook,
    run_cells,
    save,
    shot,
)

from nb_tools.testing import call, reply

expect = pytest.importorskip("playwright.sync_api").expect
pytestmark = pytest.mark.browser


def test_quickstart_in_notebook7(notebook7: Any, page: Any, script: Any) -> None:
    page.console.allowed = (KNOWN_NOTEBOOK7_ERROR,)
    script.push(
        reply(
            "I'll book it.", call("book_table", restaurant="Chez Panisse", people=4, time="19:30")
        ),
        reply("Booked: Chez Panisse, 4 people, 19:30."),
    )
    name = copy_notebook(notebook7, "quickstart.ipynb", "qs_nb7.ipynb")
    open_notebook(page, notebook7, name)
    setup = [find_cell(page, s) for s in ("%load_ext nb_tools", "use_model(", "def crunch")]
    book = find_cell(page, "%%agent\nBook a table")
    run_cells(page, *setup, book)

    approve = enabled_button(cell(page, book), "Approve")
    approve.wait_for(timeout=SLOW)
    expect(cell(page, book).locator(OUTPUTS)).to_contain_text("book_table needs your approval")
    approve.click()
    transcript = cell(page, book).locator(TRANSCRIPT)
    transcript.wait_for(timeout=SLOW)
    card = transcript.locator("details.jp-nbtools-tool")
    expect(card).to_have_attribute("data-status", "ok")
    expect(card.locator(".jp-nbtools-approval")).to_have_text("Approved by you")
    expect(transcript.locator(".jp-nbtools-assistant").last).to_have_text(
        "Booked: Chez Panisse, 4 people, 19:30."
    )
    shot(page, "notebook7-transcript", cell(page, book))
    assert script.remaining == 0

    # Reopened without a kernel, the saved transcript renders again.
    save(page)
    notebook7.shutdown_kernels()
    reopened = copy_notebook(notebook7, name, "qs_nb7_reopened.ipynb", kernel="nb-tools-absent")
    page.goto("about:blank")
    open_notebook(page, notebook7, reopened, kernel=False)
    expect(cell(page, book).locator(f"{TRANSCRIPT} details.jp-nbtools-tool")).to_have_attribute(
        "data-status", "ok"
    )
    shot(page, "notebook7-reopened-no-kernel", cell(page, book))
    assert page.console.unexpected() == []
