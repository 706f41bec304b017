"""The openai SDK's own recorded Chat Completions streams, replayed from a loopback server
through ``OpenAIProvider`` and through the SDK's accumulator: the same text, tool calls
(with their exact raw argument text), stop reason and usage, whole and in 7-byte pieces."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from nb_tools.model import Message, ModelRequest, ResponseEvent, TextBlock, ToolUseBlock
from nb_tools.model.openai import OpenAIProvider

FIXTURES = sorted((Path(__file__).parent / "openai_fixtures").glob("*.sse"))
STOPS = {"stop": "end_turn", "tool_calls": "tool_use", "length": "max_tokens"}


class _Replay(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    body = b""
    piece = 0

    def log_message(self, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length") or 0))
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        step = self.piece or len(self.body)
        for i in range(0, len(self.body), step):
            chunk = self.body[i : i + step]
            self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
            self.wfile.flush()
        self.wfile.write(b"0\r\n\r\n")


@pytest.fixture(params=[0, 7], ids=["whole", "7-byte pieces"])
def serve(request: pytest.FixtureRequest) -> Iterator[Any]:
    servers: list[ThreadingHTTPServer] = []

    def start(body: bytes) -> str:
        handler = type("Handler", (_Replay,), {"body": body, "piece": request.param})
        httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=httpd.serve_forever, daemon=True).start()
        servers.append(httpd)
        return f"http://127.0.0.1:{httpd.server_address[1]}/v1"

    yield start
    for httpd in servers:
        httpd.shutdown()
        httpd.server_close()


async def ours(base_url: str) -> ResponseEvent:
    provider = OpenAIProvider("gpt-4o-2024-08-06", base_url=base_url, api_key="test")
    request = ModelRequest(
        system="", messages=[Message(role="user", content=(TextBlock(text="hi"),))], tools=[]
    )
    final = None
    async for event in provider.stream(request):
        if isinstance(event, ResponseEvent):
            final = event
    await provider.client.close()
    assert final is not None
    return final


async def sdk(base_url: str) -> Any:
    from openai import AsyncOpenAI, LengthFinishReasonError

    client = AsyncOpenAI(base_url=base_url, api_key="test", max_retries=0)
    async with client.chat.completions.stream(
        model="gpt-4o-2024-08-06", messages=[{"role": "user", "content": "hi"}]
    ) as stream:
        try:
            completion = await stream.get_final_completion()
        except LengthFinishReasonError as cut:  # the SDK's parser refuses a cut reply
            completion = cut.completion
    await client.close()
    return completion


@pytest.mark.parametrize("fixture", FIXTURES, ids=lambda p: p.stem)
async def test_replay_matches_the_sdk(fixture: Path, serve: Any) -> None:
    body = fixture.read_bytes()
    mine = await ours(serve(body))
    theirs = await sdk(serve(body))
    choice = next(c for c in theirs.choices if c.index == 0)

    text = [b.text for b in mine.message.content if isinstance(b, TextBlock)]
    expected_text = choice.message.content or choice.message.refusal
    assert text == ([expected_text] if expected_text else [])
    calls = [
        (b.id, b.name, b.arguments) for b in mine.message.content if isinstance(b, ToolUseBlock)
    ]
    assert calls == [
        (c.id, c.function.name, c.function.arguments) for c in choice.message.tool_calls or ()
    ]
    for _, _, arguments in calls:
        json.loads(arguments)  # the raw text, whole
    expected_stop = "refusal" if choice.message.refusal else STOPS[choice.finish_reason]
    assert mine.stop_reason == expected_stop
    if theirs.usage is not None:
        cached = getattr(theirs.usage.prompt_tokens_details, "cached_tokens", 0) or 0
        assert mine.usage.input_tokens + mine.usage.cache_read_input_tokens == (
            theirs.usage.prompt_tokens
        )
        assert mine.usage.cache_read_input_tokens == cached
        assert mine.usage.output_tokens == theirs.usage.completion_tokens
        assert mine.usage.cost_usd > 0  # gpt-4o has a known price


def test_the_fixtures_cover_tools_refusals_and_length() -> None:
    texts = [p.read_text() for p in FIXTURES]
    assert len(FIXTURES) == 12
    assert sum('"finish_reason":"tool_calls"' in t for t in texts) >= 3
    assert sum('"refusal":"' in t and '"refusal":""' in t for t in texts) >= 1
    assert any('"finish_reason":"length"' in t for t in texts)
