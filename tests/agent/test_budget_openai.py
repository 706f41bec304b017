"""Budgets on OpenAI models: the provider declares OpenAI's list price, so a budget pauses
an OpenAI run; a model without a known price refuses to start a run that has a budget,
and a price given to the provider makes it countable."""

from __future__ import annotations

from typing import Any

import pytest

from nb_tools import tool
from nb_tools.agent import Agent
from nb_tools.agent._notices import RunNotice
from nb_tools.model import Price, Usage
from nb_tools.model._openai_pricing import openai_price
from nb_tools.model.openai import OpenAIProvider
from nb_tools.testing import call, reply
from nb_tools.testing.openai_server import FakeOpenAIServer


@tool(register=False, read_only=True)
def look(target: str) -> str:
    """Look at something."""
    return f"looked at {target}"


def notices(events: list[Any]) -> list[str]:
    return [e.message for e in events if isinstance(e, RunNotice) and e.kind == "budget"]


@pytest.mark.parametrize(
    ("model", "price"),
    [
        ("gpt-5", (1.25, 0.125, 10.0)),
        ("gpt-5-2025-08-07", (1.25, 0.125, 10.0)),
        ("gpt-5-mini", (0.25, 0.025, 2.0)),
        ("gpt-5-nano-2025-08-07", (0.05, 0.005, 0.40)),
        ("gpt-4.1", (2.0, 0.5, 8.0)),
        ("gpt-4.1-mini", (0.40, 0.10, 1.60)),
        ("gpt-4o", (2.5, 1.25, 10.0)),
        ("gpt-4o-mini-2024-07-18", (0.15, 0.075, 0.60)),
        ("o3", (2.0, 0.5, 8.0)),
        ("o4-mini", (1.10, 0.275, 4.40)),
    ],
)
def test_openai_list_prices(model: str, price: tuple[float, float, float]) -> None:
    assert openai_price(model) == Price(input=price[0], output=price[2], cached_input=price[1])


@pytest.mark.parametrize("model", ["gpt-5.3", "gpt-6", "llama3.1", "qwen3:8b"])
def test_a_model_not_in_the_table_has_no_price(model: str) -> None:
    assert openai_price(model) is None


async def test_a_budget_pauses_an_openai_run() -> None:
    # 200k tokens in and 1k out on gpt-4.1: $0.408 a turn
    spent = Usage(input_tokens=200_000, output_tokens=1_000)
    with FakeOpenAIServer(
        [reply("", call("look", target="a"), usage=spent), reply("never sent")]
    ) as srv:
        provider = OpenAIProvider("gpt-4.1", base_url=srv.base_url, api_key="test")
        events: list[Any] = []
        agent = Agent(
            provider, tools=[look], approval="auto", budget_usd=0.41, on_event=events.append
        )
        result = await agent.run("look at a")
        assert result.stop_reason == "budget"
        assert result.usage.cost_usd == pytest.approx(0.408)
        assert len(srv.requests) == 1  # the second turn was not sent
        assert notices(events) == [
            "This run has spent $0.4080 of its $0.4100 budget; the next turn, estimated at "
            + notices(events)[0].split("estimated at ")[1]
        ]
        await provider.client.close()


async def test_a_model_without_a_price_refuses_a_run_with_a_budget() -> None:
    with FakeOpenAIServer([reply("hi"), reply("hi")]) as srv:
        local = OpenAIProvider("qwen3:8b", base_url=srv.base_url, name="ollama", api_key="test")
        events: list[Any] = []
        result = await Agent(local, tools=[], budget_usd=1.0, on_event=events.append).run("hi")
        assert result.stop_reason == "budget" and srv.requests == []
        (why,) = notices(events)
        assert "no price is known for 'qwen3:8b' (ollama)" in why and "price=" in why
        # without a budget it runs, at no cost
        free = await Agent(local, tools=[]).run("hi")
        assert free.stop_reason == "end_turn" and free.usage.cost_usd == 0
        # with a price it is counted, and the budget applies
        priced = OpenAIProvider(
            "qwen3:8b",
            base_url=srv.base_url,
            name="ollama",
            api_key="test",
            price=Price(input=1.0, output=2.0),
        )
        result = await Agent(priced, tools=[], budget_usd=1.0).run("hi")
        assert result.stop_reason == "end_turn" and result.usage.cost_usd > 0
        for p in (local, priced):
            await p.client.close()


async def test_a_map_with_a_budget_on_a_model_without_a_price_is_refused() -> None:
    import nb_tools
    from nb_tools.testing import ScriptedModel

    unknown = ScriptedModel([reply("a")], price=None)
    with pytest.raises(ValueError, match=r"nb_tools.map: no price is known for 'scripted'"):
        await nb_tools.amap("{input}", ["r0"], model=unknown, tools=[], budget_usd=1.0)
    assert unknown.requests == []
