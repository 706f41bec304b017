"""What the browser tests do in JupyterLab and Notebook 7 (both expose ``window.jupyterapp``).

Text look-ups are scoped to ``.jp-Cell-outputArea``: the editor holds the same text.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import nbformat

ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts"
DOCS_IMAGES = Path(__file__).resolve().parents[2] / "docs" / "images"

TRANSCRIPT_MIME = "application/vnd.nbtools.transcript+json"
# Only our renderer makes this element; the text/html fallback uses other classes.
TRANSCRIPT = f".jp-Cell-outputArea .jp-nbtools-Transcript[data-mime-type='{TRANSCRIPT_MIME}']"
OUTPUTS = ".jp-Cell-outputArea"
APP_READY = "() => !!(window.jupyterapp && window.jupyterapp.shell.currentWidget)"
KERNEL_IDLE = """() => {
  const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;
  const k = w && w.sessionContext && w.sessionContext.session && w.sessionContext.session.kernel;
  return !!k && k.status === 'idle' && k.connectionStatus === 'connected';
}"""
NO_KERNEL = """() => {
  const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;
  return !!w && !!w.sessionContext && w.sessionContext.hasNoKernel && !w.sessionContext.session;
}"""
NO_CELL_RUNNING = """() => ![...document.querySelectorAll('.jp-Notebook .jp-InputPrompt')]
  .some(p => p.textContent.includes('[*]'))"""
# Notebook 7.6.5 with JupyterLab 4.6.6 logs this on every page, extensions or not.
KNOWN_NOTEBOOK7_ERROR = "Cannot read properties of undefined (reading 'schema')"
SLOW = 90_000  # ms: kernel start and first run on a busy 2-core CI machine


def open_notebook(page: Any, server: Any, path: str, *, kernel: bool = True) -> None:
    """Open ``path`` and wait for its cells (and its kernel, unless ``kernel=False``: then
    choose "No Kernel" in the kernel dialog that a notebook with an unknown kernel shows)."""
    page.goto(server.page_url(path))
    page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=SLOW)
    page.wait_for_function(APP_READY, timeout=SLOW)
    if kernel:
        page.wait_for_function(KERNEL_IDLE, timeout=SLOW)
    else:
        page.locator(".jp-Dialog button", has_text="No Kernel").click(timeout=SLOW)
        page.wait_for_function(NO_KERNEL, timeout=SLOW)


def command(page: Any, name: str, args: dict[str, Any] | None = None) -> None:
    """Run a JupyterLab command and wait for it."""
    page.evaluate(
        "async ([n, a]) => { await window.jupyterapp.commands.execute(n, a); }", [name, args or {}]
    )


def run_all(page: Any) -> None:
    """Start Run All without waiting: it resolves only when every cell is done, and a cell
    may be waiting for an approval click."""
    page.evaluate("() => { window.jupyterapp.commands.execute('notebook:run-all-cells'); }")


def wait_idle(page: Any, timeout: int = SLOW) -> None:
    """Wait until the kernel is idle and no cell is running or queued: the status alone
    also blinks idle between the comm messages of a cell that is still running."""
    page.wait_for_function(KERNEL_IDLE, timeout=timeout)
    page.wait_for_function(NO_CELL_RUNNING, timeout=timeout)


def save(page: Any) -> None:
    command(page, "docmanager:save")


def shot(page: Any, name: str, locator: Any = None) -> Path:
    """A screenshot in tests/artifacts/ (of ``locator`` if given, else the page)."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    (locator or page).screenshot(path=str(path))
    return path


def docs_shot(locator: Any, name: str) -> None:
    """A screenshot the docs show (docs/images/NAME.png) of ``locator``: written when
    missing, or on request (NB_TOOLS_UPDATE_SCREENSHOT=1), so ordinary runs leave the
    repository clean."""
    import os

    target = DOCS_IMAGES / f"{name}.png"
    if target.exists() and os.environ.get("NB_TOOLS_UPDATE_SCREENSHOT") != "1":
        return
    DOCS_IMAGES.mkdir(parents=True, exist_ok=True)
    locator.screenshot(path=str(target))


def transcript_of(path: Path) -> list[dict[str, Any]]:
    """The transcript bundles saved in a notebook file, in cell order."""
    nb = nbformat.read(path, as_version=4)
    return [
        out["data"][TRANSCRIPT_MIME]
        for cell in nb.cells
        if cell.cell_type == "code"
        for out in cell.get("outputs", [])
        if TRANSCRIPT_MIME in out.get("data", {})
    ]


def widget_views_in(path: Path) -> list[str]:
    """Widget view outputs left in a saved notebook (there should be none after a run)."""
    nb = nbformat.read(path, as_version=4)
    return [
        json.dumps(out["data"])[:120]
        for cell in nb.cells
        if cell.cell_type == "code"
        for out in cell.get("outputs", [])
        if "application/vnd.jupyter.widget-view+json" in out.get("data", {})
    ]


def cell(page: Any, index: int) -> Any:
    """The ``index``-th cell of the open notebook."""
    return page.locator(".jp-Notebook .jp-Cell").nth(index)


def enabled_button(scope: Any, label: str, *, exact: bool = False) -> Any:
    """A live widget button in the outputs (enabled: a decided card disables its buttons);
    ``exact``: its whole text is ``label`` ("Stop", not "Stop after this turn")."""
    text: Any = re.compile(rf"^\s*{re.escape(label)}\s*$") if exact else label
    return scope.locator(f"{OUTPUTS} button:enabled", has_text=text)


def copy_notebook(server: Any, source: str, name: str, *, kernel: str | None = None) -> str:
    """Copy ``source`` to ``name`` in the server's folder; ``kernel`` replaces the
    kernelspec (an absent one makes the notebook open without a kernel: the language goes
    too, else JupyterLab starts the one kernel of that language)."""
    nb = nbformat.read(server.root / source, as_version=4)
    if kernel is not None:
        nb.metadata["kernelspec"] = {"name": kernel, "display_name": kernel, "language": kernel}
        nb.metadata.pop("language_info", None)
    nbformat.write(nb, server.root / name)
    return name


def find_cell(page: Any, snippet: str) -> int:
    """Index of the first cell whose source contains ``snippet`` (fails if none does)."""
    index = page.evaluate(
        """s => window.jupyterapp.shell.currentWidget.content.widgets.findIndex(
             c => c.model.sharedModel.getSource().includes(s))""",
        snippet,
    )
    if index < 0:
        raise AssertionError(f"no cell of the open notebook contains {snippet!r}")
    return int(index)


def run_cells(page: Any, *indices: int) -> None:
    """Queue these cells for execution, in order, without waiting for them."""
    page.evaluate(
        """ix => { const nb = window.jupyterapp.shell.currentWidget.content;
                  for (const i of ix) {
                    nb.activeCellIndex = i; nb.deselectAll();
                    window.jupyterapp.commands.execute('notebook:run-cell');
                  } }""",
        list(indices),
    )
