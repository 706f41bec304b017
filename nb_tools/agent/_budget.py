"""What the next model turn will probably cost, so a run can pause before it passes its
budget (``Agent(budget_usd=...)``).

The estimate is deliberately simple and a little pessimistic: the request's input tokens
from the one rough count (:func:`nb_tools.model.estimate_tokens`: 3.5 characters a token,
an image or document part at 1,600 tokens; no credit for the prompt cache), and as many
output tokens as the previous turn wrote (none guessed for a run's first turn: it is
checked against what sending its request costs, so a small budget starts when the request
fits), priced with the price the provider declares for its model (``Provider.price()``:
Claude's and OpenAI's list prices, or the ``price=`` given to the provider).

A budget needs a price: with ``budget_usd`` set and a model the provider has no price
for (a local model, a new release), the run does not send its first request and says
why and how to give one; it never runs as if the budget were not there.
"""

from __future__ import annotations

import math

from nb_tools.model import CHARS_PER_TOKEN, ModelRequest, Price, Provider, Usage, estimate_tokens
from nb_tools.model._pricing import priced


def estimate_turn_cost(
    price: Price | None, request: ModelRequest, previous: Usage | None = None
) -> float:
    """The estimated USD cost of sending ``request`` at ``price``."""
    if price is None:
        return 0.0
    output = previous.output_tokens if previous is not None else 0
    if request.max_tokens is not None:
        output = min(output, request.max_tokens)
    return (estimate_tokens(request) * price.input + output * price.output) / 1_000_000


def money(usd: float) -> str:
    return f"${usd:.4f}"


def unpriced(budget_usd: float, provider: Provider) -> str:
    """Why a budget cannot be kept on a model without a price (a run does not start)."""
    return (
        f"no price is known for {provider.model!r} ({provider.name}), so what it spends "
        f"cannot be counted against the {money(budget_usd)} budget. Give the provider a "
        "price in USD per million tokens (e.g. OpenAIProvider(model, base_url=..., "
        "price=nb_tools.model.Price(input=0.5, output=1.5))), or run without a budget "
        "(budget_usd=None; in a notebook, unset NB_TOOLS_BUDGET_USD)."
    )


def over_budget(
    budget_usd: float,
    spent: Usage,
    provider: Provider,
    request: ModelRequest,
    previous: Usage | None,
) -> str | None:
    """Why sending ``request`` would probably take a run that has spent ``spent`` past
    ``budget_usd`` (what was spent against what was allowed), or that its cost cannot be
    known (the provider has no price for the model); None when it fits."""
    price = provider.price()
    if price is None:
        return "Not sent: " + unpriced(budget_usd, provider)
    estimate = estimate_turn_cost(price, request, previous)
    if spent.cost_usd + estimate <= budget_usd:
        return None
    allowed = money(budget_usd)
    if spent.cost_usd >= budget_usd:
        return f"This run has spent {money(spent.cost_usd)} of its {allowed} budget."
    if previous is None and spent.cost_usd == 0:
        return (
            f"Not sent: the first request is estimated at {money(estimate)} "
            f"({estimate_tokens(request):,} tokens in), more than this run's "
            f"{allowed} budget."
        )
    return (
        f"This run has spent {money(spent.cost_usd)} of its {allowed} budget; the next "
        f"turn, estimated at {money(estimate)}, would pass it."
    )


def estimated_usage(price: Price | None, request: ModelRequest, output_chars: int) -> Usage:
    """What a request whose reply was cut off (a stop mid-stream) probably cost: its input
    counted with :func:`~nb_tools.model.estimate_tokens`, the output from the characters
    received; marked ``estimated``."""
    usage = Usage(
        input_tokens=estimate_tokens(request),
        output_tokens=math.ceil(output_chars / CHARS_PER_TOKEN),
        estimated=True,
    )
    return priced(usage, price)
