"""The quickstart notebook, unchanged, against an OpenAI-compatible server: the same
script plays the model, served over HTTP by FakeOpenAIServer (Chat Completions), through
``OpenAIProvider`` and the real openai SDK, with approvals, diffs and transcripts."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from nb_tools.testing import ScriptedModel
from nb_tools.testing.openai_server import FakeOpenAIServer

pytestmark = pytest.mark.kernel

ROOT = Path(__file__).resolve().parents[2]
QUICKSTART = ROOT / "notebooks" / "quickstart.ipynb"
TRANSCRIPT = "application/vnd.nbtools.transcript+json"


def quickstart_script(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """The replies the notebook's own scripted model would give (its cell, run with
    ``use_model`` captured)."""
    import nbformat

    import nb_tools.jupyter

    nb = nbformat.read(QUICKSTART, as_version=4)
    (cell,) = [c for c in nb.cells if "ScriptedModel(" in c.source]
    captured: list[Any] = []
    monkeypatch.setattr(nb_tools.jupyter, "use_model", captured.append)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("NB_TOOLS_MODEL", raising=False)
    exec(compile(cell.source, "quickstart", "exec"), {})
    (model,) = captured
    assert isinstance(model, ScriptedModel)
    return list(model._script)


def test_quickstart_runs_on_an_openai_compatible_server(monkeypatch: pytest.MonkeyPatch) -> None:
    import nbformat
    from nbclient import NotebookClient

    script = quickstart_script(monkeypatch)
    with FakeOpenAIServer(script) as server:
        monkeypatch.setenv("NB_TOOLS_APPROVAL", "auto")
        monkeypatch.setenv("NB_TOOLS_MODEL", "openai-compatible:local-model")
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
        monkeypatch.setenv(
            "PYTHONPATH",
            os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p),
        )
        nb = nbformat.read(QUICKSTART, as_version=4)
        NotebookClient(
            nb,
            timeout=120,
            kernel_name="python3",
            resources={"metadata": {"path": str(QUICKSTART.parent)}},
        ).execute()
        served = len(server.requests)
    errors = [
        o for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"
    ]
    assert errors == []
    transcripts = [
        o.data[TRANSCRIPT]
        for c in nb.cells
        if c.cell_type == "code"
        for o in c.outputs
        if o.output_type == "display_data" and TRANSCRIPT in o.data
    ]
    assert len(transcripts) == 5
    assert {t["provider"] for t in transcripts} == {"openai-compatible"}
    assert {t["model"] for t in transcripts} == {"local-model"}
    assert all(t["stop_reason"] == "end_turn" for t in transcripts)
    tools = [i for t in transcripts for i in t["items"] if i["kind"] == "tool"]
    assert [i["name"] for i in tools] == ["get_weather", "book_table", "write_note", "crunch"]
    assert all(i["status"] == "ok" for i in tools)
    (note,) = [i for i in tools if i["name"] == "write_note"]
    assert note["diffs"] and "+# Dinner" in note["diffs"][0]["diff"]
    (booking,) = [i for i in tools if i["name"] == "book_table"]
    assert booking["approval"]["approved"] is True
    assert served == len(script)  # every reply went over HTTP
