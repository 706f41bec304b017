"""Every code sample on the documentation site runs: ``python`` blocks as one script per
page (top-level ``await`` allowed), ``ipython`` blocks as the cells of a notebook run in a
real kernel, offline (the demo model, or the page's own scripted model)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from samples import ROOT, Sample, pages, samples

RUNNER = r"""
import ast, asyncio, json, sys, traceback
blocks = json.load(open(sys.argv[1]))
namespace = {"__name__": "__main__"}

async def main():
    for block in blocks:
        try:
            code = compile(block["code"], f"{block['page']}:{block['line']}", "exec",
                           flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
            result = eval(code, namespace)
            if asyncio.iscoroutine(result):
                await result
        except BaseException:
            print(f"sample at {block['page']} line {block['line']} failed:", file=sys.stderr)
            traceback.print_exc()
            sys.exit(1)

asyncio.run(main())
"""

KNOWN_LANGS = {"python", "ipython", "bash", "text", "json", "console", "toml", "yaml", ""}


def _by_page(lang: str) -> dict[str, list[Sample]]:
    grouped: dict[str, list[Sample]] = {}
    for page in pages():
        for s in samples(page):
            if s.lang == lang:
                grouped.setdefault(s.page, []).append(s)
    return grouped


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env["NB_TOOLS_APPROVAL"] = "auto"
    for key in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "NB_TOOLS_MODEL"):
        env.pop(key, None)
    return env


def test_every_fence_has_a_known_language() -> None:
    unknown = [
        f"{s.page}:{s.line} ```{s.lang}"
        for page in pages()
        for s in samples(page)
        if s.lang not in KNOWN_LANGS
    ]
    assert unknown == []


def test_json_samples_parse() -> None:
    for blocks in _by_page("json").values():
        for s in blocks:
            if "//" in s.code or "/*" in s.code:  # annotated format descriptions
                continue
            json.loads(s.code)


PYTHON_PAGES = _by_page("python")


@pytest.mark.parametrize("page", sorted(PYTHON_PAGES))
def test_python_samples_run(page: str, tmp_path: Path) -> None:
    blocks = [s.__dict__ for s in PYTHON_PAGES[page]]
    spec = tmp_path / "blocks.json"
    spec.write_text(json.dumps(blocks))
    proc = subprocess.run(
        [sys.executable, "-c", RUNNER, str(spec)],
        cwd=tmp_path,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]


IPYTHON_PAGES = _by_page("ipython")


@pytest.mark.parametrize("page", sorted(IPYTHON_PAGES))
def test_notebook_samples_run(page: str, tmp_path: Path) -> None:
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(s.code.rstrip("\n")) for s in IPYTHON_PAGES[page]]
    old = dict(os.environ)
    os.environ.clear()
    os.environ.update(_env())
    try:
        client = NotebookClient(
            nb, timeout=90, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
        )
        client.execute()
    finally:
        os.environ.clear()
        os.environ.update(old)
    errors = [
        (i, out.get("ename"), out.get("evalue"))
        for i, cell in enumerate(nb.cells)
        for out in cell.get("outputs", [])
        if out.get("output_type") == "error"
    ]
    assert errors == []
