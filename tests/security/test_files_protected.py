"""Protected paths ask, even under ``auto``, for every writer, however the path is spelled
(case, Unicode, ignorable code points, trailing dots, NTFS short names and streams,
``..``, absolute, through a symlink, a dangling one included). Driven end to end through
``Agent`` with the real built-in tools: an approver that says no (or never answers)
means nothing is written."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from files_attack import HOOK, WRITERS, fingerprint, make_world, patch

from nb_tools.agent import Agent, ApprovalRequest
from nb_tools.builtin import builtin_tools
from nb_tools.builtin._workspace import Workspace
from nb_tools.testing import ScriptedModel, call, reply

FILE_TOOLS = ["read_file", "write_file", "edit_file", "apply_patch", "notebook_edit"]


@pytest.fixture
def world(tmp_path: Path) -> Path:
    w = make_world(tmp_path)
    root = w / "root"
    (root / "docs").symlink_to(root / ".git" / "hooks", target_is_directory=True)
    (root / "hook").symlink_to(root / ".git" / "hooks" / "post-checkout")  # dangling
    (root / "cfg").symlink_to(root / ".nb_tools" / "settings.json")
    return w


PROTECTED = [
    ".git/hooks/pre-commit",
    ".git/config",
    ".git/hooks/post-checkout",
    "sub/.git/config",
    "./.git/config",
    "sub/../.git/config",
    "{ROOT}/.git/config",
    ".GIT/hooks/pre-commit",
    ".Git/config",
    ".git./config",
    ".git /config",
    "\uff0e\uff47\uff49\uff54/config",  # full-width ．ｇｉｔ (NFKC: .git)
    ".g\u200bit/config",  # a zero-width space, dropped by HFS+
    "\ufeff.git/config",
    "GIT~1/config",
    ".git::$INDEX_ALLOCATION/config",
    "docs/pre-commit",  # docs -> .git/hooks
    "docs/new-hook",
    "hook",  # dangling link to .git/hooks/post-checkout
    "cfg",  # link to .nb_tools/settings.json
    ".nb_tools/settings.json",
    ".NB_TOOLS/settings.json",
    ".config/nb_tools/settings.json",
    ".ipython/profile_default/startup/00-evil.py",
    ".ipython/profile_default/ipython_config.py",
    "profile_work/startup/01.py",
    "ipython_kernel_config.py",
    ".jupyter/jupyter_server_config.py",
    "jupyter_notebook_config.json",
    ".local/share/jupyter/kernels/python3/kernel.json",
    "share/jupyter/kernels/evil/kernel.json",
    ".env",
    ".env.local",
    ".envrc",
    "config/.env.production",
    ".ENV",
    ".bashrc",
    ".profile",
    ".zshrc",
    ".bash_profile",
    ".ssh/authorized_keys",
    ".ssh/config",
    ".gitconfig",
    ".git-credentials",
    ".netrc",
    ".aws/credentials",
    "venv/lib/python3.11/site-packages/evil.pth",
    "sitecustomize.py",
    ".hg/hgrc",
]
NOT_PROTECTED = [
    "notes.txt",
    "sub/f.txt",
    "gitignore.txt",
    "my.git.txt",
    "environment.md",
    "model.pth",  # a PyTorch checkpoint, not a site-packages .pth
    "startup/x.py",
    "kernel.json",
]


def _p(path: str, root: Path) -> str:
    return path.replace("{ROOT}", str(root))


@pytest.mark.parametrize("path", PROTECTED)
def test_every_writer_reports_every_protected_spelling(world: Path, path: str) -> None:
    root = world / "root"
    tools = {t.info().name: t for t in builtin_tools(root, include=FILE_TOOLS)}
    from nb_tools.builtin._text_editor import TextEditorTool

    ws = tools["write_file"].workspace
    editor = TextEditorTool(ws, tools["write_file"].state)
    p = _p(path, root)
    for name, (key, make) in WRITERS.items():
        tool = editor if key == "editor" else tools[key]
        args = make(p)
        assert tool.is_protected_call(json.dumps(args)), (name, path)
    nb = {"notebook_path": p, "cell_id": "c1", "new_source": "x"}
    assert tools["notebook_edit"].is_protected_call(json.dumps(nb))


@pytest.mark.parametrize("path", NOT_PROTECTED)
def test_plain_paths_are_not_protected(world: Path, path: str) -> None:
    ws = Workspace(world / "root")
    assert not ws.is_protected(path)


def _agent(root: Path, calls: list[Any], approver: Any, approval: str = "auto") -> Any:
    model = ScriptedModel([reply("", *calls), reply("done")])
    agent = Agent(
        model,
        tools=builtin_tools(root, include=FILE_TOOLS),
        approval=approval,
        approver=approver,
    )
    return agent, model


def _write_calls(path: str) -> list[Any]:
    return [call("write_file", file_path=path, content="#!/bin/sh\necho pwned\n")]


def _patch_calls(path: str) -> list[Any]:
    return [call("apply_patch", **patch(f"*** Add File: {path}", "+echo pwned"))]


@pytest.mark.parametrize("how", ["write_file", "apply_patch"])
@pytest.mark.parametrize("path", PROTECTED)
def test_auto_asks_for_protected_paths_and_a_no_writes_nothing(
    world: Path, path: str, how: str
) -> None:
    root = world / "root"
    asked: list[ApprovalRequest] = []

    def no(request: ApprovalRequest) -> bool:
        asked.append(request)
        return False

    calls = (_write_calls if how == "write_file" else _patch_calls)(_p(path, root))
    before = fingerprint(world)
    agent, _ = _agent(root, calls, no)
    agent.run_sync("go")
    assert [r.call.name for r in asked] == [how]
    assert asked[0].protected
    assert fingerprint(world) == before


@pytest.mark.parametrize(
    "path", [".git/hooks/pre-commit", ".nb_tools/settings.json", "docs/pre-commit", "hook"]
)
async def test_a_never_clicking_approver_leaves_everything_as_it_was(
    world: Path, path: str
) -> None:
    root = world / "root"
    waiting = asyncio.Event()

    async def never(request: ApprovalRequest) -> bool:
        waiting.set()
        await asyncio.Event().wait()
        return True  # pragma: no cover

    before = fingerprint(world)
    agent, _ = _agent(root, _write_calls(path), never)
    task = asyncio.ensure_future(agent.run("go"))
    await asyncio.wait_for(waiting.wait(), 10)
    await asyncio.sleep(0.05)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert fingerprint(world) == before
    assert (root / ".git" / "hooks" / "pre-commit").read_bytes() == HOOK


def test_control_a_plain_path_is_written_under_auto_without_asking(world: Path) -> None:
    """The harness can tell: a path that is not protected runs under auto."""
    root = world / "root"
    asked: list[ApprovalRequest] = []
    agent, _ = _agent(root, _write_calls("fresh.txt"), lambda r: asked.append(r) or False)
    agent.run_sync("go")
    assert asked == []
    assert (root / "fresh.txt").read_text() == "#!/bin/sh\necho pwned\n"


def test_an_approved_card_that_went_stale_fails_instead_of_writing_the_hook(world: Path) -> None:
    """The attack end to end: under ``ask`` the person approves ``notes.txt``; while the
    card waits, ``notes.txt`` becomes a link to the hook. The call fails; the hook is
    what it was."""
    root = world / "root"

    def approve_after_swap(request: ApprovalRequest) -> bool:
        if request.call.name == "read_file":
            return True
        (root / "notes.txt").unlink()
        (root / "notes.txt").symlink_to(root / ".git" / "hooks" / "pre-commit")
        return True

    calls_1 = [
        call("read_file", file_path="notes.txt"),
        call("read_file", file_path=".git/hooks/pre-commit"),
    ]
    calls_2 = [call("write_file", file_path="notes.txt", content="echo pwned\n")]
    model = ScriptedModel([reply("", *calls_1), reply("", *calls_2), reply("done")])
    agent = Agent(
        model,
        tools=builtin_tools(root, include=FILE_TOOLS),
        approval="ask",
        approver=approve_after_swap,
    )
    agent.run_sync("go")
    result = model.requests[2].messages[-1].content[0].result
    assert result.is_error and "approved" in result.content, result.content
    assert (root / ".git" / "hooks" / "pre-commit").read_bytes() == HOOK
