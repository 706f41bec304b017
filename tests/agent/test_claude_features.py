"""Claude's newer request features, each one argument away and each visible in the
request the fake Messages server receives: the prompt-cache TTL, ..."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from messages_rules import check_all

from nb_tools import tool
from nb_tools.agent import Agent
from nb_tools.model._pricing import cost_usd
from nb_tools.model.anthropic import AnthropicProvider
from nb_tools.testing import reply
from nb_tools.testing._cache import PromptCache
from nb_tools.testing.server import FakeMessagesServer


@tool(register=False)
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


_providers: list[AnthropicProvider] = []


@pytest.fixture
async def server() -> AsyncIterator[FakeMessagesServer]:
    with FakeMessagesServer() as srv:
        yield srv
        check_all(srv.requests)
        while _providers:
            await _providers.pop().client.close()


def claude(
    srv: FakeMessagesServer, *tools: Any, model: str = "claude-sonnet-4-5", **kw: Any
) -> Agent:
    provider = AnthropicProvider(model, base_url=srv.base_url, api_key="test")
    _providers.append(provider)
    return Agent(provider, tools=list(tools), system="Be brief.", **kw)


def marks(body: dict[str, Any]) -> list[Any]:
    """Every cache_control of a request body, in order."""
    found: list[Any] = []

    def walk(x: Any) -> None:
        if isinstance(x, dict):
            if "cache_control" in x:
                found.append(x["cache_control"])
            for v in x.values():
                walk(v)
        elif isinstance(x, list):
            for v in x:
                walk(v)

    walk(body)
    return found


# -- prompt-cache TTL ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("ttl", "mark"),
    [
        ("1h", {"type": "ephemeral", "ttl": "1h"}),
        ("5m", {"type": "ephemeral", "ttl": "5m"}),
        (None, {"type": "ephemeral"}),
    ],
)
async def test_cache_ttl_marks_every_breakpoint(
    server: FakeMessagesServer, ttl: str | None, mark: dict[str, str]
) -> None:
    server.push(reply("ok"))
    await claude(server, add, cache_ttl=ttl).run("hi")
    body = server.requests[0].body
    # tools, system prompt, newest message: three breakpoints, all with the TTL asked for
    assert marks(body) == [mark, mark, mark]
    assert body["tools"][-1]["cache_control"] == mark
    assert body["messages"][-1]["content"][-1]["cache_control"] == mark


def test_the_default_ttl_is_an_hour_and_a_bad_one_is_refused() -> None:
    assert Agent("claude-sonnet-4-5").request_options.cache_ttl == "1h"
    with pytest.raises(ValueError, match="use '5m' or '1h'"):
        Agent("claude-sonnet-4-5", cache_ttl="2h")


async def test_a_pause_longer_than_the_ttl_rewrites_the_cache() -> None:
    """The fake server's cache: after a 6-minute pause a 5m prefix is written again, a 1h
    one is read; the usage says so and a 1h write is priced at 2x input."""
    now = [0.0]
    costs: dict[str, list[Any]] = {}
    for ttl in ("5m", "1h"):
        now[0] = 0.0
        with FakeMessagesServer(prompt_cache=PromptCache(clock=lambda: now[0])) as srv:
            agent = claude(srv, add, cache_ttl=ttl)
            srv.push(reply("one"), reply("two"))
            first = await agent.run("first cell " + "x" * 4000)
            now[0] += 360
            second = await agent.run("second cell")
            costs[ttl] = [first.usage, second.usage]
            while _providers:
                await _providers.pop().client.close()
    five, hour = costs["5m"], costs["1h"]
    assert five[0].cache_creation_input_tokens > 1000 and five[0].cache_read_input_tokens == 0
    assert five[1].cache_read_input_tokens == 0  # expired: written again
    assert five[1].cache_creation_input_tokens > five[0].cache_creation_input_tokens
    assert hour[1].cache_read_input_tokens == hour[0].cache_creation_input_tokens  # read back
    assert hour[0].cache_creation_1h_input_tokens == hour[0].cache_creation_input_tokens
    assert five[0].cache_creation_1h_input_tokens == 0
    model = "claude-sonnet-4-5"
    assert hour[0].cost_usd == pytest.approx(cost_usd(model, hour[0]))
    write = hour[0].cache_creation_input_tokens
    assert cost_usd(model, hour[0]) - cost_usd(model, five[0]) == pytest.approx(
        write * 3.0 * (2.0 - 1.25) / 1e6, rel=0.05
    )
