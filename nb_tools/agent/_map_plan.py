"""The plan of a :func:`nb_tools.map` run, shown before its first request (the plan card of
``%%agent --over``, or ``amap(confirm=...)``): how many rows, which tools and what each
does under the chosen policy and rules, the estimated cost and the budget.

The estimate: the first request of a few rendered rows (system prompt, tools, the row's
prompt) is counted with the provider's token counting where it asks the server
(``RequestFeatures.server_token_counting``), else with the one rough estimator
(:func:`nb_tools.model.estimate_tokens`); the average, times the rows to run, times the
expected turns, is the input; each turn's reply is taken as :data:`REPLY_TOKENS` tokens.
Tool results, longer conversations and prompt-cache savings are not in it: the figure is
an order of magnitude, which the card says.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from nb_tools.model import (
    CHARS_PER_TOKEN,
    Message,
    ModelRequest,
    Provider,
    TextBlock,
    estimate_tokens,
)
from nb_tools.tool import Registry

if TYPE_CHECKING:
    from nb_tools.agent._approval import Policy
    from nb_tools.permissions import PermissionRules, Rule

log = logging.getLogger(__name__)
ROUGH = f"a rough estimate ({CHARS_PER_TOKEN:g} characters a token)"

SAMPLE_ROWS = 3
"""How many rendered rows are counted for the estimate."""
REPLY_TOKENS = 300
"""The output tokens the estimate allows for each turn's reply."""


@dataclass(frozen=True, kw_only=True)
class ToolPlan:
    """One tool of the map and what its calls do under the policy and the rules."""

    name: str
    does: str
    """"runs", "asks a person", "asks a person for some calls", "denied", ...,
    with the rule or policy that says so."""
    asks: bool
    """Whether some of its calls may wait for a person."""


@dataclass(frozen=True, kw_only=True)
class MapPlan:
    """What a map will do; :func:`plan_text` says it in words."""

    rows: int
    to_run: int
    """Rows that will send requests (the rest are in the checkpoint or skipped)."""
    model: str
    provider: str
    policy: str
    tools: tuple[ToolPlan, ...]
    rules: tuple[str, ...]
    """The rules that name the map's tools (``allow web_fetch(domain:x.com)``)."""
    budget_usd: float | None
    concurrency: int
    backend: str
    sampled: int
    tokens_per_request: int
    counted_by: str
    """"the server's token count" or "a rough estimate"."""
    turns: int
    """Expected turns a row (a tool round and the answer with tools, else 1)."""
    input_tokens: int
    output_tokens: int
    cost_usd: float | None
    """None when the model has no known price."""

    @property
    def asking(self) -> tuple[str, ...]:
        return tuple(t.name for t in self.tools if t.asks)

    @property
    def estimate_text(self) -> str:
        """The estimated cost and how it was estimated, in one sentence."""
        return estimate_line(self)

    @property
    def budget_text(self) -> str:
        return budget_line(self)


def tool_plans(registry: Registry, policy: Policy, rules: PermissionRules | None) -> list[ToolPlan]:
    """Per tool, what its calls do: a rule naming the whole tool decides; else the policy
    for a tool that asks (always, or for some calls), else it runs. A rule with a
    specifier is named as applying to some calls."""
    plans = []
    for t in registry.list():
        info = t.info()
        whole = _whole_rule(rules, info.name)
        some_rules = [
            str(r) for r in (rules.rules if rules else []) if r.tool == info.name and r.specifier
        ]
        always = bool(info.requires_approval)
        some = not always and hasattr(t, "requires_approval_for")
        asks = False
        if policy == "read-only" and not info.read_only:
            does = "denied (policy read-only runs only read-only calls)"
        elif whole is not None and whole.action == "deny":
            does = f"denied (rule {whole})"
        elif whole is not None and whole.action == "allow":
            does = f"runs (rule {whole})"
        elif whole is not None and whole.action == "ask":
            asks = policy in ("ask", "read-only")
            does = {
                "auto": f"runs (rule {whole}, policy auto)",
                "deny": f"denied (rule {whole}, policy deny)",
            }.get(policy, f"asks a person (rule {whole})")
        elif always or some:
            calls = "" if always else " for some calls"
            asks = policy == "ask"
            does = {
                "auto": "runs (policy auto)",
                "deny": f"denied{calls} (policy deny)",
            }.get(policy, f"asks a person{calls}")
        else:
            does = "runs"
        if some_rules:
            does += f"; for some calls: {', '.join(some_rules)}"
            asks = asks or (any(r.startswith("ask ") for r in some_rules) and policy == "ask")
        plans.append(ToolPlan(name=info.name, does=does, asks=asks))
    return plans


def _whole_rule(rules: PermissionRules | None, tool: str) -> Rule | None:
    """The strongest rule naming the whole tool: deny > ask > allow."""
    if rules is None:
        return None
    found = {r.action: r for r in rules.rules if r.tool == tool and not r.specifier}
    for action in ("deny", "ask", "allow"):
        if action in found:
            return found[action]
    return None


def expected_turns(registry: Registry, max_turns: int) -> int:
    return min(max_turns, 2 if registry.visible_count() else 1)


async def count_request(provider: Provider, request: ModelRequest) -> tuple[int, str]:
    """The request's input tokens and how they were counted."""
    if provider.features.server_token_counting:
        try:
            return int(await provider.count_tokens(request)), "the server's token count"
        except Exception as exc:  # counting is for the estimate: fall back to the guess
            log.info("token counting failed (%s); using the estimate", exc)
    return estimate_tokens(request), ROUGH


async def make_plan(
    *,
    provider: Provider,
    registry: Registry,
    system: str | None,
    prompts: Sequence[str | None],
    to_run: Sequence[int],
    policy: Policy,
    rules: PermissionRules | None,
    budget_usd: float | None,
    concurrency: int,
    backend: str,
    max_turns: int,
) -> MapPlan:
    """The plan of a map whose rows ``to_run`` (positions in ``prompts``) will run."""
    from nb_tools.model._pricing import price_for

    specs = registry.specs()
    sample = [prompts[i] for i in to_run if prompts[i] is not None][:SAMPLE_ROWS]
    counts, counted_by = [], ROUGH
    for text in sample:
        request = ModelRequest(
            system=system or "",
            messages=[Message(role="user", content=(TextBlock(text=text or ""),))],
            tools=specs,
        )
        n, counted_by = await count_request(provider, request)
        counts.append(n)
    per_request = round(sum(counts) / len(counts)) if counts else 0
    turns = expected_turns(registry, max_turns)
    rows = len(to_run)
    input_tokens = per_request * rows * turns
    output_tokens = REPLY_TOKENS * rows * turns
    price = price_for(provider.model)
    cost = None
    if price is not None:
        cost = (input_tokens * price.input + output_tokens * price.output) / 1_000_000
        if backend == "batch":
            cost /= 2
    names = {t.info().name for t in registry.list()}
    return MapPlan(
        rows=len(prompts),
        to_run=rows,
        model=provider.model,
        provider=provider.name,
        policy=policy,
        tools=tuple(tool_plans(registry, policy, rules)),
        rules=tuple(str(r) for r in (rules.rules if rules else []) if r.tool in names),
        budget_usd=budget_usd,
        concurrency=concurrency,
        backend=backend,
        sampled=len(counts),
        tokens_per_request=per_request,
        counted_by=counted_by,
        turns=turns,
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        cost_usd=cost,
    )


def estimate_line(plan: MapPlan) -> str:
    """How the cost was estimated, in one sentence."""
    cost = f"about ${plan.cost_usd:.4f}" if plan.cost_usd is not None else "unknown"
    priced = "" if plan.cost_usd is not None else f" (no price is known for {plan.model})"
    half = " at the batch price (half)" if plan.backend == "batch" else ""
    return (
        f"{cost}{priced}{half}: {plan.tokens_per_request:,} input tokens a request "
        f"({counted_by_phrase(plan)}) × {plan.to_run:,} rows × {plan.turns} turn(s), plus "
        f"{REPLY_TOKENS} output tokens a turn; tool results and longer conversations add "
        "to it, prompt caching takes from it"
    )


def counted_by_phrase(plan: MapPlan) -> str:
    rows = "row" if plan.sampled == 1 else "rows"
    return f"{plan.counted_by} of {plan.sampled} rendered {rows}"


def budget_line(plan: MapPlan) -> str:
    if plan.budget_usd is None:
        return "none (the map runs until every row is done)"
    return f"${plan.budget_usd:.2f} for the whole map (rows stop starting once it is spent)"


def plan_text(plan: MapPlan) -> str:
    """The plan in words (what a headless run prints)."""
    skipped = plan.rows - plan.to_run
    rows = f"{plan.to_run:,} rows" + (
        f" (of {plan.rows:,}; the rest are in the checkpoint)" if skipped else ""
    )
    where = "through Message Batches" if plan.backend == "batch" else "in the kernel"
    lines = [
        f"nb_tools.map plan: {rows} on {plan.model} ({plan.provider}), "
        f"{plan.concurrency} at a time, {where}",
        f"  policy: {plan.policy}",
    ]
    if plan.tools:
        lines.append("  tools:")
        lines += [f"    {t.name}: {t.does}" for t in plan.tools]
    else:
        lines.append("  tools: none")
    lines.append(f"  rules: {', '.join(plan.rules) if plan.rules else 'none for these tools'}")
    lines.append(f"  estimated cost: {estimate_line(plan)}")
    lines.append(f"  budget: {budget_line(plan)}")
    return "\n".join(lines)


async def confirm_plan(
    confirm: Callable[[MapPlan], bool | Awaitable[bool]],
    settings: Any,
    prompts: Sequence[str | None],
    to_run: Sequence[int],
    *,
    budget_usd: float | None,
    concurrency: int,
    backend: str,
) -> bool:
    """Make the plan of a map (``settings``: its ``MapSettings``) and ask ``confirm``."""
    plan = await make_plan(
        provider=settings.provider,
        registry=settings.tools,
        system=settings.system,
        prompts=prompts,
        to_run=to_run,
        policy=settings.approval,
        rules=settings.rules,
        budget_usd=budget_usd,
        concurrency=concurrency,
        backend=backend,
        max_turns=settings.max_turns,
    )
    answer = confirm(plan)
    if inspect.isawaitable(answer):
        answer = await answer
    return bool(answer)
