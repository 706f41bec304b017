"""The live view as a person meets it (issue 22): Stop stops while text streams (clicked
as a person clicks: mouse down, a pause, mouse up), streamed text shows no seams, an
answered approval leaves one line, a finished bash card shows its command and output once,
code blocks in answers have Copy and Insert as cell, a waiting card marks the tab and keeps
the kernel status busy, and a paused run offers a Continue button. Screenshots go to
tests/artifacts/ (and the ones the docs show to docs/images/)."""

from __future__ import annotations

import time
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


TOOL_SETUP = '''%load_ext nb_tools
from nb_tools import tool

@tool(requires_approval=True)
def launch(target: str) -> str:
    """Launch something."""
    return f"launched {target}"
'''
ANSWER = (
    "Here is the code:\n\n```python\nx = 6 * 7\nprint(x)\n```\n\n"
    "Now I launch it, as you asked me to do.\n"
)
STATUS_TEXT = """() => [...document.querySelectorAll('.jp-StatusBar-Widget, #jp-main-statusbar')]
  .map(n => n.textContent).join(' ')"""
DISPLAY_STATUS = "() => window.jupyterapp.shell.currentWidget.sessionContext.kernelDisplayStatus"


def test_waiting_card_code_buttons_and_continue_in_lab(lab: Any, page: Any, script: Any) -> None:
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=lab.url)
    script.push(
        reply(ANSWER, call("launch", target="moon"), chunk_delay=0.05),
        reply("Continued: all done."),
    )
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    nb.cells = [
        nbformat.v4.new_code_cell(TOOL_SETUP),
        nbformat.v4.new_code_cell("%%agent --max-turns 1\nWrite the code, then launch it"),
    ]
    nbformat.write(nb, lab.root / "buttons.ipynb")
    open_notebook(page, lab, "buttons.ipynb")
    run_cells(page, 0, 1)
    agent = cell(page, 1)

    # Live: the answer's code block has its buttons while the run goes on.
    live_bar = agent.locator(f"{OUTPUTS} .nbtools-assistant .jp-nbtools-code-toolbar")
    expect(live_bar.first).to_be_visible(timeout=SLOW)
    expect(live_bar.first.locator("button")).to_have_text(["Copy", "Insert as cell"])
    # the answer spans the output: the block's buttons sit at its right, not mid-text
    # (the cell's own elements, each waited for: the text box is re-rendered as text streams)
    # polled: the text box is re-rendered as text streams, and may be between renders
    widths = page.wait_for_function(
        """() => {
          const b = document.querySelector('.jp-OutputArea-output .jp-nbtools-codeblock');
          const t = b && b.closest('.widget-htmlmath');
          const w = t ? [b.getBoundingClientRect().width, t.getBoundingClientRect().width] : [];
          return w.length && w[0] > 0 && w[1] > 0 ? w : null;
        }""",
        timeout=SLOW,
    ).json_value()
    assert widths[0] > 0.9 * widths[1] - 40, widths

    # A waiting card: tab, page title, a notification, and the status says busy.
    approve = enabled_button(agent, "Approve")
    approve.wait_for(timeout=SLOW)
    tab = page.locator(".lm-TabBar-tab.jp-mod-current")
    expect(tab).to_have_class(__import__("re").compile("jp-mod-nbtools-waiting"))
    page.wait_for_function("() => document.title.startsWith('(!)')", timeout=10_000)
    expect(page.locator(".Toastify__toast", has_text="waits for your approval")).to_be_visible(
        timeout=10_000
    )
    time.sleep(1.0)  # the kernel reports idle between comm messages; the display holds busy
    assert page.evaluate(DISPLAY_STATUS) == "busy"
    assert "Busy" in page.evaluate(STATUS_TEXT)
    shot(page, "run-view-waiting-lab")
    docs_shot(agent, "approval-card")

    approve.click()
    # Answered: one line, no dead row of buttons.
    expect(agent.locator(f"{OUTPUTS} .nbtools-decided")).to_contain_text("Approved by you")
    expect(enabled_button(agent, "Deny")).to_have_count(0)
    expect(agent.locator(f"{OUTPUTS} button", has_text="Deny")).to_have_count(0)
    page.wait_for_function("() => !document.title.startsWith('(!)')", timeout=10_000)

    # The turn limit: Stop here, then the transcript offers Continue.
    enabled_button(agent, "Stop here").click()
    transcript = agent.locator(TRANSCRIPT)
    transcript.wait_for(timeout=SLOW)
    ending = transcript.locator(".jp-nbtools-ending")
    expect(ending.locator("code")).to_have_text("%%agent --continue")
    assert "`" not in ending.inner_text()
    page.wait_for_function(f"() => ({DISPLAY_STATUS})() !== 'busy'", timeout=SLOW)

    # Copy, then Insert as cell: below the agent cell, one undo takes it back.
    bar = transcript.locator(".jp-nbtools-code-toolbar")
    docs_shot(agent, "answer-code-block")
    bar.locator("button", has_text="Copy").click()
    expect(bar.locator("button").first).to_have_text("Copied")
    assert page.evaluate("() => navigator.clipboard.readText()") == "x = 6 * 7\nprint(x)"
    shot(page, "run-view-transcript-code-lab", agent)
    count = page.locator(".jp-Notebook .jp-Cell").count()
    bar.locator("button", has_text="Insert as cell").click()
    expect(page.locator(".jp-Notebook .jp-Cell")).to_have_count(count + 1)
    source = "() => window.jupyterapp.shell.currentWidget.content.widgets[2].model.sharedModel.getSource()"
    assert page.evaluate(source) == "x = 6 * 7\nprint(x)"
    page.keyboard.press("Escape")
    page.keyboard.press("z")
    expect(page.locator(".jp-Notebook .jp-Cell")).to_have_count(count)
    bar.locator("button", has_text="Insert as cell").click()
    expect(page.locator(".jp-Notebook .jp-Cell")).to_have_count(count + 1)

    # Continue: a %%agent --continue cell after the inserted one, run at once.
    ending.locator("button", has_text="Continue").click()
    expect(page.locator(".jp-Notebook .jp-Cell")).to_have_count(count + 2)
    assert page.evaluate(source.replace("[2]", "[3]")) == "%%agent --continue"
    expect(cell(page, 3).locator(TRANSCRIPT)).to_contain_text("Continued: all done.", timeout=SLOW)
    shot(page, "run-view-continued-lab")
    assert page.console.unexpected() == []


def test_waiting_card_and_insert_as_cell_in_notebook7(
    notebook7: Any, page: Any, script: Any
) -> None:
    from browser_ui import KNOWN_NOTEBOOK7_ERROR

    page.console.allowed = (KNOWN_NOTEBOOK7_ERROR,)
    script.push(reply(ANSWER, call("launch", target="moon")), reply("Launched."))
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    nb.cells = [
        nbformat.v4.new_code_cell(TOOL_SETUP),
        nbformat.v4.new_code_cell("%%agent\nWrite the code, then launch it"),
    ]
    nbformat.write(nb, notebook7.root / "buttons_nb7.ipynb")
    open_notebook(page, notebook7, "buttons_nb7.ipynb")
    run_cells(page, 0, 1)
    agent = cell(page, 1)
    approve = enabled_button(agent, "Approve")
    approve.wait_for(timeout=SLOW)
    page.wait_for_function("() => document.title.startsWith('(!)')", timeout=10_000)
    time.sleep(1.0)
    assert page.evaluate(DISPLAY_STATUS) == "busy"
    shot(page, "run-view-waiting-nb7")
    approve.click()
    # the collapsed row while the run lives, the transcript's approval line once it ends
    # (a fast run may replace the live view before the row is looked at)
    expect(agent.locator(OUTPUTS)).to_contain_text("Approved by you")
    transcript = agent.locator(TRANSCRIPT)
    transcript.wait_for(timeout=SLOW)
    page.wait_for_function("() => !document.title.startsWith('(!)')", timeout=10_000)
    count = page.locator(".jp-Notebook .jp-Cell").count()
    transcript.locator(".jp-nbtools-code-toolbar button", has_text="Insert as cell").click()
    expect(page.locator(".jp-Notebook .jp-Cell")).to_have_count(count + 1)
    source = "() => window.jupyterapp.shell.currentWidget.content.widgets[2].model.sharedModel.getSource()"
    assert page.evaluate(source) == "x = 6 * 7\nprint(x)"
    shot(page, "run-view-inserted-nb7")
    assert page.console.unexpected() == []
