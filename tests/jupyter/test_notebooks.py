"""The shipped notebooks run headless with nbclient, offline, without errors."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

pytestmark = pytest.mark.kernel

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
TRANSCRIPT = "application/vnd.nbtools.transcript+json"
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


@pytest.mark.parametrize(
    "path", [p for p in NOTEBOOKS if ".executed." not in p.name], ids=lambda p: p.name
)
def test_notebook_runs_offline(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import nbformat
    from nbclient import NotebookClient

    monkeypatch.setenv("NB_TOOLS_APPROVAL", "auto")
    # offline: no key and no endpoint, so the notebooks pick their scripted model (the
    # suite's guard sets a dummy key and a blocked endpoint, which would mean "Claude")
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    monkeypatch.setenv(
        "PYTHONPATH", os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
    )
    nb = nbformat.read(path, as_version=4)
    NotebookClient(
        nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}
    ).execute()
    runs = 0
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        assert not [o for o in cell.outputs if o.output_type == "error"], cell.source
        if not cell.source.startswith("%%agent") and "run_agent(" not in cell.source:
            continue
        displays = [o for o in cell.outputs if o.output_type == "display_data"]
        assert displays and TRANSCRIPT in displays[-1].data, cell.source
        assert not [o for o in displays if WIDGET_VIEW in o.data], cell.source
        transcript = displays[-1].data[TRANSCRIPT]
        if path.name == "data_analysis.ipynb":  # the DataFrame and the figure in their cards
            assert len(displays) == 1, [sorted(o.data) for o in displays]
            tools = [i for i in transcript["items"] if i["kind"] == "tool"]
            assert any("<table" in (i.get("display") or {}).get("text/html", "") for i in tools)
            assert any(p["media_type"] == "image/png" for i in tools for p in i["parts"])
        assert transcript["stop_reason"] == "end_turn", transcript
        assert all(i["status"] == "ok" for i in transcript["items"] if i["kind"] == "tool")
        runs += 1
    assert runs >= 1
