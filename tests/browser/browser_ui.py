"""What the browser tests do in JupyterLab and Notebook 7 (both expose ``window.jupyterapp``).

Text look-ups are scoped to ``.jp-Cell-outputArea``: the editor holds the same text.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import nbformat

ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts"

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
    page.wait_for_function(KERNEL_IDLE, timeout=timeout)


def save(page: Any) -> None:
    command(page, "docmanager:save")


def shot(page: Any, name: str, locator: Any = None) -> Path:
    """A screenshot in tests/artifacts/ (of ``locator`` if given, else the page)."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    (locator or page).screenshot(path=str(path))
    return path


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
