"""nb_tools.transcript sits between the agent and Jupyter: it imports nothing of Jupyter, and
nothing below it (model, tool, sandbox, builtin, agent) imports it."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "nb_tools"
JUPYTER = ("IPython", "ipywidgets", "ipykernel", "jupyter_client", "nbformat", "nb_tools.jupyter")
BELOW = ("model", "tool", "sandbox", "builtin", "agent")


def imported(path: Path) -> set[str]:
    """Every module a file imports, at the top or inside a function."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module)
    return names


def under(name: str, prefixes: tuple[str, ...]) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


def test_the_transcript_imports_nothing_of_jupyter() -> None:
    files = sorted((PACKAGE / "transcript").glob("*.py"))
    assert len(files) >= 10
    found = {f.name: sorted(n for n in imported(f) if under(n, JUPYTER)) for f in files}
    assert {k: v for k, v in found.items() if v} == {}


def test_the_layers_below_do_not_import_the_transcript() -> None:
    found = {}
    for layer in BELOW:
        for f in sorted((PACKAGE / layer).rglob("*.py")):
            bad = sorted(n for n in imported(f) if under(n, ("nb_tools.transcript",)))
            if bad:
                found[str(f.relative_to(PACKAGE))] = bad
    assert found == {}


def test_rendering_a_transcript_loads_no_jupyter_module() -> None:
    code = (
        "import sys\n"
        "from nb_tools.transcript._html import transcript_bundle\n"
        "from nb_tools.transcript._recorder import TranscriptRecorder\n"
        "b = transcript_bundle(TranscriptRecorder().to_dict())\n"
        "assert 'text/html' in b\n"
        f"print(sorted(m for m in sys.modules if m.split('.')[0] in {JUPYTER!r} "
        "or m.startswith('nb_tools.jupyter')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
