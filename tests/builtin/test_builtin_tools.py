"""builtin_tools(): the set, shared workspace and read state, selection, exports; the
Anthropic bash adapter."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import nb_tools.builtin as builtin
from nb_tools.builtin import (
    TOOL_NAMES,
    BashAdapterTool,
    BashTool,
    GrepTool,
    NotebookEditTool,
    WebFetchTool,
    builtin_tools,
)
from nb_tools.builtin._workspace import Workspace
from nb_tools.tool import Tool, validate_name


def test_the_default_set(tmp_path: Path) -> None:
    tools = builtin_tools(tmp_path)
    assert [t.info().name for t in tools] == list(TOOL_NAMES)
    assert TOOL_NAMES == (
        "read_file", "write_file", "edit_file", "apply_patch", "glob", "grep", "bash",
        "web_fetch", "todo_write", "notebook_read", "notebook_edit",
    )  # fmt: skip
    for t in tools:
        assert isinstance(t, Tool)
        validate_name(t.info().name)
        schema = t.info().parameters
        assert schema is not None
        json.loads(schema.strict_json())


def test_one_workspace_and_one_read_state(tmp_path: Path) -> None:
    tools = {t.info().name: t for t in builtin_tools(tmp_path)}
    workspaces = {id(t.workspace) for t in tools.values() if hasattr(t, "workspace")}
    assert len(workspaces) == 1
    states = {id(t.state) for t in tools.values() if hasattr(t, "state")}
    assert len(states) == 1
    assert {n for n, t in tools.items() if hasattr(t, "state")} >= {
        "read_file", "write_file", "edit_file", "apply_patch", "notebook_read", "notebook_edit",
    }  # fmt: skip
    assert tools["grep"].workspace.root == tmp_path.resolve()  # type: ignore[attr-defined]


def test_include_and_exclude(tmp_path: Path) -> None:
    names = [t.info().name for t in builtin_tools(tmp_path, include=["grep", "glob", "bash"])]
    assert names == ["glob", "grep", "bash"]
    names = [t.info().name for t in builtin_tools(tmp_path, exclude=["bash", "web_fetch"])]
    assert names == [n for n in TOOL_NAMES if n not in ("bash", "web_fetch")]
    with pytest.raises(ValueError, match=r"unknown tool name.*'grpe'"):
        builtin_tools(tmp_path, include=["grpe"])
    with pytest.raises(ValueError, match=r"unknown tool name.*'nope'"):
        builtin_tools(tmp_path, exclude=["nope"])


def test_options_reach_their_tools(tmp_path: Path) -> None:
    nb = tmp_path / "analysis.ipynb"
    tools = {
        t.info().name: t
        for t in builtin_tools(
            tmp_path,
            allow_hosts=["docs.python.org"],
            allow_private_network=True,
            current_notebook=nb,
        )
    }
    web = tools["web_fetch"]
    assert isinstance(web, WebFetchTool)
    assert web.allow_hosts == ("docs.python.org",) and web.allow_private_network
    assert not web.requires_approval_for(json.dumps({"url": "https://docs.python.org/3/"}))
    edit = tools["notebook_edit"]
    assert isinstance(edit, NotebookEditTool)
    assert edit.current_notebook == nb


def test_a_missing_root_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="is not a directory"):
        builtin_tools(tmp_path / "missing")


def test_exports_are_unique_and_importable() -> None:
    assert len(set(builtin.__all__)) == len(builtin.__all__)
    for name in builtin.__all__:
        assert getattr(builtin, name) is not None


def test_importing_stays_light() -> None:
    code = (
        "import sys, nb_tools.builtin as b; b.builtin_tools('.'); "
        "print(sorted(m for m in ('tree_sitter', 'httpx', 'bs4', 'markdownify', 'anthropic') "
        "if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# -- the Anthropic-defined bash tool ------------------------------------------------------


@pytest.fixture
def adapter(tmp_path: Path) -> BashAdapterTool:
    return BashAdapterTool(Workspace(tmp_path))


def test_adapter_declares_its_type(adapter: BashAdapterTool) -> None:
    assert adapter.ANTHROPIC_TYPE == "bash_20250124"
    assert adapter.info().name == "bash"
    assert isinstance(adapter.bash, BashTool)


async def test_adapter_runs_commands_in_the_root(adapter: BashAdapterTool, tmp_path: Path) -> None:
    r = await adapter.call(json.dumps({"command": "pwd"}))
    assert r.content.startswith(f"{tmp_path.resolve()}\n\n[exit code 0]")


async def test_adapter_restart(adapter: BashAdapterTool) -> None:
    r = await adapter.call(json.dumps({"restart": True}))
    assert r.content == "bash tool has been restarted."
    r = await adapter.call(json.dumps({}))
    assert r.is_error and "pass a command" in r.content


def test_adapter_votes_per_call(adapter: BashAdapterTool) -> None:
    assert adapter.read_only_call(json.dumps({"command": "ls -la"}))
    assert not adapter.requires_approval_for(json.dumps({"command": "git status"}))
    assert adapter.requires_approval_for(json.dumps({"command": "rm x"}))
    assert adapter.requires_approval_for("{")


def test_tools_are_usable_alone(tmp_path: Path) -> None:
    grep = GrepTool(Workspace(tmp_path))
    assert grep.info().name == "grep"
