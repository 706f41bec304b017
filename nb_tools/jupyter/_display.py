"""The transcript's display forms: the MIME bundle (JSON + HTML + plain text) and the HTML
pieces the live widgets reuse, so a card looks the same during the run and after it."""

from __future__ import annotations

import json
from collections.abc import Mapping
from html import escape
from typing import Any

from nb_tools.agent._transcript import (
    TRANSCRIPT_MIME,
    pretty_arguments,
    transcript_text,
    usage_line,
)
from nb_tools.jupyter._diff import PRE_STYLE, diff_html
from nb_tools.jupyter._display_blocks import messages_item_html

RESULT_PREVIEW_CHARS = 1_500
FULL_RESULT_CHARS = 20_000

_STATUS_COLOUR = {
    "ok": "var(--jp-success-color1,#1a7f37)",
    "error": "var(--jp-error-color1,#cf222e)",
    "denied": "var(--jp-error-color1,#cf222e)",
    "cut_off": "var(--jp-warn-color1,#9a6700)",
    "stopped": "var(--jp-warn-color1,#9a6700)",
    "pending": "var(--jp-info-color1,#0969da)",
    "running": "var(--jp-info-color1,#0969da)",
    "waiting": "var(--jp-warn-color1,#9a6700)",
}
_ERROR_TEXT = "color:var(--jp-error-color1,#cf222e)"
_ROOT = (
    "font-family:var(--jp-ui-font-family,sans-serif);font-size:var(--jp-content-font-size1,13px);"
    "color:var(--jp-content-font-color1,#1f2328);line-height:1.4"
)
_CARD = (
    "border:1px solid var(--jp-border-color2,#d0d7de);"
    "border-left:3px solid var(--jp-brand-color1,#0969da);"
    "border-radius:3px;padding:4px 8px;margin:4px 0"
)
_MUTED = "color:var(--jp-content-font-color2,#57606a)"


def _pre(text: str, style: str = "") -> str:
    return f'<pre style="{PRE_STYLE};white-space:pre-wrap;{style}">{escape(text)}</pre>'


def status_html(status: str) -> str:
    colour = _STATUS_COLOUR.get(status, _STATUS_COLOUR["pending"])
    return f'<span style="color:{colour};font-weight:bold">{escape(status)}</span>'


def result_html(text: str, *, error: bool = False) -> str:
    """A result, truncated to a preview with a "show all" toggle holding the rest."""
    style = _ERROR_TEXT if error else ""
    if len(text) <= RESULT_PREVIEW_CHARS:
        return _pre(text, style)
    full = text[:FULL_RESULT_CHARS]
    more = ""
    if len(text) > FULL_RESULT_CHARS:
        more = f"\n… {len(text) - FULL_RESULT_CHARS} more characters"
    return (
        _pre(text[:RESULT_PREVIEW_CHARS] + " …", style)
        + f'<details><summary style="cursor:pointer;{_MUTED}">show all '
        f"({len(text):,} characters)</summary>{_pre(full + more, style)}</details>"
    )


def parts_html(parts: list[Mapping[str, Any]]) -> str:
    out = []
    for part in parts:
        data = part.get("data")
        media_type = str(part.get("media_type", ""))
        if part.get("kind") == "image" and data and media_type.startswith("image/"):
            out.append(
                f'<img src="data:{escape(media_type)};base64,{data}" '
                'style="max-width:100%;max-height:400px;display:block;margin:2px 0"/>'
            )
        else:
            out.append(
                f'<div style="{_MUTED}">[{escape(str(part.get("kind")))} '
                f"{escape(media_type)}]</div>"
            )
    return "".join(out)


def approval_html(approval: Mapping[str, Any] | None) -> str:
    if not approval:
        return ""
    approved = approval.get("approved")
    who = approval.get("by") or "?"
    who = "you" if who == "user" else who
    verb = "Approved" if approved else "Denied"
    colour = _STATUS_COLOUR["ok" if approved else "denied"]
    message = approval.get("message")
    note = f": {escape(str(message))}" if message else ""
    return f'<div style="color:{colour}">{verb} by {escape(str(who))}{note}</div>'


def tool_item_html(
    item: Mapping[str, Any], *, status: str | None = None, progress: str | None = None
) -> str:
    """One tool call as a card: name, status, duration, arguments (collapsed), approval,
    diff preview, progress, result (truncated, errors in red), images."""
    status = status or str(item.get("status", "pending"))
    duration = item.get("duration")
    took = (
        f' <span style="{_MUTED}">{duration:.2f} s</span>'
        if isinstance(duration, int | float)
        else ""
    )
    pieces = [
        f'<div style="{_CARD}">',
        f"<div><b>{escape(str(item.get('name')))}</b> · {status_html(status)}{took}</div>",
        f'<details><summary style="cursor:pointer;{_MUTED}">arguments</summary>'
        f"{_pre(pretty_arguments(str(item.get('arguments', ''))))}</details>",
        approval_html(item.get("approval")),
    ]
    for diff in item.get("diffs") or []:
        pieces.append(
            f'<div style="{_MUTED}">{escape(str(diff.get("kind")))} '
            f"{escape(str(diff.get('path')))}</div>"
        )
        pieces.append(diff_html(str(diff.get("diff", ""))))
    shown_progress = progress if progress is not None else item.get("progress")
    if shown_progress and item.get("result") is None:
        tail = "\n".join(str(shown_progress).splitlines()[-12:])
        pieces.append(_pre(tail, _MUTED))
    result = item.get("result")
    if result:
        pieces.append(
            result_html(
                str(result), error=item.get("status") in ("error", "denied", "cut_off", "stopped")
            )
        )
    pieces.append(parts_html(item.get("parts") or []))
    pieces.append("</div>")
    return "".join(pieces)


def text_html(text: str, *, who: str = "assistant") -> str:
    if who == "user":
        return (
            f'<div style="margin:4px 0"><b>You:</b> '
            f'<span style="white-space:pre-wrap">{escape(text)}</span></div>'
        )
    return f'<div style="white-space:pre-wrap;margin:4px 0">{escape(text)}</div>'


def footer_html(d: Mapping[str, Any], *, live: bool = False) -> str:
    stop = d.get("stop_reason")
    state = "running…" if live and not stop else (stop or "")
    line = usage_line(d.get("usage", {}), d.get("turns"))
    error = d.get("error")
    err = f'<div style="{_ERROR_TEXT}">Error: {escape(str(error))}</div>' if error else ""
    model = d.get("model")
    model_text = f"{escape(str(model))} · " if model else ""
    return (
        f'<div style="{_MUTED};font-size:var(--jp-ui-font-size0,11px);margin-top:4px">'
        f"{model_text}{escape(state)} · {escape(line)}</div>{err}"
    )


def transcript_html(d: Mapping[str, Any]) -> str:
    """The whole transcript as self-contained HTML (the ``text/html`` fallback)."""
    body = []
    for item in d.get("items", []):
        kind = item.get("kind")
        if kind in ("user", "assistant"):
            body.append(text_html(str(item.get("text", "")), who=kind))
        elif kind == "tool":
            body.append(tool_item_html(item))
        else:
            body.append(messages_item_html(item))
    body.append(footer_html(d))
    return f'<div class="nbtools-transcript" style="{_ROOT}">{"".join(body)}</div>'


def transcript_bundle(d: Mapping[str, Any]) -> dict[str, Any]:
    """The MIME bundle every run ends with."""
    return {
        TRANSCRIPT_MIME: json.loads(json.dumps(d)),
        "text/html": transcript_html(d),
        "text/plain": transcript_text(d),
    }
