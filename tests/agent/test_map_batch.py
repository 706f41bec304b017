"""nb_tools.map(backend="batch") against the fake server's Message Batches endpoints:
each round of the rows' loops is one batch, finished rows drop out, half the price."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from map_rows import rounds_by_row

import nb_tools
from nb_tools import tool
from nb_tools.model.anthropic import AnthropicProvider
from nb_tools.testing import ScriptedModel, reply
from nb_tools.testing.server import FakeMessagesServer


@tool(register=False, read_only=True)
def lookup(customer: str) -> str:
    """A customer's plan."""
    return {"acme": "enterprise"}.get(customer, "free")


_providers: list[AnthropicProvider] = []


@pytest.fixture
async def closing() -> AsyncIterator[None]:
    yield
    while _providers:
        await _providers.pop().client.close()


async def test_each_round_is_one_batch_and_finished_rows_drop_out(closing: None) -> None:
    with FakeMessagesServer(fallback=rounds_by_row, batch_delay=0.05) as srv:
        provider = AnthropicProvider("claude-sonnet-4-5", base_url=srv.base_url, api_key="x")
        _providers.append(provider)
        out = await nb_tools.amap(
            "Customer {input}",
            ["c0", "c1", "c2", "c2"],
            tools=[lookup],
            model=provider,
            backend="batch",
            batch_poll_seconds=0.02,
        )
        creates = [r for r in srv.requests if r.path == "/v1/messages/batches"]
        streamed = [r for r in srv.requests if r.path == "/v1/messages"]
    assert list(out["status"]) == ["ok"] * 4
    assert list(out["output"]) == [f"c{n}: {n} lookups" for n in (0, 1, 2, 2)]
    assert streamed == []
    # round 1: all four rows; round 2: three (c0 is done); round 3: the two c2 rows
    assert [len(r.body["requests"]) for r in creates] == [4, 3, 2]
    assert all("stream" not in q["params"] for r in creates for q in r.body["requests"])
    info = out.attrs["nb_tools"]
    assert len(info.batch_ids) == 3 and info.requests == 9
    # batch price: half of what the same usage costs at the list price
    from nb_tools.model._pricing import with_cost

    usage = info.conversations[0].usage
    listed = with_cost("claude-sonnet-4-5", usage).cost_usd
    assert listed > 0 and out["cost_usd"][0] == pytest.approx(listed / 2)


async def test_a_provider_without_batches_says_so_and_runs_in_the_kernel() -> None:
    m = ScriptedModel([reply("done")] * 2)
    with pytest.warns(UserWarning, match="has no batch API; the rows run in the kernel"):
        out = await nb_tools.amap("{input}", ["a", "b"], model=m, tools=[], backend="batch")
    assert list(out["status"]) == ["ok", "ok"]
    assert out.attrs["nb_tools"].notices == [
        "nb_tools.map: backend='batch': the ScriptedModel provider has no batch API; "
        "the rows run in the kernel"
    ]
