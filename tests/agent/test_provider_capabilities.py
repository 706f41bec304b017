"""The agent asks the provider what a model takes (limits, features, token counting,
retries), never Claude's table for another vendor's model."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from nb_tools import Agent
from nb_tools.agent import RunNotice
from nb_tools.model import (
    BaseProvider,
    Message,
    ModelLimits,
    ModelRequest,
    Provider,
    RequestFeatures,
    TextBlock,
    estimate_tokens,
)
from nb_tools.model._limits import CLAUDE_FEATURES, limits_for
from nb_tools.model._openai_convert import chat_body, responses_body
from nb_tools.model.anthropic import AnthropicProvider
from nb_tools.model.openai import OpenAIProvider
from nb_tools.testing import ScriptedModel, reply


def test_each_provider_declares_its_own_limits() -> None:
    assert OpenAIProvider("gpt-5").limits() == ModelLimits(
        context_window=400_000, max_output_tokens=128_000
    )
    assert OpenAIProvider("gpt-4.1-mini").limits().context_window == 1_047_576
    local = OpenAIProvider("qwen3", base_url="http://127.0.0.1:1/v1", name="ollama")
    assert local.limits() == ModelLimits()  # unknown until the server says
    claude = AnthropicProvider("claude-sonnet-4-5")
    assert claude.limits() == limits_for("claude-sonnet-4-5")
    assert claude.limits().default_max_tokens == 8192
    for provider in (OpenAIProvider("gpt-5"), claude, ScriptedModel([])):
        assert isinstance(provider, Provider)
    assert (claude.name, OpenAIProvider("gpt-5").name, local.name) == (
        "anthropic",
        "openai",
        "ollama",
    )


def test_an_openai_model_gets_no_claude_only_request_parts() -> None:
    agent = Agent(
        OpenAIProvider("gpt-5"),
        tools=[],
        thinking=4000,
        effort="high",
        server_tools=["web_search"],
    )
    request = agent.request_preview("hi")
    assert request.thinking is None
    assert request.server_tools == ()
    assert request.betas == ()
    assert "output_config" not in request.options
    assert "context_management" not in request.options
    assert request.max_tokens is None  # left to the server

    claude = Agent(ScriptedModel([]), tools=[], thinking=4000, server_tools=["web_search"])
    request = claude.request_preview("hi")
    assert request.thinking == {"type": "enabled", "budget_tokens": 4000}
    assert [t["name"] for t in request.server_tools] == ["web_search"]
    assert request.max_tokens == 8192


async def test_a_server_tool_the_provider_cannot_send_is_left_out_with_a_notice() -> None:
    plain = dataclasses.replace(CLAUDE_FEATURES, server_tools=False)
    model = ScriptedModel([reply("ok")], features=plain)
    notices: list[Any] = []
    agent = Agent(model, tools=[], server_tools=["web_search"], on_event=notices.append)
    await agent.run("hi")
    assert model.requests[0].server_tools == ()
    assert [n.message for n in notices if isinstance(n, RunNotice)] == [
        "server tool web_search not declared: the ScriptedModel provider runs no server tools"
    ]


async def test_the_context_line_is_the_providers() -> None:
    """A small window from the provider makes the agent clear old tool results and
    summarise client-side; an unknown window makes it do neither."""
    small = ModelLimits(context_window=400, default_max_tokens=100)
    long_text = "word " * 400
    history = [
        Message(role="user", content=(TextBlock(text=long_text),)),
        Message(role="assistant", content=(TextBlock(text="noted"),)),
    ]
    model = ScriptedModel(
        [reply("summary of it"), reply("done")], limits=small, features=RequestFeatures()
    )
    agent = Agent(model, tools=[], messages=history)
    await agent.run("go on")
    assert len(model.requests) == 2  # a summary request, then the turn
    assert model.requests[1].max_tokens == 100

    unknown = ScriptedModel([reply("done")], limits=ModelLimits(), features=RequestFeatures())
    await Agent(unknown, tools=[], messages=history).run("go on")
    assert len(unknown.requests) == 1
    assert unknown.requests[0].max_tokens == 8192  # the provider needs a number


class Minimal(BaseProvider):
    name = "minimal"

    @property
    def model(self) -> str:
        return "m"

    def stream(self, request: ModelRequest) -> Any:
        return ScriptedModel([reply("hi")]).stream(request)


async def test_a_base_provider_has_every_default() -> None:
    provider = Minimal()
    request = Agent(provider, tools=[]).request_preview("hello there")
    assert await provider.count_tokens(request) == estimate_tokens(request)
    assert provider.take_over_retries() == 0
    assert provider.limits() == ModelLimits()
    assert provider.price() is None
    assert (await Agent(provider, tools=[]).run("x")).text == "hi"


def test_an_object_that_is_not_a_provider_is_refused_by_name() -> None:
    class Half:
        model = "m"

        async def stream(self, request: ModelRequest) -> Any:
            yield None

    with pytest.raises(TypeError) as err:
        Agent(Half(), tools=[])  # type: ignore[arg-type]
    assert str(err.value) == (
        "Agent: Half is not a Provider: it lacks name, features, limits, price, count_tokens, "
        "take_over_retries; subclass nb_tools.model.BaseProvider, which declares them (see "
        "'Adding a provider' in the docs)"
    )


def test_one_token_estimator() -> None:
    from nb_tools.agent import _budget, _driver

    messages = [Message(role="user", content=(TextBlock(text="x" * 346),))]  # + "user"
    assert estimate_tokens(messages) == 100
    request = ModelRequest(system="y" * 35, messages=messages, tools=[])
    assert estimate_tokens(request) == 110
    assert _budget.estimate_tokens is _driver.estimate_tokens is estimate_tokens


def test_structured_outputs_go_where_each_openai_api_takes_them() -> None:
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    request = ModelRequest(
        system="",
        messages=[Message(role="user", content=(TextBlock(text="n?"),))],
        tools=[],
        options={"output_schema": {"name": "Count", "schema": schema}},
    )
    wanted = {"name": "Count", "schema": schema, "strict": True}
    chat = chat_body(request, "gpt-5", images_in_tool_results=True)
    assert chat["response_format"] == {"type": "json_schema", "json_schema": wanted}
    assert responses_body(request, "gpt-5")["text"] == {"format": {"type": "json_schema", **wanted}}
    assert OpenAIProvider("gpt-5").features.structured_outputs
    assert not OpenAIProvider("q", name="ollama").features.structured_outputs
