"""The sandbox's limits are in the result the model reads and the card shows: a command
that exits 0 after writing outside the workspace is told the file is gone (it is)."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest

from nb_tools.builtin._bash import BashTool
from nb_tools.builtin._workspace import Workspace
from nb_tools.sandbox import sandbox_available


@pytest.fixture
def sandboxed() -> None:
    found = sandbox_available()
    if not found.ok:
        pytest.skip(f"no sandbox here: {found}")


async def test_the_result_says_what_the_sandbox_discarded(tmp_path: Path, sandboxed) -> None:
    name = f"nbtools-limits-{uuid.uuid4().hex}"
    tool = BashTool(Workspace(tmp_path), sandbox="workspace-write")
    command = f"echo kept > in.txt && echo lost > /tmp/{name} && cat /tmp/{name}"
    r = await tool.call(json.dumps({"command": command}))
    assert r.content.startswith("lost\n\n[exit code 0]\n")
    assert (tmp_path / "in.txt").read_text() == "kept\n"
    assert not (Path("/tmp") / name).exists()  # the write the command saw is gone
    note = (
        f"[sandbox: only files written under {tmp_path.resolve()} are kept; elsewhere (/tmp, "
        "the home folder) they are discarded when the command ends; no network]"
    )
    assert r.content.endswith("\n" + note) and r.metadata["sandbox_limits"] == note


async def test_a_read_only_call_is_told_nothing_is_kept(tmp_path: Path, sandboxed) -> None:
    tool = BashTool(Workspace(tmp_path), sandbox="read-only")
    r = await tool.call(json.dumps({"command": "echo hi > /tmp/x; cat /tmp/x"}))
    assert r.content.startswith("hi\n\n[exit code 0]\n[read-only sandbox: nothing written")


async def test_outside_the_sandbox_nothing_is_added(tmp_path: Path) -> None:
    tool = BashTool(Workspace(tmp_path), sandbox="off")
    r = await tool.call(json.dumps({"command": "echo hi"}))
    assert r.content == "hi\n\n[exit code 0]" and "sandbox_limits" not in r.metadata
