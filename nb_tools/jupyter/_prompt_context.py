"""What ``%%agent`` adds to a request: where the agent is, and what ``@`` mentions name.

``@name`` (a variable, or a dotted path into one) adds the safe ``describe`` summary of it
(:func:`~nb_tools.jupyter._kernel_tools.describe_value`: no user code runs, secrets
redacted); ``@cell`` adds the nearest code cell above the agent cell (the one you usually
mean when you run an agent cell under your code), ``@cell:ID`` the cell with that id, each with its
outputs, from the open notebook (the extension's snapshot). Mentions inside backticks are
text, not mentions; an e-mail address is not one either. A name that is not found is left
as written and said once in the transcript.

Where: the open notebook's path (stable, so it goes in the system prompt and the cached
prefix stays the same from run to run) and, per run, the agent cell's position and the
cell the cursor was in, which go before the request in the prompt.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["PromptContext", "mentions", "notebook_context", "prompt_context", "running_cell_id"]

_MENTION = re.compile(
    r"(?<![\w@.])@(cell(?::[A-Za-z0-9_-]+)?(?![\w.])|[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)"
)
_CODE = re.compile(r"```.*?(?:```|\Z)|`[^`\n]*`", re.S)
MAX_MENTIONS = 8
"""At most this many distinct mentions are expanded (each summary is already capped)."""


@dataclass(frozen=True, kw_only=True)
class PromptContext:
    """``text``: what goes before the request ("" for nothing); ``added``: what it holds,
    named for the transcript; ``unknown``: mentions that named nothing."""

    text: str = ""
    added: tuple[str, ...] = ()
    unknown: tuple[str, ...] = ()

    def note(self) -> str:
        parts = []
        if self.added:
            parts.append("added to the request: " + ", ".join(self.added))
        if self.unknown:
            names = ", ".join("@" + u for u in self.unknown)
            parts.append(f"{names} left as written: no such variable or cell")
        return "; ".join(parts)


def mentions(prompt: str) -> list[str]:
    """The distinct ``@`` mentions of ``prompt`` outside code, in order."""
    text = _CODE.sub(lambda m: " " * len(m.group()), prompt)
    seen: dict[str, None] = {}
    for m in _MENTION.finditer(text):
        seen.setdefault(m.group(1), None)
    return list(seen)


def running_cell_id(shell: Any) -> str | None:
    """The id of the cell being run, from the execute request (JupyterLab and Notebook 7
    send ``metadata.cellId``); ``None`` elsewhere."""
    kernel = getattr(shell, "kernel", None)
    try:
        parent = kernel.get_parent() if kernel is not None else None
    except Exception:
        return None
    meta = parent.get("metadata") if isinstance(parent, Mapping) else None
    cell_id = meta.get("cellId") if isinstance(meta, Mapping) else None
    return cell_id if isinstance(cell_id, str) and cell_id else None


def notebook_context(path: str | None) -> str:
    """The system prompt's context block: the notebook the agent works in."""
    if not path:
        return ""
    return (
        "# Where you are\n\nYou work inside the Jupyter notebook "
        f"{path}: requests come from one of its cells, and your tools run in its kernel."
    )


def _cells(snapshot: Mapping[str, Any] | None) -> list[Mapping[str, Any]]:
    cells = snapshot.get("cells") if isinstance(snapshot, Mapping) else None
    return [c for c in cells if isinstance(c, Mapping)] if isinstance(cells, list) else []


def _where(cells: Sequence[Mapping[str, Any]], agent_cell: str | None, active: Any) -> str:
    ids = [c.get("id") for c in cells]
    parts = []
    if agent_cell in ids:
        parts.append(
            f"This request is cell {ids.index(agent_cell) + 1} of {len(cells)} (id {agent_cell})."
        )
    if isinstance(active, str) and active in ids and active != agent_cell:
        parts.append(f"The cursor is in cell {ids.index(active) + 1} (id {active}).")
    return " ".join(parts)


def prompt_context(
    prompt: str,
    *,
    shell: Any,
    snapshot: Mapping[str, Any] | None = None,
    agent_cell: str | None = None,
) -> PromptContext:
    """What to add before ``prompt``: the cell position, then each mention's content."""
    from nb_tools.jupyter._kernel_tools import DescribeTool, PathError, resolve_path
    from nb_tools.jupyter._live_notebook import cell_text
    from nb_tools.sandbox import redact_secret_text

    cells = _cells(snapshot)
    blocks: list[str] = []
    added: list[str] = []
    unknown: list[str] = []
    where = _where(cells, agent_cell, snapshot.get("active_cell") if snapshot else None)
    if where:
        blocks.append(f"<context>{where}</context>")
        added.append("the cell's position")
    ids = [c.get("id") for c in cells]
    for name in mentions(prompt)[:MAX_MENTIONS]:
        if name.startswith("cell"):
            wanted = name.partition(":")[2] or _above(cells, agent_cell)
            if wanted is None or wanted not in ids:
                unknown.append(name)
                continue
            i = ids.index(wanted)
            # as notebook_read shows it: the environment's secret values hidden (outputs)
            text = redact_secret_text(cell_text(cells[i], i))[0]
            blocks.append(f'<mention name="@{name}">\n{text}\n</mention>')
            added.append(f"@{name}")
            continue
        try:
            resolve_path(name, shell.user_ns)
        except PathError:
            unknown.append(name)
            continue
        # describe's own call: the same reading (no user code) and the same redaction
        summary = DescribeTool(shell).call(json.dumps({"name": name})).content
        blocks.append(f'<mention name="@{name}">\n{summary}\n</mention>')
        added.append(f"@{name}")
    return PromptContext(text="\n\n".join(blocks), added=tuple(added), unknown=tuple(unknown))


def _above(cells: Sequence[Mapping[str, Any]], agent_cell: str | None) -> str | None:
    """The nearest code cell above the agent cell."""
    ids = [c.get("id") for c in cells]
    if agent_cell not in ids:
        return None
    for c in reversed(cells[: ids.index(agent_cell)]):
        if c.get("cell_type", "code") == "code":
            return c.get("id")
    return None
