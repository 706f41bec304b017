"""The dialects OpenAI-compatible servers really speak, replayed byte for byte from a
loopback server (``openai_dialects/``, each fixture's source in its README) through
``OpenAIProvider`` and through a short ``Agent`` tool loop: reasoning shown as thinking
and sent back, server extras echoed, calls without an index kept apart, usage wherever the
server puts it, and errors and cut streams that say what happened."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from dialect_server import (
    JSON,
    Answer,
    DialectServer,
    assistant_messages,
    json_answer,
    serving,
)

from nb_tools import Agent, tool
from nb_tools.agent import ThinkingDelta
from nb_tools.model import (
    Message,
    ModelRequest,
    OtherBlock,
    ResponseEvent,
    TextBlock,
    ThinkingDeltaEvent,
    ToolUseBlock,
)
from nb_tools.model._openai_chat import CHAT_EXTRA
from nb_tools.model.openai import OpenAIProvider

FIXTURES = Path(__file__).parent / "openai_dialects"


@tool(register=False)
def get_weather(city: str) -> str:
    """The weather in a city."""
    return f"sunny in {city}"


def final_answer() -> Answer:
    """The follow-up's reply: plain text, the format every server shares."""
    head = {"id": "chatcmpl-2", "object": "chat.completion.chunk", "created": 1, "model": "m"}
    chunks = [
        {**head, "choices": [{"index": 0, "delta": {"role": "assistant", "content": "Sunny."}}]},
        {**head, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
    ]
    body = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"
    return Answer(body.encode())


SIG = "EjQKMgEMOdbHJChLX75QUCJjyYlmq3n0tUu0g6ZJ1wYQ3g0xJ7Yt5y6r8kq2M1pT2uV3wX4yZ5a6b7c8d9e0f1g2h3i4"
PARIS, LYON = '{"city":"Paris"}', '{"city":"Lyon"}'

# fixture -> what the reply is: thinking shown, text, calls (id, name, raw arguments),
# the extras kept (message fields; per-call fields), usage (input, cached, output, thinking)
EXPECTED: dict[str, dict[str, Any]] = {
    "vllm-reasoning-content": {
        "thinking": "The user asks about Paris weather; call get_weather.",
        "text": "\n\n",
        "calls": [("chatcmpl-tool-8f3c2a1b0e9d4c7b", '{"city": "Paris"}')],
        "message": {"reasoning_content": "The user asks about Paris weather; call get_weather."},
        "usage": (182, 0, 37, 0),
    },
    "llamacpp-reasoning-content": {
        "thinking": "I should check the weather.",
        "text": "",
        "calls": [("Xq0m2YJ8rX4p0lqOa6cWcBqTzdkVx1Ok", PARIS)],
        "message": {"reasoning_content": "I should check the weather."},
        "usage": (96, 0, 11, 0),
    },
    "ollama-reasoning": {
        "thinking": "Okay, the user wants the weather.",
        "text": "",
        "calls": [("call_k3v9x2ab", PARIS)],
        "message": {"reasoning": "Okay, the user wants the weather."},
        "usage": (150, 0, 41, 0),
    },
    "ollama-0.4-no-index": {
        "thinking": "",
        "text": "",
        "calls": [("call_4t1x0q9n", PARIS), ("call_8m2c7v3z", LYON)],
        "usage": (0, 0, 0, 0),
    },
    "ollama-index-zero": {
        "thinking": "",
        "text": "",
        "calls": [("call_abc123", PARIS), ("call_def456", LYON)],
        "usage": (0, 0, 0, 0),
    },
    "gemini-openai": {
        "thinking": "",
        "text": "Checking both cities.",
        "calls": [("jm4owj31", PARIS), ("q7x2pv90", LYON)],
        "tool_calls": {"jm4owj31": {"extra_content": {"google": {"thought_signature": SIG}}}},
        "usage": (120, 0, 42, 68),
    },
    "deepseek-reasoning-content": {
        "thinking": "We need the weather in Paris.",
        "text": "",
        "calls": [("call_00_r8WYhVXvUqZ3yMg9XyAIeP0Z", PARIS)],
        "message": {"reasoning_content": "We need the weather in Paris."},
        "usage": (55, 256, 52, 30),
    },
    "openrouter-reasoning-details": {
        "thinking": "Let me look up Paris.",
        "text": "",
        "calls": [("toolu_01Ab2Cd3Ef4Gh5Ij6Kl7Mn8", '{"city": "Paris"}')],
        "message": {
            "reasoning": "Let me look up Paris.",
            "reasoning_details": [
                {
                    "type": "reasoning.text",
                    "text": "Let me look up Paris.",
                    "format": "anthropic-claude-v1",
                    "index": 0,
                    "signature": "ErUBCkYIBxgCKkDk3vZ9yP0cQ",
                }
            ],
        },
        "usage": (612, 0, 71, 24),
    },
    "groq-x-groq-usage": {
        "thinking": "",
        "text": "",
        "calls": [("call_7yqc", PARIS)],
        "usage": (231, 0, 19, 0),
    },
}


def fixture(name: str) -> bytes:
    return (FIXTURES / f"{name}.sse").read_bytes()


@pytest.fixture
def server() -> Iterator[Any]:
    made: list[Iterator[DialectServer]] = []

    def start(answers: list[Answer], models: Answer | None = None) -> DialectServer:
        gen = serving(answers, models)
        made.append(gen)
        return next(gen)

    yield start
    for gen in made:
        next(gen, None)


def provider_for(srv: DialectServer, name: str = "openai-compatible", **kw: Any) -> OpenAIProvider:
    return OpenAIProvider("m", base_url=srv.base_url, api_key="test", name=name, **kw)


def test_every_fixture_is_expected_and_named_in_the_readme() -> None:
    names = sorted(p.name.removesuffix(".sse") for p in FIXTURES.glob("*.sse"))
    assert [n for n in names if not n.endswith(".2")] == sorted(EXPECTED)
    readme = (FIXTURES / "README.md").read_text()
    assert [n for n in names if f"`{n}.sse`" not in readme] == []


@pytest.mark.parametrize("piece", [0, 7], ids=["whole", "7-byte pieces"])
@pytest.mark.parametrize("name", sorted(EXPECTED))
async def test_the_provider_rebuilds_each_dialect(server: Any, name: str, piece: int) -> None:
    srv = server([Answer(fixture(name), piece=piece)])
    provider = provider_for(srv)
    request = ModelRequest(
        system="", messages=[Message(role="user", content=(TextBlock(text="hi"),))], tools=[]
    )
    thinking: list[str] = []
    final: ResponseEvent | None = None
    async for event in provider.stream(request):
        if isinstance(event, ThinkingDeltaEvent):
            thinking.append(event.text)
        elif isinstance(event, ResponseEvent):
            final = event
    assert final is not None
    want = EXPECTED[name]
    blocks = final.message.content
    assert "".join(thinking) == want["thinking"]
    assert "".join(b.text for b in blocks if isinstance(b, TextBlock)) == want["text"]
    calls = [(b.id, b.arguments) for b in blocks if isinstance(b, ToolUseBlock)]
    assert calls == want["calls"]
    assert {b.name for b in blocks if isinstance(b, ToolUseBlock)} == {"get_weather"}
    extra = [b.data for b in blocks if isinstance(b, OtherBlock) and b.type == CHAT_EXTRA]
    kept = {k: want[k] for k in ("message", "tool_calls") if k in want}
    assert extra == ([kept] if kept else [])
    usage = final.usage
    assert (
        usage.input_tokens,
        usage.cache_read_input_tokens,
        usage.output_tokens,
        usage.thinking_tokens,
    ) == want["usage"]
    assert final.stop_reason == "tool_use"


def deepseek_check(request: JSON) -> Answer | None:
    """DeepSeek's rule (thinking mode): an assistant message with tool calls carries its
    ``reasoning_content`` back, else 400 (its words, from the captures in the README)."""
    for index, message in enumerate(request["messages"]):
        needs = message["role"] == "assistant" and message.get("tool_calls")
        if needs and "reasoning_content" not in message:
            return json_answer(
                400,
                {
                    "error": {
                        "message": "Missing `reasoning_content` field in the assistant "
                        f"message at message index {index}. For more information, please "
                        "refer to https://api-docs.deepseek.com/guides/thinking_mode#tool-calls",
                        "type": "invalid_request_error",
                        "param": None,
                        "code": "invalid_request_error",
                    }
                },
            )
    return None


def gemini_check(request: JSON) -> Answer | None:
    """Gemini 3's rule: the first call of a step carries its thought signature back."""
    for message in assistant_messages(request):
        calls = message.get("tool_calls") or []
        google = (calls[0].get("extra_content") or {}).get("google", {}) if calls else {}
        if calls and "thought_signature" not in google:
            return json_answer(
                400,
                [
                    {
                        "error": {
                            "code": 400,
                            "message": "Function call is missing a thought_signature in "
                            "functionCall parts. This is required for tools to work correctly.",
                            "status": "INVALID_ARGUMENT",
                        }
                    }
                ],
            )
    return None


CHECKS = {"deepseek-reasoning-content": deepseek_check, "gemini-openai": gemini_check}


@pytest.mark.parametrize("name", sorted(EXPECTED))
async def test_a_tool_loop_works_on_each_dialect(server: Any, name: str) -> None:
    second = FIXTURES / f"{name}.2.sse"
    follow = Answer(second.read_bytes()) if second.exists() else final_answer()
    follow.check = CHECKS.get(name)
    srv = server([Answer(fixture(name)), follow])
    events: list[Any] = []
    agent = Agent(provider_for(srv), tools=[get_weather], approval="auto", on_event=events.append)
    result = await agent.run("Weather in Paris?")
    assert result.error is None, result.error
    assert result.text.endswith("unny.") or result.text.endswith("sunny in Paris.")
    want = EXPECTED[name]
    assert "".join(e.text for e in events if isinstance(e, ThinkingDelta)).startswith(
        want["thinking"]
    )
    # What the follow-up request carries: the assistant message as the server sent it
    # (its own fields included), then each call's result.
    follow_up = srv.requests[1]
    assistant = {
        "role": "assistant",
        "content": want["text"] or None,
        "tool_calls": [
            {
                **want.get("tool_calls", {}).get(call_id, {}),
                "id": call_id,
                "type": "function",
                "function": {"name": "get_weather", "arguments": arguments},
            }
            for call_id, arguments in want["calls"]
        ],
        **want.get("message", {}),
    }
    results = [
        {
            "role": "tool",
            "tool_call_id": call_id,
            "content": f"sunny in {json.loads(arguments)['city']}",
        }
        for call_id, arguments in want["calls"]
    ]
    assert follow_up["messages"] == [
        {"role": "user", "content": "Weather in Paris?"},
        assistant,
        *results,
    ]
    assert "max_tokens" not in follow_up and "max_completion_tokens" not in follow_up


async def test_without_the_echo_deepseek_and_gemini_refuse_the_follow_up(server: Any) -> None:
    """The checks above are the servers' own: a follow-up without the kept fields is
    refused with their words, surfaced whole."""
    for name, check in CHECKS.items():
        srv = server([json_answer(200, {})])
        body = {"messages": [{"role": "assistant", "tool_calls": [{"id": "c", "type": "f"}]}]}
        refusal = check(body)
        assert refusal is not None and refusal.status == 400
        srv.answers[0] = refusal
        result = await Agent(provider_for(srv), tools=[]).run("hi")
        assert result.error is not None
        assert result.error.startswith("openai-compatible: the server answered 400: ")
        assert ("reasoning_content" if "deepseek" in name else "thought_signature") in result.error


async def test_a_plain_text_error_body_is_shown_whole_with_the_way_out(server: Any) -> None:
    # Ollama (gin) answers a path it does not serve with a plain-text "404 page not found":
    # a base URL without /v1.
    srv = server([Answer(b"404 page not found", 404, "text/plain")])
    root = srv.base_url.removesuffix("/v1")
    ollama = OpenAIProvider("qwen3", base_url=root, api_key="ollama", name="ollama")
    result = await Agent(ollama, tools=[]).run("hi")
    assert result.error == (
        f"ollama: the server answered 404: 404 page not found; {root} does not serve the Chat "
        "Completions path: check the base URL (an OpenAI-compatible server's ends in /v1, "
        "e.g. http://localhost:11434/v1)"
    )
    assert srv.paths == ["GET /models", "POST /chat/completions"]


async def test_a_context_length_refusal_says_which_setting_to_change(server: Any) -> None:
    message = (
        "This model's maximum context length is 8192 tokens. However, you requested 8292 "
        "tokens (100 in the messages, 8192 in the completion). Please reduce the length of "
        "the messages or completion."
    )
    error = {"object": "error", "message": message, "type": "BadRequestError", "param": None}
    srv = server([json_answer(400, {**error, "code": 400})])
    result = await Agent(provider_for(srv), tools=[], max_tokens=8192).run("hi")
    assert srv.requests[0]["max_tokens"] == 8192
    assert result.error is not None
    assert result.error.startswith(f"openai-compatible: the server answered 400: {message}; ")
    assert "leave max_tokens unset (Agent(max_tokens=None)" in result.error
    assert "vLLM --max-model-len" in result.error


async def test_a_stream_cut_mid_reply_is_named_as_such(server: Any) -> None:
    body = fixture("vllm-reasoning-content")
    cut = body.index(b'"Paris"') if b'"Paris"' in body else body.index(b"Paris")
    srv = server([Answer(body, cut_after=cut)])
    result = await Agent(provider_for(srv), tools=[get_weather], approval="auto").run("hi")
    assert result.error is not None
    assert "the reply stream was cut mid-reply" in result.error
    assert "could not reach" not in result.error
    assert len(srv.requests) == 1  # text had streamed: not run again


async def test_the_limits_come_from_the_server_and_max_tokens_is_left_out(server: Any) -> None:
    # vLLM's GET /v1/models reports max_model_len (vllm/entrypoints/openai/protocol.py
    # ModelCard); a request then leaves max_tokens to the server, which fits the reply in.
    models = json_answer(
        200,
        {
            "object": "list",
            "data": [
                {
                    "id": "m",
                    "object": "model",
                    "created": 1761000000,
                    "owned_by": "vllm",
                    "root": "Qwen/Qwen3-8B",
                    "parent": None,
                    "max_model_len": 8192,
                    "permission": [],
                }
            ],
        },
    )
    srv = server([final_answer()], models)
    provider = provider_for(srv)
    assert provider.limits().context_window is None  # nothing known before the server says
    await Agent(provider, tools=[]).run("hi")
    assert provider.limits().context_window == 8192
    assert provider.limits().max_output_tokens == 8192
    assert "max_tokens" not in srv.requests[0]
    assert srv.paths == ["GET /v1/models", "POST /v1/chat/completions"]


def test_calls_without_index_or_id_are_keyed_by_position() -> None:
    """Deltas with neither ``index`` nor ``id``: a function name starts a call, a delta
    without one continues the call at its position among the calls still streaming."""
    from nb_tools.model._openai_chat import ChatTurn

    turn = ChatTurn()

    def delta(*calls: JSON) -> JSON:
        return {"choices": [{"index": 0, "delta": {"tool_calls": list(calls)}}]}

    turn.add(delta({"function": {"name": "a", "arguments": '{"x"'}}, {"function": {"name": "b"}}))
    turn.add(delta({"function": {"arguments": ": 1}"}}, {"function": {"arguments": "{}"}}))
    turn.add({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]})
    message = turn.finish("m").message
    assert [(c.id, c.name, c.arguments) for c in message.tool_calls] == [
        ("call_0", "a", '{"x": 1}'),
        ("call_1", "b", "{}"),
    ]


async def test_kept_fields_survive_a_saved_conversation(server: Any) -> None:
    from nb_tools.agent._persist import decode_messages, encode_messages

    srv = server([Answer(fixture("deepseek-reasoning-content")), final_answer()])
    agent = Agent(provider_for(srv), tools=[get_weather], approval="auto")
    await agent.run("Weather in Paris?")
    saved = json.loads(json.dumps(encode_messages(agent.messages)))
    assert decode_messages(saved) == list(agent.messages)


async def test_the_fake_server_speaks_a_reasoning_dialect() -> None:
    """``FakeOpenAIServer(reasoning_field=..., require_reasoning=True)``: the offline double
    for a DeepSeek-like server (thinking streamed, and required back after a call)."""
    from nb_tools.testing import call, reply
    from nb_tools.testing.openai_server import FakeOpenAIServer

    script = [
        reply("", call("get_weather", city="Paris", id="call_1"), thinking="Look it up."),
        reply("Sunny.", thinking="Done."),
    ]
    with FakeOpenAIServer(
        script, reasoning_field="reasoning_content", require_reasoning=True
    ) as fake:
        events: list[Any] = []
        provider = OpenAIProvider("deepseek-reasoner", base_url=fake.base_url, name="deepseek")
        agent = Agent(provider, tools=[get_weather], approval="auto", on_event=events.append)
        result = await agent.run("Weather?")
        assert result.error is None and result.text == "Sunny."
        assert "".join(e.text for e in events if isinstance(e, ThinkingDelta)) == (
            "Look it up.Done."
        )
        follow_up = fake.requests[1].body["messages"][1]
        assert follow_up["reasoning_content"] == "Look it up."
