"""A magic cannot ``await``, so an ``%%agent`` cell is rewritten before IPython compiles it
into an awaited call of the runner; IPython then runs the cell as an async cell, and it
stays running (processing widget clicks) until the run ends. A top-level ``%agent ...``
line is rewritten the same way, and so are top-level ``%mcp ...`` lines (attaching an MCP
server is async too) and ``%nbtools restore`` (reverting cells of the open notebook needs
the kernel's loop free for the frontend's replies)."""

from __future__ import annotations

import re

_RUNNER = '__import__("nb_tools.jupyter", fromlist=["_"])'
_LINE = re.compile(r"^%(agent|mcp|nbtools restore)(?:\s(.*))?$")
_ASYNC = {
    "agent": "run_line_magic_async",
    "mcp": "run_mcp_magic_async",
    "nbtools restore": "run_restore_async",
}


def agent_cell_transformer(lines: list[str]) -> list[str]:
    """An IPython cleanup transformer (``input_transformers_cleanup``)."""
    if not lines:
        return lines
    first = lines[0].rstrip("\r\n")
    if first == "%%agent" or first.startswith(("%%agent ", "%%agent\t")):
        line = first[len("%%agent") :].strip()
        body = "".join(lines[1:])
        return [f"await {_RUNNER}.run_cell_magic_async({line!r}, {body!r})\n"]
    if not any(_LINE.match(x.rstrip("\r\n")) for x in lines):
        return lines
    out = []
    for x in lines:
        m = _LINE.match(x.rstrip("\r\n"))
        if m is None:
            out.append(x)
        else:
            runner = _ASYNC[m.group(1)]
            out.append(f"await {_RUNNER}.{runner}({(m.group(2) or '').strip()!r})\n")
    return out
