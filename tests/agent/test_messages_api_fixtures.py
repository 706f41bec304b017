"""Tool loops whose turns are the API's own recorded streams (tests/model/fixtures, served
byte for byte by the fake server): a tool call, a call cut by max_tokens, refusals (after a
signed thinking block, after a server tool), compaction, redacted thinking with a web search
and citations. Every request is checked against the API's rules."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from agent_helpers import Recorder
from messages_rules import check_all

from nb_tools import tool
from nb_tools.agent import Agent
from nb_tools.agent._notices import CitationsReceived, ContextCompacted, RunNotice, ServerToolUsed
from nb_tools.model import (
    CompactionBlock,
    RedactedThinkingBlock,
    ServerToolResultBlock,
    ServerToolUseBlock,
    ThinkingBlock,
)
from nb_tools.model.anthropic import AnthropicProvider
from nb_tools.testing import Reply, call, reply
from nb_tools.testing.server import FakeMessagesServer

FIXTURES = Path(__file__).parents[1] / "model" / "fixtures"
calls: list[tuple[str, dict[str, Any]]] = []


def recorded(name: str) -> Reply:
    return Reply(raw_sse=(FIXTURES / name).read_bytes())


@tool(register=False)
def get_weather(location: str, units: str = "c") -> str:
    """The weather at a place."""
    calls.append(("get_weather", {"location": location, "units": units}))
    return "Sunny, 21 degrees"


@tool(register=False)
def make_file(filename: str, lines_of_text: list[str]) -> str:
    """Write a file."""
    calls.append(("make_file", {"filename": filename}))
    return "written"


_providers: list[AnthropicProvider] = []


@pytest.fixture
async def server() -> AsyncIterator[FakeMessagesServer]:
    calls.clear()
    with FakeMessagesServer() as srv:
        yield srv
        check_all(srv.requests, srv.signed)
        while _providers:
            await _providers.pop().client.close()


def agent_for(srv: FakeMessagesServer, **kwargs: Any) -> tuple[Agent, Recorder]:
    rec = Recorder()
    provider = AnthropicProvider(
        "claude-sonnet-4-5", base_url=srv.base_url, api_key="test", max_retries=0
    )
    _providers.append(provider)
    agent = Agent(provider, tools=[get_weather, make_file], approval="auto", on_event=rec, **kwargs)
    return agent, rec


def body(srv: FakeMessagesServer, i: int) -> dict[str, Any]:
    return [r for r in srv.requests if r.path == "/v1/messages"][i].body


async def test_recorded_tool_call_runs_with_its_exact_arguments(
    server: FakeMessagesServer,
) -> None:
    server.push(recorded("cassette/555fb399_0.sse"), reply("It is sunny."))
    agent, _ = agent_for(server)
    result = await agent.run("weather in SF?")
    assert (result.stop_reason, result.text) == ("end_turn", "It is sunny.")
    assert [c[0] for c in calls] == ["get_weather"]
    sent_call = body(server, 1)["messages"][1]["content"][-1]
    assert sent_call["type"] == "tool_use" and sent_call["name"] == "get_weather"
    assert body(server, 1)["messages"][2]["content"][0]["tool_use_id"] == sent_call["id"]


async def test_recorded_call_cut_by_max_tokens_is_retried(server: FakeMessagesServer) -> None:
    server.push(
        recorded("sdk/incomplete_partial_json_response.txt"),
        reply("", call("make_file", filename="taxes.txt", lines_of_text=["# Taxes"])),
        reply("Saved."),
    )
    agent, rec = agent_for(server, max_tokens=2048)
    result = await agent.run("write a tax guide")
    assert (result.stop_reason, calls) == ("end_turn", [("make_file", {"filename": "taxes.txt"})])
    assert (body(server, 0)["max_tokens"], body(server, 1)["max_tokens"]) == (2048, 10240)
    assert body(server, 1)["messages"] == body(server, 0)["messages"]  # the cut turn left out
    assert "invalid json" not in json.dumps(body(server, 2)).lower()
    assert [n.kind for n in rec.of(RunNotice)] == ["retry_max_tokens"]


async def test_recorded_refusal_after_thinking_drops_the_turn(server: FakeMessagesServer) -> None:
    server.push(recorded("sdk/stream-a-refusal.sse"), reply("Hello."))
    agent, _ = agent_for(server)
    result = await agent.run("hi claudius, what is a solar eclipse?")
    assert result.stop_reason == "refusal" and "refused turn was dropped" in (result.error or "")
    assert agent.messages == ()
    await agent.run("what is an eclipse?")
    assert body(server, 1)["messages"] == [
        {
            "role": "user",
            "content": [
                {
                    "type": "text",
                    "text": "what is an eclipse?",
                    "cache_control": {"type": "ephemeral", "ttl": "1h"},
                }
            ],
        }
    ]


async def test_recorded_refusal_after_a_server_tool_runs_nothing(
    server: FakeMessagesServer,
) -> None:
    server.push(
        reply("", call("get_weather", location="Paris")), recorded("sdk/stream-a-toolrefusal.sse")
    )
    agent, rec = agent_for(server, server_tools=["web_search"])
    result = await agent.run("weather?")
    assert result.stop_reason == "refusal"
    assert [c[0] for c in calls] == ["get_weather"]  # the first turn's call only
    # the tool result stays (it answers a call), the refused turn is gone
    assert [m.role for m in agent.messages] == ["user", "assistant", "user"]
    assert [e.name for e in rec.of(ServerToolUsed)] == ["web_search"]


async def test_recorded_compaction_is_kept_and_sent_back(server: FakeMessagesServer) -> None:
    server.push(recorded("sdk/compaction_response.txt"), reply("Sure."))
    agent, rec = agent_for(server)
    await agent.run("hello")
    block = agent.messages[1].content[0]
    assert block == CompactionBlock(
        content="Earlier conversation summarized.",
        encrypted_content="EpwBCioIDxgCEAEYASJALd_opaque_compaction_payload",
    )
    assert [e.how for e in rec.of(ContextCompacted)] == ["server"]
    await agent.run("go on")
    assert body(server, 1)["messages"][1]["content"][0] == {
        "type": "compaction",
        "content": "Earlier conversation summarized.",
        "encrypted_content": "EpwBCioIDxgCEAEYASJALd_opaque_compaction_payload",
    }


async def test_recorded_redacted_thinking_search_and_citations(
    server: FakeMessagesServer,
) -> None:
    server.push(recorded("authored/web_search_citations_redacted.sse"), reply("You're welcome."))
    agent, rec = agent_for(server, server_tools=["web_search"])
    result = await agent.run("weather in NYC?")
    assert result.usage.web_search_requests == 1 and result.usage.cost_usd > 0.01
    kinds = [type(b) for b in agent.messages[1].content]
    assert kinds[:3] == [RedactedThinkingBlock, ServerToolUseBlock, ServerToolResultBlock]
    (cited,) = rec.of(CitationsReceived)
    assert cited.citations[0]["url"] == "https://weather.example/nyc"
    await agent.run("thanks")
    resent = body(server, 1)["messages"][1]["content"]
    assert [b["type"] for b in resent] == [
        "redacted_thinking",
        "server_tool_use",
        "web_search_tool_result",
        "text",
    ]
    assert resent[3]["citations"][0]["cited_text"] == "Partly cloudy, high of 41F."


async def test_recorded_thinking_is_sent_back_unchanged(server: FakeMessagesServer) -> None:
    # stream-a-refusal.sse with its stop reason made end_turn (derived here): a model that
    # thinks unasked; its signed block must come back exactly as recorded
    raw = (FIXTURES / "sdk/stream-a-refusal.sse").read_bytes()
    ended = raw.replace(b'"stop_reason":"refusal"', b'"stop_reason":"end_turn"')
    server.push(Reply(raw_sse=ended), reply("Glad to help."))
    agent, _ = agent_for(server)
    await agent.run("hi claudius, what is a solar eclipse?")
    await agent.run("thanks")
    thinking = body(server, 1)["messages"][1]["content"][0]
    recorded_text = (
        "Simple educational question about what a solar eclipse is. This is benign general "
        'knowledge — definitions are fine. Also the user called me "claudius" — I\'m '
        "Claude. Minor correction or just roll with it politely."
    )
    assert thinking == {
        "type": "thinking",
        "thinking": recorded_text,
        "signature": "c3ludGhldGljLXNpZ25hdHVyZS1maXh0dXJlLWEtbm90LWEtcmVhbC1zaWduYXR1cmU=",
    }
    assert isinstance(agent.messages[1].content[0], ThinkingBlock)
