"""The fake Messages API server: wire format (checked with the real SDK too), scripts,
faults, recording, and the standalone command."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
from server_helpers import post

from nb_tools.model import ModelRequest, ToolResult, ToolResultBlock, Usage
from nb_tools.testing._guard import block_real_models  # noqa: F401  (autouse)
from nb_tools.testing._script import Fault, Reply, ScriptedCall, call, reply
from nb_tools.testing.server import FakeMessagesServer, load_script, steps_from_json

USAGE = Usage(input_tokens=12, output_tokens=7, cache_read_input_tokens=3)
USAGE_JSON = {
    "input_tokens": 12,
    "output_tokens": 7,
    "cache_creation_input_tokens": 0,
    "cache_read_input_tokens": 3,
}


def body(*, stream: bool = False, **extra: Any) -> dict[str, Any]:
    return {
        "model": "claude-test",
        "max_tokens": 100,
        "messages": [{"role": "user", "content": "Hi"}],
        "stream": stream,
        **extra,
    }


def sse(text: str) -> list[tuple[str, dict[str, Any]]]:
    events = []
    for chunk in text.strip().split("\n\n"):
        name, data = chunk.split("\n")
        events.append((name.removeprefix("event: "), json.loads(data.removeprefix("data: "))))
    return events


def test_non_streaming_reply_is_a_whole_message(srv: FakeMessagesServer) -> None:
    srv.push(reply("Hi", call("f", x=1, id="toolu_1"), usage=USAGE))
    response = post(srv, body())
    assert response.status_code == 200
    assert response.json() == {
        "id": "msg_fake_0001",
        "type": "message",
        "role": "assistant",
        "model": "claude-test",
        "content": [
            {"type": "text", "text": "Hi"},
            {"type": "tool_use", "id": "toolu_1", "name": "f", "input": {"x": 1}},
        ],
        "stop_reason": "tool_use",
        "stop_sequence": None,
        "usage": USAGE_JSON,
    }


def test_streamed_reply_event_by_event(srv: FakeMessagesServer) -> None:
    srv.push(reply("Hi there", call("f", raw='{"a": 1, "a": 2}', id="toolu_1"), usage=USAGE))
    response = post(srv, body(stream=True))
    assert response.headers["content-type"].startswith("text/event-stream")
    message = {
        "id": "msg_fake_0001",
        "type": "message",
        "role": "assistant",
        "model": "claude-test",
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": USAGE_JSON | {"output_tokens": 1},
    }

    def delta(index: int, **d: str) -> tuple[str, dict[str, Any]]:
        return "content_block_delta", {"type": "content_block_delta", "index": index, "delta": d}

    def start(index: int, block: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        return "content_block_start", {
            "type": "content_block_start",
            "index": index,
            "content_block": block,
        }

    def stop(index: int) -> tuple[str, dict[str, Any]]:
        return "content_block_stop", {"type": "content_block_stop", "index": index}

    assert sse(response.text) == [
        ("message_start", {"type": "message_start", "message": message}),
        ("ping", {"type": "ping"}),
        start(0, {"type": "text", "text": ""}),
        delta(0, type="text_delta", text="Hi "),
        delta(0, type="text_delta", text="there"),
        stop(0),
        start(1, {"type": "tool_use", "id": "toolu_1", "name": "f", "input": {}}),
        delta(1, type="input_json_delta", partial_json=""),
        delta(1, type="input_json_delta", partial_json='{"a": 1,'),
        delta(1, type="input_json_delta", partial_json=' "a": 2}'),
        stop(1),
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": "tool_use", "stop_sequence": None},
                "usage": {"output_tokens": 7},
            },
        ),
        ("message_stop", {"type": "message_stop"}),
    ]


def test_the_official_sdk_reads_both_forms(srv: FakeMessagesServer) -> None:
    import anthropic

    srv.push(
        reply("Hello", call("f", raw='{"a": 1, "a": 2}', id="toolu_1")),
        reply("Hello", call("f", raw='{"a": 1, "a": 2}', id="toolu_2")),
    )
    client = anthropic.Anthropic(base_url=srv.base_url, api_key="k", max_retries=0)
    kwargs: Any = {
        "model": "claude-test",
        "max_tokens": 50,
        "messages": [{"role": "user", "content": "Hi"}],
    }
    created = client.messages.create(**kwargs)
    with client.messages.stream(**kwargs) as stream:
        streamed = stream.get_final_message()
    for message, tool_id in ((created, "toolu_1"), (streamed, "toolu_2")):
        assert [b.model_dump(exclude_none=True) for b in message.content] == [
            {"type": "text", "text": "Hello"},
            {"type": "tool_use", "id": tool_id, "name": "f", "input": {"a": 2}},
        ]
        assert message.stop_reason == "tool_use"
    headers = srv.requests[0].headers
    # SDK 2.14 sends the key as a bearer token; older ones as x-api-key.
    assert "k" in (
        headers.get("x-api-key"),
        headers.get("authorization", "").removeprefix("Bearer "),
    )
    assert "anthropic-version" in headers
    assert srv.requests[1].body["stream"] is True


def test_fault_answers_its_status_times_then_the_script_goes_on(srv: FakeMessagesServer) -> None:
    srv.push(Fault(status=529, times=2, message="Overloaded"), reply("ok"))
    for _ in range(2):
        response = post(srv, body())
        assert response.status_code == 529
        assert response.headers["retry-after-ms"] == "10"
        assert response.json() == {
            "type": "error",
            "error": {"type": "overloaded_error", "message": "Overloaded"},
        }
    assert post(srv, body()).json()["content"] == [{"type": "text", "text": "ok"}]
    assert srv.remaining == 0


def test_cut_stream_keeps_the_reply_for_the_retry(srv: FakeMessagesServer) -> None:
    srv.push(Fault(cut_after=3), reply("whole reply"))
    with pytest.raises(httpx.RemoteProtocolError):
        post(srv, body(stream=True))
    assert srv.remaining == 1  # the reply stays for the retry
    assert post(srv, body(stream=True)).text.count("whole") == 1
    assert srv.remaining == 0


def test_cut_non_streaming_body_is_cut(srv: FakeMessagesServer) -> None:
    srv.push(Fault(cut_after=1), reply("x" * 100))
    with pytest.raises(httpx.RemoteProtocolError):
        post(srv, body())
    assert post(srv, body()).json()["content"] == [{"type": "text", "text": "x" * 100}]


def test_exhausted_script_is_a_500_that_says_so(srv: FakeMessagesServer) -> None:
    srv.push(reply("only one"))
    post(srv, body())
    response = post(srv, body())
    assert response.status_code == 500
    assert response.json()["error"] == {
        "type": "api_error",
        "message": "FakeMessagesServer: the script is exhausted (1 replies served); this "
        "request has no reply. Add steps to the script or push() more.",
    }


def test_responder_sees_the_request_as_our_types(srv: FakeMessagesServer) -> None:
    seen: list[ModelRequest] = []

    def responder(request: ModelRequest) -> Reply:
        seen.append(request)
        result = request.messages[-1].content[0]
        assert isinstance(result, ToolResultBlock)
        return reply(f"The tool said {result.result.content!r}")

    srv.push(responder)
    messages = [
        {"role": "user", "content": "Weather?"},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "t1", "name": "w", "input": {"c": "P"}}],
        },
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "Sunny"}],
        },
    ]
    response = post(srv, body(messages=messages, system="Sys"))
    assert response.json()["content"] == [{"type": "text", "text": "The tool said 'Sunny'"}]
    assert seen[0].system == "Sys"
    assert seen[0].messages[2].content == (
        ToolResultBlock(result=ToolResult(tool_use_id="t1", content="Sunny")),
    )


def test_fallback_answers_once_the_script_runs_out() -> None:
    with FakeMessagesServer([reply("scripted")], fallback=lambda r: reply("fallback")) as srv:
        texts = [post(srv, body()).json()["content"][0]["text"] for _ in range(3)]
    assert texts == ["scripted", "fallback", "fallback"]


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        (
            body(
                messages=[
                    {"role": "user", "content": "Hi"},
                    {
                        "role": "assistant",
                        "content": [{"type": "tool_use", "id": "t9", "name": "f", "input": {}}],
                    },
                    {"role": "user", "content": "no result"},
                ]
            ),
            "messages.2: `tool_use` ids were found without `tool_result` blocks immediately "
            "after: t9. Each `tool_use` block must have a corresponding `tool_result` block "
            "in the next message.",
        ),
        (
            body(messages=[{"role": "user", "content": [{"type": "text", "text": ""}]}]),
            "messages.0.content.0.text: text content blocks must be non-empty",
        ),
        (
            body(
                system=[
                    {"type": "text", "text": str(i), "cache_control": {"type": "ephemeral"}}
                    for i in range(5)
                ]
            ),
            "A maximum of 4 blocks with cache_control may be provided. Found 5.",
        ),
        (
            body(tools=[{"name": "bad name", "input_schema": {"type": "object"}}]),
            "tools: name 'bad name' must match ^[a-zA-Z0-9_-]{1,64}$",
        ),
        ({"messages": []}, "model: Field required"),
    ],
)
def test_requests_the_real_api_would_reject_get_a_400(
    srv: FakeMessagesServer, payload: dict[str, Any], message: str
) -> None:
    srv.push(reply("never sent"))
    response = post(srv, payload)
    assert response.status_code == 400
    assert response.json() == {
        "type": "error",
        "error": {"type": "invalid_request_error", "message": message},
    }
    assert srv.remaining == 1


def test_requests_are_recorded_and_unknown_routes_are_404(srv: FakeMessagesServer) -> None:
    srv.push(reply("a"))
    post(srv, body())
    response = post(srv, {"x": 1}, path="/v1/complete")
    assert response.status_code == 404
    assert [(r.method, r.path, r.body) for r in srv.requests] == [
        ("POST", "/v1/messages", body()),
        ("POST", "/v1/complete", {"x": 1}),
    ]
    tokens = post(srv, body(), path="/v1/messages/count_tokens").json()
    assert tokens["input_tokens"] > 0


def test_start_stop_and_base_url() -> None:
    server = FakeMessagesServer()
    with pytest.raises(RuntimeError, match="not running"):
        _ = server.base_url
    server.start()
    assert server.start() is server
    url = server.base_url
    assert url.startswith("http://127.0.0.1:")
    server.push(reply("kept alive"))
    with httpx.Client() as client:  # a kept-alive connection does not hold stop() up
        assert client.post(url + "/v1/messages", json=body()).status_code == 200
        server.stop()
        server.stop()
        with pytest.raises(httpx.TransportError):
            client.post(url + "/v1/messages", json=body())


def test_steps_from_json() -> None:
    steps = steps_from_json(
        [
            {"text": "Hi", "calls": [{"name": "f", "arguments": {"a": 1}}]},
            {"calls": [{"name": "g", "raw": '{"b": 1, "b": 2}', "id": "t2"}], "chunk_delay": 0.5},
            {"text": "Bye", "stop_reason": "max_tokens", "usage": {"input_tokens": 3}},
            {"fault": {"status": 529, "times": 2}},
            {"fault": {"cut_after": 4}},
        ]
    )
    assert steps == [
        Reply(text="Hi", calls=(ScriptedCall(name="f", arguments={"a": 1}),)),
        Reply(calls=(ScriptedCall(name="g", raw='{"b": 1, "b": 2}', id="t2"),), chunk_delay=0.5),
        Reply(text="Bye", stop_reason="max_tokens", usage=Usage(input_tokens=3)),
        Fault(status=529, times=2),
        Fault(cut_after=4),
    ]
    with pytest.raises(ValueError, match=r"script step 0: unknown keys \['txt'\]"):
        steps_from_json([{"txt": "typo"}])
    with pytest.raises(ValueError, match=r"script step 1: bad fault \{'code': 529\}"):
        steps_from_json([{"text": "ok"}, {"fault": {"code": 529}}])


def test_load_script_from_python(tmp_path: Path) -> None:
    path = tmp_path / "script.py"
    path.write_text(
        "from nb_tools.testing._script import reply, call\nSCRIPT = [reply('Hi', call('f', x=1))]\n"
    )
    assert load_script(str(path)) == [reply("Hi", call("f", x=1))]
    (tmp_path / "empty.py").write_text("X = 1\n")
    with pytest.raises(ValueError, match="define SCRIPT"):
        load_script(str(tmp_path / "empty.py"))


def test_standalone_server_from_the_command_line(tmp_path: Path) -> None:
    script = tmp_path / "replies.json"
    script.write_text(json.dumps([{"text": "From the file."}]))
    command = [sys.executable, "-m", "nb_tools.testing.server", "--port", "0"]
    proc = subprocess.Popen(
        [*command, "--script", str(script)],
        stdout=subprocess.PIPE,
        text=True,
        env=os.environ.copy(),
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline().strip()
        assert line.startswith("ANTHROPIC_BASE_URL=http://127.0.0.1:")
        url = line.split("=", 1)[1]
        texts = [
            httpx.post(url + "/v1/messages", json=body(), timeout=10).json()["content"][0]["text"]
            for _ in range(2)
        ]
        assert texts == ["From the file.", "(fake model) You said: Hi"]
    finally:
        proc.terminate()
        proc.wait(timeout=10)
