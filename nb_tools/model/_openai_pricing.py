"""What an OpenAI model's turn cost, from a small list-price table (USD per million tokens).

Cached input tokens cost the model's cached-input price; reasoning tokens are part of the
output tokens. A model not in the table (a local model, a new release) is not priced:
its cost stays 0 and the transcript shows tokens only.
"""

from __future__ import annotations

import dataclasses

from nb_tools.model._types import Usage

# model name prefix -> (input, cached input, output); the longest matching prefix wins.
_TABLE: dict[str, tuple[float, float, float]] = {
    "gpt-5-nano": (0.05, 0.005, 0.40),
    "gpt-5-mini": (0.25, 0.025, 2.00),
    "gpt-5": (1.25, 0.125, 10.00),
    "gpt-4.1-nano": (0.10, 0.025, 0.40),
    "gpt-4.1-mini": (0.40, 0.10, 1.60),
    "gpt-4.1": (2.00, 0.50, 8.00),
    "gpt-4o-mini": (0.15, 0.075, 0.60),
    "gpt-4o": (2.50, 1.25, 10.00),
    "o4-mini": (1.10, 0.275, 4.40),
    "o3": (2.00, 0.50, 8.00),
}


def openai_price(model: str) -> tuple[float, float, float] | None:
    """(input, cached input, output) USD per million tokens for ``model``, or None."""
    name = model.lower()
    best = max((p for p in _TABLE if name.startswith(p)), key=len, default=None)
    return _TABLE[best] if best is not None else None


def openai_cost(model: str, usage: Usage) -> Usage:
    """``usage`` with ``cost_usd`` filled in where ``model`` has a known price."""
    price = openai_price(model)
    if price is None:
        return usage
    inp, cached, out = price
    cost = (
        usage.input_tokens * inp
        + usage.cache_read_input_tokens * cached
        + usage.output_tokens * out
    ) / 1_000_000
    return dataclasses.replace(usage, cost_usd=cost)
