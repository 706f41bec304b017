"""nb_tools.map / amap against ScriptedModel: the table in and out, prompts, statuses,
approvals, typed outputs, budget."""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Any

import pandas as pd
import pytest

import nb_tools
from nb_tools import tool
from nb_tools.agent import Agent, MapInfo
from nb_tools.model import ModelRequest, Usage
from nb_tools.testing import ScriptedModel, call, reply

PLANS = {"acme": "enterprise", "globex": "pro"}


@tool(register=False)
def lookup(customer: str) -> str:
    """A customer's plan."""
    return PLANS.get(customer, "free")


@tool(register=False, requires_approval=True)
def refund(customer: str) -> str:
    """Refund a customer (needs approval)."""
    return "refunded"


def customer_of(request: ModelRequest) -> str:
    return request.messages[0].text.split()[-1]


def classify(request: ModelRequest) -> Any:
    """Round 1: look the customer up; round 2: answer with the plan the tool returned."""
    if len(request.messages) == 1:
        return reply("", call("lookup", customer=customer_of(request)))
    plan = request.messages[-1].content[0].result.content  # the tool's result
    return reply(f"{customer_of(request)}: {plan}")


def model(rows: int, rounds: int = 2, **kwargs: Any) -> ScriptedModel:
    return ScriptedModel([classify] * (rows * rounds), **kwargs)


TICKETS = pd.DataFrame(
    {"ticket": ["T1", "T2", "T3"], "customer": ["acme", "globex", "initech"]},
    index=[10, 11, 12],
)


async def test_a_frame_in_a_frame_out_in_input_order() -> None:
    m = model(3)
    result = await nb_tools.amap(
        "Ticket {ticket} from customer {customer}", TICKETS, tools=[lookup], model=m
    )
    assert list(result.columns) == [
        "ticket",
        "customer",
        "output",
        "status",
        "error",
        "turns",
        "cost_usd",
    ]
    assert list(result.index) == [10, 11, 12]
    assert list(result["output"]) == ["acme: enterprise", "globex: pro", "initech: free"]
    assert list(result["status"]) == ["ok"] * 3
    assert list(result["turns"]) == [2, 2, 2]
    assert result["error"].isna().all()
    info = result.attrs["nb_tools"]
    assert isinstance(info, MapInfo)
    assert info.requests == 6
    # a row's conversation can be opened and continued
    conv = info.conversations[1]
    assert conv is not None and conv.messages[0].text == "Ticket T2 from customer globex"
    again = Agent(ScriptedModel([reply("Still pro.")]), messages=conv.messages)
    assert (await again.run("And now?")).text == "Still pro."
    # pandas operations keep the record (and do not copy every conversation)
    assert result.head(2).attrs["nb_tools"] is info


async def test_every_request_shares_the_system_prompt_and_tools() -> None:
    m = model(3)
    await nb_tools.amap("Ticket from {customer}", TICKETS, tools=[lookup], model=m, system="S")
    assert {r.system for r in m.requests} == {"S"}
    assert {tuple(t.name for t in r.tools) for r in m.requests} == {("lookup",)}


def test_map_from_sync_code_and_lists() -> None:
    out = nb_tools.map("Customer {input}", ["acme", "x"], tools=[lookup], model=model(2))
    assert list(out.columns[:2]) == ["input", "output"]
    assert list(out["output"]) == ["acme: enterprise", "x: free"]
    rows = [{"customer": "globex", "n": 1}, {"customer": "acme"}]
    out = nb_tools.map("Customer {customer}", rows, tools=[lookup], model=model(2))
    assert list(out.columns[:3]) == ["customer", "n", "output"]
    assert list(out["output"]) == ["globex: pro", "acme: enterprise"]


async def test_a_missing_column_fails_before_any_request() -> None:
    m = model(3)
    with pytest.raises(ValueError, match=r"names \{plan\} but the inputs have no such column"):
        await nb_tools.amap("{customer} on {plan}", TICKETS, tools=[lookup], model=m)
    assert m.requests == []
    with pytest.raises(ValueError, match=r"column\(s\) output, status, which the result adds"):
        await nb_tools.amap("{x}", [{"x": 1, "output": 2, "status": 3}], model=m)


async def test_a_callable_prompt_and_skipped_rows() -> None:
    m = model(2)

    def prompt(row: Any) -> str | None:
        return None if row["customer"] == "globex" else f"Customer {row['customer']}"

    out = await nb_tools.amap(prompt, TICKETS, tools=[lookup], model=m)
    assert list(out["status"]) == ["ok", "skipped", "ok"]
    assert out.attrs["nb_tools"].conversations[1] is None
    assert len(m.requests) == 4


@dataclasses.dataclass
class Triage:
    plan: str
    urgent: bool


async def test_a_typed_output_gets_a_column_per_field() -> None:
    def answer(request: ModelRequest) -> Any:
        if len(request.messages) == 1:
            return reply("", call("lookup", customer=customer_of(request)))
        if request.messages[-1].content[0].result.content == "refunded":
            return reply("ok")
        plan = request.messages[-1].content[0].result.content
        return reply("", call("final_result", plan=plan, urgent=plan == "enterprise"))

    m = ScriptedModel([answer] * 9)
    out = await nb_tools.amap(
        "Customer {customer}", TICKETS, tools=[lookup], model=m, output=Triage
    )
    assert list(out.columns) == [
        "ticket",
        "customer",
        "output",
        "plan",
        "urgent",
        "status",
        "error",
        "turns",
        "cost_usd",
    ]
    assert list(out["output"]) == [
        Triage(plan="enterprise", urgent=True),
        Triage(plan="pro", urgent=False),
        Triage(plan="free", urgent=False),
    ]
    assert list(out["plan"]) == ["enterprise", "pro", "free"]
    assert list(out["status"]) == ["ok"] * 3


async def test_ask_without_an_approver_is_an_error_naming_the_choices(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("NB_TOOLS_APPROVAL", raising=False)
    m = model(3)
    with pytest.raises(ValueError, match=r"calls of refund may need a person.*approval='auto'"):
        await nb_tools.amap("{customer}", TICKETS, tools=[lookup, refund], model=m)
    assert m.requests == []


async def test_headless_rows_follow_the_environment_policy(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("NB_TOOLS_APPROVAL", "deny")

    def wants_refund(request: ModelRequest) -> Any:
        if len(request.messages) == 1:
            return reply("", call("refund", customer=customer_of(request)))
        return reply("could not refund")

    m = ScriptedModel([wants_refund] * 4)
    out = await nb_tools.amap("Refund {customer}", TICKETS.head(2), tools=[refund], model=m)
    assert list(out["status"]) == ["denied", "denied"]
    assert out["error"][10].startswith("denied refund (policy:deny)")
    assert list(out["output"]) == ["could not refund"] * 2


async def test_the_budget_stops_rows_not_yet_started() -> None:
    priced = Usage(input_tokens=1000, output_tokens=10, cost_usd=3.0)
    m = ScriptedModel([reply("a", usage=priced)] * 5)
    rows = [f"r{i}" for i in range(5)]
    out = await nb_tools.amap("{input}", rows, model=m, tools=[], concurrency=1, budget_usd=5.0)
    assert list(out["status"]) == ["ok", "ok", "budget", "budget", "budget"]
    assert out["cost_usd"][0] == pytest.approx(3.0)
    assert out["error"][2].startswith("not started: the map's budget")
    assert out.attrs["nb_tools"].spent_usd == pytest.approx(6.0)
    assert len(m.requests) == 2


async def test_rows_run_concurrently_up_to_the_limit() -> None:
    running = 0
    peak = 0

    @tool(register=False, read_only=True)
    async def slow(customer: str) -> str:
        """Slow lookup."""
        nonlocal running, peak
        running += 1
        peak = max(peak, running)
        await asyncio.sleep(0.05)
        running -= 1
        return "free"

    def ask_slow(request: ModelRequest) -> Any:
        if len(request.messages) == 1:
            return reply("", call("slow", customer="c"))
        return reply("done")

    m = ScriptedModel([ask_slow] * 20)
    out = await nb_tools.amap(
        "{input}", [f"r{i}" for i in range(10)], tools=[slow], model=m, concurrency=4
    )
    assert list(out["status"]) == ["ok"] * 10
    assert peak == 4


async def test_the_first_request_goes_alone_then_the_limit_adapts() -> None:
    """The first reply writes the prompt cache the other rows read: until it is back,
    no other request goes; a 429 halves the limit, successes raise it back."""
    from nb_tools.agent._map_gate import Limiter

    limiter = Limiter(concurrency=4)
    order: list[str] = []

    async def request(name: str, hold: float) -> None:
        async with limiter.slot():
            order.append(f"{name}+")
            await asyncio.sleep(hold)
            await limiter.succeeded(0.0)
            order.append(f"{name}-")

    await asyncio.gather(request("first", 0.05), request("b", 0.01), request("c", 0.01))
    assert order[:2] == ["first+", "first-"]
    assert limiter.in_flight == 0

    async with limiter.slot(), limiter.slot(), limiter.slot(), limiter.slot():
        await limiter.refused()
    assert limiter.limit == 2 and limiter.lowest == 2
    for _ in range(20):
        await limiter.succeeded(0.0)
    assert limiter.limit == 4


async def test_stop_ends_cleanly_with_rows_in_flight_marked(tmp_path: Any) -> None:
    import threading

    from nb_tools.agent import MapProgress

    gate = asyncio.Event()

    @tool(register=False, read_only=True)
    async def wait(customer: str) -> str:
        """Waits while the row is 'slow'."""
        if customer.startswith("slow"):
            await gate.wait()
        return "free"

    def ask(request: ModelRequest) -> Any:
        if len(request.messages) == 1:
            return reply("", call("wait", customer=customer_of(request)))
        return reply("done")

    stop = threading.Event()
    seen: list[MapProgress] = []

    def on_progress(p: MapProgress) -> None:
        seen.append(p)
        if p.done == 1:
            stop.set()

    rows = ["fast a", "slow c", "slow d", "fast e", "fast f"]
    rows = [r.replace(" ", "_") for r in rows]
    out = await nb_tools.amap(
        "{input}",
        rows,
        tools=[wait],
        model=ScriptedModel([ask] * 12),
        concurrency=3,
        stop=stop,
        on_progress=on_progress,
        checkpoint=tmp_path / "c.jsonl",
    )
    assert list(out["status"]) == ["ok", "stopped", "stopped", "skipped", "skipped"]
    assert out["error"][1] == "stopped while running (the map was stopped)"
    assert out["error"][3] == "not started: the map was stopped"
    assert seen[-1].rows == 5 and seen[-1].running == 0 and seen[-1].done == 3
    assert seen[-1].statuses == ("ok", "stopped", "stopped", "queued", "queued")
    assert len((tmp_path / "c.jsonl").read_text().splitlines()) == 3


async def test_every_progress_report_agrees_with_its_statuses(tmp_path: Any) -> None:
    """The counts are kept as rows start and finish, not recounted: every report must
    still agree with its own statuses, across restored, skipped and finished rows."""
    from nb_tools.agent import MapProgress

    checkpoint = tmp_path / "c.jsonl"
    await nb_tools.amap(
        "Ticket {ticket} from customer {customer}",
        TICKETS.iloc[:1],
        tools=[lookup],
        model=model(1),
        checkpoint=checkpoint,
    )
    seen: list[MapProgress] = []
    frame = pd.concat([TICKETS, TICKETS.assign(ticket=["T4", "T5", "T6"])], ignore_index=True)
    out = await nb_tools.amap(
        lambda r: (
            None if r["ticket"] == "T5" else "Ticket {ticket} from customer {customer}".format(**r)
        ),
        frame,
        tools=[lookup],
        model=model(4),
        concurrency=2,
        checkpoint=checkpoint,
        on_progress=seen.append,
    )
    assert list(out["status"]) == ["ok", "ok", "ok", "ok", "skipped", "ok"]
    assert out.attrs["nb_tools"].restored == 1
    assert seen and seen[0].statuses[0] == "ok" and seen[-1].done == 6 and seen[-1].failed == 1
    for p in seen:
        assert p.done == sum(s not in ("queued", "running") for s in p.statuses)
        assert p.running == sum(s == "running" for s in p.statuses)
        assert p.failed == sum(s not in ("queued", "running", "ok") for s in p.statuses)
