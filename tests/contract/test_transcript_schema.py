"""The transcript contract: the committed schema and TypeScript types are what the Python
types generate, and what the recorder builds follows the schema."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import jsonschema
import pytest

from nb_tools.agent._agent import RunResult
from nb_tools.agent._events import (
    ApprovalDecided,
    ModelRetrying,
    RunFinished,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
    ToolProgress,
    TurnStarted,
)
from nb_tools.agent._notices import (
    CitationsReceived,
    ContextCompacted,
    RunNotice,
    ServerToolUsed,
    ThinkingDelta,
)
from nb_tools.model import Part, ToolCall, ToolResult, Usage
from nb_tools.tool import Change
from nb_tools.tool._progress import Progress
from nb_tools.transcript._recorder import TranscriptRecorder
from nb_tools.transcript._schema import SCHEMA_PATH, load_schema, transcript_schema
from nb_tools.transcript._types import STOP_REASONS, TOOL_STATUSES

REPO = Path(__file__).resolve().parents[2]


def generator():
    spec = importlib.util.spec_from_file_location(
        "gen_transcript_contract", REPO / "scripts" / "gen_transcript_contract.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_committed_schema_and_typescript_types_are_what_the_types_generate() -> None:
    for path, text in generator().outputs().items():
        assert path.read_text(encoding="utf-8") == text, (
            f"{path.relative_to(REPO)} is stale: run python scripts/gen_transcript_contract.py "
            "and commit the result"
        )


def test_the_schema_is_shipped_in_the_package() -> None:
    assert SCHEMA_PATH.parent == REPO / "nb_tools" / "transcript"
    assert load_schema() == transcript_schema()
    jsonschema.Draft202012Validator.check_schema(load_schema())


def test_the_closed_sets_are_the_schemas_enums() -> None:
    defs = load_schema()["$defs"]
    assert tuple(defs["ToolStatus"]["enum"]) == TOOL_STATUSES
    assert tuple(defs["StopReason"]["enum"]) == STOP_REASONS
    assert "stopped_after_turn" in STOP_REASONS


def call(i: int) -> ToolCall:
    return ToolCall(id=f"c{i}", name="t", arguments=json.dumps({"i": i}))


def every_event_transcript() -> dict:
    """A recorder fed one of every event the agent emits, every status included."""
    rec = TranscriptRecorder("go", model="m", provider="anthropic")
    rec(TurnStarted(turn=1))
    rec(ThinkingDelta(text="hmm"))
    rec(TextDelta(text="Working."))
    rec(ModelRetrying(attempt=1, wait=0.5, reason="overloaded"))
    change = Change(path="a.txt", before="a\n", after="b\n")
    for i, status in enumerate(s for s in TOOL_STATUSES if s != "pending"):
        rec(ToolCallStarted(call=call(i), info=None, preview=(change,), needs_approval=True))
        rec(ToolProgress(call_id=f"c{i}", progress=Progress(text="step\n")))
        rec(ApprovalDecided(call_id=f"c{i}", approved=status != "denied", by="user"))
        png = Part(kind="image", media_type="image/png", data=b"\x89PNG")
        result = ToolResult(
            tool_use_id=f"c{i}",
            content="out",
            parts=(png,),
            metadata={"traceback": "Traceback ...", "model_saw": [3, 10]},
        )
        rec(ToolCallFinished(call=call(i), result=result, duration=0.1, status=status))
    rec(ToolCallStarted(call=call(99), info=None, preview=None, needs_approval=False))
    result = {"type": "web_search_tool_result", "content": []}
    rec(ServerToolUsed(id="s1", name="web_search", arguments="{}", content=result["content"]))
    rec(CitationsReceived(citations=({"type": "x", "url": "https://a", "cited_text": "c"},)))
    rec(ContextCompacted(how="server", messages_before=4, messages_after=1, message="m"))
    rec(RunNotice(kind="pause_turn", message="continuing"))
    rec(RunFinished(result=RunResult(text="", messages=(), usage=Usage(), stop_reason="end_turn")))
    return rec.to_dict()


def test_a_transcript_of_every_event_follows_the_schema() -> None:
    d = every_event_transcript()
    jsonschema.Draft202012Validator(load_schema()).validate(d)
    statuses = {i["status"] for i in d["items"] if i["kind"] == "tool"}
    assert statuses == set(TOOL_STATUSES)


@pytest.mark.parametrize(
    ("path", "value"),
    [
        (("items", 3, "status"), "weird"),  # not a status
        (("items", 3, "extra"), 1),  # an undeclared key
        (("items", 0, "kind"), "hologram"),  # not a kind
        (("stop_reason",), "bored"),  # not a stop reason
        (("usage", "input_tokens"), "many"),  # not an integer
    ],
)
def test_the_schema_refuses_what_the_contract_does_not_say(path: tuple, value: object) -> None:
    d = every_event_transcript()
    target = d
    for key in path[:-1]:
        target = target[key]
    assert d["items"][3]["kind"] == "tool"
    target[path[-1]] = value
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft202012Validator(load_schema()).validate(d)


def test_approval_sources_are_the_kinds_of_the_pipelines_sources() -> None:
    from typing import get_args

    from nb_tools.agent._approval import Source
    from nb_tools.transcript._types import ApprovalSource

    kinds = {cls.__dataclass_fields__["kind"].default for cls in get_args(Source)}
    assert kinds == set(get_args(ApprovalSource))
