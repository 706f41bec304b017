"""A bash command holding characters a person would not see (bidi controls, zero-width and
tag characters, controls, invisible letters) never runs without a click: the read-only
vote says "not read-only" and a permission rule cannot tell (it asks). Checked through the
vote, ``PermissionRules.check``, and end to end through an ``Agent`` whose approver
records being asked (the command's output must not reach the transcript)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from approvals_helpers import builtin_tool

from nb_tools.agent import Agent
from nb_tools.builtin._bash import BashTool, command_is_read_only
from nb_tools.builtin._workspace import Workspace
from nb_tools.permissions import PermissionRules
from nb_tools.sandbox._probe import sandbox_available
from nb_tools.testing import ScriptedModel, call, reply

TAGS = "".join(chr(0xE0000 + ord(c)) for c in "; rm -rf ~")
HIDDEN = {
    "RLO": "\u202e",
    "LRO": "\u202d",
    "RLE": "\u202b",
    "LRI": "\u2066",
    "RLI": "\u2067",
    "FSI": "\u2068",
    "PDI": "\u2069",
    "RLM": "\u200f",
    "ALM": "\u061c",
    "ZWSP": "\u200b",
    "ZWJ": "\u200d",
    "WJ": "\u2060",
    "BOM": "\ufeff",
    "SHY": "\u00ad",
    "MVS": "\u180e",
    "tags": TAGS,
    "cancel-tag": "\U000e007f",
    "ESC": "\x1b[8m",
    "CR": "\r",
    "NEL": "\x85",
    "LS": "\u2028",
    "hangul-filler": "\u3164",
    "CGJ": "\u034f",
    "VS-run": "\ufe0f\ufe0e",
    "VS17": "\U000e0100",
}


@pytest.mark.parametrize("hidden", HIDDEN.values(), ids=HIDDEN.keys())
def test_the_read_only_vote_refuses_hidden_characters(hidden: str) -> None:
    assert command_is_read_only(json.dumps({"command": "ls -la"}))  # the same, visible
    for command in (f"ls -la{hidden}", f"ls {hidden}-la", f"echo 'a{hidden}b'"):
        assert not command_is_read_only(json.dumps({"command": command})), repr(command)


@pytest.mark.parametrize("hidden", HIDDEN.values(), ids=HIDDEN.keys())
def test_an_allow_rule_cannot_tell_so_it_asks(hidden: str) -> None:
    rules = PermissionRules(root=Path("/srv/proj"))
    rules.allow("bash(ls:*)")
    assert (
        rules.check("bash", {"command": "ls -la"}, builtin_tool("bash")) is not None
    )  # covered when visible
    for command in (f"ls -la{hidden}", f"ls {hidden}x"):
        match = rules.check("bash", {"command": command}, builtin_tool("bash"))
        assert match is None or match.action == "ask", (repr(command), match)
    rules.deny("bash(rm:*)")
    match = rules.check("bash", {"command": f"ls x{hidden}"}, builtin_tool("bash"))
    assert match is not None and match.action in ("ask", "deny"), match


@pytest.mark.skipif(not sandbox_available().ok, reason="no sandbox: every bash call asks")
@pytest.mark.parametrize("hidden", ["\u202e", TAGS, "\u200b"], ids=["RLO", "tags", "ZWSP"])
def test_a_read_only_looking_command_with_hidden_characters_waits_for_a_click(
    hidden: str, tmp_path: Path
) -> None:
    (tmp_path / "visible.txt").write_text("MARKER-SEEN\n")
    asked: list[str] = []

    def approver(request: object) -> bool:
        asked.append(request.call.arguments)  # type: ignore[attr-defined]
        return False  # nobody clicks

    def run(command: str) -> str:
        model = ScriptedModel([reply("", call("bash", command=command)), reply("done")])
        agent = Agent(model, tools=[BashTool(Workspace(tmp_path))], approval="ask",
                      approver=approver)  # fmt: skip
        return repr(agent.run_sync("go").messages)  # what the tool's result told the model

    # The same command without the character is read-only: it runs without asking.
    seen = run("cat visible.txt # ok")
    assert asked == [] and "MARKER-SEEN" in seen
    blocked = run(f"cat visible.txt # ok{hidden}")
    assert len(asked) == 1, "the call ran without asking"
    assert "MARKER-SEEN" not in blocked
