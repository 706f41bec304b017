"""What a person sees of a call is what runs: bidi controls, zero-width and tag characters,
controls (Trojan Source, CVE-2021-42574; ASCII smuggling) are shown as ``⟨U+…⟩`` markers on
the approval card and in the transcript, and the card warns about them above its buttons."""

from __future__ import annotations

import asyncio
import html
import json
import re
import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from nb_tools.transcript._diff import diff_html
from nb_tools.transcript._html import args_html, tool_item_html, transcript_html
from nb_tools.transcript._markdown import code_block_html, markdown_html
from nb_tools.transcript._visible import (
    count_hidden,
    count_in_arguments,
    hidden_kind,
    visible_html,
    visible_text,
)

RLO, LRI, PDI, ZWSP, BOM = "\u202e", "\u2066", "\u2069", "\u200b", "\ufeff"
# The Trojan Source paper's "stretched string": the card reads `if access_level != "user":`
# ... `# Check if admin` while Python compares against a string that holds the comment.
TROJAN = (
    f'access_level = "user{RLO} {LRI}// Check if admin{PDI} {LRI}"\n'
    'if access_level != "user":\n'
    '    print("You are an admin.")\n'
)
SMUGGLED = "print('hi')  # " + "".join(chr(0xE0000 + ord(c)) for c in "rm -rf ~")
ORDINARY = "café naïve Ærø 中文字符 日本語 한국어 😀 👍🏽 ❤️ 1️⃣ שלום مرحبا Привет\tx\r\ny"
HIDDEN_CHARS = [
    *"\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c",
    *"\u200b\u200c\u200d\u2060\u2061\u2062\u2063\u2064\ufeff\u180e\u00ad\u2028\u2029",
    *"\x00\x07\x1b\x7f\x85\x9b\r\x0b\x0c",
    "\U000e0041",
    "\U000e0001",
    "\U000e007f",
    "\u3164",
]


def _raw_hidden(text: str) -> list[str]:
    """The hidden characters left in ``text`` (HTML), other than a CRLF's CR."""
    return [f"U+{ord(c):04X}" for i, c in enumerate(text) if hidden_kind(text, i)]


@pytest.mark.parametrize("ch", HIDDEN_CHARS, ids=lambda c: f"U+{ord(c):04X}")
def test_each_hidden_character_becomes_a_marker(ch: str) -> None:
    text = f"a{ch}b"
    shown = visible_html(text)
    assert ch not in shown
    assert 'class="nbtools-hidden"' in shown
    assert sum(count_hidden(text).values()) == 1
    if not 0xE0000 <= ord(ch) <= 0xE007F:
        assert f"⟨U+{ord(ch):04X}⟩" in shown
        assert f"⟨U+{ord(ch):04X}⟩" in visible_text(text)


def test_the_marker_names_the_character_in_its_title() -> None:
    shown = visible_html(f"x{RLO}y")
    assert 'title="U+202E RIGHT-TO-LEFT OVERRIDE"' in shown
    assert "color:var(--jp-warn-color0" in shown
    assert 'title="U+001B ESCAPE' in visible_html("\x1b[2J")


@pytest.mark.parametrize("text", [ORDINARY, "plain ascii <b>&</b>", "a\u00e9\u0301 ﬁ \u3000 x"])
def test_ordinary_text_is_not_marked(text: str) -> None:
    assert count_hidden(text) == {}
    assert visible_html(text) == html.escape(text)
    assert visible_text(text) == text


def test_tag_characters_show_the_ascii_they_hide_as_one_marker() -> None:
    shown = visible_text(SMUGGLED)
    assert shown == "print('hi')  # ⟨tags \"rm -rf ~\"⟩"
    assert count_hidden(SMUGGLED) == {"tag": 8}


def test_runs_of_one_character_and_variation_selectors_are_one_marker() -> None:
    assert visible_text(f"a{ZWSP * 5}b") == "a⟨U+200B×5⟩b"
    smuggled = "😀" + "".join(chr(0xE0100 + b) for b in b"secret")
    assert visible_text(smuggled) == "😀⟨variation selectors ×6⟩"
    assert visible_text("❤\ufe0f") == "❤\ufe0f"  # one selector after a character is normal


@given(st.text(alphabet=st.characters(codec="utf-8") | st.sampled_from(HIDDEN_CHARS)))
def test_nothing_hidden_survives_and_nothing_else_changes(text: str) -> None:
    shown = html.unescape(re.sub(r"<[^>]*>", "", visible_html(text)))
    assert _raw_hidden(shown) == []
    assert _raw_hidden(visible_text(text)) == []
    plain = re.sub(r"⟨[^⟩]*⟩", "", visible_text(text))
    expected = "".join(c for i, c in enumerate(text) if not hidden_kind(text, i))
    if "⟨" not in text and "⟩" not in text:
        assert plain == expected


@pytest.mark.parametrize("language", ["python", "bash", None, "no-such-language"])
def test_highlighting_cannot_hide_them(language: str | None) -> None:
    code = TROJAN + f"x = 1{ZWSP}\n" + SMUGGLED
    shown = code_block_html(code, language)
    assert _raw_hidden(html.unescape(shown)) == []
    text = html.unescape(re.sub(r"<[^>]*>", "", shown))
    assert text == visible_text(code)
    assert text.count("⟨U+2066⟩") == 2 and "⟨U+202E⟩" in text and "⟨tags" in text


def test_a_text_pygments_would_change_is_shown_as_it_is() -> None:
    # pygments drops a leading BOM and reads a bare CR as a newline: not on the card.
    for code in (f"{BOM}import os", "echo safe\rrm -rf ~", "a = 1\r\nb = 2"):
        shown = code_block_html(code, "python")
        assert html.unescape(re.sub(r"<[^>]*>", "", shown)) == visible_text(code)
    assert "⟨U+FEFF⟩" in code_block_html(f"{BOM}import os", "python")
    assert "⟨U+000D⟩" in code_block_html("echo safe\rrm -rf ~", "bash")
    assert "⟨U+000D⟩" not in code_block_html("a = 1\r\nb = 2", "python")


def test_a_tag_run_across_tokens_is_one_marker() -> None:
    tags = "".join(chr(0xE0000 + ord(c)) for c in "abc")
    shown = code_block_html(f"x = 1 {tags} + 2", "python")
    assert shown.count('class="nbtools-hidden"') == 1


def test_arguments_diff_and_assistant_code_blocks_are_marked() -> None:
    raw = json.dumps({"code": TROJAN, "note": f"ok{ZWSP}", "path": f"a{RLO}txt.exe"})
    shown = args_html("python", raw, expanded=True)
    assert RLO not in shown and ZWSP not in shown and LRI not in shown
    assert "⟨U+202E⟩" in shown and "⟨U+200B⟩" in shown
    assert "The arguments contain 6 invisible or direction-changing characters" in shown
    diff = diff_html(f"--- a\n+++ b\n@@ -1 +1 @@\n-x\n+y = 1 # {RLO}evil\n")
    assert RLO not in diff and "⟨U+202E⟩" in diff
    md = markdown_html(f"```python\n{TROJAN}```\n")
    assert RLO not in md and "⟨U+202E⟩" in md


def test_long_lines_wrap_so_nothing_scrolls_out_of_view() -> None:
    from nb_tools.transcript._markdown import TOKEN_CSS

    line = "x = '" + "A" * 3000 + "'; import shutil"
    assert "overflow-wrap:anywhere" in TOKEN_CSS.split(".nbtools-code{", 1)[1].split("}", 1)[0]
    assert "white-space:pre-wrap;overflow-wrap:anywhere" in diff_html(f"+{line}\n")
    shown = args_html("x", json.dumps({"content": line}), expanded=True)
    assert "white-space:pre-wrap;overflow-wrap:anywhere" in shown


def test_arguments_without_hidden_characters_get_no_warning() -> None:
    shown = args_html("python", json.dumps({"code": f"print({ORDINARY!r})"}), expanded=True)
    assert "nbtools-hidden" not in shown and 'data-nbt="hidden"' not in shown


def test_counting_reads_the_json_strings_not_its_escapes() -> None:
    raw = json.dumps({"code": f"a{RLO}b", f"k{ZWSP}": ["\x1b", 1]})  # ensure_ascii: \u202e
    assert RLO not in raw
    assert count_in_arguments(raw) == {"direction": 1, "invisible": 1, "control": 1}
    assert count_in_arguments(f"not json {RLO}") == {"direction": 1}


def test_the_transcript_card_shows_markers_and_the_warning() -> None:
    item = {
        "kind": "tool",
        "id": "t1",
        "name": "python",
        "arguments": json.dumps({"code": TROJAN}),
        "status": "ok",
        "result": "",
    }
    card = tool_item_html(item)
    page = transcript_html({"version": 1, "items": [item], "usage": {}})
    for shown in (card, page):
        assert RLO not in shown and LRI not in shown and PDI not in shown
        assert shown.count("⟨U+2066⟩") == 2
        assert "4 invisible or direction-changing characters" in shown


# -- the live approval card ------------------------------------------------------------

pytest.importorskip("ipywidgets")


async def test_the_approval_card_warns_above_its_buttons_and_runs_the_call_as_sent() -> None:
    from nb_tools.agent import Agent
    from nb_tools.jupyter._view import RunView
    from nb_tools.testing import ScriptedModel, call, reply
    from nb_tools.tool import Registry, tool
    from nb_tools.transcript._recorder import TranscriptRecorder

    ran: list[str] = []

    @tool(requires_approval=True)
    def run_code(code: str) -> str:
        """Run code."""
        ran.append(code)
        return "ran"

    model = ScriptedModel([reply("", call("run_code", code=TROJAN)), reply("Done.")])
    agent = Agent(model, tools=Registry(run_code))
    view = RunView(TranscriptRecorder("go", model=model.model), loop=asyncio.get_running_loop())
    agent.approver = view.ask
    task = asyncio.ensure_future(agent.run("go", on_event=view.on_event))
    for _ in range(500):
        if view.approval_cards():
            break
        await asyncio.sleep(0.01)
    card = view.approval_cards()[0]
    tool_card = view._cards[card.request.call.id].html.value
    shown = card.prompt.value + tool_card
    assert _raw_hidden(shown) == []
    assert RLO not in shown and "⟨U+202E⟩" in tool_card
    assert card.prompt.value.index("needs your approval") < card.prompt.value.index("⚠ This call")
    assert (
        "⚠ This call contains 4 invisible or direction-changing characters "
        "(4 direction-changing), shown as ⟨U+…⟩; what you see may not be what runs."
    ) in card.prompt.value
    assert card.widget.children.index(card.prompt) < card.widget.children.index(card.buttons)
    card.approve.click()
    await task
    assert ran == [TROJAN]  # marking changes what is shown, never what runs


async def test_an_ordinary_call_has_no_warning_on_its_card() -> None:
    from nb_tools.agent._approval import ApprovalRequest
    from nb_tools.jupyter._approval_card import ApprovalCard
    from nb_tools.model import ToolCall

    call = ToolCall(id="c", name="python", arguments=json.dumps({"code": f"s = {ORDINARY!r}"}))
    card = ApprovalCard(
        ApprovalRequest(call=call, info=None, preview=None, always_allow_rule=f"bash(ls{RLO}:*)"),
        loop=asyncio.get_running_loop(),
    )
    assert "⚠" in card.prompt.value  # the rule "Always allow" would add holds one
    assert RLO not in card.always.description and "⟨U+202E⟩" in card.always.description
    plain = ApprovalCard(
        ApprovalRequest(call=call, info=None, preview=None), loop=asyncio.get_running_loop()
    )
    assert "⚠" not in plain.prompt.value and plain.warning == ""


def test_every_category_that_can_hide_text_is_covered() -> None:
    """Every format or control character of this Python's Unicode (but \\n, \\t) is marked."""
    for cp in range(0x110000):
        ch = chr(cp)
        if unicodedata.category(ch) in ("Cf", "Cc", "Zl", "Zp") and ch not in "\n\t":
            assert hidden_kind(f"{ch}x", 0), f"U+{cp:04X}"


def test_the_rules_table_shows_a_rule_s_hidden_characters() -> None:
    from nb_tools.jupyter._inspector import rules_html
    from nb_tools.jupyter._session import get_session, reset_session

    reset_session()
    try:
        session = get_session()
        session.rules.add("allow", f"edit_file(notes/{RLO}txt.exe)")
        shown = rules_html(session)
        assert RLO not in shown and "notes/<span" in shown and "⟨U+202E⟩" in shown
    finally:
        reset_session()


async def test_a_rule_made_from_the_arguments_is_not_counted_twice() -> None:
    from nb_tools.agent._approval import ApprovalRequest
    from nb_tools.jupyter._approval_card import ApprovalCard
    from nb_tools.model import ToolCall

    call = ToolCall(id="c", name="edit_file", arguments=json.dumps({"path": f"a{RLO}b.txt"}))
    request = ApprovalRequest(
        call=call, info=None, preview=None, always_allow_rule=f"edit_file(a{RLO}b.txt)"
    )
    card = ApprovalCard(request, loop=asyncio.get_running_loop())
    assert "contains 1 invisible or direction-changing character " in card.prompt.value
