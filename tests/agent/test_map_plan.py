"""The plan of a map, made before its first request (``amap(confirm=...)``): what it says
about the rows, the tools under the policy and rules, the estimate; and that a "no"
sends no request."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import nb_tools
from nb_tools import tool
from nb_tools.agent import MapPlan, plan_text
from nb_tools.agent._map_plan import REPLY_TOKENS, ROUGH, tool_plans
from nb_tools.permissions import PermissionRules
from nb_tools.testing import ScriptedModel, call, reply
from nb_tools.tool import Registry


@tool(register=False, read_only=True)
def lookup(customer: str) -> str:
    """A customer's plan."""
    return "pro"


@tool(register=False, requires_approval=True)
def refund(customer: str) -> str:
    """Refund a customer (needs approval)."""
    return "refunded"


ROWS = ["acme", "globex", "initech", "umbrella"]


def answer(request: Any) -> Any:
    if len(request.messages) == 1:
        return reply("", call("lookup", customer="acme"))
    return reply("done")


async def test_no_sends_nothing_and_yes_runs_with_the_plan_it_was_shown() -> None:
    plans: list[MapPlan] = []

    def no(plan: MapPlan) -> bool:
        plans.append(plan)
        return False

    scripted = ScriptedModel([answer] * 8, model="claude-sonnet-4-5")
    out = await nb_tools.amap(
        "Check {input}",
        ROWS,
        tools=[lookup, refund],
        model=scripted,
        approval="auto",
        budget_usd=1.0,
        confirm=no,
        system="You check customers.",
    )
    assert out is None and scripted.requests == []
    plan = plans[0]
    assert (plan.rows, plan.to_run, plan.turns, plan.sampled) == (4, 4, 2, 3)
    assert [(t.name, t.does) for t in plan.tools] == [
        ("lookup", "runs"),
        ("refund", "runs (policy auto)"),
    ]
    assert plan.asking == ()
    # counted as the provider declares (ScriptedModel declares Claude's server counting;
    # its count_tokens is the rough estimator), on the request a row's first turn sends
    server = scripted.features.server_token_counting
    assert plan.counted_by == ("the server's token count" if server else ROUGH)
    assert plan.input_tokens == plan.tokens_per_request * 4 * 2
    assert plan.output_tokens == REPLY_TOKENS * 4 * 2
    assert plan.cost_usd is not None and plan.cost_usd > 0
    text = plan_text(plan)
    assert text.startswith(
        "nb_tools.map plan: 4 rows on claude-sonnet-4-5 (ScriptedModel), 8 at a time, "
        "in the kernel\n  policy: auto\n  tools:\n    lookup: runs\n"
        "    refund: runs (policy auto)\n  rules: none for these tools\n"
    )
    assert "× 4 rows × 2 turn(s)" in text and "budget: $1.00 for the whole map" in text

    async def yes(plan: MapPlan) -> bool:
        return True

    out = await nb_tools.amap(
        "Check {input}", ROWS, tools=[lookup], model=scripted, approval="auto", confirm=yes
    )
    assert list(out["status"]) == ["ok"] * 4 and len(scripted.requests) == 8


def test_tools_under_each_policy_and_the_rules(tmp_path: Path) -> None:
    registry = Registry(lookup, refund)
    assert [t.does for t in tool_plans(registry, "ask", None)] == ["runs", "asks a person"]
    assert [t.asks for t in tool_plans(registry, "ask", None)] == [False, True]
    assert [t.does for t in tool_plans(registry, "deny", None)] == [
        "runs",
        "denied (policy deny)",
    ]
    assert tool_plans(registry, "read-only", None)[1].does.startswith("denied (policy read-only")
    rules = PermissionRules(root=tmp_path)
    rules.allow("refund")
    rules.deny("lookup")
    assert [t.does for t in tool_plans(registry, "ask", rules)] == [
        "denied (rule deny lookup)",
        "runs (rule allow refund)",
    ]
    rules = PermissionRules(root=tmp_path)
    rules.ask("lookup(customer:acme)")
    (plan,) = [t for t in tool_plans(registry, "ask", rules) if t.name == "lookup"]
    assert plan.does == "runs; for some calls: ask lookup(customer:acme)" and plan.asks
