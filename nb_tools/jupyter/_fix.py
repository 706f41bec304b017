"""Fix this error: the last failed cell, and the request ``%%agent --fix`` makes of it.

With nb_tools loaded, each cell that fails is remembered (its id, source and traceback:
IPython's ``post_run_cell``), and a one-line output is added under the error: the
extension shows it as a **Fix with agent** button (a cell below runs
``%%agent --fix --cell ID``); elsewhere its HTML says which magic to run.
``NB_TOOLS_FIX_ACTION=0`` leaves that line out.

The request carries the cell's source, the traceback and ``describe``'s safe summary of
the names the cell uses (none of your code runs; secrets are hidden), and asks for one
``notebook_edit`` replace of that cell with ``run=true``: the card shows the diff, Approve
applies and runs it, one ``z`` undoes it. Without the extension the open notebook cannot be
edited, so the request asks for the fixed cell in a code block instead, and the fix is put
in a new cell below when the run ends (said in the request and in the cell).
"""

from __future__ import annotations

import ast
import json
import os
import re
import traceback
import types
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = [
    "FIX_MIME",
    "FailedCell",
    "fix_prompt",
    "fixed_source",
    "last_failure",
    "prepare_fix",
    "watch_errors",
]

FIX_MIME = "application/vnd.nbtools.fix+json"
MAX_TRACEBACK = 6_000
MAX_NAMES = 6
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_NOT_FIXABLE: tuple[type[BaseException], ...] = (KeyboardInterrupt, SystemExit)
_CODE_BLOCK = re.compile(r"```(?:python|py)?[ \t]*\n(.*?)```", re.S)


@dataclass(frozen=True, kw_only=True)
class FailedCell:
    cell_id: str | None
    source: str
    error: str  # "ZeroDivisionError: division by zero"
    traceback: str
    execution_count: int | None = None


_failures: list[FailedCell] = []


def last_failure(cell_id: str | None = None) -> FailedCell | None:
    """The latest failed cell (with ``cell_id``: that cell's latest failure)."""
    for failure in reversed(_failures):
        if cell_id is None or failure.cell_id == cell_id:
            return failure
    return None


def _format(exc: BaseException) -> str:
    try:
        text = "".join(traceback.format_exception(exc))
    except Exception:  # an exception whose __str__ fails
        text = f"{type(exc).__name__} (its message could not be read)"
    text = _ANSI.sub("", text)
    if len(text) > MAX_TRACEBACK:
        text = "… [start cut]\n" + text[-MAX_TRACEBACK:]
    return text


def _on_post_run(result: Any) -> None:
    exc = getattr(result, "error_in_exec", None) or getattr(result, "error_before_exec", None)
    info = getattr(result, "info", None)
    source = str(getattr(info, "raw_cell", "") or "")
    if exc is None or _is_agent_source(source) or isinstance(exc, _NOT_FIXABLE):
        return
    try:
        message = f"{type(exc).__name__}: {exc}"
    except Exception:
        message = type(exc).__name__
    failure = FailedCell(
        cell_id=getattr(info, "cell_id", None) or None,
        source=source,
        error=message,
        traceback=_format(exc),
        execution_count=getattr(result, "execution_count", None),
    )
    del _failures[:-15]
    _failures.append(failure)
    if os.environ.get("NB_TOOLS_FIX_ACTION", "1").strip() not in ("0", "false", "no"):
        _show_action(failure)


def _is_agent_source(source: str) -> bool:
    return bool(re.search(r"^\s*%%?agent\b|run_agent\(", source, re.M))


def _show_action(failure: FailedCell) -> None:
    from IPython.display import display

    magic = "%%agent --fix" + (f" --cell {failure.cell_id}" if failure.cell_id else "")
    html = (
        '<div class="nbtools-fix-hint" style="font-size:12px;color:var(--jp-content-font-'
        'color2,#57606a)">nb_tools: run <code>' + magic + "</code> in a cell below to have "
        "the agent fix this error</div>"
    )
    data = {
        FIX_MIME: {"version": 1, "cell_id": failure.cell_id, "error": failure.error},
        "text/html": html,
        "text/plain": f"nb_tools: run {magic} in a cell below to have the agent fix this error",
    }
    display(data, raw=True)


def watch_errors(shell: Any, on: bool = True) -> None:
    """Start (or stop) remembering failed cells (``%load_ext`` / ``%unload_ext``). A
    magic's usage error is the person's typo, not a bug to fix: left out."""
    global _NOT_FIXABLE
    from IPython.core.error import UsageError

    _NOT_FIXABLE = (KeyboardInterrupt, SystemExit, UsageError)
    events = getattr(shell, "events", None)
    if events is None:
        return
    callbacks = events.callbacks.get("post_run_cell", [])
    if on and _on_post_run not in callbacks:
        events.register("post_run_cell", _on_post_run)
    elif not on and _on_post_run in callbacks:
        events.unregister("post_run_cell", _on_post_run)


def used_names(source: str, namespace: Mapping[str, Any]) -> list[str]:
    """The names the cell reads that hold values in the namespace, in order, no modules
    or callables (their source is not the problem's data)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    seen: dict[str, None] = {}
    loads = [n for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)]
    for node in sorted(loads, key=lambda n: (n.lineno, n.col_offset)):
        if node.id in namespace:
            value = namespace[node.id]
            # by the type's identity: reading ``__name__`` of a class can run its metaclass
            if not (callable(value) or issubclass(type(value), types.ModuleType)):
                seen.setdefault(node.id, None)
    return list(seen)[:MAX_NAMES]


def fix_prompt(
    failure: FailedCell,
    *,
    shell: Any,
    live: bool,
    hint: str = "",
    cells: Sequence[Mapping[str, Any]] = (),
) -> str:
    """The request ``%%agent --fix`` sends (see the module doc)."""
    from nb_tools.jupyter._kernel_tools import DescribeTool
    from nb_tools.sandbox import redact_secret_text

    cell_id = failure.cell_id or _id_by_source(cells, failure.source)
    where = f"cell {cell_id}" if cell_id else "the cell below (its id is unknown)"
    # hidden as in an @cell mention: a key typed in the cell, a URL's password in the error
    source = redact_secret_text(failure.source.rstrip())[0]
    tb = redact_secret_text(failure.traceback.rstrip())[0]
    parts = [
        f"Fix the error in {where} of this notebook. Its source:",
        f"```python\n{source}\n```",
        f"It failed with:\n```\n{tb}\n```",
    ]
    names = used_names(failure.source, shell.user_ns)
    for name in names:
        summary = DescribeTool(shell).call(json.dumps({"name": name})).content
        parts.append(f'<variable name="{name}">\n{summary}\n</variable>')
    if live and cell_id:
        parts.append(
            f"Propose the fix as one notebook_edit call: edit_mode=replace of cell {cell_id} "
            "with the whole corrected source and run=true, so the user sees the diff, "
            "approves it, and the cell runs again. Change only what the fix needs; read "
            "other cells with notebook_read if you need them."
        )
    else:
        parts.append(
            "The open notebook cannot be edited from here (the nb_tools extension is not "
            "connected), so do not edit it: reply with the whole corrected cell in one "
            "```python code block; it will be put in a new cell below for the user to run."
        )
    if hint.strip():
        parts.append(f"The user adds: {hint.strip()}")
    return "\n\n".join(parts)


def _id_by_source(cells: Sequence[Mapping[str, Any]], source: str) -> str | None:
    for c in reversed(cells):
        src = c.get("source")
        text = "".join(src) if isinstance(src, list) else str(src or "")
        if text.strip() == source.strip():
            return str(c.get("id")) if c.get("id") else None
    return None


def fixed_source(text: str) -> str | None:
    """The last ``python`` code block of the model's answer (the disk path's fix)."""
    blocks = _CODE_BLOCK.findall(text or "")
    return blocks[-1].rstrip() + "\n" if blocks else None


async def prepare_fix(hint: str, cell_id: str | None) -> tuple[str, Any]:
    """``%%agent --fix``: the request, and what to do with the run's result (without the
    extension: put the fixed cell below). Raises ``UsageError`` when nothing failed."""
    from IPython import get_ipython
    from IPython.core.error import UsageError

    from nb_tools.jupyter._live_notebook import live

    failure = last_failure(cell_id)
    if failure is None:
        which = f"cell {cell_id}" if cell_id else "no cell"
        raise UsageError(
            f"%%agent --fix: {which} has failed since nb_tools was loaded; run the failing "
            "cell again, then --fix"
        )
    shell = get_ipython()
    nb = live()
    connected = await nb.wait_for_frontend()
    if connected:  # the card's diff of the fix needs the document as it is now
        from nb_tools.jupyter._live_notebook import FrontendError

        try:
            nb.take_snapshot((await nb.request("snapshot")).get("snapshot"))
        except FrontendError:
            connected = False
    cells = (nb.snapshot or {}).get("cells") or []
    prompt = fix_prompt(failure, shell=shell, live=connected, hint=hint, cells=cells)
    if connected:
        return prompt, None

    def put_below(result: Any) -> None:
        code = fixed_source(getattr(result, "text", "") or "")
        if code is None:
            print("nb_tools: the answer has no code block to put in a cell")
            return
        shell.set_next_input(code, replace=False)
        print(
            "nb_tools: the extension is not connected, so the fix is in a new cell below "
            "(run it to apply it)"
        )

    return prompt, put_below
