"""The transcript recorder: a run's events in, docs/transcript.md's JSON out."""

from __future__ import annotations

import json

from nb_tools.agent import Agent
from nb_tools.agent._persist import encode_messages
from nb_tools.model import Part
from nb_tools.testing import ScriptedModel, call, reply
from nb_tools.tool import Change, Registry, Result, progress, tool
from nb_tools.transcript._recorder import TranscriptRecorder, transcript_text


def tools() -> Registry:
    @tool(read_only=True)
    def look(x: int) -> str:
        """Look."""
        progress("looking\n", fraction=0.5)
        return f"saw {x}"

    def change(args: dict) -> Change:
        return Change(path="a.txt", before="old\n", after=args["text"])

    @tool(requires_approval=True, preview=change)
    def write(text: str) -> str:
        """Write."""
        return "written"

    @tool(read_only=True)
    def picture() -> Result:
        """A picture."""
        return Result(
            content="a dot",
            parts=[Part(kind="image", media_type="image/png", data=b"\x89PNG\r\n\x1a\nxx")],
        )

    return Registry(look, write, picture)


async def test_a_run_becomes_the_documented_json() -> None:
    model = ScriptedModel(
        [
            reply("Looking.", call("look", x=3, id="t1")),
            reply("Writing.", call("write", text="new\n", id="t2"), call("picture", id="t3")),
            reply("All done."),
        ],
        model="scripted",
    )
    agent = Agent(model, tools=tools(), approval="ask", approver=lambda req: False)
    rec = TranscriptRecorder("do it", model="scripted")
    await agent.run("do it", on_event=rec)
    d = rec.to_dict()
    for item in d["items"]:
        if item["kind"] == "tool":
            assert isinstance(item.pop("duration"), float)
    # the whole conversation, for Agent.from_notebook (tests/agent/test_persist.py)
    conversation = d.pop("conversation")
    assert conversation["system"] is None
    assert conversation["messages"] == encode_messages(agent.messages)
    assert d == {
        "version": 1,
        "model": "scripted",
        "stop_reason": "end_turn",
        "error": None,
        "turns": 3,
        "items": [
            {"kind": "user", "text": "do it"},
            {"kind": "assistant", "text": "Looking."},
            {
                "kind": "tool",
                "id": "t1",
                "name": "look",
                "arguments": '{"x": 3}',
                "status": "ok",
                "result": "saw 3",
                "parts": [],
                "diffs": [],
                "progress": "looking\n",
                "approval": None,
            },
            {"kind": "assistant", "text": "Writing."},
            {
                "kind": "tool",
                "id": "t2",
                "name": "write",
                "arguments": '{"text": "new\\n"}',
                "headline": {"arg": "text", "kind": "text", "language": None},
                "status": "denied",
                "result": "The user denied this call.",
                "parts": [],
                "diffs": [
                    {
                        "path": "a.txt",
                        "kind": "update",
                        "diff": "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-old\n+new\n",
                    }
                ],
                "progress": None,
                "approval": {
                    "approved": False,
                    "by": "user",
                    "message": None,
                    "source": "person",
                    "rule": None,
                },
            },
            {
                "kind": "tool",
                "id": "t3",
                "name": "picture",
                "arguments": "{}",
                "status": "ok",
                "result": "a dot",
                "parts": [{"kind": "image", "media_type": "image/png", "data": "iVBORw0KGgp4eA=="}],
                "diffs": [],
                "progress": None,
                "approval": None,
            },
            {"kind": "assistant", "text": "All done."},
        ],
        "usage": d["usage"],
    }
    assert d["usage"]["input_tokens"] > 0 and set(d["usage"]) == {
        "input_tokens",
        "output_tokens",
        "cache_creation_input_tokens",
        "cache_read_input_tokens",
        "cost_usd",
        "thinking_tokens",
        "web_search_requests",
        "web_fetch_requests",
    }
    json.dumps(d)  # JSON all the way down


async def test_plain_text_form_reads_well() -> None:
    model = ScriptedModel([reply("Looking.", call("look", x=1, id="t1")), reply("Done.")])
    rec = TranscriptRecorder("go")
    await Agent(model, tools=tools()).run("go", on_event=rec)
    text = transcript_text(rec.to_dict())
    lines = text.splitlines()
    assert lines[:3] == ["User: go", "Assistant: Looking.", '[tool] look({"x": 1})']
    assert "  | saw 1" in lines
    assert lines[-2] == "Assistant: Done."
    assert lines[-1].startswith("[end_turn] 2 turns · ")


def test_a_run_that_never_finished_is_closed_by_finish() -> None:
    rec = TranscriptRecorder("x")
    rec.finish("error", "boom")
    d = rec.to_dict()
    assert (d["stop_reason"], d["error"], d["items"]) == (
        "error",
        "boom",
        [{"kind": "user", "text": "x"}],
    )
