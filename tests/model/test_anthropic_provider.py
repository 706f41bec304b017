"""AnthropicProvider through the real SDK (anthropic 2.14 on httpx2) against the fake
Messages API server on loopback."""

from __future__ import annotations

import gzip
import json
import re
import socket
import subprocess
import sys
import warnings
from collections.abc import AsyncIterator, Callable, Iterator

import pytest

from nb_tools.model import (
    ImageBlock,
    Message,
    ModelError,
    ModelEvent,
    ModelRequest,
    Part,
    ResponseEvent,
    TextBlock,
    TextDeltaEvent,
    ThinkingBlock,
    ThinkingDeltaEvent,
    ToolArgumentsDeltaEvent,
    ToolResult,
    ToolResultBlock,
    ToolSpec,
    ToolUseBlock,
    ToolUseStartEvent,
    Usage,
)
from nb_tools.model._anthropic_convert import RequestEncoder, request_params
from nb_tools.model._defaults import FALLBACK_MODEL, default_model, newest_model
from nb_tools.model._sse_parse import SSEDecoder
from nb_tools.model.anthropic import AnthropicProvider
from nb_tools.testing._guard import block_real_models  # noqa: F401  (autouse)
from nb_tools.testing._script import Fault, call, reply
from nb_tools.testing.server import FakeMessagesServer

MODEL = "claude-sonnet-4-6"
PNG = b"\x89PNG\r\n\x1a\nfake-image-bytes"
WEATHER = ToolSpec(
    name="get_weather",
    description="Weather for a city.",
    input_schema={"type": "object", "properties": {"city": {"type": "string"}}},
)


@pytest.fixture
def srv() -> Iterator[FakeMessagesServer]:
    with FakeMessagesServer() as server:
        yield server


def provider_for(srv: FakeMessagesServer, **kwargs: object) -> AnthropicProvider:
    options: dict[str, object] = {"base_url": srv.base_url, "max_retries": 2, "cache": False}
    options.update(kwargs)
    return AnthropicProvider(MODEL, **options)  # type: ignore[arg-type]


def ask(text: str = "Hi", *, tools: tuple[ToolSpec, ...] = (), system: str = "") -> ModelRequest:
    return ModelRequest(
        system=system,
        messages=(Message(role="user", content=(TextBlock(text=text),)),),
        tools=tools,
        max_tokens=1024,
    )


async def collect(provider: AnthropicProvider, request: ModelRequest) -> list[ModelEvent]:
    return [event async for event in provider.stream(request)]


def final(events: list[ModelEvent]) -> ResponseEvent:
    assert isinstance(events[-1], ResponseEvent)
    assert not any(isinstance(e, ResponseEvent) for e in events[:-1])
    return events[-1]


async def test_text_deltas_arrive_in_order(srv: FakeMessagesServer) -> None:
    srv.push(reply("Hello there, world!", usage=Usage(input_tokens=10, output_tokens=5)))
    events = await collect(provider_for(srv), ask())
    assert events == [
        TextDeltaEvent(text="Hello "),
        TextDeltaEvent(text="there, "),
        TextDeltaEvent(text="world!"),
        ResponseEvent(
            message=Message(role="assistant", content=(TextBlock(text="Hello there, world!"),)),
            stop_reason="end_turn",
            usage=Usage(input_tokens=10, output_tokens=5, cost_usd=(10 * 3 + 5 * 15) / 1e6),
        ),
    ]


async def test_duplicate_key_arguments_arrive_as_streamed(srv: FakeMessagesServer) -> None:
    raw = '{"city": "Paris", "city": "Rome"}'
    srv.push(reply("", call("get_weather", raw=raw, id="toolu_1")))
    events = await collect(provider_for(srv), ask(tools=(WEATHER,)))
    assert events[0] == ToolUseStartEvent(id="toolu_1", name="get_weather")
    deltas = [e for e in events if isinstance(e, ToolArgumentsDeltaEvent)]
    assert len(deltas) > 1
    assert {d.id for d in deltas} == {"toolu_1"}
    assert "".join(d.partial_json for d in deltas) == raw
    response = final(events)
    assert response.message == Message(
        role="assistant",
        content=(ToolUseBlock(id="toolu_1", name="get_weather", arguments=raw),),
    )
    assert response.stop_reason == "tool_use"


async def test_text_and_two_tool_calls_in_one_message(srv: FakeMessagesServer) -> None:
    srv.push(
        reply(
            "Checking both.",
            call("get_weather", city="Paris", id="toolu_a"),
            call("get_weather", raw='{"city":"Oslo"}', id="toolu_b"),
        )
    )
    events = await collect(provider_for(srv), ask(tools=(WEATHER,)))
    starts = [e for e in events if isinstance(e, ToolUseStartEvent)]
    assert starts == [
        ToolUseStartEvent(id="toolu_a", name="get_weather"),
        ToolUseStartEvent(id="toolu_b", name="get_weather"),
    ]
    assert final(events).message == Message(
        role="assistant",
        content=(
            TextBlock(text="Checking both."),
            ToolUseBlock(id="toolu_a", name="get_weather", arguments='{"city": "Paris"}'),
            ToolUseBlock(id="toolu_b", name="get_weather", arguments='{"city":"Oslo"}'),
        ),
    )


async def test_conversation_with_tool_results_reaches_the_api_in_its_format(
    srv: FakeMessagesServer,
) -> None:
    srv.push(reply("Done."))
    request = ModelRequest(
        system="Be brief.",
        messages=(
            Message(role="user", content=(TextBlock(text="Weather and a chart?"),)),
            Message(
                role="assistant",
                content=(
                    TextBlock(text=""),  # empty text blocks are not sent
                    ToolUseBlock(
                        id="toolu_1", name="get_weather", arguments='{"city": "A", "city": "B"}'
                    ),
                    ToolUseBlock(id="toolu_2", name="get_weather", arguments='{"city": '),
                ),
            ),
            Message(
                role="user",
                content=(
                    ToolResultBlock(
                        result=ToolResult(
                            tool_use_id="toolu_1",
                            content="Sunny, 21 C",
                            parts=(Part(kind="image", media_type="image/png", data=PNG),),
                            metadata={"never": "sent"},
                        )
                    ),
                    ToolResultBlock(
                        result=ToolResult(
                            tool_use_id="toolu_2",
                            content="get_weather: arguments are not valid JSON",
                            is_error=True,
                        )
                    ),
                    ImageBlock(part=Part(kind="image", media_type="image/png", data=PNG)),
                ),
            ),
        ),
        tools=(WEATHER,),
        max_tokens=500,
    )
    await collect(provider_for(srv), request)
    png64 = "iVBORw0KGgpmYWtlLWltYWdlLWJ5dGVz"
    image = {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/png", "data": png64},
    }
    assert srv.requests[0].body == {
        "model": MODEL,
        "max_tokens": 500,
        "stream": True,
        "system": "Be brief.",
        "tools": [
            {
                "name": "get_weather",
                "description": "Weather for a city.",
                "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}},
            }
        ],
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "Weather and a chart?"}]},
            {
                "role": "assistant",
                "content": [
                    # The API needs an object: duplicates resolve to the last value, and
                    # text that is not JSON (its call already failed) becomes {}.
                    {
                        "type": "tool_use",
                        "id": "toolu_1",
                        "name": "get_weather",
                        "input": {"city": "B"},
                    },
                    {"type": "tool_use", "id": "toolu_2", "name": "get_weather", "input": {}},
                ],
            },
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "toolu_1",
                        "content": [{"type": "text", "text": "Sunny, 21 C"}, image],
                    },
                    {
                        "type": "tool_result",
                        "tool_use_id": "toolu_2",
                        "content": [
                            {"type": "text", "text": "get_weather: arguments are not valid JSON"}
                        ],
                        "is_error": True,
                    },
                    image,
                ],
            },
        ],
    }
    # The fake server reads the body back into the same conversation.
    assert srv.requests[0].model_request.messages[2].content[0] == ToolResultBlock(
        result=ToolResult(
            tool_use_id="toolu_1",
            content="Sunny, 21 C",
            parts=(Part(kind="image", media_type="image/png", data=PNG),),
        )
    )


async def test_strict_tool_spec_is_sent_as_strict(srv: FakeMessagesServer) -> None:
    strict = ToolSpec(
        name="add",
        description="Add.",
        input_schema={
            "type": "object",
            "properties": {"a": {"type": "integer"}},
            "required": ["a"],
            "additionalProperties": False,
        },
        strict=True,
    )
    srv.push(reply("ok"))
    await collect(provider_for(srv), ask(tools=(WEATHER, strict)))
    assert srv.requests[0].body["tools"] == [
        {
            "name": "get_weather",
            "description": "Weather for a city.",
            "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
        {
            "name": "add",
            "description": "Add.",
            "input_schema": dict(strict.input_schema),
            "strict": True,
        },
    ]


async def test_cache_breakpoints_on_last_tool_system_and_newest_block(
    srv: FakeMessagesServer,
) -> None:
    srv.push(reply("ok"))
    other = ToolSpec(name="other", description="Other.", input_schema={"type": "object"})
    request = ModelRequest(
        system="You are helpful.",
        messages=(
            Message(role="user", content=(TextBlock(text="first"),)),
            Message(role="assistant", content=(TextBlock(text="answer"),)),
            Message(role="user", content=(TextBlock(text="second"), TextBlock(text="third"))),
        ),
        tools=(WEATHER, other),
    )
    await collect(provider_for(srv, cache=True), request)
    body = srv.requests[0].body
    ephemeral = {"type": "ephemeral"}
    assert json.dumps(body).count('"cache_control"') == 3
    assert body["tools"][1]["cache_control"] == ephemeral
    assert "cache_control" not in body["tools"][0]
    assert body["system"] == [
        {"type": "text", "text": "You are helpful.", "cache_control": ephemeral}
    ]
    assert body["messages"][2]["content"] == [
        {"type": "text", "text": "second"},
        {"type": "text", "text": "third", "cache_control": ephemeral},
    ]


async def test_no_cache_control_when_caching_is_off(srv: FakeMessagesServer) -> None:
    srv.push(reply("ok"))
    await collect(provider_for(srv, cache=False), ask(tools=(WEATHER,), system="S"))
    assert "cache_control" not in json.dumps(srv.requests[0].body)


async def test_overloaded_once_is_retried_by_the_sdk(srv: FakeMessagesServer) -> None:
    srv.push(Fault(status=529), reply("Back."))
    events = await collect(provider_for(srv), ask())
    assert final(events).message.text == "Back."
    assert len(srv.requests) == 2
    assert srv.requests[0].body == srv.requests[1].body


async def test_overloaded_after_all_retries_is_a_model_error(srv: FakeMessagesServer) -> None:
    srv.push(Fault(status=529, times=3, message="Overloaded"))
    with pytest.raises(ModelError) as caught:
        await collect(provider_for(srv, max_retries=2), ask())
    assert caught.value.status == 529
    assert caught.value.retryable
    assert str(caught.value) == (
        "Anthropic API overloaded (529) after 2 retries: Overloaded; "
        "wait a little and run the turn again"
    )
    assert len(srv.requests) == 3


async def test_bad_request_is_not_retried(srv: FakeMessagesServer) -> None:
    srv.push(Fault(status=400, message="messages.0: bad"))
    with pytest.raises(ModelError) as caught:
        await collect(provider_for(srv), ask())
    assert (caught.value.status, caught.value.retryable) == (400, False)
    assert str(caught.value) == "Anthropic API rejected the request (400): messages.0: bad"
    assert len(srv.requests) == 1


async def test_cut_stream_is_a_retryable_error_and_the_turn_can_be_rerun(
    srv: FakeMessagesServer,
) -> None:
    srv.push(Fault(cut_after=5), reply("one two three four five"))
    provider = provider_for(srv)
    received: list[ModelEvent] = []
    with pytest.raises(ModelError) as caught:
        async for event in provider.stream(ask()):
            received.append(event)
    assert caught.value.retryable
    assert caught.value.status is None
    assert "cut mid-way" in str(caught.value)
    # message_start, ping, content_block_start, then two words before the cut.
    assert received == [TextDeltaEvent(text="one "), TextDeltaEvent(text="two ")]

    events = await collect(provider, ask())
    assert final(events).message.text == "one two three four five"
    assert srv.requests[0].body == srv.requests[1].body
    assert srv.remaining == 0


async def test_error_event_mid_stream_is_a_model_error(srv: FakeMessagesServer) -> None:
    srv.push(Fault(cut_after=4, status=529, message="Overloaded"), reply("one two three"))
    received: list[ModelEvent] = []
    with pytest.raises(ModelError) as caught:
        async for event in provider_for(srv).stream(ask()):
            received.append(event)
    assert received == [TextDeltaEvent(text="one ")]
    assert (caught.value.status, caught.value.retryable) == (529, True)
    assert str(caught.value) == (
        "Anthropic API stream failed mid-way with overloaded_error (529): Overloaded; "
        "wait a little and run the turn again"
    )
    assert len(srv.requests) == 1  # the SDK does not retry an error inside a stream


async def test_stream_ending_before_message_stop_is_a_model_error(
    srv: FakeMessagesServer,
) -> None:
    srv.push(Fault(cut_after=6, status=200), reply("one two three"))
    with pytest.raises(ModelError) as caught:
        await collect(provider_for(srv), ask())
    assert caught.value.retryable
    assert "the stream ended before message_stop" in str(caught.value)


async def test_unreachable_endpoint_is_a_retryable_error() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    provider = AnthropicProvider(MODEL, base_url=f"http://127.0.0.1:{port}", max_retries=0)
    with pytest.raises(ModelError) as caught:
        await collect(provider, ask())
    assert caught.value.retryable
    assert str(caught.value).startswith(
        f"Could not reach the Anthropic API at http://127.0.0.1:{port} after 0 retries"
    )


async def test_closing_the_stream_early_leaves_the_provider_usable(
    srv: FakeMessagesServer,
) -> None:
    srv.push(reply("a b c d e f g h", chunk_delay=0.02), reply("again"))
    provider = provider_for(srv)
    stream = provider.stream(ask())
    first = await anext(stream)  # type: ignore[arg-type]
    await stream.aclose()  # type: ignore[attr-defined]
    assert first == TextDeltaEvent(text="a ")
    assert final(await collect(provider, ask())).message.text == "again"


async def test_usage_and_cost(srv: FakeMessagesServer) -> None:
    usage = Usage(
        input_tokens=1000,
        output_tokens=200,
        cache_creation_input_tokens=300,
        cache_read_input_tokens=4000,
    )
    srv.push(reply("hi", usage=usage))
    response = final(await collect(provider_for(srv), ask()))
    # Sonnet: $3 in, $15 out, cache write 1.25x, cache read 0.1x per million tokens.
    cost = (1000 * 3 + 200 * 15 + 300 * 3.75 + 4000 * 0.3) / 1e6
    assert response.usage == Usage(
        input_tokens=1000,
        output_tokens=200,
        cache_creation_input_tokens=300,
        cache_read_input_tokens=4000,
        cost_usd=pytest.approx(cost),  # type: ignore[arg-type]
    )


async def test_unpriced_model_costs_zero_and_says_so(srv: FakeMessagesServer) -> None:
    srv.push(reply("hi", usage=Usage(input_tokens=100, output_tokens=100)))
    provider = AnthropicProvider("claude-fable-5", base_url=srv.base_url, max_retries=0)
    assert not provider.priced
    response = final(await collect(provider, ask()))
    assert response.usage == Usage(input_tokens=100, output_tokens=100, cost_usd=0.0)


async def test_real_endpoint_is_blocked_in_tests() -> None:
    provider = AnthropicProvider(MODEL, base_url="https://api.anthropic.com", max_retries=0)
    with pytest.raises(ModelError, match="real model requests are blocked in tests"):
        await collect(provider, ask())


async def test_guard_points_the_environment_away_from_the_real_api() -> None:
    provider = AnthropicProvider(MODEL)
    assert provider.base_url.endswith(".invalid")
    with pytest.raises(ModelError, match=r"blocked in tests .*not on loopback"):
        await collect(provider, ask())


async def test_missing_credentials_is_a_model_error_that_says_what_to_set(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Not blocked here, so the provider really tries; the SDK stops before any network
    # use (no profile is found: the guard points ANTHROPIC_CONFIG_DIR at an empty folder
    # when one exists; `.invalid` never resolves). Which of the SDK's two failures comes
    # depends on whether a config folder is named; both say what to set.
    monkeypatch.delenv("NB_TOOLS_BLOCK_REAL_MODELS")
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    provider = AnthropicProvider(MODEL, base_url="https://no-credentials.invalid", max_retries=0)
    with pytest.raises(ModelError) as caught:
        await collect(provider, ask())
    message = str(caught.value)
    assert message.startswith(
        ("Anthropic API credentials could not be resolved (", "No Anthropic API credentials: ")
    )
    assert message.endswith("set ANTHROPIC_API_KEY, or pass AnthropicProvider(api_key=...)")
    assert caught.value.status is None
    assert not caught.value.retryable


def test_loopback_endpoint_needs_no_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    assert AnthropicProvider(MODEL, base_url="http://127.0.0.1:1").client.api_key
    assert (
        AnthropicProvider(MODEL, base_url="http://127.0.0.1:1", api_key="mine").client.api_key
        == "mine"
    )


def test_default_model_is_the_newest_sonnet_the_sdk_knows(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("NB_TOOLS_MODEL", raising=False)
    model = default_model()
    assert "sonnet" in model.split("-")
    assert AnthropicProvider().model == model
    from typing import get_args

    from anthropic.types.model_param import ModelParam

    known = {a for arg in get_args(ModelParam) for a in get_args(arg)}
    assert model in known or model == FALLBACK_MODEL


def test_nb_tools_model_overrides_the_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NB_TOOLS_MODEL", "claude-haiku-4-5")
    assert default_model() == "claude-haiku-4-5"
    assert AnthropicProvider().model == "claude-haiku-4-5"
    assert AnthropicProvider("claude-opus-4-6").model == "claude-opus-4-6"


def test_newest_model_compares_versions_and_prefers_undated_aliases() -> None:
    names = [
        "claude-3-5-sonnet-20241022",
        "claude-sonnet-4-5-20250929",
        "claude-sonnet-4-5",
        "claude-sonnet-4-10",
        "claude-opus-9",
        "claude-3-7-sonnet-20250219",
    ]
    assert newest_model(names, "sonnet") == "claude-sonnet-4-10"
    assert newest_model(names[:3], "sonnet") == "claude-sonnet-4-5"
    assert newest_model(["claude-opus-4"], "sonnet") is None


def test_importing_the_provider_and_server_leaves_the_sdk_unimported() -> None:
    code = (
        "import sys, nb_tools.model.anthropic, nb_tools.testing.server, nb_tools.testing._guard;"
        "print('anthropic' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


async def test_rate_limit_with_retry_after_is_retried_by_the_sdk(srv: FakeMessagesServer) -> None:
    srv.push(Fault(status=429, times=2), reply("Through."))
    events = await collect(provider_for(srv), ask())
    assert final(events).message.text == "Through."
    assert len(srv.requests) == 3


async def test_deprecated_model_warns_once_like_messages_create(
    srv: FakeMessagesServer,
) -> None:
    from anthropic._data import DEPRECATED_MODELS

    deprecated = next(iter(DEPRECATED_MODELS))
    provider = AnthropicProvider(deprecated, base_url=srv.base_url, max_retries=0)
    srv.push(reply("one"), reply("two"))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        await collect(provider, ask())
        await collect(provider, ask())
    messages = [str(w.message) for w in caught if w.category is DeprecationWarning]
    assert len(messages) == 1
    assert messages[0].startswith(f"The model '{deprecated}' is deprecated")


# ---- the wire format, read by our own SSE decoder -------------------------------------------

SSE_BODY = (
    b': a comment\r\nevent: message_start\r\ndata: {"a":\r\ndata:1}\r\n\r\n'
    b"event: ping\ndata: {}\n\n"
    b'data: {"no": "name"}\rid: 7\rretry: 10\r\r'
    b"event: only_name\n\n"
    b"event: unfinished\ndata: {}\n"
)
SSE_EVENTS = [
    ("message_start", b'{"a":\n1}'),
    ("ping", b"{}"),
    ("", b'{"no": "name"}'),
]  # "only_name" has no data line: WHATWG dispatches nothing for it


def test_sse_decoder_reads_events_however_the_body_is_split() -> None:
    for cut in range(len(SSE_BODY) + 1):
        decoder = SSEDecoder()
        assert decoder.feed(SSE_BODY[:cut]) + decoder.feed(SSE_BODY[cut:]) == SSE_EVENTS, cut
    decoder = SSEDecoder()
    assert [e for byte in SSE_BODY for e in decoder.feed(bytes([byte]))] == SSE_EVENTS


def test_sse_decoder_reads_one_whole_event_per_piece() -> None:
    pieces = [
        b'event: content_block_delta\ndata: {"x": 1}\n\n',
        b"event: new_kind\ndata: \n\n",  # an unknown name; empty data
        b"event: a\ndata: 1\ndata: 2\n\n",  # two data lines
        b"event: b\r\ndata: 3\r\n\r\n",
        b"event: c\ndata: 4\n\nevent: d\n",  # an event and the start of the next
        b"data: 5\n\n",
    ]
    decoder = SSEDecoder()
    assert [e for piece in pieces for e in decoder.feed(piece)] == [
        ("content_block_delta", b'{"x": 1}'),
        ("new_kind", b""),
        ("a", b"1\n2"),
        ("b", b"3"),
        ("c", b"4"),
        ("d", b"5"),
    ]


def sse(*events: tuple[str, dict[str, object]], crlf: bool = False) -> bytes:
    text = "".join(f"event: {name}\ndata: {json.dumps(data)}\n\n" for name, data in events)
    return (text.replace("\n", "\r\n") if crlf else text).encode()


START = ("message_start", {"type": "message_start", "message": {"usage": {"input_tokens": 7}}})
STOP = ("message_stop", {"type": "message_stop"})


def text_events(text: str, index: int = 0) -> list[tuple[str, dict[str, object]]]:
    return [
        (
            "content_block_start",
            {
                "type": "content_block_start",
                "index": index,
                "content_block": {"type": "text", "text": ""},
            },
        ),
        (
            "content_block_delta",
            {
                "type": "content_block_delta",
                "index": index,
                "delta": {"type": "text_delta", "text": text},
            },
        ),
        ("content_block_stop", {"type": "content_block_stop", "index": index}),
    ]


def wire_provider(
    body: bytes, headers: dict[str, str] | None = None, *, piece: int = 7
) -> AnthropicProvider:
    """A provider whose SDK client gets ``body`` as the answer to every request, streamed
    ``piece`` bytes at a time (0: all read at once) by an httpx2 transport in place of the
    network; the SDK above it is the real one."""
    import anthropic
    import httpx2

    async def pieces() -> AsyncIterator[bytes]:
        for start in range(0, len(body), piece):
            yield body[start : start + piece]

    def answer(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(
            200,
            headers={"content-type": "text/event-stream", **(headers or {})},
            content=pieces() if piece else body,
        )

    client = anthropic.AsyncAnthropic(
        api_key="test",
        base_url="http://127.0.0.1:9",
        max_retries=0,
        http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(answer)),
    )
    return AnthropicProvider(MODEL, client=client, cache=False)


@pytest.mark.parametrize("piece", [7, 0])
async def test_gzip_crlf_stream_with_thinking_is_read(piece: int) -> None:
    thinking = [
        (
            "content_block_start",
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "thinking", "thinking": ""},
            },
        ),
        (
            "content_block_delta",
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "thinking_delta", "thinking": "hmm"},
            },
        ),
    ]
    delta = (
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": "end_turn"},
            "usage": {"output_tokens": 3, "input_tokens": None},
        },
    )
    body = sse(
        START, ("ping", {"type": "ping"}), *thinking, *text_events("Hi", 1), delta, STOP, crlf=True
    )
    provider = wire_provider(gzip.compress(body), {"content-encoding": "gzip"}, piece=piece)
    events = await collect(provider, ask())
    assert events[:-1] == [ThinkingDeltaEvent(text="hmm"), TextDeltaEvent(text="Hi")]
    response = final(events)
    assert response.message == Message(
        role="assistant",
        content=(ThinkingBlock(thinking="hmm", signature=""), TextBlock(text="Hi")),
    )
    assert (response.usage.input_tokens, response.usage.output_tokens) == (7, 3)


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b"this is not JSON", "cut mid-way (an event is not UTF-8 JSON"),
        (b"\xff\xfe{}", "cut mid-way (an event is not UTF-8 JSON"),
        (b"[1, 2]", "cut mid-way (an event is not a JSON object"),
        (b'{"type": "content_block_start", "index": 1}', "lacks what it should carry"),
    ],
)
async def test_unreadable_event_is_a_retryable_error(data: bytes, expected: str) -> None:
    body = sse(START) + b"event: content_block_start\ndata: " + data + b"\n\n" + sse(STOP)
    with pytest.raises(ModelError, match=re.escape(expected)) as caught:
        await collect(wire_provider(body), ask())
    assert caught.value.retryable


async def test_error_event_that_is_not_json_is_reported_as_sent() -> None:
    body = sse(START, *text_events("Hi")) + b"event: error\ndata: upstream hiccup\n\n"
    received: list[ModelEvent] = []
    with pytest.raises(ModelError) as caught:
        async for event in wire_provider(body).stream(ask()):
            received.append(event)
    assert received == [TextDeltaEvent(text="Hi")]
    assert (caught.value.status, caught.value.retryable) == (500, True)
    assert str(caught.value) == (
        "Anthropic API stream failed mid-way with an error (500): upstream hiccup; "
        "run the turn again"
    )


# ---- the request body, encoded once per message -------------------------------------------


def conversation(rounds: int) -> list[Message]:
    messages = [Message(role="user", content=(TextBlock(text="Weather in Paris?"),))]
    for i in range(rounds):
        messages.append(
            Message(
                role="assistant",
                content=(
                    TextBlock(text=f"Checking {i}."),
                    ToolUseBlock(
                        id=f"toolu_{i}", name="get_weather", arguments='{"city": "Paris"}'
                    ),
                ),
            )
        )
        messages.append(
            Message(
                role="user",
                content=(
                    ToolResultBlock(result=ToolResult(tool_use_id=f"toolu_{i}", content="Sunny")),
                ),
            )
        )
    return messages


@pytest.mark.parametrize("system", ["", "Be brief."])
def test_encoded_body_is_request_params_turn_after_turn(system: str) -> None:
    encoder = RequestEncoder(MODEL)
    messages = conversation(3)
    for size in range(1, len(messages) + 1):
        for cache in (True, False, True):
            request = ModelRequest(
                system=system, messages=tuple(messages[:size]), tools=(WEATHER,), max_tokens=99
            )
            body = json.loads(encoder.encode(request, cache=cache))
            assert body == {**request_params(request, model=MODEL, cache=cache), "stream": True}


def test_interleaved_conversations_each_reuse_their_encoded_messages(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A map's rows share one provider and their requests interleave: each conversation's
    earlier messages are encoded once, not again after another conversation's request."""
    from nb_tools.model import _anthropic_convert

    encoded: list[Message] = []
    to_api = _anthropic_convert.message_to_api

    def counting(message: Message) -> dict[str, object]:
        encoded.append(message)
        return to_api(message)

    monkeypatch.setattr(_anthropic_convert, "message_to_api", counting)
    encoder = RequestEncoder(MODEL)
    rows = [conversation(2) for _ in range(3)]
    calls = 0
    for size in range(1, len(rows[0]) + 1):
        for messages in rows:
            request = ModelRequest(
                system="S", messages=tuple(messages[:size]), tools=(WEATHER,), max_tokens=99
            )
            before = len(encoded)
            body = json.loads(encoder.encode(request, cache=True))
            calls += len(encoded) - before
            assert body == {**request_params(request, model=MODEL, cache=True), "stream": True}
    # Per request: its newest message (it carries the cache mark), and the one before it,
    # sent marked last time: 1 + 2 + 2 + 2 + 2 for five messages (not 1 + 2 + 3 + 4 + 5).
    assert calls == 3 * (1 + 2 * (len(rows[0]) - 1))


def test_encoded_body_follows_a_changed_tool_list_and_system_prompt() -> None:
    encoder = RequestEncoder(MODEL)
    messages = tuple(conversation(1))
    other = ToolSpec(name="other", description="Other.", input_schema={"type": "object"})
    changes: list[Callable[[ModelRequest], ModelRequest]] = [
        lambda r: r,
        lambda r: ModelRequest(system="New.", messages=r.messages, tools=r.tools),
        lambda r: ModelRequest(system=r.system, messages=r.messages, tools=(WEATHER, other)),
        lambda r: ModelRequest(system=r.system, messages=r.messages, tools=(other,)),
        lambda r: ModelRequest(system=r.system, messages=r.messages, tools=()),
    ]
    request = ModelRequest(system="Old.", messages=messages, tools=(WEATHER,))
    for change in changes:
        request = change(request)
        body = json.loads(encoder.encode(request, cache=True))
        assert body == {**request_params(request, model=MODEL, cache=True), "stream": True}


async def test_event_json_with_whitespace_around_it_is_read() -> None:
    body = (
        sse(START, *text_events("Hi"))
        + b'event: message_stop\ndata:   {"type": "message_stop"} \n\n'
    )
    response = final(await collect(wire_provider(body), ask()))
    assert response.message.text == "Hi"
