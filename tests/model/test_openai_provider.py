"""OpenAIProvider against FakeOpenAIServer (real HTTP, the real openai SDK): what each API
is sent, freeform grammar tools, reasoning items, images, errors, and picking a provider
from a model name."""

from __future__ import annotations

import base64
import json
import socket
import subprocess
import sys
from collections.abc import AsyncIterator
from typing import Any

import pytest

from nb_tools import Agent, Result, ToolGrammar, tool
from nb_tools.model import OtherBlock, Part, ToolUseBlock, provider_for, split_model
from nb_tools.model._openai_convert import REASONING
from nb_tools.model.openai import OLLAMA_BASE_URL, OpenAIProvider
from nb_tools.testing import Fault, call, reply
from nb_tools.testing.openai_server import FakeOpenAIServer

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)
CALC = ToolGrammar(syntax="lark", definition='start: NUMBER ("+" NUMBER)*\n%import common.NUMBER')

received: list[str] = []


@tool(register=False, grammar=CALC)
def calc(expression: str) -> str:
    """Add numbers written as 1+2+3."""
    received.append(expression)
    return str(sum(int(x) for x in expression.split("+")))


@tool(register=False, read_only=True)
def chart(title: str) -> Result:
    """A chart as an image."""
    return Result(
        content=f"chart {title}", parts=[Part(kind="image", media_type="image/png", data=PNG)]
    )


@pytest.fixture
async def fake() -> AsyncIterator[FakeOpenAIServer]:
    received.clear()
    with FakeOpenAIServer() as srv:
        yield srv


def provider(srv: FakeOpenAIServer, api: str, **kwargs: Any) -> OpenAIProvider:
    return OpenAIProvider("gpt-4.1", api=api, base_url=srv.base_url, api_key="test", **kwargs)  # type: ignore[arg-type]


async def test_a_freeform_tool_is_a_custom_tool_on_the_responses_api(
    fake: FakeOpenAIServer,
) -> None:
    fake.push(reply("", call("calc", input="1+2+39", id="call_c")), reply("42."))
    result = await Agent(provider(fake, "responses"), tools=[calc], approval="auto").run("sum")
    assert result.text == "42." and received == ["1+2+39"]
    first, second = fake.requests[0].body, fake.requests[1].body
    assert first["tools"] == [
        {
            "type": "custom",
            "name": "calc",
            "description": "Add numbers written as 1+2+3.",
            "format": {"type": "grammar", "syntax": "lark", "definition": CALC.definition},
        }
    ]
    # the call goes back as the model wrote it, the output as a custom tool's output
    assert second["input"][1:] == [
        {"type": "custom_tool_call", "call_id": "call_c", "name": "calc", "input": "1+2+39"},
        {"type": "custom_tool_call_output", "call_id": "call_c", "output": "42"},
    ]
    # and it reaches the conversation as {"input": text}, like every provider's
    (use,) = [b for b in result.messages[1].content if isinstance(b, ToolUseBlock)]
    assert json.loads(use.arguments) == {"input": "1+2+39"}


async def test_a_freeform_tool_is_a_one_string_function_on_chat_completions(
    fake: FakeOpenAIServer,
) -> None:
    fake.push(reply("", call("calc", input="2+2", id="call_c")), reply("4."))
    result = await Agent(provider(fake, "chat"), tools=[calc], approval="auto").run("sum")
    assert result.text == "4." and received == ["2+2"]
    (spec,) = fake.requests[0].body["tools"]
    assert spec["function"]["parameters"]["properties"] == {
        "input": {"type": "string", "description": "The tool's input text."}
    }
    assert CALC.definition in spec["function"]["description"]


def test_a_freeform_tool_takes_exactly_one_string() -> None:
    with pytest.raises(TypeError, match="takes a, b"):

        @tool(register=False, grammar="start: WORD")
        def two(a: str, b: str) -> str:
            return a + b

    with pytest.raises(TypeError, match="must be a str"):

        @tool(register=False, grammar="start: WORD")
        def number(n: int) -> str:
            return str(n)


async def test_reasoning_items_are_kept_and_sent_back_unchanged() -> None:
    with FakeOpenAIServer(reasoning="Let me think.") as srv:
        srv.push(reply("", call("chart", title="a", id="call_1")), reply("Done."))
        result = await Agent(provider(srv, "responses"), tools=[chart]).run("chart a")
        first_turn = result.messages[1].content
        assert isinstance(first_turn[0], OtherBlock) and first_turn[0].type == REASONING
        sent_back = srv.requests[1].body["input"][1]
        assert sent_back == dict(first_turn[0].data)
        assert sent_back["encrypted_content"].startswith("enc:")
        assert srv.requests[0].body["include"] == ["reasoning.encrypted_content"]
        assert srv.requests[0].body["store"] is False


async def test_images_in_tool_results_where_the_server_takes_them(fake: FakeOpenAIServer) -> None:
    for api in ("chat", "responses"):
        fake.push(reply("", call("chart", title="a", id=f"call_{api}")), reply("A chart."))
        await Agent(provider(fake, api), tools=[chart]).run("chart")
    chat, responses = fake.requests[1].body, fake.requests[3].body
    tool_msg, image_msg = chat["messages"][-2:]
    assert tool_msg["role"] == "tool" and "1 image(s) in the next message" in tool_msg["content"]
    assert image_msg["content"][0]["image_url"]["url"].startswith("data:image/png;base64,")
    output = responses["input"][-1]["output"]
    assert output[0] == {"type": "input_text", "text": "chart a"}
    assert output[1]["type"] == "input_image"


async def test_a_server_without_images_gets_a_note_instead(fake: FakeOpenAIServer) -> None:
    fake.push(reply("", call("chart", title="a", id="call_1")), reply("ok"))
    local = provider(fake, "chat", name="ollama")
    await Agent(local, tools=[chart]).run("chart")
    messages = fake.requests[1].body["messages"]
    assert messages[-1]["role"] == "tool"
    assert "image(s) left out: this server does not take images" in messages[-1]["content"]


async def test_max_tokens_is_left_to_the_server_unless_set(fake: FakeOpenAIServer) -> None:
    fake.push(reply("a"), reply("b"), reply("c"), reply("d"))
    await Agent(provider(fake, "chat", name="ollama"), tools=[]).run("x")
    await Agent(provider(fake, "chat", name="ollama"), tools=[], max_tokens=300).run("x")
    await Agent(provider(fake, "chat"), tools=[], max_tokens=300).run("x")
    await Agent(provider(fake, "responses"), tools=[]).run("x")
    bodies = [r.body for r in fake.requests]
    keys = ("max_tokens", "max_completion_tokens", "max_output_tokens")
    assert [{k: b[k] for k in keys if k in b} for b in bodies] == [
        {},
        {"max_tokens": 300},  # not OpenAI's max_completion_tokens
        {"max_completion_tokens": 300},
        {},
    ]


async def test_strict_tools_send_the_strict_schema(fake: FakeOpenAIServer) -> None:
    @tool(register=False, strict=True)
    def greet(name: str, polite: bool = True) -> str:
        """Greet."""
        return f"hi {name}"

    fake.push(reply("hi"), reply("hi"))
    await Agent(provider(fake, "chat"), tools=[greet]).run("x")
    await Agent(provider(fake, "responses"), tools=[greet]).run("x")
    function = fake.requests[0].body["tools"][0]["function"]
    assert function["strict"] is True
    assert function["parameters"]["additionalProperties"] is False
    assert sorted(function["parameters"]["required"]) == ["name", "polite"]
    assert fake.requests[1].body["tools"][0]["strict"] is True


async def test_errors_say_what_to_do(fake: FakeOpenAIServer) -> None:
    fake.push(Fault(status=401, message="Incorrect API key provided"))
    result = await Agent(provider(fake, "chat"), tools=[]).run("hi")
    assert result.stop_reason == "error"
    assert result.error is not None and "OPENAI_API_KEY" in result.error
    assert "Incorrect API key" in result.error

    fake.push(Fault(status=429, times=2), reply("after the rate limit"))
    again = await Agent(provider(fake, "chat"), tools=[]).run("hi")
    assert again.text == "after the rate limit"


async def test_an_unreachable_server_is_named() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    dead = OpenAIProvider("m", base_url=f"http://127.0.0.1:{port}/v1", max_retries=0)
    result = await Agent(dead, tools=[]).run("hi")
    assert result.stop_reason == "error"
    assert f"127.0.0.1:{port}" in (result.error or "") and "check that the server runs" in (
        result.error or ""
    )


async def test_real_endpoints_are_refused_under_the_test_guard() -> None:
    result = await Agent(OpenAIProvider("gpt-4.1", api_key="sk-x"), tools=[]).run("hi")
    assert result.stop_reason == "error"
    assert "NB_TOOLS_BLOCK_REAL_MODELS" in (result.error or "")


def test_model_names_pick_the_provider(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OLLAMA_HOST", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    assert split_model("claude-sonnet-4-5") == ("anthropic", "claude-sonnet-4-5")
    openai = provider_for("openai:gpt-5")
    assert isinstance(openai, OpenAIProvider) and (openai.api, openai.model) == (
        "responses",
        "gpt-5",
    )
    chat = provider_for("openai-chat:gpt-4.1")
    assert isinstance(chat, OpenAIProvider) and chat.api == "chat"
    ollama = provider_for("ollama:qwen3")
    assert isinstance(ollama, OpenAIProvider)
    assert (ollama.name, ollama._base_url, ollama.api) == ("ollama", OLLAMA_BASE_URL, "chat")
    monkeypatch.setenv("OLLAMA_HOST", "http://127.0.0.1:9999")
    assert provider_for("ollama:qwen3")._base_url == "http://127.0.0.1:9999/v1"  # type: ignore[attr-defined]
    local = provider_for("openai-compatible:llama", base_url="http://127.0.0.1:8080/v1")
    assert isinstance(local, OpenAIProvider) and local.name == "openai-compatible"
    with pytest.raises(ValueError, match="--base-url"):
        provider_for("openai-compatible:llama")
    with pytest.raises(ValueError, match="unknown model provider 'gemini'"):
        provider_for("gemini:pro")
    with pytest.raises(ValueError, match="names no model"):
        provider_for("ollama:")
    monkeypatch.setenv("NB_TOOLS_MODEL", "ollama:phi4")
    assert Agent(tools=[]).provider.model == "phi4"


def test_importing_the_provider_does_not_import_the_sdk() -> None:
    code = "import nb_tools.model.openai, nb_tools, sys; print('openai' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


async def test_a_conversation_begun_on_responses_goes_on_with_claude() -> None:
    """OpenAI's reasoning items mean nothing to the Messages API: switching the model of a
    conversation leaves them out of the Anthropic request, and keeps everything else."""
    from nb_tools.model.anthropic import AnthropicProvider
    from nb_tools.testing.server import FakeMessagesServer

    with FakeOpenAIServer(reasoning="Let me think.") as srv:
        srv.push(reply("", call("chart", title="a", id="call_1")), reply("Done."))
        first = await Agent(provider(srv, "responses"), tools=[chart]).run("chart a")
    with FakeMessagesServer() as claude:
        claude.push(reply("Charted a before."))
        anthropic = AnthropicProvider("claude-test", base_url=claude.base_url, api_key="test")
        try:
            agent = Agent(anthropic, tools=[chart], messages=first.messages)
            again = await agent.run("what did you chart?")
        finally:
            await anthropic.client.close()
    assert again.stop_reason == "end_turn"
    sent = claude.requests[0].body["messages"]
    types = [b["type"] for m in sent for b in m["content"]]
    assert "reasoning" not in types
    assert types == ["text", "tool_use", "tool_result", "text", "text"]
    assert any(isinstance(b, OtherBlock) for b in agent.messages[1].content)  # still kept
