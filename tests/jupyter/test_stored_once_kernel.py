"""In a real kernel, each %%agent cell's transcript holds what its run added; the notebook
rebuilds every cell's conversation, and a cell run again does not cut the chain."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest
from kernel_helpers import TRANSCRIPT, Kernel

from nb_tools.agent import Agent
from nb_tools.testing import ScriptedModel, reply

pytestmark = pytest.mark.kernel


def transcript(k: Kernel, prompt: str, cell: str) -> dict:
    ex = k.ok(f"%%agent\n{prompt}", cell=cell)
    return ex.displays[-1]["data"][TRANSCRIPT]


def test_cells_chain_and_a_rerun_cell_stores_the_whole_conversation(
    kernel: Kernel, server, tmp_path: Path
) -> None:
    kernel.ok("%load_ext nb_tools")
    for i in range(4):
        server.push(reply(f"answer {i} " + "word " * 200))
    a = transcript(kernel, "first", "cell-a")
    b = transcript(kernel, "second", "cell-b")
    c = transcript(kernel, "third", "cell-c")
    assert a["conversation"]["previous"] is None
    assert b["conversation"]["previous"] == a["conversation"]["id"]
    assert c["conversation"]["previous"] == b["conversation"]["id"]
    assert [len(t["conversation"]["messages"]) for t in (a, b, c)] == [2, 2, 2]
    assert c["conversation"]["start"] == 4
    # the kernel keeps the runs' additions only, not a copy of the conversation per run
    kept = kernel.ok(
        "import json, nb_tools.jupyter as j\n"
        "print(json.dumps([len(t['conversation']['messages']) for t in j.transcripts()]))"
    )
    assert json.loads(kept.stdout) == [2, 2, 2]

    def saved(*transcripts: dict) -> Path:
        nb = nbformat.v4.new_notebook()
        nb.cells = [
            nbformat.v4.new_code_cell(
                "%%agent", outputs=[nbformat.v4.new_output("display_data", data={TRANSCRIPT: t})]
            )
            for t in transcripts
        ]
        path = tmp_path / f"nb{len(transcripts)}.ipynb"
        nbformat.write(nb, path)
        return path

    whole = Agent.from_notebook(saved(a, b, c), model=ScriptedModel([]))
    assert [m.role for m in whole.messages] == ["user", "assistant"] * 3
    assert whole.messages[-2].content[0].text == "third"

    # cell b run again: its new transcript replaces the one cell c continues, so it must
    # not refer to cell c's run (which refers to the replaced one): it stores everything
    b2 = transcript(kernel, "second, again", "cell-b")
    assert b2["conversation"]["previous"] is None
    assert len(b2["conversation"]["messages"]) == 8
    rebuilt = Agent.from_notebook(saved(a, b2, c), cell=1, model=ScriptedModel([]))
    assert rebuilt.messages[-2].content[0].text == "second, again"
