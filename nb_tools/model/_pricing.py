"""What a model turn cost: :class:`Price` (USD per million tokens), the one cost formula
(:func:`usage_cost`), and Claude's small per-family price table. Each provider declares
its model's price (``Provider.price()``); OpenAI's table is
:mod:`nb_tools.model._openai_pricing`.

Claude: prompt-cache writes cost 1.25x the input price (5-minute cache) or 2x (1-hour
cache), and cache reads 0.1x.
Thinking tokens are part of the output tokens (billed as output); a server-side web search
costs $10 per thousand searches, web fetch nothing beyond its tokens.
A newer version of a known family takes that family's latest known price; a model of an
unknown family is not priced (cost 0, ``price_for`` returns None).
"""

from __future__ import annotations

import dataclasses
import functools
import re
from dataclasses import dataclass

from nb_tools.model._types import Usage

_VERSION = re.compile(r"^\d{1,2}$")
WEB_SEARCH_USD = 10.0 / 1000


@dataclass(frozen=True, kw_only=True)
class Price:
    """USD per million tokens."""

    input: float
    output: float
    cached_input: float | None = None
    """A prompt-cache read; None: 0.1x the input price (Claude's rule)."""

    @property
    def cache_write(self) -> float:
        return self.input * 1.25

    @property
    def cache_write_1h(self) -> float:
        return self.input * 2.0

    @property
    def cache_read(self) -> float:
        return self.input * 0.1 if self.cached_input is None else self.cached_input


# Per family: (lowest version the price applies to, price), newest first.
_TABLE: dict[str, tuple[tuple[tuple[int, ...], Price], ...]] = {
    "opus": (
        ((4, 5), Price(input=5.0, output=25.0)),
        ((), Price(input=15.0, output=75.0)),
    ),
    "sonnet": (((), Price(input=3.0, output=15.0)),),
    "haiku": (
        ((4, 5), Price(input=1.0, output=5.0)),
        ((3, 5), Price(input=0.8, output=4.0)),
        ((), Price(input=0.25, output=1.25)),
    ),
}


def model_version(model: str) -> tuple[int, ...]:
    """The version numbers in a model name: ``(4, 5)`` for "claude-sonnet-4-5-20250929"
    (a date is not a version number)."""
    return tuple(int(p) for p in model.split("-") if _VERSION.match(p))


@functools.lru_cache(maxsize=64)
def price_for(model: str) -> Price | None:
    """The price of ``model`` ("claude-sonnet-4-5", "claude-3-5-haiku-20241022", ...), or
    None when its family is unknown."""
    parts = model.lower().split("-")
    version = model_version(model)
    for family, prices in _TABLE.items():
        if family in parts:
            for since, price in prices:
                if version >= since:
                    return price
    return None


def usage_cost(price: Price | None, usage: Usage) -> float:
    """What ``usage`` cost at ``price``; 0.0 when there is no price."""
    if price is None:
        return 0.0
    return (
        usage.input_tokens * price.input
        + usage.output_tokens * price.output
        + (usage.cache_creation_input_tokens - usage.cache_creation_1h_input_tokens)
        * price.cache_write
        + usage.cache_creation_1h_input_tokens * price.cache_write_1h
        + usage.cache_read_input_tokens * price.cache_read
    ) / 1_000_000 + usage.web_search_requests * WEB_SEARCH_USD


def priced(usage: Usage, price: Price | None) -> Usage:
    """``usage`` with ``cost_usd`` filled in at ``price``; unchanged when there is none."""
    if price is None:
        return usage
    return dataclasses.replace(usage, cost_usd=usage_cost(price, usage))


def cost_usd(model: str, usage: Usage) -> float:
    """What ``usage`` cost on the Claude model ``model``; 0.0 when it has no known price."""
    return usage_cost(price_for(model), usage)


def with_cost(model: str, usage: Usage, price: Price | None = None) -> Usage:
    """``usage`` with ``cost_usd`` filled in at ``price`` (default: the Claude model
    ``model``'s)."""
    return dataclasses.replace(
        usage, cost_usd=usage_cost(price if price is not None else price_for(model), usage)
    )
