"""Write a conversation as a new notebook: per run, the ``%%agent`` cell that asked it and
its transcript output, so the file reads well anywhere and can be re-run."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from nb_tools.jupyter._session import get_session
from nb_tools.transcript import self_contained, transcript_bundle, usage_line


def transcript_notebook(runs: Iterable[Mapping[str, Any]], *, title: str | None = None) -> Any:
    """The ``nbformat`` notebook for ``runs`` (transcript dicts)."""
    import nbformat
    from nbformat import v4

    cells = []
    runs = list(runs)
    heading = title or "nb_tools conversation"
    cells.append(v4.new_markdown_cell(f"# {heading}\n\n{len(runs)} run(s)."))
    for n, run in enumerate(runs, 1):
        prompt = next(
            (i.get("text", "") for i in run.get("items", []) if i.get("kind") == "user"), ""
        )
        cells.append(
            v4.new_markdown_cell(
                f"## Run {n}\n\n{run.get('model') or ''} · {run.get('stop_reason') or ''} · "
                f"{usage_line(run.get('usage', {}), run.get('turns'))}"
            )
        )
        cell = v4.new_code_cell(f"%%agent\n{prompt}")
        cell.outputs = [v4.new_output("display_data", data=transcript_bundle(run))]
        cells.append(cell)
    nb = v4.new_notebook(cells=cells)
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    nbformat.validate(nb)
    return nb


def save_transcript(
    path: str | Path, *, runs: Iterable[Mapping[str, Any]] | None = None, title: str | None = None
) -> Path:
    """Write ``runs`` (default: every run of this session) to ``path`` as a new ``.ipynb``;
    returns the path. An existing file is not overwritten."""
    import nbformat

    target = Path(path)
    if target.suffix != ".ipynb":
        raise ValueError(f"save_transcript: {target} must end in .ipynb")
    if target.exists():
        raise FileExistsError(
            f"save_transcript: {target} already exists; choose a new name or delete it first"
        )
    every = get_session().transcripts
    chosen = list(runs) if runs is not None else every
    if not chosen:
        raise ValueError("save_transcript: there are no runs to save yet; run %%agent first")
    chosen = self_contained(chosen, every)  # a run whose earlier runs are left out
    nbformat.write(transcript_notebook(chosen, title=title), str(target))
    return target
