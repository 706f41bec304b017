"""A unified diff as coloured HTML, using JupyterLab's CSS variables (with fallbacks) so it
reads in light and dark themes and outside JupyterLab."""

from __future__ import annotations

from nb_tools.transcript._visible import visible_html

# Text in the theme's own colour on a tint of green or red: 4.5:1 or more in light and
# dark themes (coloured text on a coloured background was 3:1 in the dark theme).
_ADD = (
    "color:var(--jp-content-font-color1,#1f2328);background:#e6ffec;"
    "background:color-mix(in srgb,var(--jp-success-color1,#1a7f37) 22%,transparent)"
)
_DEL = (
    "color:var(--jp-content-font-color1,#1f2328);background:#ffebe9;"
    "background:color-mix(in srgb,var(--jp-error-color1,#cf222e) 22%,transparent)"
)
_HUNK = "color:var(--jp-content-font-color2,#57606a);font-style:italic"
_HEAD = "color:var(--jp-content-font-color2,#57606a);font-weight:bold"
_CTX = "color:var(--jp-content-font-color1,#1f2328)"
PRE_STYLE = (
    "margin:2px 0;padding:4px 6px;overflow-x:auto;white-space:pre;"
    "font-family:var(--jp-code-font-family,monospace);font-size:var(--jp-code-font-size,12px);"
    "background:var(--jp-layout-color2,#f6f8fa);border-radius:3px"
)
MAX_DIFF_LINES = 400
# Long lines wrap (in a word too): what a card asks about never scrolls out of view.
_WRAP = "white-space:pre-wrap;overflow-wrap:anywhere"


def _style(line: str) -> str:
    if line.startswith(("+++", "---")):
        return _HEAD
    if line.startswith("+"):
        return _ADD
    if line.startswith("-"):
        return _DEL
    if line.startswith("@@"):
        return _HUNK
    return _CTX


def diff_html(diff: str, *, max_lines: int = MAX_DIFF_LINES, field: bool = False) -> str:
    """``diff`` (unified format) as a ``<pre>`` with one coloured ``<span>`` per line,
    hidden characters (bidi controls, zero-width, ...) shown as markers. ``field``: marked
    for the golden tests (``data-nbt="diff"``, compared line by line)."""
    lines = diff.splitlines()
    shown = lines[:max_lines]
    body = "".join(
        f'<span style="display:block;{_WRAP};{_style(line)}">{visible_html(line) or " "}</span>'
        for line in shown
    )
    if len(lines) > max_lines:
        body += f'<span style="display:block;{_HEAD}">… {len(lines) - max_lines} more lines</span>'
    mark = ' data-nbt="diff" data-nbt-lines=""' if field else ""
    return f'<pre class="nbtools-diff"{mark} style="{PRE_STYLE}">{body}</pre>'
