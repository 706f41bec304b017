"""End to end: the Agent against fake servers on loopback, through the real SDKs: the
Messages API (AnthropicProvider, the anthropic SDK), Chat Completions and Responses
(OpenAIProvider, the openai SDK). Every test runs on each of the three."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
from agent_helpers import Recorder, assistant, results, user, wire

from nb_tools import tool
from nb_tools.agent import (
    CUT_OFF_TEXT,
    Agent,
    ApprovalRequest,
    Decision,
    ModelFailed,
    ModelRetrying,
    TextDelta,
    ToolCallFinished,
)
from nb_tools.model.anthropic import AnthropicProvider
from nb_tools.model.openai import OpenAIProvider
from nb_tools.testing import Fault, call, conversation_problems, reply
from nb_tools.testing.openai_server import FakeOpenAIServer
from nb_tools.testing.server import FakeMessagesServer

APIS = ("messages", "chat", "responses")


@tool(register=False)
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool(register=False, requires_approval=True)
def save(text: str) -> str:
    """Saves text (needs approval)."""
    return "saved"


_providers: list[AnthropicProvider | OpenAIProvider] = []
_api: dict[int, str] = {}


@pytest.fixture(params=APIS)
async def server(request: pytest.FixtureRequest) -> AsyncIterator[FakeMessagesServer]:
    fake = FakeMessagesServer() if request.param == "messages" else FakeOpenAIServer()
    with fake as srv:
        _api[id(srv)] = request.param
        yield srv
        while _providers:  # close the SDK clients on the test's own loop
            await _providers.pop().client.close()
        _api.pop(id(srv), None)


def agent_for(srv: FakeMessagesServer, *tools: Any, **kwargs: Any) -> tuple[Agent, Recorder]:
    rec = Recorder()
    api = _api[id(srv)]
    provider: AnthropicProvider | OpenAIProvider
    if api == "messages":
        provider = AnthropicProvider("claude-test", base_url=srv.base_url, api_key="test")
    else:
        provider = OpenAIProvider("gpt-test", api=api, base_url=srv.base_url, api_key="test")  # type: ignore[arg-type]
    _providers.append(provider)
    return Agent(provider, tools=tools or [add], on_event=rec, **kwargs), rec


def _openai(srv: FakeMessagesServer) -> bool:
    return _api[id(srv)] != "messages"


def norm(srv: FakeMessagesServer, message: dict[str, Any]) -> dict[str, Any]:
    """OpenAI's APIs have no error flag on a tool's output: compare without it there."""
    if not _openai(srv):
        return message
    blocks = [{k: v for k, v in b.items() if k != "is_error"} for b in message["content"]]
    return {**message, "content": blocks}


def sent(srv: FakeMessagesServer, i: int) -> list[dict[str, Any]]:
    return [norm(srv, m) for m in wire(srv.requests[i].model_request.messages)]


def tool_names(srv: FakeMessagesServer, body: dict[str, Any]) -> list[str]:
    if _api[id(srv)] == "chat":
        return [t["function"]["name"] for t in body["tools"]]
    return [t["name"] for t in body["tools"]]


async def test_tool_round_through_the_sdk(server: FakeMessagesServer) -> None:
    server.push(reply("Let me add.", call("add", a=2, b=3, id="toolu_1")), reply("It is 5."))
    agent, rec = agent_for(server, system="Be exact.")
    result = await agent.run("2+3?")

    assert (result.stop_reason, result.text, result.turns) == ("end_turn", "It is 5.", 2)
    assert sent(server, 1) == [
        user("2+3?"),
        assistant("Let me add.", ("toolu_1", "add", '{"a": 2, "b": 3}')),
        norm(server, results(("toolu_1", "5", False))),
    ]
    assert wire(result.messages)[-1] == assistant("It is 5.")
    assert "".join(e.text for e in rec.of(TextDelta)) == "Let me add.It is 5."
    body = server.requests[0].body
    assert body["stream"] is True
    assert tool_names(server, body) == ["add"]
    assert result.usage.input_tokens > 0 and result.usage.output_tokens > 0


async def test_a_denial_with_a_message_is_sent_as_an_error_tool_result(
    server: FakeMessagesServer,
) -> None:
    server.push(reply("", call("save", text="x", id="toolu_s")), reply("Understood."))

    async def approver(request: ApprovalRequest) -> Decision:
        return Decision(approved=False, message="not in this folder")

    agent, _ = agent_for(server, save, approver=approver)
    await agent.run("save it")
    assert sent(server, 1)[-1] == norm(
        server,
        results(
            (
                "toolu_s",
                "The user denied this call. Message from the user: not in this folder",
                True,
            )
        ),
    )
    if not _openai(server):
        tool_result = server.requests[1].body["messages"][-1]["content"][0]
        assert tool_result["is_error"] is True


async def test_duplicate_keys_in_streamed_arguments_are_an_error_result(
    server: FakeMessagesServer,
) -> None:
    server.push(reply("", call("add", raw='{"a": 1, "b": 2, "a": 5}', id="toolu_d")), reply("ok"))
    agent, rec = agent_for(server)
    await agent.run("go")
    (r,) = sent(server, 1)[-1]["content"]
    assert r.get("is_error", _openai(server)) and "duplicate" in r["content"].lower()
    # the loop keeps the raw streamed text (the SDK's parsed input kept only the last "a")
    assert agent.messages[1].tool_calls[0].arguments == '{"a": 1, "b": 2, "a": 5}'
    assert rec.of(ToolCallFinished)[0].status == "error"


async def test_parallel_calls_and_unknown_tool_through_the_sdk(
    server: FakeMessagesServer,
) -> None:
    barrier = asyncio.Barrier(2)

    @tool(register=False, read_only=True)
    async def probe(n: int) -> str:
        """Waits for the other probe (fails when the calls run one by one)."""
        await asyncio.wait_for(barrier.wait(), timeout=10)
        return f"p{n}"

    server.push(
        reply(
            "",
            call("probe", n=1, id="toolu_a"),
            call("probe", n=2, id="toolu_b"),
            call("missing", id="toolu_m"),
        ),
        reply("done"),
    )
    agent, _ = agent_for(server, probe)
    await agent.run("probe twice")
    assert sent(server, 1)[-1] == norm(
        server,
        results(
            ("toolu_a", "p1", False),
            ("toolu_b", "p2", False),
            ("toolu_m", "unknown tool 'missing'; available tools: probe", True),
        ),
    )


async def test_an_overloaded_529_is_retried_and_each_retry_is_reported(
    server: FakeMessagesServer,
) -> None:
    server.push(Fault(status=529, times=2, message="Overloaded"), reply("made it"))
    agent, rec = agent_for(server)
    result = await agent.run("hi")
    assert (result.stop_reason, result.text) == ("end_turn", "made it")
    assert len(server.requests) == 3
    assert rec.of(ModelFailed) == []
    # the fake server asks for retry-after-ms: 10
    assert rec.of(ModelRetrying) == [
        ModelRetrying(attempt=1, wait=0.01, reason="overloaded"),
        ModelRetrying(attempt=2, wait=0.01, reason="overloaded"),
    ]


async def test_retries_end_with_the_error_after_max_retries(server: FakeMessagesServer) -> None:
    server.push(Fault(status=429, times=5, message="slow down"), reply("unused"))
    agent, rec = agent_for(server)
    agent.provider.max_retries = 2  # type: ignore[attr-defined]
    result = await agent.run("hi")
    assert result.stop_reason == "error"
    assert [(e.attempt, e.reason) for e in rec.of(ModelRetrying)] == [
        (1, "rate limited"),
        (2, "rate limited"),
    ]
    assert len(server.requests) == 3  # the SDK retried nothing itself
    (failed,) = rec.of(ModelFailed)
    assert failed.status == 429 and "after 2 retries" in failed.message


async def test_a_client_error_ends_the_run_with_the_conversation_intact(
    server: FakeMessagesServer,
) -> None:
    server.push(Fault(status=400, message="messages: bad things"), reply("fine"))
    agent, rec = agent_for(server)
    result = await agent.run("hi")
    assert result.stop_reason == "error"
    assert result.error is not None and "bad things" in result.error
    (failed,) = rec.of(ModelFailed)
    assert failed.status == 400
    assert len(server.requests) == 1  # not retried
    assert wire(agent.messages) == []  # the failed prompt is not kept to join the next one
    assert (await agent.run("again")).text == "fine"
    assert wire(agent.messages)[0] == user("again")


async def test_a_stream_cut_mid_way_is_an_error_and_the_next_run_works(
    server: FakeMessagesServer,
) -> None:
    server.push(
        reply("", call("add", a=1, b=1, id="toolu_1")),
        Fault(cut_after=4),
        reply("The sum is 2, as computed."),
    )
    agent, rec = agent_for(server)
    result = await agent.run("add")
    assert result.stop_reason == "error"
    assert rec.of(ModelFailed)
    # the cut turn left nothing behind: the conversation ends with the tool results
    assert wire(agent.messages) == [
        user("add"),
        assistant("", ("toolu_1", "add", '{"a": 1, "b": 1}')),
        results(("toolu_1", "2", False)),
    ]
    again = await agent.run("please finish")
    assert (again.stop_reason, again.text) == ("end_turn", "The sum is 2, as computed.")
    assert sent(server, 2)[-1]["content"][-1] == {"type": "text", "text": "please finish"}
    assert conversation_problems(agent.messages) == []


async def test_cancel_in_a_tool_call_then_resume_through_the_sdk(
    server: FakeMessagesServer,
) -> None:
    entered, release = asyncio.Event(), asyncio.Event()
    runs: list[str] = []

    @tool(register=False)
    async def migrate(table: str) -> str:
        """Changes the database; waits for the test."""
        runs.append(table)
        entered.set()
        await release.wait()
        return "migrated"

    server.push(
        reply("Migrating.", call("migrate", table="users", id="toolu_m")),
        reply("It was cut off, so I will not retry."),
    )
    agent, _ = agent_for(server, migrate)
    task = asyncio.ensure_future(agent.run("migrate users"))
    await entered.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert agent.last_result is not None and agent.last_result.stop_reason == "stopped"

    again = await agent.run("what now?")
    assert again.text == "It was cut off, so I will not retry."
    last = sent(server, 1)[-1]["content"]
    expected = {
        "type": "tool_result",
        "tool_use_id": "toolu_m",
        "content": CUT_OFF_TEXT,
        "is_error": True,
    }
    assert last[0] == norm(server, {"content": [expected]})["content"][0]
    assert last[1] == {"type": "text", "text": "what now?"}
    assert runs == ["users"]


def test_a_model_name_makes_an_anthropic_provider_on_first_use() -> None:
    agent = Agent("claude-test-model", tools=[])
    provider = agent.provider
    assert isinstance(provider, AnthropicProvider)
    assert provider.model == "claude-test-model"
    assert agent.provider is provider
