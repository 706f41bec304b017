"""ScriptedModel: streams a script as a Provider would, records requests, fails clearly."""

from __future__ import annotations

import json

import pytest

from nb_tools.model import (
    Message,
    ModelError,
    ModelRequest,
    ResponseEvent,
    TextBlock,
    TextDeltaEvent,
    ToolArgumentsDeltaEvent,
    ToolUseBlock,
    ToolUseStartEvent,
    Usage,
)
from nb_tools.testing import Fault, Reply, ScriptedModel, call, reply


def request(text: str = "hi") -> ModelRequest:
    return ModelRequest(
        system="", messages=(Message(role="user", content=(TextBlock(text=text),)),), tools=()
    )


async def collect(model: ScriptedModel, req: ModelRequest | None = None) -> list[object]:
    return [e async for e in model.stream(req or request())]


async def test_streams_text_then_calls_then_the_response() -> None:
    usage = Usage(input_tokens=3, output_tokens=4)
    model = ScriptedModel(
        [reply("Hello world", call("f", raw='{"a": 1, "a": 2}', id="c1"), usage=usage)]
    )
    events = await collect(model)

    texts = [e.text for e in events if isinstance(e, TextDeltaEvent)]
    assert len(texts) > 1 and "".join(texts) == "Hello world"
    assert [e for e in events if isinstance(e, ToolUseStartEvent)] == [
        ToolUseStartEvent(id="c1", name="f")
    ]
    args = [e.partial_json for e in events if isinstance(e, ToolArgumentsDeltaEvent)]
    assert "".join(args) == '{"a": 1, "a": 2}'
    assert events[-1] == ResponseEvent(
        message=Message(
            role="assistant",
            content=(
                TextBlock(text="Hello world"),
                ToolUseBlock(id="c1", name="f", arguments='{"a": 1, "a": 2}'),
            ),
        ),
        stop_reason="tool_use",
        usage=usage,
    )
    assert model.requests == [request()]
    assert (model.model, model.remaining) == ("scripted", 0)


async def test_generated_ids_are_unique_and_usage_is_estimated() -> None:
    model = ScriptedModel([reply("", call("f"), call("f"))], model="m")
    final = (await collect(model))[-1]
    assert isinstance(final, ResponseEvent)
    ids = [c.id for c in final.message.tool_calls]
    assert len(set(ids)) == 2
    assert final.usage.input_tokens >= 1 and final.usage.output_tokens >= 1


async def test_responders_see_the_request() -> None:
    model = ScriptedModel([lambda req: Reply(text=f"echo {req.messages[-1].text}")])
    final = (await collect(model, request("ping")))[-1]
    assert isinstance(final, ResponseEvent) and final.message.text == "echo ping"


async def test_faults_fail_times_requests_then_the_script_goes_on() -> None:
    model = ScriptedModel([Fault(status=529, times=2, message="overloaded"), reply("ok")])
    for _ in range(2):
        with pytest.raises(ModelError, match="overloaded") as info:
            await collect(model)
        assert (info.value.status, info.value.retryable) == (529, True)
    assert (await collect(model))[-1].message.text == "ok"  # type: ignore[attr-defined]


async def test_an_exhausted_script_says_so() -> None:
    model = ScriptedModel([reply("only")])
    await collect(model)
    with pytest.raises(ModelError, match="script exhausted after 1 replies"):
        await collect(model)


async def test_an_invalid_conversation_is_rejected_like_the_api_would() -> None:
    bad = ModelRequest(
        system="",
        tools=(),
        messages=(
            Message(role="user", content=(TextBlock(text="a"),)),
            Message(role="user", content=(TextBlock(text="b"),)),
        ),
    )
    with pytest.raises(ModelError, match="roles must alternate") as info:
        await collect(ScriptedModel([reply("x")]), bad)
    assert info.value.status == 400
    assert await collect(ScriptedModel([reply("x")], check=False), bad)


def test_call_can_script_arguments_named_name_raw_and_id() -> None:
    c = call("lookup", {"id": 7, "raw": True}, name="x", id="c1")
    assert (c.name, c.id, c.raw) == ("lookup", "c1", None)
    assert json.loads(c.argument_text) == {"id": 7, "raw": True, "name": "x"}
    assert call("f", '{"a": 1, "a": 2}').raw == '{"a": 1, "a": 2}'
    with pytest.raises(TypeError, match="given in the mapping and as keywords"):
        call("f", {"a": 1}, a=2)
