"""Minimal HTML for the transcript's Messages API items (server tools with their links,
code and output, citations, compaction and notices), for the ``text/html`` fallback; the
labextension renders the same items from the JSON (``src/items.ts``), and
``tests/transcript_goldens`` checks that both show the same."""

from __future__ import annotations

from collections.abc import Mapping
from html import escape
from typing import Any

_MUTED = "color:var(--jp-content-font-color2,#59636e)"
_PRE = "white-space:pre-wrap;margin:2px 0;font-family:var(--jp-code-font-family,monospace)"


def _link(url: str, title: str, field: str) -> str:
    """A link when the URL is http(s), else its text (the labextension's link())."""
    text = escape(title or url)
    if url.startswith(("https://", "http://")):
        return (
            f'<a href="{escape(url, quote=True)}" data-nbt="{field}" target="_blank" '
            f'rel="noopener">{text}</a>'
        )
    return f'<span data-nbt="{field}">{text}</span>'


def server_tool_html(item: Mapping[str, Any]) -> str:
    parts = [
        f'<b data-nbt="name">{escape(str(item.get("name")))}</b> '
        '<span data-nbt="label">(run by the API)</span>'
    ]
    code = item.get("code")
    if code:
        parts.append(f'<pre data-nbt="code" style="{_PRE}">{escape(str(code))}</pre>')
    else:
        parts.append(f'<code data-nbt="args">{escape(str(item.get("arguments", "")))}</code>')
    if item.get("error"):
        parts.append(
            '<div data-nbt="error" style="color:var(--jp-error-color1,#cf222e)">error: '
            f"{escape(str(item['error']))}</div>"
        )
    results = item.get("results") or []
    if results:
        links = "".join(
            f"<li>{_link(str(r.get('url', '')), str(r.get('title', '')), 'link')}</li>"
            for r in results
        )
        parts.append(f'<ul style="margin:2px 0">{links}</ul>')
    for key in ("stdout", "stderr"):
        if item.get(key):
            parts.append(f'<pre data-nbt="{key}" style="{_PRE}">{escape(str(item[key]))}</pre>')
    if item.get("url") and not code:
        parts.append(_link(str(item["url"]), str(item["url"]), "url"))
    return f'<div data-nbt-item="server_tool" style="margin:4px 0">{"".join(parts)}</div>'


def citations_html(item: Mapping[str, Any]) -> str:
    links = ", ".join(
        _link(str(s.get("url", "")), str(s.get("title") or s.get("url") or ""), "source")
        for s in item.get("sources") or []
    )
    return (
        f'<div data-nbt-item="citations" style="{_MUTED};font-size:90%">'
        f'<span data-nbt="label">Sources:</span> {links}</div>'
    )


def note_html(item: Mapping[str, Any]) -> str:
    """A compaction or a notice: one muted line."""
    return (
        f'<div data-nbt-item="{escape(str(item.get("kind")))}" style="{_MUTED};font-size:90%">'
        f'<span data-nbt="text">{escape(str(item.get("text", "")))}</span></div>'
    )
