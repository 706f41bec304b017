"""The cell view in JupyterLab (issue 12): a Deny message typed key by key reaches the model
whole, Markdown renders live and after reopening, Stop stops a running sync tool, a kernel
restart mid-run leaves no dead view, and the diff colours pass WCAG AA in both themes."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import nbformat
import pytest
from browser_ui import (
    KNOWN_NOTEBOOK7_ERROR,
    OUTPUTS,
    SLOW,
    TRANSCRIPT,
    cell,
    command,
    copy_notebook,
    enabled_button,
    open_notebook,
    run_cells,
    save,
    shot,
    widget_views_in,
)

from nb_tools.testing import call, reply

expect = pytest.importorskip("playwright.sync_api").expect
pytestmark = pytest.mark.browser

SETUP = '''%load_ext nb_tools
import time
from pathlib import Path
from nb_tools import tool

@tool(requires_approval=True)
def book_table(restaurant: str, people: int) -> str:
    """Book a table.

    Args:
        restaurant: Name of the restaurant.
        people: How many guests.
    """
    return f"Booked {restaurant} for {people}"

@tool(requires_approval=False)
def writer(path: str) -> str:
    """Write a line to a file once a second, for a minute."""
    for i in range(60):
        with open(path, "a") as f:
            f.write(f"{i}\\n")
        time.sleep(1)
    return "done"

@tool(requires_approval=False)
def countdown(seconds: int) -> str:
    """Wait some seconds, then say so."""
    time.sleep(seconds)
    return f"waited {seconds}s"
'''
MARKDOWN = (
    "Here is **bold** text and `inline code`.\n\n"
    "- first item\n- second item\n\n"
    "| city | temp |\n|---|---|\n| Paris | 18 |\n\n"
    "```python\ndef f(x):\n    return x * 2\n```\n\n"
    "The area is $\\pi r^2$.\n"
)


def make_notebook(server: Any, name: str, *agent_cells: str) -> str:
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    nb.cells = [nbformat.v4.new_code_cell(SETUP)] + [
        nbformat.v4.new_code_cell(f"%%agent\n{c}") for c in agent_cells
    ]
    nbformat.write(nb, server.root / name)
    return name


def tool_results(fake_model: Any, since: int) -> list[dict[str, Any]]:
    return [
        block
        for req in fake_model.requests[since:]
        for msg in req.body["messages"]
        if isinstance(msg["content"], list)
        for block in msg["content"]
        if block.get("type") == "tool_result"
    ]


@pytest.mark.parametrize("submit", ["click", "enter"])
def test_deny_message_typed_key_by_key_reaches_the_model_whole(
    lab: Any, page: Any, script: Any, fake_model: Any, submit: str
) -> None:
    message = "Too expensive, pick a bistro"
    script.push(
        reply("I'll book it.", call("book_table", restaurant="Chez Panisse", people=4)),
        reply("Understood: a bistro then."),
    )
    name = make_notebook(lab, f"deny_typed_{submit}.ipynb", "Book a table")
    open_notebook(page, lab, name)
    seen = len(fake_model.requests)
    run_cells(page, 0, 1)
    agent = cell(page, 1)
    deny = enabled_button(agent, "Deny")
    deny.wait_for(timeout=SLOW)
    # The approval card shows the arguments without a click, and names its rule.
    expect(agent.locator(OUTPUTS)).to_contain_text("Chez Panisse")
    expect(enabled_button(agent, "Always allow book_table")).to_have_count(1)
    box = agent.locator(f"{OUTPUTS} input[type='text']")
    box.click()
    page.keyboard.type(message, delay=25)
    if submit == "enter":
        page.keyboard.press("Enter")
    else:
        deny.click()
    transcript = agent.locator(TRANSCRIPT)
    transcript.wait_for(timeout=SLOW)
    expect(transcript.locator(".jp-nbtools-approval")).to_have_text(f"Denied by you: {message}")
    results = tool_results(fake_model, seen)
    assert len(results) == 1 and results[0]["is_error"] is True
    assert json.dumps(results[0]["content"]).count(message) == 1, results[0]
    assert page.console.unexpected() == []


def test_markdown_renders_live_and_after_reopening(
    lab: Any, page: Any, script: Any, fake_model: Any
) -> None:
    script.push(reply(MARKDOWN, chunk_delay=0.15))
    name = make_notebook(lab, "markdown.ipynb", "Show me Markdown")
    open_notebook(page, lab, name)
    run_cells(page, 0, 1)
    agent = cell(page, 1)
    # The %%agent cell is edited as Markdown (the labextension sets its editor mode).
    mime = page.evaluate(
        "() => window.jupyterapp.shell.currentWidget.content.widgets[1].model.mimeType"
    )
    assert mime == "text/x-ipythongfm"
    live = agent.locator(f"{OUTPUTS} .nbtools-assistant")
    # Live (the widgets, before the run ends): bold, list, table, highlighted code.
    expect(live.locator("table td").first).to_have_text("Paris", timeout=SLOW)
    assert agent.locator(TRANSCRIPT).count() == 0, "the run ended before the live check"
    assert live.locator("strong").first.inner_text() == "bold"
    assert live.locator("li").count() == 2
    shot(page, "cellview-markdown-live", agent)
    transcript = agent.locator(TRANSCRIPT)
    transcript.wait_for(timeout=SLOW)
    check_markdown(transcript)
    shot(page, "cellview-markdown-final", agent)

    save(page)
    lab.shutdown_kernels()
    reopened = copy_notebook(lab, name, "markdown_reopened.ipynb", kernel="nb-tools-absent")
    page.goto("about:blank")
    open_notebook(page, lab, reopened, kernel=False)
    transcript = cell(page, 1).locator(TRANSCRIPT)
    transcript.wait_for(timeout=SLOW)
    check_markdown(transcript)
    shot(page, "cellview-markdown-reopened", cell(page, 1))
    assert page.console.unexpected() == []


def check_markdown(root: Any) -> None:
    md = root.locator(".jp-nbtools-assistant").last
    expect(md.locator("strong")).to_have_text("bold")
    expect(md.locator("code").first).to_have_text("inline code")
    expect(md.locator("li")).to_have_count(2)
    expect(md.locator("table td").first).to_have_text("Paris")
    expect(md.locator("pre").first).to_contain_text("return x * 2")
    # Math typeset by the page's MathJax, not left as dollars.
    expect(md.locator("mjx-container").first).to_be_visible(timeout=SLOW)
    assert "$" not in md.inner_text()


def test_stop_stops_a_running_sync_tool(lab: Any, page: Any, script: Any, tmp_path: Path) -> None:
    log = tmp_path / "writer.log"
    script.push(reply("Writing.", call("writer", path=str(log))))
    name = make_notebook(lab, "stop_sync.ipynb", "Write the log")
    open_notebook(page, lab, name)
    run_cells(page, 0, 1)
    agent = cell(page, 1)
    deadline = time.monotonic() + SLOW / 1000
    while not log.exists() or log.read_text().count("\n") < 2:
        assert time.monotonic() < deadline, "the tool never started writing"
        time.sleep(0.1)
    expect(agent.locator(OUTPUTS)).not_to_contain_text("cut off")
    enabled_button(agent, "Stop", exact=True).click()
    time.sleep(2.0)
    size = log.stat().st_size
    time.sleep(2.5)  # the tool writes once a second: a live thread would have written
    assert log.stat().st_size == size, "the sync tool kept writing after Stop"
    transcript = agent.locator(TRANSCRIPT)
    transcript.wait_for(timeout=SLOW)
    expect(transcript.locator("details.jp-nbtools-tool")).to_have_attribute(
        "data-status", "cut_off"
    )
    shot(page, "cellview-stopped-sync-tool", agent)
    assert page.console.unexpected() == []


def test_stop_after_this_turn_finishes_the_call_then_stops(
    lab: Any, page: Any, script: Any, fake_model: Any
) -> None:
    script.push(
        reply("Counting down.", call("countdown", seconds=3)), reply("The next turn, unasked.")
    )
    since = len(fake_model.requests)
    name = make_notebook(lab, "stop_after_turn.ipynb", "Count down")
    open_notebook(page, lab, name)
    run_cells(page, 0, 1)
    agent = cell(page, 1)
    later = enabled_button(agent, "Stop after this turn")
    later.wait_for(timeout=SLOW)
    expect(enabled_button(agent, "Stop", exact=True)).to_be_visible()
    expect(agent.locator(OUTPUTS)).to_contain_text("countdown", timeout=SLOW)
    shot(page, "cellview-stop-buttons", agent)
    later.click()
    expect(agent.locator(OUTPUTS)).to_contain_text("Stopping after this turn")
    transcript = agent.locator(TRANSCRIPT)
    transcript.wait_for(timeout=SLOW)
    expect(transcript.locator("details.jp-nbtools-tool")).to_have_attribute("data-status", "ok")
    shot(page, "cellview-stopped-after-turn", agent)
    assert len(fake_model.requests) == since + 1  # the turn's request, no other
    assert script.remaining == 1
    assert page.console.unexpected() == []


def test_kernel_restart_mid_run_leaves_no_dead_view(lab: Any, page: Any, script: Any) -> None:
    script.push(reply("I'll book it.", call("book_table", restaurant="Chez Panisse", people=2)))
    name = make_notebook(lab, "restart.ipynb", "Book a table")
    open_notebook(page, lab, name)
    run_cells(page, 0, 1)
    agent = cell(page, 1)
    enabled_button(agent, "Approve").wait_for(timeout=SLOW)
    # Widget messages the old kernel sent just before it went can reach JupyterLab after
    # its comms were cleared; it logs "Comm not found" for each (a race in JupyterLab's
    # restart, timing-dependent). The view's own state is what this test checks.
    page.console.allowed = ("Comm not found for comm id",)
    page.evaluate(
        "async () => { await window.jupyterapp.shell.currentWidget.sessionContext.session"
        ".kernel.restart(); }"
    )
    expect(agent.locator(OUTPUTS)).to_contain_text("this run did not finish here", timeout=SLOW)
    expect(agent.locator(f"{OUTPUTS} button")).to_have_count(0)
    shot(page, "cellview-after-restart", agent)
    save(page)
    assert widget_views_in(lab.root / name) == []
    reopened = copy_notebook(lab, name, "restart_reopened.ipynb", kernel="nb-tools-absent")
    page.goto("about:blank")
    open_notebook(page, lab, reopened, kernel=False)
    outputs = cell(page, 1).locator(OUTPUTS)
    expect(outputs).to_contain_text("this run did not finish here")
    text = outputs.inner_text()
    assert "model not found" not in text and "VBox(" not in text
    assert page.console.unexpected() == []


CONTRAST = """root => {
  const canvas = document.createElement('canvas');
  canvas.width = canvas.height = 1;
  const ctx = canvas.getContext('2d', {willReadFrequently: true});
  const paint = colours => {
    ctx.clearRect(0, 0, 1, 1);
    for (const c of colours) { ctx.fillStyle = c; ctx.fillRect(0, 0, 1, 1); }
    return Array.from(ctx.getImageData(0, 0, 1, 1).data.slice(0, 3));
  };
  const backgrounds = e => {
    const layers = [];
    for (let n = e; n; n = n.parentElement) {
      const bg = getComputedStyle(n).backgroundColor;
      if (bg && bg !== 'rgba(0, 0, 0, 0)' && bg !== 'transparent') {
        layers.unshift(bg);
        if (!/rgba|\\/|color\\(/.test(bg)) break;  // opaque: nothing below shows
      }
    }
    return ['#fff'].concat(layers);
  };
  const lum = rgb => {
    const [r, g, b] = rgb.map(v => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); });
    return 0.2126 * r + 0.7152 * g + 0.0722 * b;
  };
  const out = {};
  for (const [name, sel] of Object.entries(%s)) {
    const e = root.querySelector(sel);
    if (!e) { out[name] = null; continue; }
    const layers = backgrounds(e);
    const bg = paint(layers);
    const fg = paint(layers.concat([getComputedStyle(e).color]));
    const [a, b] = [lum(fg), lum(bg)].sort((x, y) => y - x);
    out[name] = Math.round(((a + 0.05) / (b + 0.05)) * 100) / 100;
  }
  return out;
}"""


def contrast(scope: Any, selectors: dict[str, str]) -> dict[str, float]:
    return scope.evaluate(CONTRAST % json.dumps(selectors))


def test_diff_and_text_contrast_meets_wcag_aa_in_both_themes(
    lab: Any, page: Any, script: Any
) -> None:
    diff_call = call("write_file", file_path="notes.txt", content="keep\nnew line\n")
    script.push(
        reply("Let me read it.", call("read_file", file_path="notes.txt")),
        reply("I'll edit it.", diff_call),
        reply("Done."),
    )
    name = make_notebook(lab, "contrast.ipynb", "--builtins\nEdit notes.txt")
    (lab.root / "notes.txt").write_text("keep\nold line\n")
    nb = nbformat.read(lab.root / name, as_version=4)
    nb.cells[1].source = "%%agent --builtins\nEdit notes.txt"
    nbformat.write(nb, lab.root / name)
    open_notebook(page, lab, name)
    run_cells(page, 0, 1)
    agent = cell(page, 1)
    enabled_button(agent, "Approve").wait_for(timeout=SLOW)
    live = {
        "add": "pre.nbtools-diff span[style*='success']",
        "del": "pre.nbtools-diff span[style*='error']",
        "text": ".nbtools-assistant",
        "muted": ".nbtools-footer",
    }
    results = {}
    for theme in ("JupyterLab Light", "JupyterLab Dark"):
        command(page, "apputils:change-theme", {"theme": theme})
        page.wait_for_timeout(600)
        results[theme] = contrast(agent.locator(OUTPUTS).first, live)
        shot(page, f"cellview-live-diff-{theme.split()[-1].lower()}", agent)
    command(page, "apputils:change-theme", {"theme": "JupyterLab Light"})
    enabled_button(agent, "Approve").click()
    transcript = agent.locator(TRANSCRIPT)
    transcript.wait_for(timeout=SLOW)
    final = {
        "add": ".jp-nbtools-diff-add",
        "del": ".jp-nbtools-diff-del",
        "ctx": ".jp-nbtools-diff-ctx",
        "text": ".jp-nbtools-assistant",
        "footer": ".jp-nbtools-footer",
    }
    for theme in ("JupyterLab Light", "JupyterLab Dark"):
        command(page, "apputils:change-theme", {"theme": theme})
        page.wait_for_timeout(600)
        results[f"final {theme}"] = contrast(transcript, final)
        shot(page, f"cellview-final-diff-{theme.split()[-1].lower()}", agent)
    command(page, "apputils:change-theme", {"theme": "JupyterLab Light"})
    low = {
        f"{where} {what}": ratio
        for where, ratios in results.items()
        for what, ratio in ratios.items()
        if ratio is None or ratio < 4.5
    }
    assert low == {}, results
    print(results)
    assert page.console.unexpected() == []


def test_notebook7_deny_typed_and_markdown(
    notebook7: Any, page: Any, script: Any, fake_model: Any
) -> None:
    page.console.allowed = (KNOWN_NOTEBOOK7_ERROR,)
    message = "Too expensive, pick a bistro"
    script.push(
        reply("I'll book it.", call("book_table", restaurant="Chez Panisse", people=4)),
        reply(MARKDOWN),
    )
    name = make_notebook(notebook7, "nb7_cellview.ipynb", "Book a table")
    open_notebook(page, notebook7, name)
    seen = len(fake_model.requests)
    run_cells(page, 0, 1)
    agent = cell(page, 1)
    deny = enabled_button(agent, "Deny")
    deny.wait_for(timeout=SLOW)
    agent.locator(f"{OUTPUTS} input[type='text']").click()
    page.keyboard.type(message, delay=25)
    deny.click()
    transcript = agent.locator(TRANSCRIPT)
    transcript.wait_for(timeout=SLOW)
    check_markdown(transcript)
    [result] = tool_results(fake_model, seen)
    assert json.dumps(result["content"]).count(message) == 1, result
    shot(page, "cellview-notebook7", agent)
    assert page.console.unexpected() == []
