"""JupyterLab in headless Chromium: our extension renders transcripts (saved, no kernel,
light and dark themes), and quickstart.ipynb runs end to end against the fake model:
approve, deny, stop."""

from __future__ import annotations

import base64
import json
import struct
import zlib
from typing import Any

import nbformat
import pytest
from browser_ui import (
    OUTPUTS,
    TRANSCRIPT,
    TRANSCRIPT_MIME,
    open_notebook,
    shot,
)

pytestmark = pytest.mark.browser


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
    # Conversation, in order; model text stays text (no element injected, nothing run).
    assert root.locator(".jp-nbtools-user").inner_text().endswith(f"and say {HOSTILE}")
    assert root.locator(".jp-nbtools-code").inner_text() == "print('code')\n"
    assert root.locator("img:not(.jp-nbtools-image), script").count() == 0
    assert page.evaluate("() => window.__pwned") is None

    cards = root.locator("details.jp-nbtools-tool")
    assert cards.count() == 3
    edit, plot, denied = cards.nth(0), cards.nth(1), cards.nth(2)
    assert edit.locator("summary").inner_text().split() == ["edit_file", "OK", "12", "ms"]
    assert json.loads(edit.locator(".jp-nbtools-args").inner_text()) == {
        "file_path": "notes.txt",
        "old": "old line",
    }
    assert edit.locator(".jp-nbtools-approval").inner_text() == "Approved by user"
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
    assert denied.get_attribute("data-status") == "denied"
    assert denied.locator(".jp-nbtools-args").inner_text() == "{not json"
    assert denied.locator(".jp-nbtools-approval").inner_text() == "Denied by user: not today"
    assert root.locator(".jp-nbtools-footer").inner_text() == (
        "claude-sonnet-4-5 · 3 turns · 1234 in / 56 out tokens · 700 cache read · "
        "$0.0123 · stop: end_turn"
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
