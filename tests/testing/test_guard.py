"""The block_real_models guard: what a test's environment looks like under it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from nb_tools.model import Message, ModelError, ModelRequest, TextBlock
from nb_tools.model.anthropic import AnthropicProvider
from nb_tools.testing._guard import (  # noqa: F401
    BLOCKED_BASE_URL,
    DUMMY_API_KEY,
    SDK_CONFIG_DIR,
    block_real_models,
)

REQUEST = ModelRequest(
    system="", messages=(Message(role="user", content=(TextBlock(text="Hi"),)),), tools=()
)


def test_environment_under_the_guard() -> None:
    assert os.environ["NB_TOOLS_BLOCK_REAL_MODELS"] == "1"
    assert os.environ["ANTHROPIC_API_KEY"] == DUMMY_API_KEY
    assert os.environ["ANTHROPIC_BASE_URL"] == BLOCKED_BASE_URL
    assert "ANTHROPIC_AUTH_TOKEN" not in os.environ


def test_the_sdk_config_dir_is_set_only_to_hide_a_profile() -> None:
    # Set, it makes the SDK warn on stderr (in every kernel a test starts) that the key
    # shadows a profile; so only when there is a profile to hide, and then at an empty one.
    value = os.environ.get("ANTHROPIC_CONFIG_DIR")
    if value is None:
        assert not SDK_CONFIG_DIR.exists()
    else:
        assert not any(Path(value).iterdir())


@pytest.mark.parametrize(
    "base_url",
    [None, "https://api.anthropic.com", "http://10.0.0.1:8080", "http://localhost.example.com"],
)
async def test_provider_refuses_anything_but_loopback(base_url: str | None) -> None:
    provider = AnthropicProvider("claude-sonnet-4-6", base_url=base_url, max_retries=0)
    with pytest.raises(ModelError) as caught:
        async for _ in provider.stream(REQUEST):
            pass
    assert str(caught.value).startswith(
        "real model requests are blocked in tests (NB_TOOLS_BLOCK_REAL_MODELS=1): "
        f"{base_url or BLOCKED_BASE_URL} is not on loopback"
    )
    assert provider._client is None  # refused before the SDK client was even made


@pytest.mark.parametrize("base_url", ["http://127.0.0.1:1", "http://localhost:1", "http://[::1]:1"])
async def test_loopback_is_allowed_through(base_url: str) -> None:
    provider = AnthropicProvider("claude-sonnet-4-6", base_url=base_url, max_retries=0)
    with pytest.raises(ModelError, match="Could not reach the Anthropic API"):
        async for _ in provider.stream(REQUEST):
            pass
