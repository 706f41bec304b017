"""The fake server's Messages API features: signed thinking, server blocks, stop details,
cut calls, error types, recorded streams, and the request checks the real API makes."""

from __future__ import annotations

import json
from typing import Any

import pytest
from server_helpers import post

from nb_tools.testing._guard import block_real_models  # noqa: F401  (autouse)
from nb_tools.testing._script import Fault, Reply, call, reply
from nb_tools.testing._sse import signature_for
from nb_tools.testing.server import FakeMessagesServer, steps_from_json


def body(messages: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    return {"model": "claude-test", "max_tokens": 100, "messages": messages, **extra}


def events(text: str) -> list[dict[str, Any]]:
    return [
        json.loads(line.removeprefix("data: "))
        for line in text.splitlines()
        if line.startswith("data: ")
    ]


def test_streamed_thinking_is_signed_and_blocks_come_before_text(srv: FakeMessagesServer) -> None:
    search = {
        "type": "server_tool_use",
        "id": "srvtoolu_1",
        "name": "web_search",
        "input": {"q": 1},
    }
    details = {"type": "refusal", "category": "cyber", "explanation": "no"}
    srv.push(
        reply(
            "Text",
            call("f", raw='{"path": "abcdefgh"}', id="toolu_1"),
            thinking="deep thought",
            redacted_thinking="opaque",
            blocks=[search],
            stop_reason="max_tokens",
            stop_details=details,
            cut_last_call=True,
        )
    )
    sent = events(post(srv, body([{"role": "user", "content": "hi"}], stream=True)).text)
    starts = [e["content_block"]["type"] for e in sent if e["type"] == "content_block_start"]
    assert starts == ["thinking", "redacted_thinking", "server_tool_use", "text", "tool_use"]
    signature = [e["delta"] for e in sent if e.get("delta", {}).get("type") == "signature_delta"]
    assert signature == [{"type": "signature_delta", "signature": signature_for("deep thought")}]
    arguments = "".join(
        e["delta"]["partial_json"]
        for e in sent
        if e.get("delta", {}).get("type") == "input_json_delta" and e["index"] == 4
    )
    assert arguments == '{"path": "'  # half of the call: cut by max_tokens
    final = next(e for e in sent if e["type"] == "message_delta")["delta"]
    assert (final["stop_reason"], final["stop_details"]) == ("max_tokens", details)


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ([{"type": "text", "text": "\n\n"}], "must contain non-whitespace text"),
        ([{"type": "thinking", "thinking": "changed", "signature": "x"}], "Invalid `signature`"),
    ],
)
def test_what_the_real_api_rejects_is_a_400(
    srv: FakeMessagesServer, content: list[dict[str, Any]], problem: str
) -> None:
    messages = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": content},
        {"role": "user", "content": "again"},
    ]
    response = post(srv, body(messages))
    assert response.status_code == 400 and problem in response.json()["error"]["message"]


def test_a_thinking_block_sent_back_unchanged_is_accepted(srv: FakeMessagesServer) -> None:
    srv.push(reply("ok"))
    block = {"type": "thinking", "thinking": "t", "signature": signature_for("t")}
    messages = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": [block, {"type": "text", "text": "a"}]},
        {"role": "user", "content": "again"},
    ]
    assert post(srv, body(messages)).status_code == 200


@pytest.mark.parametrize(
    ("status", "kind"),
    [(402, "billing_error"), (504, "timeout_error"), (401, "authentication_error")],
)
def test_error_types_of_every_status(srv: FakeMessagesServer, status: int, kind: str) -> None:
    srv.push(Fault(status=status))
    response = post(srv, body([{"role": "user", "content": "hi"}]))
    assert (response.status_code, response.json()["error"]["type"]) == (status, kind)


def test_recorded_stream_is_served_byte_for_byte(srv: FakeMessagesServer) -> None:
    raw = b'event: ping\ndata: not json\n\nevent: message_stop\r\ndata: {"type":"message_stop"}\r\r'
    srv.push(Reply(raw_sse=raw))
    assert post(srv, body([{"role": "user", "content": "hi"}], stream=True)).content == raw


def test_count_tokens_takes_no_max_tokens(srv: FakeMessagesServer) -> None:
    payload = {"model": "claude-test", "messages": [{"role": "user", "content": "hi " * 100}]}
    response = post(srv, payload, "/v1/messages/count_tokens")
    assert response.status_code == 200 and response.json()["input_tokens"] > 10


def test_script_steps_from_json_take_the_new_keys() -> None:
    (step,) = steps_from_json(
        [{"text": "x", "thinking": "t", "stop_details": {"type": "refusal"}, "cut_last_call": True}]
    )
    assert isinstance(step, Reply)
    assert (step.thinking, step.stop_details, step.cut_last_call) == (
        "t",
        {"type": "refusal"},
        True,
    )
