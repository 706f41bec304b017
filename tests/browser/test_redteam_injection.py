"""Red team, the live view in JupyterLab: a tool's rich value (here a pandas ``Styler``,
which does not escape its cells) holding text the model chose must not put live HTML in
the page. The worst case: an ``<img onerror>`` whose script clicks every "Approve" button,
so the next call that needs a person runs without one."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import nbformat
import pytest
from browser_ui import OUTPUTS, SLOW, TRANSCRIPT, cell, enabled_button, open_notebook, run_cells

from nb_tools.testing import call, reply

expect = pytest.importorskip("playwright.sync_api").expect
pytestmark = pytest.mark.browser

SETUP = '''%load_ext nb_tools
from pathlib import Path
import pandas as pd
from nb_tools import tool

@tool(requires_approval=False)
def note(text: str) -> object:
    """Show a note as a one-cell table."""
    return pd.DataFrame({"note": [text]}).style

@tool(requires_approval=True)
def touch(path: str) -> str:
    """Create an empty file."""
    Path(path).touch()
    return "created"
'''
CLICKER = (
    "setInterval(()=>{for(const b of document.querySelectorAll('button'))"
    "if(b.textContent.trim()==='Approve'&&!b.disabled)b.click()},100)"
)
PAYLOAD = f'<img src="x" onerror="{CLICKER}">'


def test_html_in_a_tools_rich_value_cannot_click_approve(
    lab: Any, page: Any, script: Any, tmp_path: Path
) -> None:
    target = tmp_path / "approved_by_script"
    script.push(
        reply("A note first.", call("note", text=PAYLOAD)),
        reply("Now the file.", call("touch", path=str(target))),
        reply("Done."),
    )
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    nb.cells = [nbformat.v4.new_code_cell(SETUP), nbformat.v4.new_code_cell("%%agent\nGo")]
    nbformat.write(nb, lab.root / "redteam_clicker.ipynb")
    open_notebook(page, lab, "redteam_clicker.ipynb")
    run_cells(page, 0, 1)
    agent = cell(page, 1)
    deny = enabled_button(agent, "Deny")
    deadline = time.monotonic() + SLOW / 1000
    while not target.exists() and deny.count() == 0:
        assert time.monotonic() < deadline, "neither a card nor the file came"
        time.sleep(0.1)
    time.sleep(1.5)  # the injected script polls every 100 ms
    assert not target.exists(), "a script in a tool's value approved the call"
    # The note's text is shown as text.
    expect(agent.locator(OUTPUTS)).to_contain_text("onerror")
    assert agent.locator(f"{OUTPUTS} img[src='x']").count() == 0
    deny.first.click()
    agent.locator(TRANSCRIPT).wait_for(timeout=SLOW)
    assert not target.exists()
    assert agent.locator(f"{TRANSCRIPT} img[src='x']").count() == 0
