"""``Agent.request_preview`` is the request the run sends: built by the same code, so the
memory tool, ``final_result``, structured outputs, tool search, the MCP connector and the
cache TTL are all in it. Checked against the body and headers the fake Messages server
receives."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from nb_tools import tool
from nb_tools.agent import Agent
from nb_tools.model._anthropic_convert import RequestEncoder
from nb_tools.model.anthropic import AnthropicProvider
from nb_tools.testing import call, reply
from nb_tools.testing.server import FakeMessagesServer

CRM = {"name": "crm", "url": "https://mcp.example.com/sse"}


@tool(register=False, defer_loading=True)
def rarely(q: str) -> str:
    """A tool the model finds with tool search."""
    return q


@dataclass
class City:
    name: str
    population: int


@pytest.fixture
async def server() -> AsyncIterator[FakeMessagesServer]:
    with FakeMessagesServer() as srv:
        yield srv


@pytest.mark.parametrize(
    ("model", "answer"),
    [
        # structured outputs: the answer is the reply's JSON text
        ("claude-sonnet-4-5", reply('{"name": "Paris", "population": 2100000}')),
        # no structured outputs: the run adds final_result
        (
            "claude-sonnet-4-20250514",
            reply("", call("final_result", name="Paris", population=2100000)),
        ),
    ],
)
async def test_the_preview_is_the_request_the_run_sends(
    server: FakeMessagesServer, tmp_path: Path, model: str, answer: Any
) -> None:
    server.push(answer, reply("done"))
    provider = AnthropicProvider(model, base_url=server.base_url, api_key="test")
    agent = Agent(
        provider,
        tools=[rarely],
        system="Be brief.",
        memory=tmp_path,
        tool_search=True,
        mcp_servers=[CRM],
        cache_ttl="5m",
        approval="auto",
    )
    preview = agent.request_preview("the biggest city?", output=City)
    result = await agent.run("the biggest city?", output=City)
    assert result.output == City(name="Paris", population=2100000)

    sent = server.requests[0]
    built = json.loads(RequestEncoder(model).encode(preview, cache=provider.cache))
    assert {k: v for k, v in built.items() if k != "messages"} == {
        k: v for k, v in sent.body.items() if k != "messages"
    }
    assert built["messages"] == sent.body["messages"]
    assert ",".join(preview.betas) == sent.headers.get("anthropic-beta", "")
    names = [t.get("name") for t in sent.body["tools"]]
    assert "memory" in names and "tool_search_tool_bm25" in names
    assert ("final_result" in names) == (model != "claude-sonnet-4-5")
    assert ("output_config" in sent.body) == (model == "claude-sonnet-4-5")
    assert sent.body["mcp_servers"][0]["name"] == "crm"
    assert sent.body["system"][0]["cache_control"] == {"type": "ephemeral", "ttl": "5m"}
    await provider.client.close()
