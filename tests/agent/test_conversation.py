"""The Conversation keeps roles alternating whatever order things come in; one turn of a
run can be taken and judged on its own (Run.turn returns GoOn or Finished)."""

from __future__ import annotations

import pytest
from agent_helpers import assistant, results, user, wire

from nb_tools import tool
from nb_tools.agent import Agent, Conversation, Finished, GoOn
from nb_tools.agent._run import Run
from nb_tools.model import Message, TextBlock, ToolResult, Usage
from nb_tools.testing import ScriptedModel, call, conversation_problems, reply


def said(role: str, text: str) -> Message:
    return Message(role=role, content=(TextBlock(text=text),))  # type: ignore[arg-type]


def test_a_prompt_after_tool_results_joins_their_message() -> None:
    c = Conversation([said("user", "go"), said("assistant", "calling")])
    c.answer([ToolResult(tool_use_id="t1", content="done")])
    c.add_prompt("and now?")
    assert [m.role for m in c.messages] == ["user", "assistant", "user"]
    assert wire(c.messages)[-1]["content"][-1] == {"type": "text", "text": "and now?"}


def test_a_prompt_after_a_failed_request_joins_the_unanswered_prompt() -> None:
    c = Conversation()
    c.add_prompt("first")
    c.add_prompt("second")
    assert wire(c.messages) == [
        {
            "role": "user",
            "content": [{"type": "text", "text": "first"}, {"type": "text", "text": "second"}],
        }
    ]


def test_an_empty_prompt_continues_or_says_why_not() -> None:
    c = Conversation([said("user", "q"), said("assistant", "a cut rep")])
    c.add_prompt("", last_stop_reason="max_tokens")
    assert wire(c.messages)[-1] == user("Continue from where you stopped.")
    c.add_prompt("")  # after a user message: nothing to add
    assert len(c) == 3
    with pytest.raises(ValueError, match="nothing to continue"):
        Conversation([said("user", "q"), said("assistant", "a")]).add_prompt("  ")


def test_a_refused_prompt_leaves_but_tool_results_stay() -> None:
    c = Conversation([said("user", "go"), said("assistant", "calling")])
    c.answer([ToolResult(tool_use_id="t1", content="r")])
    c.add_prompt("something refused")
    c.drop_refused_prompt()
    assert wire(c.messages)[-1] == results(("t1", "r", False))
    c2 = Conversation()
    c2.add_prompt("refused")
    c2.drop_refused_prompt()
    assert c2.messages == ()


def test_replies_are_assistant_messages_after_a_user_message() -> None:
    with pytest.raises(ValueError, match="starts with a user message"):
        Conversation().add_reply(said("assistant", "hi"))
    with pytest.raises(ValueError, match="assistant message"):
        Conversation([said("user", "q")]).add_reply(said("user", "no"))


def test_usage_adds_up_and_survives_clear() -> None:
    c = Conversation()
    c.count(Usage(input_tokens=3, output_tokens=4))
    c.count(Usage(input_tokens=1, output_tokens=1))
    c.add_prompt("x")
    c.clear()
    assert (c.usage.input_tokens, c.usage.output_tokens, len(c)) == (4, 5, 0)


def test_an_agent_given_a_conversation_shares_it() -> None:
    c = Conversation([said("user", "q"), said("assistant", "a")], Usage(input_tokens=7))
    agent = Agent(ScriptedModel([]), tools=[], messages=c)
    assert agent.conversation is c and agent.usage.input_tokens == 7
    assert agent.messages == c.messages


@tool(register=False, read_only=True)
def lookup(key: str) -> str:
    """Look a key up."""
    return key.upper()


async def test_one_turn_alone_goes_on_after_tool_calls_and_finishes_after_text() -> None:
    model = ScriptedModel([reply("Looking.", call("lookup", key="k", id="l1")), reply("K.")])
    agent = Agent(model, tools=[lookup])
    run = Run(agent.settings(), agent.conversation, [])
    run.start("what is k?")

    first = await run.turn()
    assert first == GoOn()
    assert wire(agent.messages) == [
        user("what is k?"),
        assistant("Looking.", ("l1", "lookup", '{"key": "k"}')),
        results(("l1", "K", False)),
    ]
    second = await run.turn()
    assert second == Finished("end_turn")
    assert wire(agent.messages)[-1] == assistant("K.")
    assert run.turns == 2 and conversation_problems(agent.messages) == []
    assert agent.usage == run.usage


async def test_one_turn_alone_reports_a_refusal_and_drops_the_prompt() -> None:
    model = ScriptedModel([reply("", stop_reason="refusal")])
    agent = Agent(model, tools=[])
    run = Run(agent.settings(), agent.conversation, [])
    run.start("bad request")
    outcome = await run.turn()
    assert isinstance(outcome, Finished) and outcome.stop_reason == "refusal"
    assert "declined" in (outcome.error or "")
    assert agent.messages == ()


async def test_two_agents_sharing_a_conversation_cannot_run_at_once() -> None:
    import asyncio

    release = asyncio.Event()

    @tool(register=False, read_only=True)
    async def hold() -> str:
        """Wait for the test."""
        await release.wait()
        return "held"

    shared = Conversation()
    first = Agent(
        ScriptedModel([reply("", call("hold")), reply("one")]), tools=[hold], messages=shared
    )
    second = Agent(ScriptedModel([reply("two")]), tools=[], messages=shared)
    task = asyncio.ensure_future(first.run("go"))
    while not first.running:
        await asyncio.sleep(0)
    with pytest.raises(RuntimeError, match="in use by another run"):
        await second.run("me too")
    release.set()
    assert (await task).text == "one"
    assert (await second.run("now")).text == "two"  # free again; roles still alternate
    assert conversation_problems(shared.messages) == []
