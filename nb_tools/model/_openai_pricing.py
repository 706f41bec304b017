"""OpenAI's list prices (USD per million tokens: input, cached input, output), the price
``OpenAIProvider.price()`` declares for OpenAI's own models.

Sources, read 2026-12-02: OpenAI's model pages on developers.openai.com (e.g. GPT-5 and
GPT-5-Codex: $1.25 input, $0.125 cached input, $10.00 output) and listings that quote
OpenAI's pricing page (developers.openai.com/api/docs/pricing): o4-mini $1.10 / $0.275 /
$4.40 (helicone.ai), gpt-4o and gpt-4o-mini with their cached-input prices (openai.com/api/
pricing as quoted in CommitBrief's wiki, May 2026), the GPT-4.1 family (tokenmath.io,
checked against OpenAI's page 2026-06-21), o3 after its June 2025 price cut, GPT-5 Pro,
GPT-5.2 and GPT-5.4 (deploybase.ai, March 2026; adk-model's table for cached input).
Reasoning tokens are output tokens. Standard tier only (Batch is half; Flex and Priority
are not modelled).

A model name takes the entry of its longest matching name followed by nothing or by "-"
(a date or a variant: "gpt-5-2025-08-07", "gpt-5-codex"), so "gpt-5.3" does not pass
for "gpt-5": a model not in the table has no price (a local model, a new release), and
a run with a budget then refuses to start until the provider is given one
(``OpenAIProvider(..., price=Price(...))``).
"""

from __future__ import annotations

from nb_tools.model._pricing import Price


def _p(inp: float, cached: float, out: float) -> Price:
    return Price(input=inp, output=out, cached_input=cached)


_TABLE: dict[str, Price] = {
    "gpt-5.4": _p(2.50, 0.25, 15.00),
    "gpt-5.4-mini": _p(0.75, 0.075, 4.50),
    "gpt-5.2": _p(1.75, 0.175, 14.00),
    "gpt-5.2-pro": _p(21.00, 21.00, 168.00),
    "gpt-5.1": _p(1.25, 0.125, 10.00),
    "gpt-5": _p(1.25, 0.125, 10.00),
    "gpt-5-mini": _p(0.25, 0.025, 2.00),
    "gpt-5-nano": _p(0.05, 0.005, 0.40),
    "gpt-5-pro": _p(15.00, 15.00, 120.00),
    "gpt-4.1": _p(2.00, 0.50, 8.00),
    "gpt-4.1-mini": _p(0.40, 0.10, 1.60),
    "gpt-4.1-nano": _p(0.10, 0.025, 0.40),
    "gpt-4o": _p(2.50, 1.25, 10.00),
    "gpt-4o-2024-05-13": _p(5.00, 5.00, 15.00),
    "gpt-4o-mini": _p(0.15, 0.075, 0.60),
    "o4-mini": _p(1.10, 0.275, 4.40),
    "o3": _p(2.00, 0.50, 8.00),
    "o3-mini": _p(1.10, 0.55, 4.40),
    "o3-pro": _p(20.00, 20.00, 80.00),
    "o1": _p(15.00, 7.50, 60.00),
}


def openai_price(model: str) -> Price | None:
    """The list price of OpenAI's ``model``, or None when it is not in the table."""
    name = model.lower().removeprefix("openai/")
    matches = [p for p in _TABLE if name == p or name.startswith(p + "-")]
    return _TABLE[max(matches, key=len)] if matches else None
