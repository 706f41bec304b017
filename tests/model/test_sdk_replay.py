"""Recorded Messages API streams replayed through our provider and through the SDK's own
accumulator (``client.beta.messages.stream(...).get_final_message()``), from a loopback
HTTP server, whole and in 7-byte chunks: the same text, blocks, raw tool arguments, usage
and stop reason. The fixtures and where they come from: ``fixtures/README.md``."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from nb_tools.model import (
    CompactionBlock,
    Message,
    ModelRequest,
    OtherBlock,
    RedactedThinkingBlock,
    ResponseEvent,
    ServerToolResultBlock,
    ServerToolUseBlock,
    TextBlock,
    ThinkingBlock,
    ToolUseBlock,
)
from nb_tools.model.anthropic import AnthropicProvider

FIXTURES = Path(__file__).parent / "fixtures"
STREAMS = sorted(p for p in FIXTURES.rglob("*") if p.suffix in (".sse", ".txt"))


class _Body:
    data = b""
    piece = 0


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length") or 0))
        body, piece = _Body.data, _Body.piece or len(_Body.data)
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        for start in range(0, len(body), piece):
            chunk = body[start : start + piece]
            self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
            self.wfile.flush()
        self.wfile.write(b"0\r\n\r\n")


@pytest.fixture(scope="module")
def loopback() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def _request() -> ModelRequest:
    return ModelRequest(
        system="", messages=(Message(role="user", content=(TextBlock(text="hi"),)),), tools=()
    )


async def _ours(base_url: str) -> ResponseEvent:
    provider = AnthropicProvider("claude-sonnet-4-5", base_url=base_url, max_retries=0)
    events = [e async for e in provider.stream(_request())]
    last = events[-1]
    assert isinstance(last, ResponseEvent)
    return last


@pytest.fixture(scope="module")
def sdk_client(loopback: str) -> Iterator[Any]:
    import anthropic

    client = anthropic.Anthropic(api_key="sk-test", base_url=loopback, max_retries=0)
    yield client
    client.close()


def _sdks(client: Any) -> tuple[Any, dict[int, str]]:
    """The SDK's final message and the raw argument text it streamed, per block index."""
    raw: dict[int, str] = {}
    with client.beta.messages.stream(
        model="claude-sonnet-4-5", max_tokens=64, messages=[{"role": "user", "content": "hi"}]
    ) as stream:
        for event in stream:
            if event.type == "content_block_delta" and event.delta.type == "input_json_delta":
                raw[event.index] = raw.get(event.index, "") + event.delta.partial_json
        final = stream.get_final_message()
    return final, raw


def _dump(model: Any) -> Any:
    if model is None:
        return None
    return model.model_dump(mode="json", exclude_unset=True, by_alias=True)


def _expected(sdk_block: Any, raw: str | None) -> Any:
    """What our block must be for the SDK's block (None: our turn leaves it out)."""
    kind = sdk_block.type
    if kind == "text":
        if not sdk_block.text and not sdk_block.citations:
            return None  # an empty text block carries nothing
        citations = tuple(_dump(c) for c in sdk_block.citations or ())
        return TextBlock(text=sdk_block.text, citations=citations)
    if kind == "thinking":
        return ThinkingBlock(thinking=sdk_block.thinking, signature=sdk_block.signature)
    if kind == "redacted_thinking":
        return RedactedThinkingBlock(data=sdk_block.data)
    if kind in ("tool_use", "server_tool_use"):
        cls = ToolUseBlock if kind == "tool_use" else ServerToolUseBlock
        arguments = raw if raw else json.dumps(sdk_block.input) if sdk_block.input else "{}"
        if kind == "server_tool_use":
            return cls(id=sdk_block.id, name=sdk_block.name, arguments=arguments)
        caller = getattr(sdk_block, "caller", None)  # kept, to be sent back as received
        return ToolUseBlock(
            id=sdk_block.id,
            name=sdk_block.name,
            arguments=arguments,
            caller=_dump(caller) if caller is not None else None,
        )
    if kind == "compaction":
        return CompactionBlock(
            content=sdk_block.content, encrypted_content=sdk_block.encrypted_content
        )
    if kind.endswith("_tool_result"):
        content = _dump(sdk_block)["content"]
        return ServerToolResultBlock(type=kind, tool_use_id=sdk_block.tool_use_id, content=content)
    return OtherBlock(type=kind, data=_dump(sdk_block))


def _as_sent(body: bytes, variant: str) -> bytes:
    if variant == "cr":  # the same stream with bare CR line ends (WHATWG allows them)
        return body.replace(b"\r\n", b"\n").replace(b"\n", b"\r")
    return body


@pytest.mark.parametrize(("piece", "variant"), [(0, "as-recorded"), (7, "cr")])
@pytest.mark.parametrize("path", STREAMS, ids=lambda p: f"{p.parent.name}/{p.name}")
async def test_provider_rebuilds_the_turn_as_the_sdk_does(
    loopback: str, sdk_client: Any, path: Path, piece: int, variant: str
) -> None:
    _Body.data, _Body.piece = _as_sent(path.read_bytes(), variant), piece
    ours = await _ours(loopback)
    sdk, raw = _sdks(sdk_client)

    expected = [_expected(b, raw.get(i)) for i, b in enumerate(sdk.content)]
    assert list(ours.message.content) == [b for b in expected if b is not None]
    assert ours.message.text == "".join(b.text for b in sdk.content if b.type == "text")
    for ours_block, i in zip(
        [b for b in ours.message.content if isinstance(b, ToolUseBlock | ServerToolUseBlock)],
        [i for i, b in enumerate(sdk.content) if b.type in ("tool_use", "server_tool_use")],
        strict=True,
    ):  # the exact raw argument text as streamed
        assert ours_block.arguments == (raw.get(i) or json.dumps(sdk.content[i].input))
    assert ours.stop_reason == sdk.stop_reason
    assert ours.stop_details == _dump(sdk.stop_details)
    assert ours.stop_sequence == sdk.stop_sequence
    usage = sdk.usage
    assert (
        ours.usage.input_tokens,
        ours.usage.output_tokens,
        ours.usage.cache_creation_input_tokens,
        ours.usage.cache_read_input_tokens,
    ) == (
        usage.input_tokens,
        usage.output_tokens,
        usage.cache_creation_input_tokens or 0,
        usage.cache_read_input_tokens or 0,
    )
    details = usage.output_tokens_details
    assert ours.usage.thinking_tokens == (details.thinking_tokens if details else 0)
    server = usage.server_tool_use
    assert ours.usage.web_search_requests == (server.web_search_requests if server else 0)


def test_every_fixture_is_replayed_and_named_in_the_readme() -> None:
    readme = (FIXTURES / "README.md").read_text()
    assert len(STREAMS) >= 20
    for folder in {p.parent.name for p in STREAMS}:
        assert f"`{folder}/`" in readme


def test_blocks_of_every_kind_are_covered() -> None:
    """The fixtures hold every block kind the replay compares (else a kind goes untested)."""
    text = b"".join(p.read_bytes() for p in STREAMS)
    for kind in (
        b'"thinking"',
        b'"redacted_thinking"',
        b'"server_tool_use"',
        b"web_search_tool_result",
        b"citations_delta",
        b'"compaction"',
        b'"tool_use"',
        b"signature_delta",
        b'"refusal"',
        b'"max_tokens"',
    ):
        assert kind in text, kind


def test_sse_decoder_follows_whatwg_on_the_odd_cases() -> None:
    from nb_tools.model._sse_parse import SSEDecoder

    decoder = SSEDecoder()
    body = b"\xef\xbb\xbfevent: a\ndata\n\nevent: b\n\ndata: 1\n\n"
    # BOM dropped; "data" alone is an empty data line; "b" has no data: not dispatched,
    # and its name does not leak into the next event
    assert decoder.feed(body) == [("a", b""), ("", b"1")]


def test_sse_body_ending_in_cr_cr_keeps_its_last_event() -> None:
    from nb_tools.model._sse_parse import SSEDecoder

    decoder = SSEDecoder()
    body = b'event: message_stop\rdata: {"type": "message_stop"}\r\r'
    assert decoder.feed(body) == []  # the last "\r" may still be half of a "\r\n"
    assert decoder.finish() == [("message_stop", b'{"type": "message_stop"}')]
    unfinished = SSEDecoder()
    assert unfinished.feed(b"event: ping\ndata: {}\n") == []
    assert unfinished.finish() == []  # no blank line: WHATWG drops it


async def test_unknown_events_are_skipped_whatever_their_data(loopback: str) -> None:
    body = (FIXTURES / "sdk" / "basic_response.txt").read_bytes()
    head, sep, rest = body.partition(b"\n\n")
    odd = b"event: brand_new_event\ndata: this is <not> JSON\n\nevent: x\ndata: [1,\n\n"
    _Body.data, _Body.piece = head + sep + odd + rest, 7
    ours = await _ours(loopback)
    _Body.data = body
    plain = await _ours(loopback)
    assert ours == plain and ours.message.text
