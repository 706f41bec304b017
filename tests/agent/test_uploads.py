"""Large tool-result images and documents through the Files API (``upload_attachments``):
uploaded once, named by ``file_id`` in the ``tool_result`` of every later request, the
bytes never in a Messages request; a small part stays inline; a failed upload goes
inline with a notice. Against the fake Messages server (real HTTP, the real SDK)."""

from __future__ import annotations

import base64
import io
import json
import random
from typing import Any

from nb_tools import tool
from nb_tools.agent import Agent
from nb_tools.agent._notices import RunNotice
from nb_tools.agent._uploads import UPLOAD_MIN_BYTES
from nb_tools.model import Part
from nb_tools.model.anthropic import AnthropicProvider
from nb_tools.testing import Fault, call, reply
from nb_tools.testing.server import FakeMessagesServer
from nb_tools.tool import Result


def noise_png(side: int) -> bytes:
    from PIL import Image

    rng = random.Random(side)
    image = Image.frombytes(
        "RGB", (side, side), bytes(rng.randrange(256) for _ in range(3 * side * side))
    )
    buf = io.BytesIO()
    image.save(buf, format="PNG")
    return buf.getvalue()


BIG = noise_png(160)
SMALL = noise_png(8)
PDF = b"%PDF-1.4\n" + b"%" * (UPLOAD_MIN_BYTES + 100)


@tool(register=False, read_only=True)
def plot(title: str) -> Result:
    """A chart, a thumbnail and a report."""
    return Result(
        content=f"chart {title}",
        parts=[
            Part(kind="image", media_type="image/png", data=BIG),
            Part(kind="image", media_type="image/png", data=SMALL),
            Part(kind="document", media_type="application/pdf", data=PDF, title="report"),
        ],
    )


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def messages_requests(srv: FakeMessagesServer) -> list[Any]:
    return [r for r in srv.requests if r.path.startswith("/v1/messages")]


async def run(srv: FakeMessagesServer, events: list[Any], **kw: Any) -> Any:
    srv.push(
        reply("", call("plot", title="a")),
        reply("", call("plot", title="a")),
        reply("done"),
    )
    provider = AnthropicProvider("claude-sonnet-4-5", base_url=srv.base_url, api_key="test")
    agent = Agent(provider, tools=[plot], approval="auto", on_event=events.append, **kw)
    result = await agent.run("plot it")
    await provider.client.close()
    return result


async def test_a_large_result_part_is_uploaded_once_and_named_by_its_file_id() -> None:
    assert len(BIG) >= UPLOAD_MIN_BYTES > len(SMALL)
    events: list[Any] = []
    with FakeMessagesServer() as srv:
        result = await run(srv, events, upload_attachments=True)
        assert result.stop_reason == "end_turn"
        uploads = [r for r in srv.requests if r.path == "/v1/files"]
        assert len(uploads) == 2  # the chart and the report, once each over two calls
        stored = {f["mime_type"]: fid for fid, f in srv.files.items()}
        assert srv.files[stored["image/png"]]["data"] == BIG
        assert srv.files[stored["application/pdf"]]["data"] == PDF
        sent = messages_requests(srv)
        assert len(sent) == 3
        for request in sent[1:]:
            body = json.dumps(request.body)
            assert b64(BIG) not in body and b64(PDF) not in body  # never the bytes
            assert b64(SMALL) in body  # a small part stays inline
            assert "files-api-2025-04-14" in request.headers["anthropic-beta"]
        last = sent[2].body["messages"]
        first_result = last[2]["content"][0]
        assert first_result["type"] == "tool_result"
        assert first_result["content"][1] == {
            "type": "image",
            "source": {"type": "file", "file_id": stored["image/png"]},
        }
        assert first_result["content"][3] == {
            "type": "document",
            "source": {"type": "file", "file_id": stored["application/pdf"]},
            "title": "report",
        }
        # the second call's identical parts name the same files
        second = json.dumps(last[4]["content"][0])
        assert stored["image/png"] in second and stored["application/pdf"] in second
        assert not [e for e in events if isinstance(e, RunNotice)]


async def test_a_failed_upload_goes_inline_with_a_notice() -> None:
    events: list[Any] = []
    with FakeMessagesServer() as srv:
        srv.upload_fault = Fault(status=413, message="request_too_large", times=1)
        result = await run(srv, events, upload_attachments=True)
        assert result.stop_reason == "end_turn"
        notes = [e.message for e in events if isinstance(e, RunNotice)]
        assert len(notes) == 1 and notes[0].startswith("the image in the result of ")
        assert "was sent inline" in notes[0] and "request_too_large" in notes[0]
        second = json.dumps(messages_requests(srv)[1].body)
        assert b64(BIG) in second  # the chart inline
        assert b64(PDF) not in second  # the report's upload worked


async def test_without_the_option_every_part_goes_inline() -> None:
    events: list[Any] = []
    with FakeMessagesServer() as srv:
        await run(srv, events)
        assert srv.files == {} and not [r for r in srv.requests if r.path == "/v1/files"]
        assert b64(BIG) in json.dumps(messages_requests(srv)[2].body)
