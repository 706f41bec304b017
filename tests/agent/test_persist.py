"""Saving and loading a conversation (Agent.save / Agent.load / Agent.from_notebook), and
the request preview."""

from __future__ import annotations

import dataclasses
import json
import typing
from pathlib import Path
from typing import Any

import pytest

import nb_tools.model as model_types
from nb_tools.agent import Agent
from nb_tools.agent._persist import decode_messages, encode_messages
from nb_tools.model import (
    CompactionBlock,
    ImageBlock,
    Message,
    OtherBlock,
    Part,
    RedactedThinkingBlock,
    ServerToolResultBlock,
    ServerToolUseBlock,
    TextBlock,
    ThinkingBlock,
    ToolResult,
    ToolResultBlock,
    ToolUseBlock,
)
from nb_tools.model._anthropic_convert import RequestEncoder
from nb_tools.model.anthropic import AnthropicProvider
from nb_tools.permissions import PermissionRules
from nb_tools.testing import FakeMessagesServer, ScriptedModel, call, reply
from nb_tools.tool import Result, tool
from nb_tools.transcript._recorder import TRANSCRIPT_MIME, TranscriptRecorder

PNG = b"\x89PNG\r\n\x1a\nxx"


def make_tools() -> list[Any]:
    @tool(register=False, read_only=True)
    def look(x: int) -> str:
        """Looks."""
        return f"saw {x}"

    @tool(register=False, read_only=True)
    def picture() -> Result:
        """A picture."""
        return Result(
            content="a picture", parts=[Part(kind="image", media_type="image/png", data=PNG)]
        )

    return [look, picture]


SCRIPT = [
    reply(
        "Looking.",
        call("look", x=3, id="toolu_1"),
        call("picture", id="toolu_2"),
        thinking="I should look.",
    ),
    reply("Done looking.", thinking="Both came back."),
]


def every_block() -> list[Message]:
    """One message per block type of nb_tools.model (the test fails when a block type
    is added without a case here, so new blocks get a round-trip check)."""
    result = ToolResult(
        tool_use_id="t",
        content="out",
        is_error=True,
        parts=(Part(kind="document", media_type="application/pdf", data=b"%PDF", title="doc"),),
        metadata={"duration": 0.5, "panic": ValueError("x")},
    )
    server_result = [{"type": "web_search_result", "url": "https://e.example", "title": "E"}]
    return [
        Message(
            role="user",
            content=(
                TextBlock(text="hi"),
                ImageBlock(part=Part(kind="image", media_type="image/png", data=PNG)),
            ),
        ),
        Message(
            role="assistant",
            content=(
                ThinkingBlock(thinking="hmm", signature="sig=="),
                RedactedThinkingBlock(data="opaque"),
                ServerToolUseBlock(id="s", name="web_search", arguments='{"query": "q"}'),
                ServerToolResultBlock(
                    type="web_search_tool_result", tool_use_id="s", content=server_result
                ),
                TextBlock(
                    text="cited",
                    citations=({"type": "web_search_result_location", "url": "https://e.example"},),
                ),
                CompactionBlock(content="summary"),
                OtherBlock(type="future_block", data={"x": [1, {"y": None}]}),
                ToolUseBlock(id="t", name="f", arguments='{"a":1}'),
            ),
        ),
        Message(role="user", content=(ToolResultBlock(result=result),)),
    ]


def test_every_block_type_round_trips() -> None:
    messages = every_block()
    covered = {type(b).__name__ for m in messages for b in m.content}
    blocks = {t.__name__ for t in typing.get_args(model_types.Block)}
    assert blocks <= covered, f"add a case for {sorted(blocks - covered)}"
    data = json.loads(json.dumps(encode_messages(messages)))
    back = decode_messages(data)
    # metadata keeps its JSON values only (it is never sent to the model)
    expected = [dataclasses.replace(m) for m in messages]
    result = expected[2].content[0].result  # type: ignore[union-attr]
    expected[2] = Message(
        role="user",
        content=(ToolResultBlock(result=dataclasses.replace(result, metadata={"duration": 0.5})),),
    )
    assert back == expected
    assert isinstance(back[2].content[0].result.parts, tuple)  # type: ignore[union-attr]


async def test_save_then_load_sends_the_same_request_byte_for_byte(tmp_path: Path) -> None:
    with FakeMessagesServer([*SCRIPT, reply("again"), reply("again")]) as server:

        def provider() -> AnthropicProvider:
            return AnthropicProvider("claude-test", base_url=server.base_url, api_key="test")

        rules = PermissionRules(root=tmp_path)
        rules.deny("bash(rm:*)")
        first = Agent(
            provider(),
            tools=make_tools(),
            system="Be brief.",
            rules=rules,
            approval="auto",
            thinking=2000,
        )
        await first.run("look at 3")
        first.rules.allow("look", source="session")  # what "Always allow" adds
        first.save(tmp_path / "chat.json")

        plain = Agent.load(tmp_path / "chat.json", model=provider(), tools=make_tools())
        assert plain.approval == "ask" and plain.rules is None  # the conversation only
        loaded = Agent.load(
            tmp_path / "chat.json",
            model=provider(),
            tools=make_tools(),
            approval="auto",
            trust_settings=True,
        )
        assert loaded.request_options == first.request_options
        assert any(isinstance(b, ThinkingBlock) for b in loaded.messages[1].content)
        assert loaded.system == "Be brief." and loaded.approval == "auto"
        assert loaded.usage == first.usage
        assert loaded.rules is not None
        assert [str(r) for r in loaded.rules.rules] == ["deny bash(rm:*)", "allow look"]
        encoder = RequestEncoder("claude-test")
        assert encoder.encode(loaded.request_preview("next"), cache=True) == encoder.encode(
            first.request_preview("next"), cache=True
        )
        await first.run("next")
        await loaded.run("next")
        a, b = server.requests[-2].body, server.requests[-1].body
        assert json.dumps(a) == json.dumps(b)
        for agent in (first, loaded):
            await agent.provider.client.close()  # type: ignore[attr-defined]


def test_load_names_what_is_wrong(tmp_path: Path) -> None:
    bad = tmp_path / "x.json"
    bad.write_text('{"hello": 1}')
    with pytest.raises(ValueError, match="not a saved conversation"):
        Agent.load(bad)
    with pytest.raises(FileNotFoundError, match="does not exist"):
        Agent.load(tmp_path / "missing.json")


async def test_from_notebook_rebuilds_the_conversation_of_a_cell(tmp_path: Path) -> None:
    import nbformat

    model = ScriptedModel([*SCRIPT, reply("second run")], model="scripted")
    agent = Agent(model, tools=make_tools(), system="Be brief.", approval="auto")
    transcripts = []
    for prompt in ("look at 3", "and now?"):
        rec = TranscriptRecorder(prompt, model="scripted")
        await agent.run(prompt, on_event=rec)
        transcripts.append(rec.to_dict())
        if prompt == "look at 3":
            after_first = encode_messages(agent.messages)
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("# chat")] + [
        nbformat.v4.new_code_cell(
            "%%agent\n...",
            outputs=[nbformat.v4.new_output("display_data", data={TRANSCRIPT_MIME: t})],
        )
        for t in transcripts
    ]
    path = tmp_path / "chat.ipynb"
    nbformat.write(nb, path)

    last = Agent.from_notebook(path, model=ScriptedModel([]))
    assert encode_messages(last.messages) == encode_messages(agent.messages)
    assert last.system == "Be brief."
    first = Agent.from_notebook(path, cell=1, model=ScriptedModel([]))
    assert encode_messages(first.messages) == after_first
    assert first.request_preview("and now?").messages[-1] == Message(
        role="user", content=(TextBlock(text="and now?"),)
    )
    with pytest.raises(ValueError, match="no transcript in cell 0"):
        Agent.from_notebook(path, cell=0)


def test_request_preview_changes_nothing() -> None:
    agent = Agent(ScriptedModel([]), tools=make_tools(), system="S", max_tokens=100)
    preview = agent.request_preview("hello")
    assert preview.system == "S" and preview.max_tokens == 100
    assert [t.name for t in preview.tools] == ["look", "picture"]
    assert preview.messages == (Message(role="user", content=(TextBlock(text="hello"),)),)
    assert agent.messages == ()
