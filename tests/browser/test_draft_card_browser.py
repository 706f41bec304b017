"""A file the model writes streams onto its card (issue 21): while the arguments stream,
the card shows the path and the diff of the content so far, growing; the same card then
asks for approval (no second card, no flicker). Screenshots go to tests/artifacts/."""

from __future__ import annotations

import re
from typing import Any

import nbformat
import pytest
from browser_ui import (
    OUTPUTS,
    SLOW,
    TRANSCRIPT,
    cell,
    docs_shot,
    enabled_button,
    open_notebook,
    run_cells,
    shot,
)

from nb_tools.testing import call, reply

expect = pytest.importorskip("playwright.sync_api").expect
pytestmark = pytest.mark.browser

CONTENT = "".join(f"row_{i:02d} = compute({i}, label='entry {i}')\n" for i in range(60))
DRAFT = f"{OUTPUTS} .nbtools-card[data-status='writing']"


@pytest.mark.parametrize("kind", ["lab", "notebook"])
def test_a_write_grows_on_its_card_then_asks(
    kind: str, request: Any, page: Any, script: Any
) -> None:
    server = request.getfixturevalue("lab" if kind == "lab" else "notebook7")
    if kind == "notebook":
        from browser_ui import KNOWN_NOTEBOOK7_ERROR

        page.console.allowed = (KNOWN_NOTEBOOK7_ERROR,)
    script.push(
        reply(
            "I will write the module.",
            call("write_file", file_path="rows.py", content=CONTENT),
            chunk_delay=0.05,
        ),
        reply("Written."),
    )
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    nb.cells = [
        nbformat.v4.new_code_cell("%load_ext nb_tools"),
        nbformat.v4.new_code_cell("%%agent --builtins --approval ask\nWrite rows.py"),
    ]
    name = f"draft_card_{kind}.ipynb"
    nbformat.write(nb, server.root / name)
    open_notebook(page, server, name)
    run_cells(page, 0, 1)
    agent = cell(page, 1)

    draft = agent.locator(DRAFT)
    expect(draft.locator(".nbtools-diff")).to_contain_text("row_12", timeout=SLOW)
    first = draft.locator(".nbtools-diff").inner_text()
    assert "rows.py" in draft.inner_text()
    assert "row_59" not in first  # mid-stream: the end is not written yet
    shot(page, f"draft-card-mid-stream-{kind}", agent)
    if kind == "lab":
        docs_shot(agent, "draft-card")
    last = max(int(n) for n in re.findall(r"row_(\d\d)", first))
    if last < 56:  # it grows: a later line comes while the card still says "writing"
        expect(draft.locator(".nbtools-diff")).to_contain_text(f"row_{last + 3:02d}")

    approve = enabled_button(agent, "Approve")
    approve.wait_for(timeout=SLOW)
    cards = agent.locator(f"{OUTPUTS} .nbtools-card")
    expect(cards).to_have_count(1)  # the draft became the approval's card
    expect(cards.first.locator(".nbtools-diff")).to_contain_text("row_59")
    expect(agent.locator(DRAFT)).to_have_count(0)
    shot(page, f"draft-card-asks-{kind}", agent)
    approve.click()
    if kind == "lab":
        agent.locator(TRANSCRIPT).wait_for(timeout=SLOW)
    expect(agent.locator(OUTPUTS)).to_contain_text("Written.", timeout=SLOW)
    assert (server.root / "rows.py").read_text() == CONTENT
    assert page.console.unexpected() == []
