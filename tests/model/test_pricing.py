"""Cost of a turn from the per-family price table."""

from __future__ import annotations

import pytest

from nb_tools.model import Usage
from nb_tools.model._pricing import Price, cost_usd, model_version, price_for, with_cost


@pytest.mark.parametrize(
    ("model", "price"),
    [
        ("claude-sonnet-4-6", Price(input=3.0, output=15.0)),
        ("claude-sonnet-4-5-20250929", Price(input=3.0, output=15.0)),
        ("claude-3-5-sonnet-20241022", Price(input=3.0, output=15.0)),
        ("claude-sonnet-5-5", Price(input=3.0, output=15.0)),
        ("claude-opus-4-5", Price(input=5.0, output=25.0)),
        ("claude-opus-5", Price(input=5.0, output=25.0)),
        ("claude-opus-4-1-20250805", Price(input=15.0, output=75.0)),
        ("claude-opus-4-20250514", Price(input=15.0, output=75.0)),
        ("claude-3-opus-20240229", Price(input=15.0, output=75.0)),
        ("claude-haiku-4-5", Price(input=1.0, output=5.0)),
        ("claude-3-5-haiku-20241022", Price(input=0.8, output=4.0)),
        ("claude-3-haiku-20240307", Price(input=0.25, output=1.25)),
    ],
)
def test_price_by_family_and_version(model: str, price: Price) -> None:
    assert price_for(model) == price


def test_model_version_reads_the_version_numbers_not_the_date() -> None:
    assert model_version("claude-sonnet-4-5-20250929") == (4, 5)
    assert model_version("claude-3-5-haiku-20241022") == (3, 5)
    assert model_version("claude-opus-4-20250514") == (4,)
    assert model_version("claude-sonnet-latest") == ()


@pytest.mark.parametrize("model", ["claude-fable-5", "claude-mythos-preview", "gpt-4o", ""])
def test_unknown_family_has_no_price_and_costs_nothing(model: str) -> None:
    assert price_for(model) is None
    assert cost_usd(model, Usage(input_tokens=10**6, output_tokens=10**6)) == 0.0


def test_cache_prices_follow_the_input_price() -> None:
    price = Price(input=3.0, output=15.0)
    assert (price.cache_write, price.cache_read) == (3.75, pytest.approx(0.3))


def test_cost_counts_every_kind_of_token() -> None:
    usage = Usage(
        input_tokens=2_000_000,
        output_tokens=1_000_000,
        cache_creation_input_tokens=1_000_000,
        cache_read_input_tokens=10_000_000,
    )
    # Opus 4.5: 2 x $5 + 1 x $25 + 1 x $6.25 + 10 x $0.50
    assert cost_usd("claude-opus-4-5", usage) == pytest.approx(46.25)
    assert with_cost("claude-opus-4-5", usage) == Usage(
        input_tokens=2_000_000,
        output_tokens=1_000_000,
        cache_creation_input_tokens=1_000_000,
        cache_read_input_tokens=10_000_000,
        cost_usd=pytest.approx(46.25),  # type: ignore[arg-type]
    )


def test_no_tokens_cost_nothing() -> None:
    assert cost_usd("claude-sonnet-4-6", Usage()) == 0.0


def test_web_searches_are_priced_and_thinking_is_output() -> None:
    usage = Usage(output_tokens=1_000_000, thinking_tokens=400_000, web_search_requests=3)
    # thinking tokens are part of output_tokens: not billed twice; a search costs $0.01
    assert cost_usd("claude-sonnet-4-5", usage) == pytest.approx(15.0 + 0.03)
    total = usage + usage
    assert (total.thinking_tokens, total.web_search_requests) == (800_000, 6)


@pytest.mark.parametrize(
    ("model", "output", "adaptive", "compaction", "claude4"),
    [
        ("claude-sonnet-4-5", 64_000, False, False, True),
        ("claude-opus-4-1-20250805", 32_000, False, False, True),
        ("claude-opus-4-6", 128_000, True, True, True),
        ("claude-3-7-sonnet-20250219", 64_000, False, False, False),
        ("claude-3-5-haiku-20241022", 8_192, False, False, False),
    ],
)
def test_model_limits(
    model: str, output: int, adaptive: bool, compaction: bool, claude4: bool
) -> None:
    from nb_tools.model._limits import limits_for

    limits = limits_for(model)
    assert (
        limits.max_output_tokens,
        limits.adaptive_thinking,
        limits.server_compaction,
        limits.claude4,
    ) == (output, adaptive, compaction, claude4)


def test_anthropic_tool_versions_follow_the_model() -> None:
    from nb_tools.model._limits import anthropic_tool

    editor = "str_replace_based_edit_tool"
    assert anthropic_tool("text_editor_20250728", editor, "claude-sonnet-4-5") == {
        "type": "text_editor_20250728",
        "name": editor,
    }
    # older models call their editor str_replace_editor: ours is then a custom tool
    assert anthropic_tool("text_editor_20250728", editor, "claude-3-7-sonnet-20250219") is None
    assert anthropic_tool("bash_20250124", "bash", "claude-3-5-sonnet-20241022") == {
        "type": "bash_20241022",
        "name": "bash",
    }
