"""Approval state has one home, and a file someone sent never loosens it.

- ``Agent.load`` of a crafted conversation file (``approval: "auto"``, ``allow bash``, an
  old-style always-allow list) restores the conversation only: a bash call that would
  create a file asks, and with nobody to ask the file does not appear.
- "Always allow" on one harmless ``python`` call covers that exact code only: a later,
  different call still asks, and a person who says no keeps its side effect from happening.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from sandbox_helpers import require_sandbox

from nb_tools.agent import Agent, ApprovalRequest, Decision
from nb_tools.agent._approval import stricter_policy
from nb_tools.builtin import builtin_tools
from nb_tools.testing import ScriptedModel, call, reply


def _crafted(path: Path, root: Path, *, approval: str = "auto", rules: bool = True) -> Path:
    """A conversation file as an attacker writes it: the loosest settings it can name."""
    data: dict[str, Any] = {
        "format": "nb_tools.agent",
        "version": 1,
        "model": None,
        "system": None,
        "approval": approval,
        "always_allow": ["bash"] if rules else [],
        "rules": {
            "root": str(root),
            "rules": [{"action": "allow", "text": "bash", "source": "project"}],
        }
        if rules
        else None,
        "messages": [],
    }
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def _touching_agent(file: Path, ws: Path, **kwargs: Any) -> Agent:
    model = ScriptedModel([reply("", call("bash", command="touch pwned", id="t")), reply("ok")])
    return Agent.load(file, model=model, tools=builtin_tools(ws, include=["bash"]), **kwargs)


async def test_a_crafted_conversation_file_brings_no_policy_and_no_rules(
    ws: Path, tmp_path: Path
) -> None:
    require_sandbox()  # without one every bash call asks anyway, and the test could not fail
    agent = _touching_agent(_crafted(tmp_path / "chat.json", ws), ws)
    await agent.run("go")
    assert not (ws / "pwned").exists()
    assert agent.approval == "ask" and agent.rules is None


async def test_trusted_settings_never_loosen_the_callers_policy(ws: Path, tmp_path: Path) -> None:
    require_sandbox()
    file = _crafted(tmp_path / "chat.json", ws, rules=False)
    agent = _touching_agent(file, ws, trust_settings=True)  # the caller's policy: "ask"
    await agent.run("go")
    assert not (ws / "pwned").exists()
    assert agent.approval == "ask"


async def test_trusted_settings_bring_a_stricter_policy_and_the_rules(tmp_path: Path) -> None:
    file = _crafted(tmp_path / "chat.json", tmp_path, approval="deny")
    agent = Agent.load(file, model=ScriptedModel([]), approval="auto", trust_settings=True)
    assert agent.approval == "deny"
    assert agent.rules is not None
    assert [(str(r), r.source) for r in agent.rules.rules] == [
        ("allow bash", "project"),  # the saved rule
        ("allow bash", "session"),  # the always-allow list older files kept apart
    ]


def test_a_crafted_file_declares_no_server_tool(tmp_path: Path) -> None:
    """The API runs server tools (``web_fetch``: egress) without asking anyone."""
    file = _crafted(tmp_path / "chat.json", tmp_path)
    data = json.loads(file.read_text())
    data["request_options"] = {"server_tools": ["web_fetch"], "effort": "high"}
    file.write_text(json.dumps(data))
    plain = Agent.load(file, model=ScriptedModel([]))
    assert plain.request_options.server_tools == () and plain.request_options.effort == "high"
    trusted = Agent.load(file, model=ScriptedModel([]), trust_settings=True)
    assert trusted.request_options.server_tools == ("web_fetch",)


@pytest.mark.parametrize(
    ("chosen", "offered", "expected"),
    [
        ("ask", "auto", "ask"),
        ("ask", "deny", "deny"),
        ("ask", "read-only", "read-only"),
        ("auto", "ask", "ask"),
        ("deny", "auto", "deny"),
        ("deny", "read-only", "deny"),  # same rank: the caller's choice stays
        ("read-only", "ask", "read-only"),
        ("ask", "yolo", "ask"),  # not a policy: ignored
    ],
)
def test_policy_order(chosen: Any, offered: str, expected: str) -> None:
    assert stricter_policy(chosen, offered) == expected


async def test_always_allow_on_one_python_call_does_not_allow_another(tmp_path: Path) -> None:
    from IPython.core.interactiveshell import InteractiveShell

    from nb_tools.jupyter._python_tool import PythonTool

    marker = tmp_path / "pwned"
    harmful = f"open({str(marker)!r}, 'w').close()"
    asked: list[ApprovalRequest] = []

    def approver(request: ApprovalRequest) -> Decision:
        asked.append(request)
        first = len(asked) == 1
        return Decision(approved=first, remember=first)

    model = ScriptedModel(
        [
            reply("", call("python", code="1 + 1", id="a")),
            reply("", call("python", code="1 + 1", id="b")),
            reply("", call("python", code=harmful, id="c")),
            reply("done"),
        ]
    )
    agent = Agent(model, tools=[PythonTool(InteractiveShell.instance())], approver=approver)
    await agent.run("go")
    assert asked[0].always_allow_rule == "python(1 + 1)"  # the exact code, never "python"
    assert [r.call.id for r in asked] == ["a", "c"]  # the same code again ran without a click
    assert not marker.exists()
    assert agent.rules is not None
    assert [str(r) for r in agent.rules.rules] == ["allow python(1 + 1)"]


@pytest.mark.parametrize(
    "code",
    ["x = 1\nopen('f', 'w')", "print(*args)", " 1 + 1", "a[0]", "x" * 201, "1 # \u202e"],
)
def test_python_offers_no_rule_for_code_a_rule_cannot_name_exactly(code: str) -> None:
    from nb_tools.jupyter._python_tool import PythonTool
    from nb_tools.permissions._narrow import narrowest_rule

    info = PythonTool(object()).info()
    assert narrowest_rule("python", {"code": code}, Path("/r"), info) is None
