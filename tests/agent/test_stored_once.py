"""A conversation stored once across a notebook's transcripts: each run keeps what it added
and the id of the run it continued; Agent.from_notebook rebuilds the whole conversation of any
cell; old notebooks (whole conversations in every transcript) still load."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import nbformat
import pytest

from nb_tools.agent import Agent
from nb_tools.agent._persist import encode_messages
from nb_tools.testing import ScriptedModel, reply
from nb_tools.transcript._chain import ConversationRef, self_contained, shown_in
from nb_tools.transcript._recorder import TRANSCRIPT_MIME, TranscriptRecorder

ANSWER = "word " * 400  # about 2 KB an answer, so sizes are the conversation's


def notebook(path: Path, transcripts: list[dict[str, Any]]) -> Path:
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell(
            "%%agent\n...",
            outputs=[nbformat.v4.new_output("display_data", data={TRANSCRIPT_MIME: t})],
        )
        for t in transcripts
    ]
    nbformat.write(nb, path)
    return path


async def chat(
    runs: int, *, chained: bool = True, cells: list[str | None] | None = None
) -> tuple[Agent, list[dict[str, Any]], list[list[Any]]]:
    """``runs`` runs of one conversation, recorded the way the notebook records them; also
    the whole conversation (encoded) after each run."""
    agent = Agent(
        ScriptedModel([reply(f"{i}: {ANSWER}") for i in range(runs)], model="scripted"),
        system="Be brief.",
    )
    ref: ConversationRef | None = None
    transcripts, after = [], []
    for i in range(runs):
        cell = cells[i] if cells else None
        previous = ref if chained and not shown_in(ref, cell) else None
        rec = TranscriptRecorder(f"question {i}", model="scripted", previous=previous, cell=cell)
        await agent.run(f"question {i}", on_event=rec)
        ref = rec.ref
        transcripts.append(rec.to_dict())
        after.append(encode_messages(agent.messages))
    return agent, transcripts, after


async def test_each_transcript_holds_what_its_run_added(tmp_path: Path) -> None:
    _, transcripts, after = await chat(4)
    first, *rest = (t["conversation"] for t in transcripts)
    assert first["previous"] is None and first["start"] == 0 and first["messages"] == after[0]
    for i, conv in enumerate(rest, 1):
        assert conv["previous"] == transcripts[i - 1]["conversation"]["id"]
        assert conv["start"] == len(after[i - 1])
        assert conv["messages"] == after[i][len(after[i - 1]) :]
    path = notebook(tmp_path / "chat.ipynb", transcripts)
    for cell in range(4):
        rebuilt = Agent.from_notebook(path, cell=cell, model=ScriptedModel([]))
        assert encode_messages(rebuilt.messages) == after[cell]
        assert rebuilt.system == "Be brief."


async def test_forty_runs_store_the_conversation_about_once(tmp_path: Path) -> None:
    _, transcripts, after = await chat(40)
    once = len(json.dumps(after[-1]))
    stored = sum(len(json.dumps(t["conversation"])) for t in transcripts)
    assert stored <= 1.3 * once, (stored, once)
    _, full, _ = await chat(40, chained=False)  # what every transcript held before
    assert sum(len(json.dumps(t["conversation"])) for t in full) > 10 * once


async def test_a_notebook_of_whole_conversations_still_loads(tmp_path: Path) -> None:
    _, transcripts, after = await chat(3, chained=False)
    for t in transcripts:  # as nb_tools wrote them before the conversation was chained
        for key in ("id", "previous", "start"):
            del t["conversation"][key]
    path = notebook(tmp_path / "old.ipynb", transcripts)
    for cell in range(3):
        rebuilt = Agent.from_notebook(path, cell=cell, model=ScriptedModel([]))
        assert encode_messages(rebuilt.messages) == after[cell]


async def test_a_deleted_earlier_cell_is_named_not_guessed(tmp_path: Path) -> None:
    _, transcripts, after = await chat(3)
    path = notebook(tmp_path / "gap.ipynb", [transcripts[0], transcripts[2]])
    missing = transcripts[1]["conversation"]["id"]
    with pytest.raises(ValueError, match=f"cell 1 cannot be rebuilt.*{missing}"):
        Agent.from_notebook(path, cell=1, model=ScriptedModel([]))
    first = Agent.from_notebook(path, cell=0, model=ScriptedModel([]))
    assert encode_messages(first.messages) == after[0]


async def test_a_run_in_a_cell_of_its_own_chain_stores_the_whole_conversation() -> None:
    # cells a, b, then a again: the new transcript replaces run 1's, which run 2 refers to
    _, transcripts, after = await chat(3, cells=["a", "b", "a"])
    conv = transcripts[2]["conversation"]
    assert conv["previous"] is None and conv["messages"] == after[2]
    assert transcripts[1]["conversation"]["previous"] == transcripts[0]["conversation"]["id"]


async def test_a_changed_conversation_is_not_continued() -> None:
    agent = Agent(ScriptedModel([reply("one"), reply("two")], model="scripted"))
    rec = TranscriptRecorder("a")
    await agent.run("a", on_event=rec)
    agent.reset()  # a new conversation (--new): nothing of the last run's is in it
    second = TranscriptRecorder("b", previous=rec.ref)
    await agent.run("b", on_event=second)
    conv = second.to_dict()["conversation"]
    assert conv["previous"] is None and conv["messages"] == encode_messages(agent.messages)


async def test_saving_some_runs_makes_them_rebuildable(tmp_path: Path) -> None:
    _, transcripts, after = await chat(3)
    kept = self_contained([transcripts[2]], transcripts)
    conv = kept[0]["conversation"]
    assert conv["previous"] is None and conv["start"] == 0 and conv["messages"] == after[2]
    assert conv["id"] == transcripts[2]["conversation"]["id"]
    assert transcripts[2]["conversation"]["start"] > 0  # the input is left as it was
    path = notebook(tmp_path / "kept.ipynb", kept)
    rebuilt = Agent.from_notebook(path, model=ScriptedModel([]))
    assert encode_messages(rebuilt.messages) == after[2]
