"""What the next model turn will probably cost, so a run can pause before it passes its
budget (``Agent(budget_usd=...)``).

The estimate is deliberately simple and a little pessimistic: the request's input tokens
from the one rough count (:func:`nb_tools.model.estimate_tokens`: 3.5 characters a token,
an image or document part at 1,600 tokens; no credit for the prompt cache), and as many
output tokens as the previous turn wrote (none guessed for a run's first turn: it is
checked against what sending its request costs, so a small budget starts when the request
fits), priced with the model's list price (``nb_tools.model._pricing``). A model without a
known price costs 0, so a budget never pauses it.
"""

from __future__ import annotations

import dataclasses
import math

from nb_tools.model import (
    CHARS_PER_TOKEN,
    ModelRequest,
    Usage,
    cost_usd,
    estimate_tokens,
    price_for,
)


def estimate_turn_cost(model: str, request: ModelRequest, previous: Usage | None = None) -> float:
    """The estimated USD cost of sending ``request`` to ``model``."""
    price = price_for(model)
    if price is None:
        return 0.0
    output = previous.output_tokens if previous is not None else 0
    if request.max_tokens is not None:
        output = min(output, request.max_tokens)
    return (estimate_tokens(request) * price.input + output * price.output) / 1_000_000


def money(usd: float) -> str:
    return f"${usd:.4f}"


def over_budget(
    budget_usd: float, spent: Usage, model: str, request: ModelRequest, previous: Usage | None
) -> str | None:
    """Why sending ``request`` would probably take a run that has spent ``spent`` past
    ``budget_usd`` (what was spent against what was allowed), or None when it fits."""
    estimate = estimate_turn_cost(model, request, previous)
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


def estimated_usage(model: str, request: ModelRequest, output_chars: int) -> Usage:
    """What a request whose reply was cut off (a stop mid-stream) probably cost: its input
    counted with :func:`~nb_tools.model.estimate_tokens`, the output from the characters
    received; marked ``estimated``."""
    usage = Usage(
        input_tokens=estimate_tokens(request),
        output_tokens=math.ceil(output_chars / CHARS_PER_TOKEN),
        estimated=True,
    )
    return dataclasses.replace(usage, cost_usd=cost_usd(model, usage))
