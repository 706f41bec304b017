"""A hard link in the workspace to a file outside it (a secret) is not read without a click:
``read_file`` and ``grep`` ask for it, a no-click ``grep`` of a folder leaves it out, and
the unapproved bash sandbox masks it. Package managers' folders, which link on purpose,
are exempt."""

from __future__ import annotations

import asyncio
import json
import os
import uuid
from pathlib import Path

import pytest
from sandbox_helpers import NOT_APPROVED, require_sandbox, run

from nb_tools.agent import Agent, ApprovalRequest
from nb_tools.builtin import builtin_tools
from nb_tools.builtin._files import ReadFileTool
from nb_tools.builtin._grep import GrepTool
from nb_tools.builtin._readstate import ReadState
from nb_tools.builtin._workspace import Workspace
from nb_tools.model import ToolResultBlock
from nb_tools.sandbox import _scan
from nb_tools.testing import ScriptedModel, call, reply
from nb_tools.tool._grant import granted

SECRET = f"SECRET-{uuid.uuid4().hex}"


@pytest.fixture
def linked(ws: Path, tmp_path: Path) -> Path:
    """``ws/notes.txt`` is a second name of ``outside/credentials`` (same file system)."""
    outside = tmp_path / "outside"
    outside.mkdir()
    secret = outside / "credentials"
    secret.write_text(f"token = {SECRET}\n")
    os.link(secret, ws / "notes.txt")
    (ws / "plain.txt").write_text("token = nothing here\n")
    _scan._scan_cache.clear()
    return ws / "notes.txt"


def test_read_file_asks_and_refuses_without_a_click(ws: Path, linked: Path) -> None:
    tool = ReadFileTool(Workspace(ws), ReadState())
    args = json.dumps({"file_path": "notes.txt"})
    assert tool.requires_approval_for(args)
    assert not tool.requires_approval_for(json.dumps({"file_path": "plain.txt"}))
    with granted(NOT_APPROVED):
        r = asyncio.run(tool.call(args))
    assert r.is_error and SECRET not in r.content


@pytest.mark.parametrize("mode", ["content", "files_with_matches", "count"])
async def test_grep_of_the_folder_leaves_it_out(ws: Path, linked: Path, mode: str) -> None:
    tool = GrepTool(Workspace(ws))
    with granted(NOT_APPROVED):
        r = await tool.call(json.dumps({"pattern": "token", "output_mode": mode}))
    assert SECRET not in r.content and "notes.txt" not in r.content
    assert "plain.txt" in r.content
    assert tool.requires_approval_for(json.dumps({"pattern": "token", "path": "notes.txt"}))


async def test_unapproved_bash_does_not_see_it(ws: Path, linked: Path) -> None:
    require_sandbox()
    r = await run(ws, "cat notes.txt; grep -r token .", approved=False)
    assert SECRET not in r.content
    assert "nothing here" in r.content  # the rest of the workspace is there


async def test_through_agent_nothing_reaches_the_model_without_a_click(
    ws: Path, linked: Path
) -> None:
    require_sandbox()
    asked: list[ApprovalRequest] = []

    def approver(request: ApprovalRequest) -> bool:
        asked.append(request)
        return False

    calls = [
        call("read_file", id="r", file_path="notes.txt"),
        call("grep", id="g", pattern="token", output_mode="content"),
        call("bash", id="b", command="cat notes.txt"),
    ]
    agent = Agent(
        ScriptedModel([reply("", *calls), reply("ok")]),
        tools=builtin_tools(ws, include=["read_file", "grep", "bash"]),
        approval="ask",
        approver=approver,
    )
    await agent.run("go")
    results = [
        b.result.content
        for m in agent.messages
        for b in m.content
        if isinstance(b, ToolResultBlock)
    ]
    assert len(results) == 3
    assert all(SECRET not in c for c in results), results
    assert [r.call.name for r in asked] == ["read_file"]


async def test_package_managers_links_stay_visible(ws: Path, tmp_path: Path) -> None:
    """npm and pip caches hard-link on purpose: a linked file in node_modules is read."""
    require_sandbox()
    store = tmp_path / "store"
    store.mkdir()
    (store / "index.js").write_text("module.exports = 'pkg-code'\n")
    (ws / "node_modules" / "pkg").mkdir(parents=True)
    os.link(store / "index.js", ws / "node_modules" / "pkg" / "index.js")
    _scan._scan_cache.clear()
    r = await run(ws, "cat node_modules/pkg/index.js", approved=False)
    assert "pkg-code" in r.content
