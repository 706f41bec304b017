"""A request that fails before any reply (a 401) leaves no prompt behind: the next prompt
is not joined to it, and sending the failed prompt again sends it once."""

from __future__ import annotations

from nb_tools.agent import Agent
from nb_tools.agent._conversation import Conversation
from nb_tools.model import Message, TextBlock
from nb_tools.model.anthropic import AnthropicProvider
from nb_tools.testing import FakeMessagesServer, Fault, reply


def texts(body: dict) -> list[tuple[str, list[str]]]:
    return [
        (m["role"], [b["text"] for b in m["content"] if b.get("type") == "text"])
        for m in body["messages"]
    ]


async def test_a_failed_prompt_is_not_joined_to_the_next_or_sent_twice() -> None:
    bad_key = Fault(status=401, message="invalid x-api-key")
    with FakeMessagesServer([reply("hello"), bad_key, reply("sent once")]) as server:
        provider = AnthropicProvider("claude-test", base_url=server.base_url, api_key="test")
        agent = Agent(provider)
        await agent.run("first")
        kept = agent.messages
        failed = await agent.run("what is 2+2?")
        assert failed.stop_reason == "error"
        assert "401" in (failed.error or "") or "x-api-key" in (failed.error or "")
        assert failed.error.endswith("(the prompt was not kept: run the cell again to send it)")
        assert agent.messages == kept  # nothing left to join the next prompt
        await agent.run("what is 2+2?")  # the cell run again
        assert texts(server.requests[-1].body) == [
            ("user", ["first"]),
            ("assistant", ["hello"]),
            ("user", ["what is 2+2?"]),
        ]


def test_take_back_restores_a_joined_prompt_and_refuses_more() -> None:
    results = Message(role="user", content=(TextBlock(text="tool results"),))
    conv = Conversation([Message(role="user", content=(TextBlock(text="a"),))])
    conv.add_reply(Message(role="assistant", content=(TextBlock(text="b"),)))
    conv._messages.append(results)  # a run stopped after answering its calls
    mark = conv.mark()
    conv.add_prompt("next")  # joins the user message
    assert conv.messages[-1].content[-1] == TextBlock(text="next")
    assert conv.take_back(mark) and conv.messages == mark
    conv.add_prompt("next")
    conv.add_reply(Message(role="assistant", content=(TextBlock(text="c"),)))
    assert not conv.take_back(mark)  # a reply came: the prompt is part of it now
