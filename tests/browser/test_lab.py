"""JupyterLab in headless Chromium: our extension renders transcripts (saved, no kernel,
light and dark themes), and quickstart.ipynb runs end to end against the fake model:
approve, deny, stop."""

from __future__ import annotations

import base64
import json
import os
import struct
import zlib
from pathlib import Path
from typing import Any

import nbformat
import pytest
from browser_ui import (
    OUTPUTS,
    SLOW,
    TRANSCRIPT,
    TRANSCRIPT_MIME,
    cell,
    copy_notebook,
    enabled_button,
    find_cell,
    open_notebook,
    run_all,
    run_cells,
    save,
    shot,
    transcript_of,
)

from nb_tools.testing import call, reply

expect = pytest.importorskip("playwright.sync_api").expect
pytestmark = pytest.mark.browser
REPO = Path(__file__).resolve().parents[2]


def _png(width: int, height: int) -> str:
    """A solid red PNG, base64."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    rows = b"".join(b"\x00" + b"\xff\x00\x00" * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows))
    return base64.b64encode(png + chunk(b"IEND", b"")).decode()


PNG = _png(2, 2)
DIFF = "--- a/notes.txt\n+++ b/notes.txt\n@@ -1,2 +1,2 @@\n keep\n-old line\n+new line\n"
HOSTILE = '<img src=x onerror="window.__pwned=1"><script>window.__pwned=1</script>'


def sample_transcript() -> dict[str, Any]:
    """A version 1 transcript (docs/transcript.md) that uses every field."""
    return {
        "version": 1,
        "model": "claude-sonnet-4-5",
        "stop_reason": "end_turn",
        "error": None,
        "turns": 3,
        "items": [
            {"kind": "user", "text": f"Fix notes.txt\nand say {HOSTILE}"},
            {"kind": "assistant", "text": "I'll edit it.\n```\nprint('code')\n```\nDone?"},
            {
                "kind": "tool",
                "id": "toolu_01",
                "name": "edit_file",
                "headline": {"arg": "file_path", "kind": "path", "language": None},
                "arguments": json.dumps({"file_path": "notes.txt", "old": "old line"}),
                "status": "ok",
                "result": "Edited notes.txt (1 replacement)",
                "parts": [],
                "duration": 0.012,
                "diffs": [{"path": "notes.txt", "kind": "update", "diff": DIFF}],
                "progress": None,
                "approval": {"approved": True, "by": "user", "message": None},
            },
            {
                "kind": "tool",
                "id": "toolu_02",
                "name": "plot",
                "arguments": "{}",
                "status": "ok",
                "result": "a plot",
                "parts": [{"kind": "image", "media_type": "image/png", "data": PNG}],
                "duration": 1.5,
                "diffs": [],
                "progress": "rendered 3/3",
                "approval": None,
            },
            {
                "kind": "tool",
                "id": "toolu_03",
                "name": "delete_all",
                "arguments": "{not json",
                "status": "denied",
                "result": "Denied by the user: not today",
                "parts": [],
                "duration": None,
                "diffs": [],
                "progress": None,
                "approval": {"approved": False, "by": "user", "message": "not today"},
            },
            {"kind": "assistant", "text": HOSTILE},
        ],
        "usage": {
            "input_tokens": 1234,
            "output_tokens": 56,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 700,
            "cost_usd": 0.0123,
        },
    }


def write_saved_notebook(path: Any, transcript: dict[str, Any]) -> None:
    """A notebook as a run leaves it, whose kernel does not exist here."""
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {
        "name": "nb-tools-absent-kernel",
        "display_name": "Absent",
        "language": "python",
    }
    bundle = {TRANSCRIPT_MIME: transcript, "text/plain": "nb_tools transcript (fallback)"}
    out = nbformat.v4.new_output("display_data", data=bundle)
    nb.cells.append(nbformat.v4.new_code_cell("%%agent\nFix notes.txt", outputs=[out]))
    nbformat.write(nb, path)


def test_saved_transcript_renders_with_our_extension_without_kernel(lab: Any, page: Any) -> None:
    write_saved_notebook(lab.root / "saved_transcript.ipynb", sample_transcript())
    open_notebook(page, lab, "saved_transcript.ipynb", kernel=False)

    root = page.locator(TRANSCRIPT)
    root.wait_for()
    # Conversation, in order; the prompt is the cell's source (not repeated); the model's
    # Markdown is rendered, sanitized: no script, no image it chose, nothing run.
    assert root.locator(".jp-nbtools-user").count() == 0
    assert root.locator(".jp-nbtools-assistant pre").first.inner_text().strip() == "print('code')"
    assert root.locator("img:not(.jp-nbtools-image), script").count() == 0
    assert page.evaluate("() => window.__pwned") is None

    cards = root.locator("details.jp-nbtools-tool")
    assert cards.count() == 3
    edit, plot, denied = cards.nth(0), cards.nth(1), cards.nth(2)
    assert edit.locator("summary").inner_text().split() == ["edit_file", "OK", "12", "ms"]
    # Arguments as the HTML fallback shows them: a path on its line, the rest as JSON.
    assert edit.locator(".jp-nbtools-arg-path").inner_text() == "file_path notes.txt"
    assert json.loads(edit.locator(".jp-nbtools-args").inner_text()) == {"old": "old line"}
    assert edit.locator(".jp-nbtools-approval").inner_text() == "Approved by you"
    assert edit.locator(".jp-nbtools-diff-add").inner_text() == "+new line\n"
    assert edit.locator(".jp-nbtools-diff-del").inner_text() == "-old line\n"
    assert edit.locator(".jp-nbtools-diff-hunk").inner_text() == "@@ -1,2 +1,2 @@\n"
    # A card with a diff starts open; a plain successful one starts closed.
    assert edit.evaluate("d => d.open") is True
    assert plot.evaluate("d => d.open") is False
    plot.locator("summary").click()
    image = plot.locator("img.jp-nbtools-image")
    assert image.get_attribute("src") == f"data:image/png;base64,{PNG}"
    assert image.evaluate("i => i.complete && i.naturalWidth") == 2
    assert plot.locator(".jp-nbtools-progress").inner_text() == "rendered 3/3"
    assert plot.locator(".jp-nbtools-result").inner_text() == "a plot"
    assert denied.get_attribute("data-status") == "denied"
    assert denied.locator(".jp-nbtools-args").inner_text() == "{not json"
    assert denied.locator(".jp-nbtools-approval").inner_text() == "Denied by you: not today"
    assert root.locator(".jp-nbtools-footer").inner_text() == (
        "claude-sonnet-4-5 · 3 turns · 1,234 in / 56 out tokens · 700 cached · $0.0123 · end_turn"
    )
    # The fallback is not what is showing.
    assert "fallback" not in page.locator(OUTPUTS).inner_text()
    shot(page, "lab-saved-transcript-light", root)

    light = diff_colours(edit)
    page.evaluate(
        "async () => { await window.jupyterapp.commands.execute("
        "'apputils:change-theme', {theme: 'JupyterLab Dark'}); }"
    )
    page.wait_for_function("() => document.body.dataset.jpThemeLight === 'false'")
    page.wait_for_timeout(500)
    dark = diff_colours(edit)
    shot(page, "lab-saved-transcript-dark", root)
    for colours in (light, dark):
        # Added and removed lines are told apart by colour, and differ from context lines.
        assert len({colours["add"], colours["del"], colours["ctx"]}) == 3, colours
    assert light["text"] != dark["text"]
    assert page.console.unexpected() == []


def diff_colours(card: Any) -> dict[str, str]:
    return card.evaluate(
        """d => {
          const c = s => { const e = d.querySelector(s), st = getComputedStyle(e);
                           return st.color + '|' + st.backgroundColor; };
          return {add: c('.jp-nbtools-diff-add'), del: c('.jp-nbtools-diff-del'),
                  ctx: c('.jp-nbtools-diff-ctx'),
                  text: getComputedStyle(d.closest('.jp-nbtools-Transcript')).color};
        }"""
    )


def test_unknown_transcript_version_says_so(lab: Any, page: Any) -> None:
    write_saved_notebook(lab.root / "future_transcript.ipynb", {"version": 99, "items": []})
    open_notebook(page, lab, "future_transcript.ipynb", kernel=False)
    error = page.locator(f"{TRANSCRIPT} .jp-nbtools-error")
    assert "version 99 is not supported" in error.inner_text()
    assert page.console.unexpected() == []


# ---- quickstart.ipynb against the fake model ------------------------------------------------
#
# With ANTHROPIC_API_KEY set (the harness sets it, and ANTHROPIC_BASE_URL to the fake server),
# the notebook's %%agent cells talk to the fake model; the tests script its replies.
NOTE = "# Dinner\n\nChez Panisse, 19:30, 4 people.\n"
SETUP = ("%load_ext nb_tools", "use_model(ScriptedModel", "def crunch")


class Quickstart:
    """The cells of quickstart.ipynb, found by their source."""

    def __init__(self, page: Any) -> None:
        self.page = page
        self.setup = [find_cell(page, s) for s in SETUP]
        self.weather = find_cell(page, "%%agent\nWhat's the weather")
        self.book = find_cell(page, "%%agent\nBook a table")
        self.note = find_cell(page, "%%agent\nWrite a short note")
        self.crunch = find_cell(page, "%%agent\nRun crunch")
        self.last = find_cell(page, "save_transcript(")

    def __getitem__(self, index: int) -> Any:
        return cell(self.page, index)

    def wait_done(self) -> None:
        """The last cell printed the saved conversation's path."""
        expect(self[self.last].locator(OUTPUTS)).to_contain_text("conversation.ipynb", timeout=SLOW)


def open_quickstart(page: Any, lab: Any, name: str) -> Quickstart:
    open_notebook(page, lab, copy_notebook(lab, "quickstart.ipynb", name))
    return Quickstart(page)


def book_call() -> Any:
    return call("book_table", restaurant="Chez Panisse", people=4, time="19:30")


def test_quickstart_approve_then_reopen_without_kernel(lab: Any, page: Any, script: Any) -> None:
    script.push(
        reply("Let me check.", call("get_weather", city="Paris")),
        reply("It is 18 °C and sunny in Paris."),
        reply("I'll book it.", book_call()),
        reply("Booked: Chez Panisse, 4 people, 19:30."),
        reply("Here is the note.", call("write_note", path="dinner.md", text=NOTE)),
        reply("Saved dinner.md."),
        reply("Running it.", call("crunch", n=5)),
        reply("Done: the sum of the squares of 1..5 is 55."),
        reply("We checked the weather, booked a table, wrote a note and ran a computation."),
    )
    qs = open_quickstart(page, lab, "qs_approve.ipynb")
    agent_cells = (qs.weather, qs.book, qs.note, qs.crunch)
    run_all(page)

    approve = enabled_button(qs[qs.book], "Approve")
    approve.wait_for(timeout=SLOW)
    expect(qs[qs.book].locator(OUTPUTS)).to_contain_text("book_table needs your approval")
    approve.click()

    # The write waits for approval with its diff on show.
    approve = enabled_button(qs[qs.note], "Approve")
    approve.wait_for(timeout=SLOW)
    expect(qs[qs.note].locator(f"{OUTPUTS} pre.nbtools-diff")).to_contain_text("+# Dinner")
    qs[qs.note].scroll_into_view_if_needed()
    live = shot(page, "lab-approval-card-with-diff", qs[qs.note])
    approve.click()
    qs.wait_done()

    # Each %%agent cell ends with one transcript rendered by our extension; no live
    # buttons are left.
    for index in agent_cells:
        expect(qs[index].locator(TRANSCRIPT)).to_have_count(1)
    expect(page.locator(f"{OUTPUTS} button", has_text="Approve")).to_have_count(0)
    book = qs[qs.book].locator(f"{TRANSCRIPT} details.jp-nbtools-tool")
    expect(book).to_have_attribute("data-status", "ok")
    expect(book.locator(".jp-nbtools-approval")).to_have_text("Approved by you")
    expect(book.locator(".jp-nbtools-result")).to_have_text("Booked Chez Panisse for 4 at 19:30")
    written = qs[qs.note].locator(TRANSCRIPT)
    expect(written.locator(".jp-nbtools-diff-add").first).to_have_text("+# Dinner\n")
    expect(written.locator(".jp-nbtools-assistant").last).to_have_text("Saved dinner.md.")
    crunch = qs[qs.crunch].locator(f"{TRANSCRIPT} details.jp-nbtools-tool")
    crunch.locator("summary").click()
    expect(crunch.locator(".jp-nbtools-progress")).to_contain_text("step 5/5: total=55")
    expect(crunch.locator(".jp-nbtools-result")).to_have_text("sum of squares 1..5 = 55")
    written.scroll_into_view_if_needed()
    done = shot(page, "lab-quickstart-transcript", qs[qs.note])
    readme_screenshot(live, done)
    assert script.remaining == 0
    errors_so_far = page.console.unexpected()

    # Saved and reopened with no kernel: the transcripts are in the file and render again.
    save(page)
    name = "qs_approve.ipynb"
    assert len(transcript_of(lab.root / name)) >= len(agent_cells)
    lab.shutdown_kernels()
    reopened = copy_notebook(lab, name, "qs_reopened.ipynb", kernel="nb-tools-absent-kernel")
    page.goto("about:blank")
    open_notebook(page, lab, reopened, kernel=False)
    for index in agent_cells:
        expect(cell(page, index).locator(TRANSCRIPT)).to_have_count(1)
    expect(cell(page, qs.note).locator(".jp-nbtools-diff-add").first).to_have_text("+# Dinner\n")
    shot(page, "lab-reopened-no-kernel", cell(page, qs.note))
    assert errors_so_far == []
    assert page.console.unexpected() == []


def readme_screenshot(*shots: Path) -> None:
    """docs/screenshot.png for the README (the shots stacked, top to bottom): written when
    missing, or on request (NB_TOOLS_UPDATE_SCREENSHOT=1), so ordinary runs leave the
    repository clean."""
    target = REPO / "docs" / "screenshot.png"
    if target.exists() and os.environ.get("NB_TOOLS_UPDATE_SCREENSHOT") != "1":
        return
    from PIL import Image

    images = [Image.open(p).convert("RGB") for p in shots]
    gap = 12
    canvas = Image.new(
        "RGB",
        (max(i.width for i in images), sum(i.height for i in images) + gap * (len(images) - 1)),
        "white",
    )
    top = 0
    for image in images:
        canvas.paste(image, (0, top))
        top += image.height + gap
    canvas.save(target, optimize=True)


def test_quickstart_deny_tells_the_model(lab: Any, page: Any, script: Any, fake_model: Any) -> None:
    script.push(reply("I'll book it.", book_call()), reply("Understood: no booking."))
    qs = open_quickstart(page, lab, "qs_deny.ipynb")
    seen = len(fake_model.requests)
    run_cells(page, *qs.setup, qs.book)

    deny = enabled_button(qs[qs.book], "Deny")
    deny.wait_for(timeout=SLOW)
    qs[qs.book].locator(f"{OUTPUTS} input[type='text']").fill("not tonight")
    deny.click()

    card = qs[qs.book].locator(f"{TRANSCRIPT} details.jp-nbtools-tool")
    expect(card).to_have_attribute("data-status", "denied", timeout=SLOW)
    expect(card.locator(".jp-nbtools-badge")).to_have_text("denied")
    expect(card.locator(".jp-nbtools-approval")).to_have_text("Denied by you: not tonight")
    expect(qs[qs.book].locator(f"{TRANSCRIPT} .jp-nbtools-assistant").last).to_have_text(
        "Understood: no booking."
    )
    shot(page, "lab-denied", qs[qs.book])
    # The model was told, as an error result carrying the message.
    results = [
        block
        for req in fake_model.requests[seen:]
        for msg in req.body["messages"]
        if isinstance(msg["content"], list)
        for block in msg["content"]
        if block.get("type") == "tool_result"
    ]
    assert len(results) == 1
    assert results[0]["is_error"] is True
    assert "not tonight" in json.dumps(results[0]["content"])
    assert page.console.unexpected() == []


def test_quickstart_stop_during_slow_tool(lab: Any, page: Any, script: Any) -> None:
    script.push(reply("Running it.", call("crunch", n=60)))
    qs = open_quickstart(page, lab, "qs_stop.ipynb")
    run_cells(page, *qs.setup, qs.crunch)

    expect(qs[qs.crunch].locator(OUTPUTS)).to_contain_text("step 3/60", timeout=SLOW)
    enabled_button(qs[qs.crunch], "Stop", exact=True).click()
    transcript = qs[qs.crunch].locator(TRANSCRIPT)
    transcript.wait_for(timeout=SLOW)
    card = transcript.locator("details.jp-nbtools-tool")
    assert card.get_attribute("data-status") in ("stopped", "cut_off")
    expect(transcript.locator(".jp-nbtools-footer")).to_contain_text("· stopped")
    shot(page, "lab-stopped", qs[qs.crunch])

    # The conversation goes on in the next cell.
    script.push(reply("You stopped the computation."))
    run_cells(page, qs.last)
    qs.wait_done()
    expect(qs[qs.last].locator(OUTPUTS)).to_contain_text("You stopped the computation.")
    assert page.console.unexpected() == []
