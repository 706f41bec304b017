"""Approval: policies, the approver, always-allow, protected calls, permission rules."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from agent_helpers import Recorder, results, wire

from nb_tools import Change, tool
from nb_tools.agent import (
    Agent,
    ApprovalDecided,
    ApprovalRequest,
    ApprovalRequested,
    Decision,
    PersonSource,
    PolicySource,
    RuleSource,
    ToolCallFinished,
    ToolCallStarted,
    denial_text,
)
from nb_tools.testing import ScriptedModel, call, reply

RAN: list[str] = []


@tool(register=False, requires_approval=True)
def write_note(text: str) -> str:
    """Writes a note (needs approval)."""
    RAN.append(f"write {text}")
    return f"wrote {text}"


@tool(register=False, requires_approval=True, read_only=True)
def read_secret(key: str) -> str:
    """Reads a secret: read-only but asks first."""
    RAN.append(f"read {key}")
    return f"secret {key}"


@tool(register=False)
def free(x: int) -> int:
    """Needs no approval."""
    RAN.append(f"free {x}")
    return x


@pytest.fixture(autouse=True)
def _clear_ran() -> None:
    RAN.clear()


def make(script: list[Any], **kwargs: Any) -> tuple[Agent, ScriptedModel, Recorder]:
    model = ScriptedModel(script)
    rec = Recorder()
    tools = kwargs.pop("tools", [write_note, read_secret, free])
    return Agent(model, tools=tools, on_event=rec, **kwargs), model, rec


def last_results(model: ScriptedModel) -> list[dict[str, Any]]:
    return wire(model.requests[-1].messages)[-1]["content"]


# -- the pipeline without the person (decide) ---------------------------------------------


class _Protected:
    """A tool that says every call touches a protected path."""

    def info(self) -> Any:
        from nb_tools import Info, Schema

        return Info(name="guard", parameters=Schema.object({"p": Schema.string("p")}))

    def is_protected_call(self, args: str) -> bool:
        return True

    def call(self, args: str) -> Any:
        raise AssertionError("never called here")


PROTECTED_READ = _Protected()


@pytest.mark.parametrize(
    ("policy", "name", "always", "expected"),
    [
        ("auto", "write_note", (), ("Allow", "policy:auto")),
        ("auto", "guard", (), ("Ask", "protection")),
        ("deny", "read_secret", (), ("Deny", "policy:deny")),
        # "Always allow" is a session rule: the meaning of any allow rule, under every policy
        ("deny", "write_note", ("write_note",), ("Allow", "rule:allow write_note [session]")),
        ("read-only", "free", (), ("Deny", "policy:read-only")),
        ("read-only", "write_note", (), ("Deny", "policy:read-only")),
        ("read-only", "read_secret", (), ("Deny", "policy:read-only")),
        ("ask", "write_note", (), ("Ask", "policy:ask")),
        ("ask", "write_note", ("write_note",), ("Allow", "rule:allow write_note [session]")),
        ("ask", "guard", ("guard",), ("Ask", "protection")),
        ("ask", "free", (), None),
        ("auto", "free", (), None),
    ],
)
async def test_decide(policy: Any, name: str, always: tuple[str, ...], expected: Any) -> None:
    from nb_tools import Registry
    from nb_tools.agent import Ask, decide, source_label
    from nb_tools.model import ToolCall

    registry = Registry(write_note, read_secret, free, PROTECTED_READ)
    args = {
        "write_note": '{"text": "a"}',
        "read_secret": '{"key": "k"}',
        "free": '{"x": 1}',
        "guard": '{"p": ".env"}',
    }[name]
    from nb_tools.permissions import PermissionRules

    rules = PermissionRules()
    rules.allow(*always, source="session")
    verdict = await decide(
        ToolCall(id="c", name=name, arguments=args), tools=registry, approval=policy, rules=rules
    )
    got = None if verdict is None else (type(verdict).__name__, source_label(verdict.source))
    assert got == expected
    if isinstance(verdict, Ask):
        assert verdict.source.kind in ("policy", "protection")


def test_denial_text() -> None:
    from nb_tools.agent import Deny, PersonSource, PolicySource
    from nb_tools.permissions import parse_rule

    asked = PolicySource(policy="ask")
    assert denial_text(Deny(source=PersonSource(asked=asked))) == "The user denied this call."
    assert denial_text(Deny(source=PersonSource(asked=asked), message="use tabs")) == (
        "The user denied this call. Message from the user: use tabs"
    )
    by_rule = PersonSource(asked=RuleSource(rule=parse_rule("deploy", "ask", "project")))
    assert denial_text(Deny(source=by_rule, message="not now")) == (
        "The user denied this call. Message from the user: not now"
    )
    assert denial_text(Deny(source=PolicySource(policy="deny"), message="no")) == (
        "This call was denied (policy:deny): no. The tool did not run."
    )


# -- policies in a run ---------------------------------------------------------------------


async def test_auto_approves_without_asking() -> None:
    asked: list[ApprovalRequest] = []
    agent, _model, rec = make(
        [reply("", call("write_note", text="a", id="w")), reply("ok")],
        approval="auto",
        approver=lambda r: asked.append(r) or False,
    )
    await agent.run("go")
    assert RAN == ["write a"]
    assert asked == []
    assert rec.of(ApprovalDecided) == [
        ApprovalDecided(
            call_id="w", approved=True, by="policy:auto", source=PolicySource(policy="auto")
        )
    ]
    assert rec.of(ApprovalRequested) == []


async def test_deny_policy_refuses_and_the_model_reads_why() -> None:
    agent, model, rec = make(
        [reply("", call("write_note", text="a", id="w"), call("free", x=1, id="f")), reply("ok")],
        approval="deny",
    )
    await agent.run("go")
    assert RAN == ["free 1"]
    assert (
        last_results(model)
        == results(
            (
                "w",
                "This call was denied (policy:deny): the approval policy is 'deny', which "
                "refuses every call that needs approval. The tool did not run.",
                True,
            ),
            ("f", "1", False),
        )["content"]
    )
    assert [e.status for e in rec.of(ToolCallFinished)] == ["denied", "ok"]


@tool(register=False, read_only=True)
def peek(key: str) -> str:
    """Reads without asking."""
    RAN.append(f"peek {key}")
    return f"peeked {key}"


async def test_read_only_policy_lets_readers_through() -> None:
    # Changed deliberately (plan mode is read-only): a read-only tool that still asks for
    # approval (read_secret) is refused too, since plan mode asks nobody.
    agent, model, _ = make(
        [
            reply(
                "",
                call("peek", key="k", id="p"),
                call("read_secret", key="k", id="r"),
                call("write_note", text="t", id="w"),
            ),
            reply("ok"),
        ],
        approval="read-only",
        tools=[peek, read_secret, write_note],
    )
    await agent.run("go")
    assert RAN == ["peek k"]
    got = last_results(model)
    assert (got[0]["content"], got[0]["is_error"]) == ("peeked k", False)
    assert got[1] == {
        "type": "tool_result",
        "tool_use_id": "r",
        "is_error": True,
        "content": "plan mode: read_secret needs approval (the tool asks before it runs), and "
        "plan mode runs only calls that need none; ask the user to allow it with a rule "
        "(read_secret) or to leave plan mode (approval 'ask'). The tool did not run.",
    }
    assert got[2]["is_error"] and got[2]["content"].startswith(
        "plan mode: write_note is not read-only"
    )


async def test_calls_without_approval_need_no_decision() -> None:
    agent, _, rec = make([reply("", call("free", x=2)), reply("ok")], approval="deny")
    await agent.run("go")
    assert RAN == ["free 2"]
    assert rec.of(ApprovalDecided) == []
    assert rec.of(ToolCallStarted)[0].needs_approval is False


# -- asking the approver ------------------------------------------------------------------


async def test_ask_approves_with_a_sync_approver_and_shows_the_request() -> None:
    seen: list[ApprovalRequest] = []

    def approver(request: ApprovalRequest) -> bool:
        seen.append(request)
        return True

    agent, _, rec = make(
        [reply("", call("write_note", text="hello", id="w")), reply("ok")], approver=approver
    )
    await agent.run("go")
    assert RAN == ["write hello"]
    (req,) = seen
    assert (req.call.id, req.call.name, req.arguments) == ("w", "write_note", {"text": "hello"})
    assert req.info is not None and req.info.name == "write_note"
    assert rec.kinds().index("ApprovalRequested") < rec.kinds().index("ApprovalDecided")
    assert rec.of(ApprovalDecided) == [
        ApprovalDecided(
            call_id="w",
            approved=True,
            by="user",
            source=PersonSource(asked=PolicySource(policy="ask")),
        )
    ]


async def test_ask_denial_with_message_reaches_the_model_as_an_error_result() -> None:
    async def approver(request: ApprovalRequest) -> Decision:
        await asyncio.sleep(0)
        return Decision(approved=False, message="use tabs, not spaces")

    agent, model, rec = make(
        [reply("", call("write_note", text="x", id="w")), reply("ok")], approver=approver
    )
    result = await agent.run("go")
    assert RAN == []
    assert result.stop_reason == "end_turn"
    assert wire(model.requests[1].messages)[-1] == results(
        ("w", "The user denied this call. Message from the user: use tabs, not spaces", True)
    )
    assert rec.of(ToolCallFinished)[0].status == "denied"
    assert rec.of(ApprovalDecided)[0].message == "use tabs, not spaces"


async def test_ask_without_an_approver_fails_closed() -> None:
    agent, model, _ = make([reply("", call("write_note", text="x", id="w")), reply("ok")])
    await agent.run("go")
    assert RAN == []
    (r,) = last_results(model)
    assert r["is_error"]
    assert "no approver is configured" in r["content"]


async def test_always_allow_remembers_the_tool_for_the_session() -> None:
    asked: list[str] = []

    def approver(request: ApprovalRequest) -> Decision:
        asked.append(request.call.id)
        return Decision(approved=True, remember=True)

    agent, _, rec = make(
        [
            reply("", call("write_note", text="1", id="a"), call("write_note", text="2", id="b")),
            reply("", call("write_note", text="3", id="c")),
            reply("ok"),
        ],
        approver=approver,
    )
    await agent.run("go")
    assert asked == ["a"]
    assert RAN == ["write 1", "write 2", "write 3"]
    assert {r.text for r in agent.rules.rules if r.source == "session"} == {"write_note"}
    assert [(d.call_id, d.by) for d in rec.of(ApprovalDecided)] == [
        ("a", "user"),
        ("b", "rule:allow write_note [session]"),
        ("c", "rule:allow write_note [session]"),
    ]


async def test_approver_that_raises_denies_the_call() -> None:
    def approver(request: ApprovalRequest) -> bool:
        raise RuntimeError("widget gone")

    agent, model, _ = make(
        [reply("", call("write_note", text="x")), reply("ok")], approver=approver
    )
    with pytest.warns(RuntimeWarning, match="widget gone"):
        await agent.run("go")
    assert RAN == []
    assert "widget gone" in last_results(model)[0]["content"]


async def test_invalid_arguments_skip_approval_and_get_the_validation_error() -> None:
    asked: list[str] = []
    agent, model, _ = make(
        [reply("", call("write_note", raw='{"text": 5}', id="w")), reply("ok")],
        approver=lambda r: asked.append(r.call.id) or True,
    )
    await agent.run("go")
    assert asked == []
    (r,) = last_results(model)
    assert r["is_error"] and "invalid arguments for write_note" in r["content"]


# -- protected calls, previews, permission rules --------------------------------------------


class Guarded:
    """A writer that reports protected paths and previews its change."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def info(self) -> Any:
        from nb_tools import Info, Schema

        return Info(
            name="guarded_write",
            description="writes a file",
            parameters=Schema.object({"path": Schema.string("where")}, "path"),
        )

    def is_protected_call(self, args: str) -> bool:
        return ".env" in args

    def preview(self, args: str) -> Change:
        return Change(path="notes.txt", before="old\n", after="new\n")

    async def call(self, args: str) -> Any:
        from nb_tools import Result

        self.calls.append(args)
        return Result(content="written")


async def test_protected_calls_are_asked_even_under_auto() -> None:
    guarded = Guarded()
    seen: list[ApprovalRequest] = []
    agent, _model, rec = make(
        [
            reply(
                "",
                call("guarded_write", path=".env", id="p"),
                call("guarded_write", path="notes.txt", id="n"),
            ),
            reply("ok"),
        ],
        tools=[guarded],
        approval="auto",
        approver=lambda r: seen.append(r) or False,
    )
    await agent.run("go")
    assert [r.call.id for r in seen] == ["p"]
    assert seen[0].protected
    assert guarded.calls == ['{"path": "notes.txt"}']
    started = rec.of(ToolCallStarted)[0]
    assert started.preview == (Change(path="notes.txt", before="old\n", after="new\n"),)
    assert seen[0].preview == started.preview


async def test_protected_call_without_approver_is_denied_under_auto() -> None:
    guarded = Guarded()
    agent, model, _ = make(
        [reply("", call("guarded_write", path=".env")), reply("ok")],
        tools=[guarded],
        approval="auto",
    )
    await agent.run("go")
    assert guarded.calls == []
    assert "protected path" in last_results(model)[0]["content"]


async def test_permission_rule_is_consulted_first() -> None:
    def rule(tc: Any, info: Any) -> Decision | None:
        if tc.name == "free":
            return Decision(approved=False, by="rule:deny free", message="not today")
        if tc.name == "write_note":
            return Decision(approved=True, by="rule:allow write_note")
        return None

    agent, model, rec = make(
        [
            reply(
                "",
                call("free", x=1, id="f"),
                call("write_note", text="t", id="w"),
                call("read_secret", key="k", id="r"),
            ),
            reply("ok"),
        ],
        permission=rule,
        approval="deny",
    )
    await agent.run("go")
    assert RAN == ["write t"]
    assert [(d.call_id, d.approved, d.by) for d in rec.of(ApprovalDecided)] == [
        ("f", False, "rule:deny free"),
        ("w", True, "rule:allow write_note"),
        ("r", False, "policy:deny"),
    ]
    assert last_results(model)[0]["content"] == (
        "This call was denied (rule:deny free): not today. The tool did not run."
    )


async def test_approvals_are_all_decided_before_any_call_runs() -> None:
    def approver(request: ApprovalRequest) -> bool:
        RAN.append(f"ask {request.call.id}")
        return True

    agent, _, _ = make(
        [
            reply(
                "",
                call("write_note", text="1", id="a"),
                call("free", x=1, id="f"),
                call("write_note", text="2", id="b"),
            ),
            reply("ok"),
        ],
        approver=approver,
    )
    await agent.run("go")
    assert RAN == ["ask a", "ask b", "write 1", "free 1", "write 2"]


async def test_a_failing_permission_rule_denies_the_call() -> None:
    def rule(tc: Any, info: Any) -> Decision | None:
        raise KeyError("rules file missing")

    agent, model, rec = make(
        [reply("", call("free", x=1, id="f")), reply("ok")], permission=rule, approval="auto"
    )
    await agent.run("go")
    assert RAN == []
    (decided,) = rec.of(ApprovalDecided)
    assert (decided.approved, decided.by) == (False, "permission-error")
    assert "rules file missing" in last_results(model)[0]["content"]
