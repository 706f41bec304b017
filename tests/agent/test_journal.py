"""What a run changed and the way back: ``RunResult.changes`` and ``restore()`` against
real files written by the built-in tools (the effects are checked on disk)."""

from __future__ import annotations

from pathlib import Path

import pytest

from nb_tools import Registry, tool
from nb_tools.agent import Agent
from nb_tools.builtin import builtin_tools
from nb_tools.testing import ScriptedModel, call, reply

PATCH = """*** Begin Patch
*** Add File: new/created.txt
+made by the run
*** Update File: config.ini
@@
-debug = false
+debug = true
*** Delete File: old.log
*** End Patch"""


@tool(requires_approval=True, register=False)
def send_email(to: str) -> str:
    """Send an e-mail.

    Args:
        to: The address.
    """
    return f"sent to {to}"


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    (tmp_path / "notes.txt").write_bytes(b"line one\r\nline two\r\n")  # CRLF kept exactly
    (tmp_path / "config.ini").write_text("[app]\ndebug = false\n")
    (tmp_path / "old.log").write_text("old log\n")
    return tmp_path


async def run(workspace: Path) -> Agent:
    tools = Registry(
        *builtin_tools(root=workspace, include=["write_file", "apply_patch", "read_file"]),
        send_email,
    )
    model = ScriptedModel(
        [
            reply("", call("read_file", file_path="notes.txt")),
            reply(
                "",
                call("write_file", file_path="notes.txt", content="replaced\n"),
                call("apply_patch", input=PATCH),
                call("send_email", to="a@example.com"),
            ),
            reply("Done."),
        ]
    )
    agent = Agent(model, tools=tools, approval="auto")
    await agent.run("change things")
    return agent


def state(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


async def test_restore_puts_every_file_back_and_removes_created_ones(workspace: Path) -> None:
    before = state(workspace)
    agent = await run(workspace)
    result = agent.last_result
    kinds = [(c.tool, c.kind, c.path) for c in result.changes]
    assert kinds == [
        ("write_file", "update", "notes.txt"),
        ("apply_patch", "create", "new/created.txt"),
        ("apply_patch", "update", "config.ini"),
        ("apply_patch", "delete", "old.log"),
        ("send_email", "ran", ""),
    ]
    assert not result.changes[-1].undoable and "not tracked" in result.changes[-1].note
    assert "-debug = false\n+debug = true" in result.changes[2].undo.diff()
    assert state(workspace) != before

    report = await result.arestore()
    assert state(workspace) == before  # byte for byte, CRLF included
    assert not (workspace / "new" / "created.txt").exists()
    assert [c.path for c in report.restored] == [
        "old.log",
        "config.ini",
        "new/created.txt",
        "notes.txt",
    ]
    assert [c.tool for c in report.not_undoable] == ["send_email"]
    assert "not undoable: send_email" in str(report)


async def test_a_file_changed_since_the_run_is_not_overwritten(workspace: Path) -> None:
    agent = await run(workspace)
    result = agent.last_result
    (workspace / "config.ini").write_text("[app]\ndebug = maybe\n")  # the user's own edit
    (workspace / "old.log").write_text("a new log\n")  # made again since
    report = await result.arestore()
    assert (workspace / "config.ini").read_text() == "[app]\ndebug = maybe\n"
    assert (workspace / "old.log").read_text() == "a new log\n"
    refused = {c.path: why for c, why in report.refused}
    assert refused == {
        "config.ini": "config.ini changed since the run; left as it is",
        "old.log": "old.log was made again since the run; left as it is",
    }
    assert (workspace / "notes.txt").read_bytes() == b"line one\r\nline two\r\n"


async def test_restore_only_some_changes_and_a_link_swapped_in(
    workspace: Path, tmp_path_factory
) -> None:
    agent = await run(workspace)
    result = agent.last_result
    [notes] = [c for c in result.changes if c.path == "notes.txt"]
    report = await result.arestore([notes])
    assert [c.path for c in report.restored] == ["notes.txt"]
    assert (workspace / "config.ini").read_text() == "[app]\ndebug = true\n"
    # a link swapped in where the run's file was: nothing outside is written
    outside = tmp_path_factory.mktemp("outside") / "target.txt"
    outside.write_text("outside\n")
    created = workspace / "new" / "created.txt"
    created.unlink()
    created.symlink_to(outside)
    report = await result.arestore()
    assert outside.read_text() == "outside\n"
    assert "new/created.txt" in {c.path for c, _ in report.refused}


def test_restore_from_sync_code(workspace: Path) -> None:
    import asyncio

    agent = asyncio.run(run(workspace))
    report = agent.last_result.restore()
    assert (workspace / "old.log").read_text() == "old log\n" and report.restored


def test_a_tool_can_say_how_its_change_is_taken_back() -> None:
    from nb_tools.agent._journal import changes_of

    [entry] = changes_of(
        "c1", "notebook_edit", {"undo_note": "one z takes it back"}, code=False, read_only=False
    )
    assert (entry.undoable, entry.note) == (False, "one z takes it back")
    [plain] = changes_of("c2", "send", {}, code=False, read_only=False)
    assert plain.note == "its effects are not tracked, so it cannot be undone"
    assert changes_of("c3", "read", {}, code=False, read_only=True) == []
