"""What the next model turn will probably cost, so a run can pause before it passes its
budget (``Agent(budget_usd=...)``).

The estimate is deliberately simple and a little pessimistic: the request's input tokens
from the one rough count (:func:`nb_tools.model.estimate_tokens`: 3.5 characters a token,
an image or document part at 1,600 tokens; no credit for the prompt cache), and as many
output tokens as the previous turn wrote (500 for a first turn), priced with the model's
list price (``nb_tools.model._pricing``). A model without a known price costs 0, so a
budget never pauses it.
"""

from __future__ import annotations

from nb_tools.model import ModelRequest, Usage
from nb_tools.model._pricing import price_for
from nb_tools.model._tokens import estimate_tokens

FIRST_OUTPUT_TOKENS = 500


def estimate_turn_cost(model: str, request: ModelRequest, previous: Usage | None = None) -> float:
    """The estimated USD cost of sending ``request`` to ``model``."""
    price = price_for(model)
    if price is None:
        return 0.0
    output = previous.output_tokens if previous is not None else FIRST_OUTPUT_TOKENS
    output = max(output, 1)
    if request.max_tokens is not None:
        output = min(output, request.max_tokens)
    return (estimate_tokens(request) * price.input + output * price.output) / 1_000_000


def over_budget(
    budget_usd: float, spent: Usage, model: str, request: ModelRequest, previous: Usage | None
) -> bool:
    """Whether sending ``request`` would probably take a run that has spent ``spent`` past
    ``budget_usd``."""
    return spent.cost_usd + estimate_turn_cost(model, request, previous) > budget_usd
