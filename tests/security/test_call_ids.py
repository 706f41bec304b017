"""Two calls of one reply with the same id (a provider that passes on ids the model wrote
may send them) are two calls: each gets its own id, card, decision and result. Before, the
second call's card and result were looked up by the first one's id: a person who approved
the card of ``notes.txt`` ran the write to ``victim.txt``. The effect checked is on disk."""

from __future__ import annotations

from pathlib import Path

from approvals_helpers import Approver, call, drive, workspace_tools

from nb_tools.agent._conversation import unique_call_ids
from nb_tools.model import Message, TextBlock, ToolUseBlock


async def test_repeated_ids_are_decided_and_answered_one_by_one(tmp_path: Path) -> None:
    approver = Approver(answers=[True, False])
    out = await drive(
        [
            call("write_file", file_path="notes.txt", content="ok\n", id="dup"),
            call("write_file", file_path="victim.txt", content="pwned\n", id="dup"),
        ],
        tools=workspace_tools(tmp_path, "write_file"),
        approver=approver,
    )
    assert (tmp_path / "notes.txt").read_text() == "ok\n"
    assert not (tmp_path / "victim.txt").exists()
    ids = [r.call.id for r in approver.requests]
    assert ids == ["dup", "dup_2"]
    shown = [r.call.arguments for r in approver.requests]
    assert "notes.txt" in shown[0] and "victim.txt" in shown[1]
    assert not out.result("dup")[1]
    text, is_error = out.result("dup_2")
    assert is_error and "denied" in text.lower(), text
    sent = out.agent.messages[1]
    assert [b.id for b in sent.content if isinstance(b, ToolUseBlock)] == ["dup", "dup_2"]


def test_unique_call_ids_renames_repeats_and_blanks_only() -> None:
    message = Message(
        role="assistant",
        content=(
            TextBlock(text="hi"),
            ToolUseBlock(id="a", name="t", arguments="{}"),
            ToolUseBlock(id="a", name="t", arguments="{}"),
            ToolUseBlock(id="", name="t", arguments="{}"),
            ToolUseBlock(id="old", name="t", arguments="{}"),
        ),
    )
    got = unique_call_ids(message, {"old", "a_2"})
    ids = [b.id for b in got.content if isinstance(b, ToolUseBlock)]
    assert ids == ["a", "a_3", "call_2", "old_2"]
    plain = Message(role="assistant", content=(ToolUseBlock(id="b", name="t", arguments="{}"),))
    assert unique_call_ids(plain, {"a"}) is plain
