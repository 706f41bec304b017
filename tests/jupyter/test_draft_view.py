"""A call's draft card, without a kernel: the arguments so far on the card, the same
widget taken over by the complete call (even under an id made unique), drafts of a reply
that never completed taken away."""

from __future__ import annotations

import json

import pytest

from nb_tools.agent import ModelRetrying, ToolArgumentsDelta, ToolCallStarted, TurnStarted
from nb_tools.model import ToolCall
from nb_tools.transcript import TranscriptRecorder

pytest.importorskip("ipywidgets")

from nb_tools.jupyter._view import RunView

ARGS = json.dumps({"restaurant": "Chez \u00e9 Panisse", "people": 4, "note": "window"})


def pieces(call_id: str, name: str, text: str, size: int = 5) -> list[ToolArgumentsDelta]:
    out = [ToolArgumentsDelta(call_id=call_id, name=name, partial_json="")]
    out += [
        ToolArgumentsDelta(call_id=call_id, name=name, partial_json=text[i : i + size])
        for i in range(0, len(text), size)
    ]
    return out


def card_values(view: RunView) -> list[str]:
    return [
        w.value for w in view.box.children if 'data-nbt-item="tool"' in str(getattr(w, "value", ""))
    ]


def test_a_draft_shows_the_arguments_so_far_then_becomes_the_calls_card() -> None:
    view = RunView(TranscriptRecorder("go", model="m"))  # no loop: each piece renders at once
    view.on_event(TurnStarted(turn=1))
    stream = pieces("call_0", "book_table", ARGS)
    seen = []
    for event in stream:
        view.on_event(event)
        [value] = card_values(view)
        seen.append(value)
    assert 'data-status="writing"' in seen[0] and "book_table" in seen[0]
    halfway = seen[len(seen) // 2]
    assert "Chez é Panisse" in halfway and "window" not in halfway
    [widget] = [w for w in view.box.children if "book_table" in str(getattr(w, "value", ""))]
    # the reply is complete; the call's id was made unique in the conversation
    call = ToolCall(id="call_0_2", name="book_table", arguments=ARGS)
    view.on_event(ToolCallStarted(call=call, info=None, preview=None, needs_approval=True))
    [value] = card_values(view)
    assert 'data-status="writing"' not in value and "window" in value
    assert [w for w in view.box.children if "book_table" in str(getattr(w, "value", ""))] == [
        widget
    ]  # the same widget, not a second card


def test_drafts_of_a_reply_that_did_not_complete_go_away() -> None:
    view = RunView(TranscriptRecorder("go", model="m"))
    view.on_event(TurnStarted(turn=1))
    for event in pieces("call_0", "book_table", ARGS[:20]):
        view.on_event(event)
    assert len(card_values(view)) == 1
    view.on_event(ModelRetrying(attempt=1, wait=0.1, reason="overloaded"))
    assert card_values(view) == []  # the reply starts over
    for event in pieces("call_0", "book_table", ARGS[:20]):
        view.on_event(event)
    view.on_event(TurnStarted(turn=2))  # a stop or a cut call: no ToolCallStarted came
    assert card_values(view) == []
