"""Permission rules inside the loop: they come before the tool's own approval setting and
the policy, and every decision names the rule that made it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agent_helpers import Recorder

from nb_tools import tool
from nb_tools.agent import Agent, ApprovalDecided, ApprovalRequest, Decision
from nb_tools.permissions import PermissionRules
from nb_tools.testing import ScriptedModel, call, reply

RAN: list[str] = []


@tool(register=False, requires_approval=True)
def deploy(target: str) -> str:
    """Deploys (needs approval)."""
    RAN.append(target)
    return f"deployed {target}"


@tool(register=False)
def lookup(term: str) -> str:
    """Needs no approval."""
    RAN.append(term)
    return term


class Protected:
    """A tool that says every call touches a protected path."""

    def __init__(self) -> None:
        self.inner = tool(register=False, name="edit_secret")(lambda path: "edited")

    def info(self):
        return self.inner.info()

    async def call(self, args):
        RAN.append("edit_secret")
        return await self.inner.call(args)

    def is_protected_call(self, args: str) -> bool:
        return True


def run(
    rules: PermissionRules,
    calls: list[Any],
    approval: str = "ask",
    approver: Any = None,
    tools: list[Any] | None = None,
) -> tuple[Recorder, ScriptedModel, Agent]:
    RAN.clear()
    model = ScriptedModel([reply("", *calls), reply("done")])
    rec = Recorder()
    agent = Agent(
        model,
        tools=tools or [deploy, lookup],
        rules=rules,
        approval=approval,
        approver=approver,
        on_event=rec,
    )
    agent.run_sync("go")
    return rec, model, agent


def decisions(rec: Recorder) -> list[tuple[bool, str]]:
    return [(e.approved, e.by) for e in rec.of(ApprovalDecided)]


def test_allow_rule_runs_a_call_that_would_need_approval() -> None:
    rules = PermissionRules(root=Path("/r"))
    rules.allow("deploy(staging)")
    rec, _, _ = run(rules, [call("deploy", target="staging")])
    assert RAN == ["staging"]
    assert decisions(rec) == [(True, "rule:allow deploy(staging) [session]")]


def test_deny_rule_beats_the_policy_and_the_model_reads_the_rule() -> None:
    rules = PermissionRules(root=Path("/r"))
    rules.allow("deploy")
    rules.deny("deploy(prod*)", source="project")
    rec, model, _ = run(rules, [call("deploy", target="production")], approval="auto")
    assert RAN == []
    assert decisions(rec) == [(False, "rule:deny deploy(prod*) [project]")]
    sent = model.requests[1].messages[-1].content[0].result
    assert sent.is_error and "deny deploy(prod*)" in sent.content


def test_ask_rule_asks_even_under_auto_and_for_tools_without_approval() -> None:
    rules = PermissionRules(root=Path("/r"))
    rules.ask("lookup(secret*)")
    asked: list[ApprovalRequest] = []

    def approver(req: ApprovalRequest) -> bool:
        asked.append(req)
        return True

    rec, _, _ = run(
        rules,
        [call("lookup", term="secrets"), call("lookup", term="plain")],
        approval="auto",
        approver=approver,
    )
    assert [r.call.arguments for r in asked] == ['{"term": "secrets"}']
    assert RAN == ["secrets", "plain"]
    assert decisions(rec) == [(True, "user, asked by rule:ask lookup(secret*) [session]")]


def test_always_allow_writes_a_session_rule() -> None:
    RAN.clear()
    rules = PermissionRules(root=Path("/r"))
    answers = iter([Decision(approved=True, remember=True)])
    model = ScriptedModel(
        [
            reply("", call("deploy", target="a")),
            reply("done"),
            reply("", call("deploy", target="b")),
            reply("ok"),
        ]
    )
    rec = Recorder()
    agent = Agent(
        model, tools=[deploy], rules=rules, approver=lambda r: next(answers), on_event=rec
    )
    agent.run_sync("go")
    assert [str(r) for r in rules.rules] == ["allow deploy"]
    agent.run_sync("again")  # the approver would raise StopIteration if asked again
    assert RAN == ["a", "b"]
    assert decisions(rec) == [(True, "user"), (True, "rule:allow deploy [session]")]


def test_an_allow_rule_never_waives_a_protected_path() -> None:
    rules = PermissionRules(root=Path("/r"))
    rules.allow("edit_secret")
    rec, _, _ = run(rules, [call("edit_secret", path=".env")], approval="auto", tools=[Protected()])
    assert RAN == []
    assert decisions(rec)[0][0] is False  # no approver: a protected call is refused


def test_a_person_asked_by_a_rule_who_denies_is_quoted_to_the_model() -> None:
    # Issue 15: the "asked by <rule>" display label once hid that the user denied.
    rules = PermissionRules(root=Path("/r"))
    rules.ask("lookup(secret*)")
    rec, model, _ = run(
        rules,
        [call("lookup", term="secrets", id="s")],
        approver=lambda r: Decision(approved=False, message="not the secrets"),
    )
    assert RAN == []
    sent = model.requests[1].messages[-1].content[0].result
    assert (sent.content, sent.is_error) == (
        "The user denied this call. Message from the user: not the secrets",
        True,
    )
    assert decisions(rec) == [(False, "user, asked by rule:ask lookup(secret*) [session]")]
