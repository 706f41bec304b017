"""The live view as a person meets it (issue 22): Stop stops while text streams (clicked
as a person clicks: mouse down, a pause, mouse up), streamed text shows no seams, an
answered approval leaves one line, a finished bash card shows its command and output once,
code blocks in answers have Copy and Insert as cell, a waiting card marks the tab and keeps
the kernel status busy, and a paused run offers a Continue button. Screenshots go to
tests/artifacts/ (and the ones the docs show to docs/images/)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import nbformat
import pytest
from browser_ui import (
    OUTPUTS,
    SLOW,
    TRANSCRIPT,
    cell,
    enabled_button,
    open_notebook,
    run_cells,
    shot,
)

from nb_tools.testing import reply

expect = pytest.importorskip("playwright.sync_api").expect
pytestmark = pytest.mark.browser

DOCS_IMAGES = Path(__file__).resolve().parents[2] / "docs" / "images"

LONG = (
    "Here is a plan for the analysis, step by step, with the code you can run.\n\n"
    + "".join(
        f"Step {i}: we read the table, check every column for missing values and odd types, "
        "then group the rows by region and month so that the totals can be compared "
        "with last year's figures without any surprise from late entries. "
        "This keeps the numbers honest and the plots readable for everyone.\n\n"
        for i in range(1, 9)
    )
    + "```python\nimport pandas as pd\n\ndf = pd.read_csv('sales.csv')\n"
    "totals = df.groupby(['region', 'month'])['amount'].sum()\nprint(totals.head())\n```\n\n"
    + "That is all for now. "
    * 40
)

SETUP = "%load_ext nb_tools\n"


def make_notebook(server: Any, name: str, *cells: str) -> str:
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    nb.cells = [nbformat.v4.new_code_cell(SETUP)] + [nbformat.v4.new_code_cell(c) for c in cells]
    nbformat.write(nb, server.root / name)
    return name


def human_click(page: Any, locator: Any, pause: float = 0.15) -> None:
    """Press, hold ``pause`` seconds, release: as a person clicks (a button re-created or
    moved between the two loses the click)."""
    locator.scroll_into_view_if_needed()
    box = locator.bounding_box()
    assert box is not None, "the button is not on the page"
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.mouse.down()
    time.sleep(pause)
    page.mouse.up()


def assistant_text(transcript: Any) -> str:
    return " ".join(transcript.locator(".jp-nbtools-assistant").all_inner_texts())


@pytest.mark.parametrize("kind", ["lab", "notebook"])
def test_stop_stops_while_text_streams_at_every_human_click(
    kind: str, request: Any, page: Any, script: Any
) -> None:
    server = request.getfixturevalue("lab" if kind == "lab" else "notebook7")
    if kind == "notebook":
        from browser_ui import KNOWN_NOTEBOOK7_ERROR

        page.console.allowed = (KNOWN_NOTEBOOK7_ERROR,)
    rounds = 3
    script.push(*(reply(LONG, chunk_delay=0.03) for _ in range(rounds)))
    name = make_notebook(server, f"stop_stream_{kind}.ipynb", *(["%%agent\nPlan it"] * rounds))
    open_notebook(page, server, name)
    run_cells(page, 0)
    for i in range(1, rounds + 1):
        run_cells(page, i)
        agent = cell(page, i)
        live = agent.locator(f"{OUTPUTS} .nbtools-assistant")
        expect(live.first).to_contain_text("Step 2", timeout=SLOW)
        if i == 1:
            shot(page, f"run-view-streaming-{kind}", agent)
        stop = enabled_button(agent, "Stop", exact=True)
        human_click(page, stop)
        transcript = agent.locator(TRANSCRIPT)
        # the whole answer takes ~25 s to stream: a stop that worked ends it at once
        transcript.wait_for(timeout=8_000)
        text = assistant_text(transcript)
        assert "That is all for now" not in text, f"click {i}: the run went on streaming"
        expect(transcript.locator(".jp-nbtools-footer")).to_contain_text("stopped")
    shot(page, f"run-view-stopped-{kind}", cell(page, rounds))
    assert page.console.unexpected() == []
