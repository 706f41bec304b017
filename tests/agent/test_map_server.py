"""nb_tools.map against the fake Messages server through the anthropic SDK: the shared
prompt-cache prefix, rate limits waited out, checkpoints and resume."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

import nb_tools
from nb_tools import tool
from nb_tools.model import ModelRequest
from nb_tools.model.anthropic import AnthropicProvider
from nb_tools.testing import call, reply
from nb_tools.testing.server import FakeMessagesServer

SYSTEM = "You triage support tickets. " * 40  # long enough to be worth caching


@tool(register=False, read_only=True)
def lookup(customer: str) -> str:
    """A customer's plan."""
    return {"acme": "enterprise"}.get(customer, "free")


def two_rounds(request: ModelRequest) -> Any:
    """Look the customer up, then answer with the plan."""
    if len(request.messages) == 1:
        return reply("", call("lookup", customer=request.messages[0].text.split()[-1]))
    return reply(f"plan: {request.messages[-1].content[0].result.content}")


_providers: list[AnthropicProvider] = []


@pytest.fixture
async def closing() -> AsyncIterator[None]:
    yield
    while _providers:
        await _providers.pop().client.close()


def claude(srv: FakeMessagesServer, model: str = "claude-sonnet-4-5") -> AnthropicProvider:
    provider = AnthropicProvider(model, base_url=srv.base_url, api_key="test")
    _providers.append(provider)
    return provider


def rows(n: int) -> list[dict[str, str]]:
    return [{"ticket": f"T{i}", "customer": "acme" if i % 2 else f"c{i}"} for i in range(n)]


async def test_one_cache_write_for_the_shared_prefix(closing: None) -> None:
    with FakeMessagesServer(fallback=two_rounds, prompt_cache=True, latency=0.1) as srv:
        out = await nb_tools.amap(
            "{ticket} from {customer}",
            rows(6),
            tools=[lookup],
            system=SYSTEM,
            model=claude(srv),
            concurrency=6,
        )
        assert list(out["status"]) == ["ok"] * 6
        bodies = [r.body for r in srv.requests]
    assert len(bodies) == 12
    assert {json.dumps(b["system"]) for b in bodies} == {json.dumps(bodies[0]["system"])}
    assert {json.dumps(b["tools"]) for b in bodies} == {json.dumps(bodies[0]["tools"])}
    assert "cache_control" in json.dumps(bodies[0]["system"])
    # the first request went alone and wrote the prefix; every other row's first read it
    firsts = [b for b in bodies if len(b["messages"]) == 1]
    assert bodies[0] in firsts
    usage = [c.usage for c in out.attrs["nb_tools"].conversations]
    written = [u.cache_creation_input_tokens + u.cache_creation_1h_input_tokens for u in usage]
    # row 0 wrote the shared prefix and its own turns; the others only their own turns
    assert all(0 < w < written[0] / 2 for w in written[1:]), written
    assert all(u.cache_read_input_tokens > 0 for u in usage)
    assert out["cost_usd"].sum() > 0


async def test_rate_limits_are_waited_out(closing: None) -> None:
    """The server allows 8 requests at once; 32 rows at a time all finish."""
    with FakeMessagesServer(fallback=two_rounds, latency=0.05, max_concurrent=8) as srv:
        out = await nb_tools.amap(
            "{ticket} from {customer}",
            rows(48),
            tools=[lookup],
            model=claude(srv),
            concurrency=32,
        )
        refused, peak = srv.rate_limited, srv.peak_active
    info = out.attrs["nb_tools"]
    assert list(out["status"]) == ["ok"] * 48, out[out["status"] != "ok"]["error"].tolist()
    assert refused > 0 and info.rate_limited == refused  # the limit was really hit
    assert peak <= 8
    assert info.lowest_concurrency < 32


async def test_a_second_run_sends_nothing_for_finished_rows(closing: None, tmp_path: Path) -> None:
    path = tmp_path / "triage.jsonl"
    with FakeMessagesServer(fallback=two_rounds) as srv:
        first = await nb_tools.amap(
            "{ticket} from {customer}", rows(4), tools=[lookup], model=claude(srv), checkpoint=path
        )
        sent = len(srv.requests)
        second = await nb_tools.amap(
            "{ticket} from {customer}", rows(5), tools=[lookup], model=claude(srv), checkpoint=path
        )
        assert len(srv.requests) - sent == 2  # only the new row's two turns
    assert sent == 8
    assert len(path.read_text().splitlines()) == 5
    assert list(second["output"][:4]) == list(first["output"])
    assert list(second["status"]) == ["ok"] * 5
    info = second.attrs["nb_tools"]
    assert info.restored == 4
    assert info.conversations[0].messages == first.attrs["nb_tools"].conversations[0].messages


async def test_resume_after_an_interrupt_sends_no_finished_row_again(
    closing: None, tmp_path: Path
) -> None:
    path = tmp_path / "triage.jsonl"
    table = rows(12)
    with FakeMessagesServer(fallback=two_rounds, latency=0.02) as srv:
        task = asyncio.ensure_future(
            nb_tools.amap(
                "{ticket} from {customer}",
                table,
                tools=[lookup],
                model=claude(srv),
                checkpoint=path,
                concurrency=2,
            )
        )
        while not path.exists() or len(path.read_text().splitlines()) < 3:
            await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        finished = [json.loads(line)["row"] for line in path.read_text().splitlines()]
        before = len(srv.requests)
        out = await nb_tools.amap(
            "{ticket} from {customer}", table, tools=[lookup], model=claude(srv), checkpoint=path
        )
        resent = [r.body["messages"][0]["content"] for r in srv.requests[before:]]
    assert 3 <= len(finished) < 12
    prompts = [f"{t['ticket']} from {t['customer']}" for t in table]
    texts = [c if isinstance(c, str) else c[0]["text"] for c in resent]
    assert not {prompts[i] for i in finished} & set(texts)
    assert list(out["status"]) == ["ok"] * 12
    assert out.attrs["nb_tools"].restored == len(finished)
