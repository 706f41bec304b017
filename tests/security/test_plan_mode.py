"""Plan mode (``approval="read-only"``): only read-only calls that need no approval run;
everything else is refused with a message the model can act on, whatever an allow rule or
"Always allow" says, and nobody is asked."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from approvals_helpers import Approver, Listener, call, drive, fetch_tool, workspace_tools

from nb_tools import tool
from nb_tools.permissions import PermissionRules


def _patch(path: str) -> str:
    return f"*** Begin Patch\n*** Add File: {path}\n+pwned\n*** End Patch\n"


WRITES = [
    ("write_file", {"file_path": "new.txt", "content": "pwned"}, "new.txt"),
    ("write_file", {"file_path": "sub/new.txt", "content": "pwned"}, "sub/new.txt"),
    ("apply_patch", {"input": _patch("patched.txt")}, "patched.txt"),
    ("bash", {"command": "touch bash_marker"}, "bash_marker"),
    ("bash", {"command": "echo pwned > bash_out.txt"}, "bash_out.txt"),
    ("bash", {"command": "ls && touch after_ls"}, "after_ls"),
    ("bash", {"command": "cp existing.txt copied.txt"}, "copied.txt"),
]


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "existing.txt").write_text("original\n")
    (tmp_path / "nb.ipynb").write_text(
        json.dumps(
            {
                "cells": [
                    {
                        "cell_type": "code",
                        "source": "1",
                        "metadata": {},
                        "outputs": [],
                        "execution_count": None,
                    }
                ],
                "metadata": {},
                "nbformat": 4,
                "nbformat_minor": 5,
            }
        )
    )
    return tmp_path


@pytest.mark.parametrize(("name", "arguments", "target"), WRITES)
async def test_writers_are_refused_and_write_nothing(
    root: Path, name: str, arguments: dict, target: str
) -> None:
    approver = Approver(answers=[True])
    out = await drive(
        [call(name, id="c", **arguments)],
        tools=workspace_tools(root, name),
        approval="read-only",
        approver=approver,
    )
    assert not (root / target).exists()
    assert approver.requests == []
    content, is_error = out.result("c")
    assert is_error and content.startswith(f"plan mode: {name} ")
    assert "leave plan mode" in content
    assert out.status("c") == "denied"


async def test_edit_file_is_refused_after_reading(root: Path) -> None:
    out = await drive(
        [call("read_file", file_path="existing.txt", id="r")],
        turns=[
            [
                call(
                    "edit_file",
                    file_path="existing.txt",
                    old_string="original",
                    new_string="pwned",
                    id="e",
                )
            ]
        ],
        tools=workspace_tools(root, "read_file", "edit_file"),
        approval="read-only",
    )
    assert (root / "existing.txt").read_text() == "original\n"
    assert out.result("r")[1] is False
    content, _ = out.result("e")
    assert content == (
        "plan mode: edit_file would change files (existing.txt), and plan mode runs only "
        "read-only calls; describe the change instead, or ask the user to leave plan mode "
        "(approval 'ask'). The tool did not run."
    )


async def test_notebook_edit_is_refused(root: Path) -> None:
    before = (root / "nb.ipynb").read_text()
    out = await drive(
        [call("notebook_read", notebook_path="nb.ipynb", id="r")],
        turns=[
            [
                call(
                    "notebook_edit",
                    notebook_path="nb.ipynb",
                    cell_index=0,
                    new_source="import os; os.system('x')",
                    id="e",
                )
            ]
        ],
        tools=workspace_tools(root, "notebook_read", "notebook_edit"),
        approval="read-only",
    )
    assert (root / "nb.ipynb").read_text() == before
    assert out.result("e")[0].startswith("plan mode: notebook_edit")


def _marker_tool(root: Path, **options: object) -> object:
    @tool(register=False, name="touch_marker", **options)  # type: ignore[call-overload]
    def touch_marker(marker: str) -> str:
        """Leaves a marker file."""
        (root / marker).write_text("ran")
        return "ran"

    return touch_marker


@pytest.mark.parametrize(
    "options",
    [
        {},  # not read-only and does NOT ask for approval: refused too
        {"requires_approval": True},
        {"concurrent": True},
        {"approver": lambda a: False},  # its own vote says "no approval needed"
    ],
)
async def test_a_tool_that_is_not_read_only_is_refused(root: Path, options: dict) -> None:
    out = await drive(
        [call("touch_marker", marker="m", id="c")],
        tools=[_marker_tool(root, **options)],
        approval="read-only",
    )
    assert not (root / "m").exists()
    assert out.result("c")[0].startswith("plan mode: touch_marker is not read-only")


async def test_a_read_only_tool_that_asks_is_refused_not_asked(root: Path) -> None:
    approver = Approver(answers=[True])
    out = await drive(
        [call("touch_marker", marker="m", id="c")],
        tools=[_marker_tool(root, read_only=True, requires_approval=True)],
        approval="read-only",
        approver=approver,
    )
    assert not (root / "m").exists()
    assert approver.requests == []
    assert "plan mode runs only calls that need none" in out.result("c")[0]


async def test_an_allow_rule_does_not_lift_plan_mode(root: Path) -> None:
    rules = PermissionRules(root=root)
    rules.allow("write_file", "bash", "touch_marker")
    out = await drive(
        [
            call("write_file", file_path="new.txt", content="x", id="w"),
            call("bash", command="touch b", id="b"),
            call("touch_marker", marker="m", id="t"),
        ],
        tools=[*workspace_tools(root, "write_file", "bash"), _marker_tool(root)],
        approval="read-only",
        rules=rules,
    )
    assert sorted(p.name for p in root.iterdir()) == ["existing.txt", "nb.ipynb"]
    for call_id in ("w", "b", "t"):
        assert out.result(call_id)[0].startswith("plan mode:")


async def test_a_deny_rule_still_names_itself_in_plan_mode(root: Path) -> None:
    rules = PermissionRules(root=root)
    rules.deny("read_file(existing.txt)")
    out = await drive(
        [call("read_file", file_path="existing.txt", id="r")],
        tools=workspace_tools(root, "read_file"),
        approval="read-only",
        rules=rules,
    )
    assert out.result("r") == (
        "This call was denied by the permission rule 'deny read_file(existing.txt)' "
        "(from session). The tool did not run.",
        True,
    )


@pytest.mark.parametrize(
    ("name", "arguments"),
    [
        ("read_file", {"file_path": "existing.txt"}),
        ("glob", {"pattern": "*.txt"}),
        ("notebook_read", {"notebook_path": "nb.ipynb"}),
        ("todo_write", {"todos": []}),
    ],
)
async def test_read_only_calls_run(root: Path, name: str, arguments: dict) -> None:
    out = await drive(
        [call(name, id="c", **arguments)], tools=workspace_tools(root, name), approval="read-only"
    )
    content, _ = out.result("c")
    assert not content.startswith("plan mode"), content
    assert out.decided() == []


async def test_web_fetch_is_refused_and_reaches_nothing() -> None:
    async with Listener() as listener:
        out = await drive(
            [call("web_fetch", url=f"http://example.com:{listener.port}/?secret=k", id="f")],
            tools=[fetch_tool()],
            approval="read-only",
            approver=Approver(answers=[True]),
        )
    assert listener.connections == 0
    assert out.result("f") == (
        "plan mode: web_fetch needs approval (it reaches the network), and plan mode runs "
        "only calls that need none; ask the user to allow it with a rule "
        "(web_fetch(domain:example.com)) or to leave plan mode (approval 'ask'). "
        "The tool did not run.",
        True,
    )


async def test_web_fetch_runs_in_plan_mode_when_a_rule_allows_the_domain() -> None:
    rules = PermissionRules()
    rules.allow("web_fetch(domain:example.com)")
    async with Listener() as listener:
        out = await drive(
            [
                call("web_fetch", url=f"http://example.com:{listener.port}/a", id="ok"),
                call("web_fetch", url=f"http://other.example:{listener.port}/b", id="no"),
            ],
            tools=[fetch_tool()],
            approval="read-only",
            rules=rules,
        )
    assert listener.paths == ["/a"]
    assert out.result("ok") == ("fetched body", False)
    assert out.result("no")[0].startswith("plan mode: web_fetch needs approval")


async def test_always_allow_rules_do_not_lift_plan_mode_for_writers(root: Path) -> None:
    from approvals_helpers import reply

    from nb_tools.agent import Agent
    from nb_tools.testing import ScriptedModel

    model = ScriptedModel(
        [reply("", call("write_file", file_path="new.txt", content="x", id="w")), reply("done")]
    )
    rules = PermissionRules(root=root)
    rules.allow("write_file", source="session")  # what "Always allow" adds
    agent = Agent(
        model, tools=workspace_tools(root, "write_file"), approval="read-only", rules=rules
    )
    await agent.run("go")
    assert not (root / "new.txt").exists()
