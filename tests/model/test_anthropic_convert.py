"""Our messages to the Messages API's JSON and back, and what a streamed turn keeps."""

from __future__ import annotations

import pytest

from nb_tools.model import (
    ImageBlock,
    Message,
    ModelRequest,
    Part,
    TextBlock,
    TextDeltaEvent,
    ThinkingBlock,
    ThinkingDeltaEvent,
    ToolResult,
    ToolResultBlock,
    ToolSpec,
    ToolUseBlock,
)
from nb_tools.model._anthropic_convert import (
    arguments_object,
    part_to_api,
    request_from_api,
    request_params,
)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ('{"a": 1, "a": 2}', {"a": 2}),
        ('{"a": [1, {"b": null}]}', {"a": [1, {"b": None}]}),
        ("", {}),
        ('{"a": ', {}),
        ("[1, 2]", {}),
        ('"text"', {}),
        ('{"a": NaN}', {}),
        ("[" * 100_000, {}),
    ],
)
def test_arguments_object_is_always_an_object(raw: str, expected: dict[str, object]) -> None:
    assert arguments_object(raw) == expected


def test_documents_pdf_as_base64_and_text_as_text() -> None:
    pdf = Part(kind="document", media_type="application/pdf", data=b"%PDF-1.4", title="r.pdf")
    assert part_to_api(pdf) == {
        "type": "document",
        "source": {"type": "base64", "media_type": "application/pdf", "data": "JVBERi0xLjQ="},
        "title": "r.pdf",
    }
    csv = Part(kind="document", media_type="text/csv; charset=utf-8", data="a,é\n".encode())
    assert part_to_api(csv) == {
        "type": "document",
        "source": {"type": "text", "media_type": "text/plain", "data": "a,é\n"},
    }


def test_unsupported_parts_become_a_note_the_model_can_read() -> None:
    tiff = Part(kind="image", media_type="image/tiff", data=b"1234", title="scan")
    assert part_to_api(tiff) == {
        "type": "text",
        "text": "[image 'scan' (image/tiff, 4 bytes) not shown: the Anthropic API takes JPEG, "
        "PNG, GIF and WebP images, and PDF or text documents]",
    }


def test_request_round_trips_through_the_api_format() -> None:
    png = Part(kind="image", media_type="image/png", data=b"\x89PNG")
    pdf = Part(kind="document", media_type="application/pdf", data=b"%PDF", title="doc")
    request = ModelRequest(
        system="System.",
        messages=(
            Message(role="user", content=(TextBlock(text="Hi"), ImageBlock(part=png))),
            Message(
                role="assistant",
                content=(ToolUseBlock(id="t1", name="f", arguments='{"x": 1}'),),
            ),
            Message(
                role="user",
                content=(
                    ToolResultBlock(
                        result=ToolResult(
                            tool_use_id="t1", content="out", parts=(png, pdf), is_error=True
                        )
                    ),
                ),
            ),
        ),
        tools=(ToolSpec(name="f", description="F.", input_schema={"type": "object"}, strict=True),),
        max_tokens=77,
    )
    for cache in (True, False):
        params = request_params(request, model="m", cache=cache)
        assert request_from_api(params) == request


def test_thinking_blocks_are_kept_in_the_turn() -> None:
    import anthropic.types as api

    from nb_tools.model.anthropic import _Turn

    turn = _Turn()
    events = [
        api.RawContentBlockStartEvent(
            type="content_block_start",
            index=0,
            content_block=api.ThinkingBlock(type="thinking", thinking="", signature=""),
        ),
        api.RawContentBlockDeltaEvent(
            type="content_block_delta",
            index=0,
            delta=api.ThinkingDelta(type="thinking_delta", thinking="hmm"),
        ),
        api.RawContentBlockStartEvent(
            type="content_block_start",
            index=1,
            content_block=api.TextBlock(type="text", text=""),
        ),
        api.RawContentBlockDeltaEvent(
            type="content_block_delta", index=1, delta=api.TextDelta(type="text_delta", text="Hi")
        ),
        api.RawMessageStopEvent(type="message_stop"),
    ]
    out = [e for event in events for e in turn.feed(event)]
    assert out == [ThinkingDeltaEvent(text="hmm"), TextDeltaEvent(text="Hi")]
    assert turn.stopped
    assert turn.message() == Message(
        role="assistant",
        content=(ThinkingBlock(thinking="hmm", signature=""), TextBlock(text="Hi")),
    )
