"""End to end through Agent and ScriptedModel: unapproved calls run read-only, approved
calls run workspace-write, a call outside the sandbox always asks a person (even under
"auto"), and without a sandbox every bash call asks."""

from __future__ import annotations

import json
import uuid
import warnings
from pathlib import Path
from typing import Any

import pytest
from sandbox_helpers import require_sandbox

from nb_tools.agent import Agent, ApprovalRequest
from nb_tools.builtin import builtin_tools
from nb_tools.builtin._bash_readonly import is_read_only
from nb_tools.model import ToolResultBlock
from nb_tools.sandbox import sandbox_available
from nb_tools.testing import ScriptedModel, call, reply


class Approver:
    def __init__(self, answer: bool) -> None:
        self.answer = answer
        self.requests: list[ApprovalRequest] = []

    def __call__(self, request: ApprovalRequest) -> bool:
        self.requests.append(request)
        return self.answer


def _agent(ws: Path, calls: list[dict[str, Any]], **kw: Any) -> Agent:
    script = [reply("", *(call("bash", id=f"b{i}", **c) for i, c in enumerate(calls))), reply("ok")]
    tools = builtin_tools(ws, include=["bash"])
    return Agent(ScriptedModel(script), tools=tools, **kw)


def _results(agent: Agent) -> dict[str, Any]:
    out = {}
    for m in agent.messages:
        for b in m.content:
            if isinstance(b, ToolResultBlock):
                out[b.result.tool_use_id] = b.result
    return out


@pytest.fixture
def sandbox() -> None:
    require_sandbox()


@pytest.mark.usefixtures("sandbox")
async def test_ask_unapproved_read_only_vote_runs_read_only(
    ws: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    secret = f"KEY-{uuid.uuid4().hex}"
    (home / ".ssh" / "id_rsa").write_text(secret)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-" + secret)
    # Paths outside the workspace make the vote say "not read-only"; links inside it that
    # point out do not (the vote reads words, not the file system): the sandbox must hold.
    (ws / "key").symlink_to(home / ".ssh" / "id_rsa")
    (ws / "shadow").symlink_to("/etc/shadow")
    (ws / "environ").symlink_to("/proc/self/environ")
    command = "cat key; cat shadow; cat environ"
    assert is_read_only(command)
    approver = Approver(True)
    agent = _agent(ws, [{"command": command}], approval="ask", approver=approver)
    await agent.run("go")
    assert approver.requests == []  # ran without a click...
    r = _results(agent)["b0"]
    assert secret not in r.content  # ...and saw nothing secret
    assert r.metadata["sandbox"] == "read-only"


ATTACKS = [
    "find . -maxdepth 0 {-exec,sh,-c,'echo x > pwned',\\;}",
    "sort {-o,pwned} <<< data",
    "uniq -- - pwned",
    "git status && echo x > pwned",
    "echo x > pwned",
]


@pytest.mark.usefixtures("sandbox")
@pytest.mark.parametrize("command", ATTACKS)
async def test_ask_with_nobody_approving_writes_nothing(command: str, ws: Path) -> None:
    """Whatever the read-only vote says, nothing is written: a waved-through call runs in
    the read-only sandbox, any other waits for a person who says no."""
    agent = _agent(ws, [{"command": command}], approval="ask", approver=Approver(False))
    await agent.run("go")
    assert not (ws / "pwned").exists()
    assert sorted(p.name for p in ws.iterdir()) == []


@pytest.mark.usefixtures("sandbox")
async def test_ask_approved_call_runs_workspace_write(ws: Path, visible_dir: Path) -> None:
    approver = Approver(True)
    cmd = f"echo made > made.txt; echo x > {visible_dir}/outside.txt; touch .git-x"
    agent = _agent(ws, [{"command": cmd}], approval="ask", approver=approver)
    await agent.run("go")
    assert len(approver.requests) == 1
    assert (ws / "made.txt").read_text() == "made\n"
    assert not (visible_dir / "outside.txt").exists()
    assert _results(agent)["b0"].metadata["sandbox"] == "workspace-write"


@pytest.mark.usefixtures("sandbox")
async def test_auto_runs_workspace_write_without_asking(ws: Path, visible_dir: Path) -> None:
    approver = Approver(False)
    cmd = f"echo made > made.txt; echo x > {visible_dir}/outside.txt"
    agent = _agent(ws, [{"command": cmd}], approval="auto", approver=approver)
    await agent.run("go")
    assert approver.requests == []
    assert (ws / "made.txt").exists() and not (visible_dir / "outside.txt").exists()


@pytest.mark.usefixtures("sandbox")
@pytest.mark.parametrize("policy", ["auto", "ask", "read-only"])
async def test_outside_the_sandbox_always_asks_and_denied_runs_nothing(
    policy: str, ws: Path, visible_dir: Path
) -> None:
    approver = Approver(False)
    cmd = f"echo x > {visible_dir}/outside.txt"
    agent = _agent(ws, [{"command": cmd, "sandbox": "off"}], approval=policy, approver=approver)
    await agent.run("go")
    if policy != "read-only":
        assert len(approver.requests) == 1
        request = approver.requests[0]
        assert request.protected
        assert request.preview and "OUTSIDE the sandbox" in request.preview[0].path
    assert not (visible_dir / "outside.txt").exists()
    assert _results(agent)["b0"].is_error


@pytest.mark.usefixtures("sandbox")
async def test_outside_the_sandbox_without_an_approver_is_denied(
    ws: Path, visible_dir: Path
) -> None:
    cmd = f"echo x > {visible_dir}/outside.txt"
    agent = _agent(
        ws,
        [{"command": "ls", "sandbox": "off"}, {"command": cmd, "sandbox": "off"}],
        approval="auto",
    )
    await agent.run("go")
    assert not (visible_dir / "outside.txt").exists()
    assert all(r.is_error for r in _results(agent).values())


@pytest.mark.usefixtures("sandbox")
async def test_outside_the_sandbox_approved_runs_outside_with_allow_listed_env(
    ws: Path, visible_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-outside")
    cmd = f"echo x > {visible_dir}/outside.txt; printenv ANTHROPIC_API_KEY; echo end"
    agent = _agent(
        ws, [{"command": cmd, "sandbox": "off"}], approval="auto", approver=Approver(True)
    )
    await agent.run("go")
    r = _results(agent)["b0"]
    assert (visible_dir / "outside.txt").exists()  # the positive control
    assert "sk-ant-outside" not in r.content and r.metadata["sandbox"] == "off"


@pytest.mark.usefixtures("sandbox")
async def test_plan_mode_runs_the_vote_read_only_and_refuses_writes(ws: Path) -> None:
    agent = _agent(
        ws, [{"command": "ls -la"}, {"command": "echo x > made.txt"}], approval="read-only"
    )
    await agent.run("go")
    r = _results(agent)
    assert r["b0"].metadata["sandbox"] == "read-only" and not r["b0"].is_error
    assert r["b1"].is_error and not (ws / "made.txt").exists()


@pytest.mark.usefixtures("sandbox")
@pytest.mark.parametrize("session", ["read-only", "workspace-write"])
async def test_agent_sandbox_sets_the_mode_of_approved_calls(session: str, ws: Path) -> None:
    agent = _agent(ws, [{"command": "echo x > made.txt"}], approval="auto", sandbox=session)
    await agent.run("go")
    assert (ws / "made.txt").exists() == (session == "workspace-write")
    assert _results(agent)["b0"].metadata["sandbox"] == session


async def test_without_a_sandbox_every_call_asks(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import nb_tools.builtin._bash as bash_module

    monkeypatch.setenv("NB_TOOLS_BWRAP", "")
    monkeypatch.setattr(bash_module, "_warned", set())
    assert not sandbox_available(refresh=True).ok
    approver = Approver(False)
    agent = _agent(
        ws, [{"command": "ls"}, {"command": "git status"}], approval="ask", approver=approver
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        await agent.run("go")
    assert len(approver.requests) == 2  # even the read-only votes ask
    said = [w for w in caught if "no sandbox for shell commands" in str(w.message)]
    assert len(said) == 1  # said once
    # a direct call (nobody approved it) does not run at all
    tool = builtin_tools(ws, include=["bash"])[0]
    r = await tool.call(json.dumps({"command": "echo x > made.txt"}))  # type: ignore[misc]
    assert r.is_error and "no sandbox can start" in r.content
    assert not (ws / "made.txt").exists()
    monkeypatch.delenv("NB_TOOLS_BWRAP")
    sandbox_available(refresh=True)


@pytest.mark.usefixtures("sandbox")
async def test_kernel_env_is_given_only_when_asked_for(
    ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from nb_tools.sandbox import SandboxPolicy

    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-kernel-env")
    calls = [
        {"command": "printenv ANTHROPIC_API_KEY; echo end", "sandbox": "off"},
        {"command": "printenv ANTHROPIC_API_KEY; echo end"},
    ]
    policy = SandboxPolicy(mode="workspace-write", kernel_env=True)
    agent = _agent(ws, calls, approval="ask", approver=Approver(True), sandbox=policy)
    await agent.run("go")
    r = _results(agent)
    assert "sk-ant-kernel-env" in r["b0"].content  # off + kernel_env: the user's choice
    assert "sk-ant-kernel-env" not in r["b1"].content  # sandboxed: never


@pytest.mark.usefixtures("sandbox")
async def test_direct_executor_call_runs_read_only(ws: Path) -> None:
    from nb_tools.model import ToolCall
    from nb_tools.tool import Executor, Registry

    ex = Executor(Registry(*builtin_tools(ws, include=["bash"])))
    r = await ex.execute(ToolCall(id="d", name="bash", arguments='{"command": "echo x > f"}'))
    assert r.is_error and "Read-only file system" in r.content
    assert not (ws / "f").exists()
    boxed = Executor(Registry(*builtin_tools(ws, include=["bash"], sandbox="workspace-write")))
    r = await boxed.execute(ToolCall(id="e", name="bash", arguments='{"command": "echo x > f"}'))
    assert not r.is_error and (ws / "f").exists()  # the developer's explicit choice
