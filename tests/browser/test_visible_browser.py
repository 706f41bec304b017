"""Trojan Source on the approval card, in JupyterLab: the fake model asks to run ``python``
code whose bidi controls make it read as something else; the card a person sees shows
each control as a ``⟨U+…⟩`` marker and warns above its buttons, and the saved transcript
(the labextension's renderer) shows the same. Ordinary non-ASCII text is not marked."""

from __future__ import annotations

from typing import Any

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
from test_cellview import make_notebook

from nb_tools.testing import call, reply

expect = pytest.importorskip("playwright.sync_api").expect
pytestmark = pytest.mark.browser

RLO, LRI, PDI = "\u202e", "\u2066", "\u2069"
TAGS = "".join(chr(0xE0000 + ord(c)) for c in "os.remove('notes.txt')")
GREETING = "café 中文 😀 שלום مرحبا"
# The "stretched string" of the Trojan Source paper: shown as a harmless comparison with a
# comment, run as a comparison against a string that holds the "comment".
TROJAN = (
    f'access_level = "user{RLO} {LRI}# Check if admin{PDI} {LRI}"\n'
    'if access_level != "user":\n'
    '    print("You are an admin.")\n'
    f"greeting = {GREETING!r}  # {TAGS}\n"
    f'padding = "{"A" * 400}"; import shutil  # END-OF-LONG-LINE\n'
)
# No <pre> in the cell scrolls sideways or runs past the cell's right edge (where the
# widget's overflow:hidden cuts it off): a long line wraps, its end stays in view.
SCROLLS_SIDEWAYS = """el => { const right = el.getBoundingClientRect().right;
  return Array.from(el.querySelectorAll('pre')).filter(
    p => p.scrollWidth > p.clientWidth + 1 || p.getBoundingClientRect().right > right + 1).length; }"""
WARNING = "⚠ This call contains 26 invisible or direction-changing characters"


def test_trojan_source_is_visible_on_the_approval_card(lab: Any, page: Any, script: Any) -> None:
    script.push(reply("Checking access.", call("python", code=TROJAN)), reply("Not run."))
    name = make_notebook(lab, "trojan_source.ipynb", "Check my access level")
    open_notebook(page, lab, name)
    page.set_viewport_size({"width": 1100, "height": 1500})
    run_cells(page, 0, 1)
    agent = cell(page, 1)
    deny = enabled_button(agent, "Deny")
    deny.wait_for(timeout=SLOW)

    outputs = agent.locator(OUTPUTS)
    warning = outputs.locator(".nbtools-hidden-warning")
    expect(warning).to_have_count(1)
    expect(warning).to_contain_text(WARNING)
    expect(warning).to_contain_text("what you see may not be what runs")
    seen = outputs.inner_text()
    assert "⟨U+202E⟩" in seen and seen.count("⟨U+2066⟩") >= 2 and "⟨U+2069⟩" in seen
    assert "⟨tags \"os.remove('notes.txt')\"⟩" in seen
    assert RLO not in seen and LRI not in seen and PDI not in seen
    assert GREETING in seen  # accents, CJK, emoji, Hebrew and Arabic letters as they are
    marker = outputs.locator(".nbtools-hidden", has_text="⟨U+202E⟩").first
    expect(marker).to_have_attribute("title", "U+202E RIGHT-TO-LEFT OVERRIDE")
    # the warning is above the buttons
    warning_box = warning.bounding_box()
    deny_box = deny.bounding_box()
    assert warning_box and deny_box and warning_box["y"] < deny_box["y"]
    assert outputs.evaluate(SCROLLS_SIDEWAYS) == 0
    agent.scroll_into_view_if_needed()
    shot(page, "lab-trojan-source-approval-card", agent)

    deny.click()
    transcript = agent.locator(TRANSCRIPT)
    transcript.wait_for(timeout=SLOW)
    card = transcript.locator("details.jp-nbtools-tool")
    expect(card).to_have_attribute("data-status", "denied")
    expect(card.locator(".jp-nbtools-hidden-warning")).to_contain_text(
        "⚠ The arguments contain 26 invisible or direction-changing characters"
    )
    after = card.inner_text()
    assert "⟨U+202E⟩" in after and RLO not in after and GREETING in after
    expect(card.locator(".jp-nbtools-hidden", has_text="⟨U+202E⟩").first).to_have_attribute(
        "title", "U+202E RIGHT-TO-LEFT OVERRIDE"
    )
    assert agent.locator(OUTPUTS).evaluate(SCROLLS_SIDEWAYS) == 0
    shot(page, "lab-trojan-source-transcript", agent)
    assert page.console.unexpected() == []
