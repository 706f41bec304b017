"""A run's budget: a small budget starts when the first request fits (its tokens counted,
no fixed output guess), and a pause says what was spent against what was allowed."""

from __future__ import annotations

import re
from typing import Any

from nb_tools import tool
from nb_tools.agent import Agent
from nb_tools.agent._notices import RunNotice
from nb_tools.model import Usage, estimate_tokens
from nb_tools.model._pricing import price_for
from nb_tools.testing import ScriptedModel, call, reply

MODEL = "claude-sonnet-4-5"  # $3 in, $15 out per million tokens


@tool(read_only=True)
def look(target: str) -> str:
    """Look at something."""
    return f"looked at {target}"


def budget_notices(events: list[Any]) -> list[str]:
    return [e.message for e in events if isinstance(e, RunNotice) and e.kind == "budget"]


async def test_a_small_budget_starts_when_the_first_request_fits() -> None:
    cheap = Usage(input_tokens=20, output_tokens=20, cost_usd=0.00036)
    model = ScriptedModel([reply("Hi.", usage=cheap)], model=MODEL)
    events: list[Any] = []
    # a 500-token guess of the answer alone ($0.0075) would have refused this
    agent = Agent(model, budget_usd=0.005, on_event=events.append)
    result = await agent.run("say hi")
    assert result.stop_reason == "end_turn" and budget_notices(events) == []


async def test_a_budget_under_the_first_request_says_its_estimate() -> None:
    model = ScriptedModel([reply("never")], model=MODEL)
    events: list[Any] = []
    agent = Agent(model, system="x" * 4000, budget_usd=0.001, on_event=events.append)
    result = await agent.run("go")
    assert result.stop_reason == "budget" and model.requests == []
    [text] = budget_notices(events)
    found = re.fullmatch(
        r"Not sent: the first request is estimated at \$(\d\.\d{4}) \(([\d,]+) tokens in\), "
        r"more than this run's \$0\.0010 budget\.",
        text,
    )
    assert found is not None, text
    tokens = int(found[2].replace(",", ""))
    assert abs(tokens - estimate_tokens(agent.request_preview("go"))) <= 2
    price = price_for(MODEL)
    assert price is not None
    assert found[1] == f"{tokens * price.input / 1_000_000:.4f}"


async def test_a_pause_says_what_was_spent_against_what_was_allowed() -> None:
    over = Usage(input_tokens=1000, output_tokens=1000, cost_usd=0.0201)
    model = ScriptedModel([reply("", call("look", target="a"), usage=over)], model=MODEL)
    events: list[Any] = []
    agent = Agent(model, tools=[look], approval="auto", budget_usd=0.02, on_event=events.append)
    assert (await agent.run("go")).stop_reason == "budget"
    assert budget_notices(events) == ["This run has spent $0.0201 of its $0.0200 budget."]

    under = Usage(input_tokens=1000, output_tokens=100, cost_usd=0.0045)
    model = ScriptedModel([reply("", call("look", target="a"), usage=under)], model=MODEL)
    events.clear()
    agent = Agent(model, tools=[look], approval="auto", budget_usd=0.005, on_event=events.append)
    assert (await agent.run("go")).stop_reason == "budget"
    [text] = budget_notices(events)
    found = re.fullmatch(
        r"This run has spent \$0\.0045 of its \$0\.0050 budget; the next turn, estimated at "
        r"\$(\d\.\d{4}), would pass it\.",
        text,
    )
    assert found is not None and 0.0045 + float(found[1]) > 0.005
