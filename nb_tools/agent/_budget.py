"""What the next model turn will probably cost, so a run can pause before it passes its
budget (``Agent(budget_usd=...)``).

The estimate is deliberately simple and a little pessimistic: the request's text at about
four characters a token (no credit for the prompt cache), an image or document part at
1,600 tokens, and as many output tokens as the previous turn wrote (500 for a first turn),
priced with the model's list price (``nb_tools.model._pricing``). A model without a known
price costs 0, so a budget never pauses it.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from nb_tools.model import ModelRequest, Usage
from nb_tools.model._pricing import price_for

CHARS_PER_TOKEN = 4
PART_TOKENS = 1_600
FIRST_OUTPUT_TOKENS = 500


def _count(value: Any) -> tuple[int, int]:
    """(characters of text, binary parts) inside ``value`` (dataclasses, lists, dicts)."""
    chars = parts = 0
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, str):
            chars += len(v)
        elif isinstance(v, bytes | bytearray):
            parts += 1
        elif isinstance(v, dict):
            stack.extend(v.values())
        elif isinstance(v, list | tuple):
            stack.extend(v)
        elif dataclasses.is_dataclass(v) and not isinstance(v, type):
            stack.extend(getattr(v, f.name) for f in dataclasses.fields(v))
    return chars, parts


def estimate_input_tokens(request: ModelRequest) -> int:
    chars, parts = _count(list(request.messages))
    chars += len(request.system)
    for spec in request.tools:
        chars += len(spec.name) + len(spec.description or "")
        chars += len(json.dumps(spec.input_schema)) if spec.input_schema else 0
    return chars // CHARS_PER_TOKEN + parts * PART_TOKENS


def estimate_turn_cost(model: str, request: ModelRequest, previous: Usage | None = None) -> float:
    """The estimated USD cost of sending ``request`` to ``model``."""
    price = price_for(model)
    if price is None:
        return 0.0
    output = previous.output_tokens if previous is not None else FIRST_OUTPUT_TOKENS
    output = min(max(output, 1), request.max_tokens)
    return (estimate_input_tokens(request) * price.input + output * price.output) / 1_000_000


def over_budget(
    budget_usd: float, spent: Usage, model: str, request: ModelRequest, previous: Usage | None
) -> bool:
    """Whether sending ``request`` would probably take a run that has spent ``spent`` past
    ``budget_usd``."""
    return spent.cost_usd + estimate_turn_cost(model, request, previous) > budget_usd
