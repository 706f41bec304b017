"""The approval pipeline end to end: deny beats ask beats allow across deciders, a decider
that fails denies, nobody clicking runs nothing, and what the model reads follows the
verdict's source."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from approvals_helpers import Approver, call, drive

from nb_tools import tool
from nb_tools.agent import (
    ApprovalRequested,
    Decision,
    ErrorSource,
    PermissionSource,
    PersonSource,
    PolicySource,
    RuleSource,
)
from nb_tools.permissions import PermissionRules, parse_rule


def marker_tool(root: Path, **options: Any) -> Any:
    @tool(register=False, name="mark", **options)
    def mark(tag: str) -> str:
        """Leaves a marker file named after the tag."""
        (root / tag).write_text("ran")
        return f"marked {tag}"

    return mark


def ran(root: Path) -> list[str]:
    return sorted(p.name for p in root.iterdir())


class BrokenRules(PermissionRules):
    def check(self, name: str, args: Any, tool: Any = None) -> Any:
        raise RuntimeError("settings file unreadable")


@pytest.mark.parametrize("policy", ["ask", "auto", "read-only"])
async def test_rules_that_fail_deny_every_call(tmp_path: Path, policy: str) -> None:
    out = await drive(
        [call("mark", tag="m", id="c")],
        tools=[marker_tool(tmp_path, read_only=True)],
        approval=policy,
        approver=Approver(answers=[True]),
        rules=BrokenRules(root=tmp_path),
    )
    assert ran(tmp_path) == []
    assert out.result("c") == (
        "This call was denied (rules-error): the rules check failed (RuntimeError: settings "
        "file unreadable), so the call was denied. The tool did not run.",
        True,
    )
    (decided,) = out.decided()
    assert decided.source == ErrorSource(stage="decider", decider="rules")


@pytest.mark.parametrize(
    "permission",
    [
        lambda c, i: 1 / 0,
        lambda c, i: "yes",  # not a Decision: fail closed
        lambda c, i: True,
    ],
)
async def test_a_permission_callable_that_fails_denies(tmp_path: Path, permission: Any) -> None:
    out = await drive(
        [call("mark", tag="m", id="c")],
        tools=[marker_tool(tmp_path)],
        approval="auto",
        permission=permission,
    )
    assert ran(tmp_path) == []
    assert out.result("c")[0].startswith(
        "This call was denied (permission-error): the permission check failed"
    )


async def test_an_async_permission_callable_decides(tmp_path: Path) -> None:
    async def permission(c: Any, info: Any) -> Decision:
        return Decision(approved=False, by="ci-policy", message="frozen")

    out = await drive(
        [call("mark", tag="m", id="c")],
        tools=[marker_tool(tmp_path)],
        approval="auto",
        permission=permission,
    )
    assert ran(tmp_path) == []
    assert out.result("c") == (
        "This call was denied (ci-policy): frozen. The tool did not run.",
        True,
    )
    assert out.decided()[0].source == PermissionSource(by="ci-policy")


@pytest.mark.parametrize(
    "answer",
    [ValueError("widget gone"), "yes", None, 1],
)
async def test_an_approver_that_fails_denies(tmp_path: Path, answer: Any) -> None:
    def approver(request: Any) -> Any:
        if isinstance(answer, Exception):
            raise answer
        return answer

    with pytest.warns(RuntimeWarning) if isinstance(answer, Exception) else _nothing():
        out = await drive(
            [call("mark", tag="m", id="c")],
            tools=[marker_tool(tmp_path, requires_approval=True)],
            approver=approver,
        )
    assert ran(tmp_path) == []
    content, is_error = out.result("c")
    assert is_error and content.startswith("This call was denied (approver-error)")


class _nothing:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


@pytest.mark.parametrize("policy", ["ask", "auto"])
async def test_nobody_clicking_runs_nothing(tmp_path: Path, policy: str) -> None:
    rules = PermissionRules(root=tmp_path)
    rules.ask("mark")
    approver = Approver(stop=True)
    out = await drive(
        [call("mark", tag="m", id="c"), call("mark", tag="n", id="d")],
        tools=[marker_tool(tmp_path)],
        approval=policy,
        approver=approver,
        rules=rules,
    )
    assert out.stopped and approver.asked == ["c"]
    assert ran(tmp_path) == []
    assert out.result("c")[1] and out.result("d")[1]


async def test_a_deny_rule_beats_auto_an_allow_rule_and_always_allow(tmp_path: Path) -> None:
    rules = PermissionRules(root=tmp_path)
    rules.allow("mark")
    rules.deny("mark(secret*)")
    out = await drive(
        [call("mark", tag="secret-1", id="c"), call("mark", tag="ok", id="d")],
        tools=[marker_tool(tmp_path, requires_approval=True)],
        approval="auto",
        rules=rules,
    )
    assert ran(tmp_path) == ["ok"]
    assert out.result("c") == (
        "This call was denied by the permission rule 'deny mark(secret*)' (from session). "
        "The tool did not run.",
        True,
    )
    assert [d.source for d in out.decided()] == [
        RuleSource(rule=parse_rule("mark(secret*)", "deny")),
        RuleSource(rule=parse_rule("mark", "allow")),
    ]


async def test_a_deny_rule_beats_an_ask_rule(tmp_path: Path) -> None:
    rules = PermissionRules(root=tmp_path)
    rules.ask("mark")
    rules.deny("mark(x)")
    approver = Approver(answers=[True])
    await drive(
        [call("mark", tag="x", id="c")],
        tools=[marker_tool(tmp_path)],
        approver=approver,
        rules=rules,
    )
    assert approver.requests == [] and ran(tmp_path) == []


async def test_an_ask_rule_asks_under_auto_even_for_a_tool_that_never_asks(
    tmp_path: Path,
) -> None:
    rules = PermissionRules(root=tmp_path)
    rules.ask("mark(prod*)")
    approver = Approver(answers=[Decision(approved=False, message="not prod")])
    out = await drive(
        [call("mark", tag="prod", id="c"), call("mark", tag="dev", id="d")],
        tools=[marker_tool(tmp_path)],
        approval="auto",
        approver=approver,
        rules=rules,
    )
    assert approver.asked == ["c"] and ran(tmp_path) == ["dev"]
    assert out.result("c") == ("The user denied this call. Message from the user: not prod", True)
    requested = [e for e in out.events if isinstance(e, ApprovalRequested)]
    assert requested[0].reason == RuleSource(rule=parse_rule("mark(prod*)", "ask"))
    assert out.decided()[0].source == PersonSource(asked=requested[0].reason)


async def test_a_permission_denial_beats_an_ask_rule(tmp_path: Path) -> None:
    rules = PermissionRules(root=tmp_path)
    rules.ask("mark")
    approver = Approver(answers=[True])
    out = await drive(
        [call("mark", tag="m", id="c")],
        tools=[marker_tool(tmp_path)],
        approver=approver,
        rules=rules,
        permission=lambda c, i: Decision(approved=False, by="gate", message="no"),
    )
    assert approver.requests == [] and ran(tmp_path) == []
    assert out.result("c")[0] == "This call was denied (gate): no. The tool did not run."


async def test_a_permission_allow_does_not_lift_an_ask_rule(tmp_path: Path) -> None:
    rules = PermissionRules(root=tmp_path)
    rules.ask("mark")
    approver = Approver(answers=[False])
    await drive(
        [call("mark", tag="m", id="c")],
        tools=[marker_tool(tmp_path)],
        approval="auto",
        approver=approver,
        rules=rules,
        permission=lambda c, i: Decision(approved=True, by="gate"),
    )
    assert approver.asked == ["c"] and ran(tmp_path) == []


@pytest.mark.parametrize(
    ("policy", "expected"),
    [
        ("ask", []),
        ("auto", ["m"]),
        ("deny", []),
        ("read-only", []),
    ],
)
async def test_each_policy_for_a_call_that_needs_approval(
    tmp_path: Path, policy: str, expected: list[str]
) -> None:
    approver = Approver(answers=[False])
    out = await drive(
        [call("mark", tag="m", id="c")],
        tools=[marker_tool(tmp_path, requires_approval=True)],
        approval=policy,
        approver=approver,
    )
    assert ran(tmp_path) == expected
    assert approver.asked == (["c"] if policy == "ask" else [])
    source = out.decided()[0].source
    if policy == "ask":
        assert source == PersonSource(asked=PolicySource(policy="ask"))
    else:
        assert source is not None and source.kind == "policy"


async def test_a_call_that_needs_no_approval_runs_under_ask_without_a_decision(
    tmp_path: Path,
) -> None:
    approver = Approver(stop=True)
    out = await drive(
        [call("mark", tag="m", id="c")], tools=[marker_tool(tmp_path)], approver=approver
    )
    assert ran(tmp_path) == ["m"] and out.decided() == []


async def test_approvals_are_all_decided_before_anything_runs(tmp_path: Path) -> None:
    approver = Approver(answers=[True, Decision(approved=False, message="second no")])
    out = await drive(
        [call("mark", tag="a", id="a"), call("mark", tag="b", id="b")],
        tools=[marker_tool(tmp_path, requires_approval=True)],
        approver=approver,
    )
    assert approver.asked == ["a", "b"] and ran(tmp_path) == ["a"]
    assert out.status("b") == "denied"


@pytest.mark.parametrize("policy", ["ask", "auto", "deny", "read-only"])
async def test_an_unknown_tool_gets_the_list_of_tools(tmp_path: Path, policy: str) -> None:
    approver = Approver(stop=True)
    out = await drive(
        [call("rm_rf", path="/", id="c")],
        tools=[marker_tool(tmp_path)],
        approval=policy,
        approver=approver,
    )
    assert out.result("c") == ("unknown tool 'rm_rf'; available tools: mark", True)
    assert approver.requests == [] and ran(tmp_path) == []
