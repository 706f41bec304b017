"""Minimal HTML for the transcript's Messages API items (thinking collapsed, server tools
with their links, code and output, citations, compaction and notices), for the ``text/html``
fallback; the labextension renders the same items from the JSON."""

from __future__ import annotations

from collections.abc import Mapping
from html import escape
from typing import Any

_MUTED = "color:var(--jp-content-font-color2,#59636e)"
_PRE = "white-space:pre-wrap;margin:2px 0;font-family:var(--jp-code-font-family,monospace)"


def _link(url: str, title: str) -> str:
    text = escape(title or url)
    if url.startswith(("https://", "http://")):
        return f'<a href="{escape(url, quote=True)}" target="_blank" rel="noopener">{text}</a>'
    return text


def messages_item_html(item: Mapping[str, Any]) -> str:
    kind = item.get("kind")
    if kind == "thinking":
        return (
            f'<details style="{_MUTED};margin:4px 0"><summary>Thinking</summary>'
            f'<div style="{_PRE}">{escape(str(item.get("text", "")))}</div></details>'
        )
    if kind == "server_tool":
        parts = [f"<b>{escape(str(item.get('name')))}</b> (run by the API)"]
        args = str(item.get("arguments", ""))
        code = item.get("code")
        if code:
            parts.append(f'<pre style="{_PRE}">{escape(str(code))}</pre>')
        else:
            parts.append(f"<code>{escape(args)}</code>")
        if item.get("error"):
            parts.append(
                f'<div style="color:var(--jp-error-color1,#cf222e)">error: '
                f"{escape(str(item['error']))}</div>"
            )
        results = item.get("results") or []
        if results:
            links = "".join(
                f"<li>{_link(str(r.get('url', '')), str(r.get('title', '')))}</li>" for r in results
            )
            parts.append(f'<ul style="margin:2px 0">{links}</ul>')
        for key in ("stdout", "stderr"):
            if item.get(key):
                parts.append(f'<pre style="{_PRE}">{escape(str(item[key]))}</pre>')
        if item.get("url") and not code:
            parts.append(_link(str(item["url"]), str(item["url"])))
        return f'<div style="margin:4px 0">{"".join(parts)}</div>'
    if kind == "citations":
        links = ", ".join(
            _link(str(s.get("url", "")), str(s.get("title") or s.get("url") or ""))
            for s in item.get("sources") or []
        )
        return f'<div style="{_MUTED};font-size:90%">Sources: {links}</div>'
    if kind in ("compaction", "notice"):
        return f'<div style="{_MUTED};font-size:90%">{escape(str(item.get("text", "")))}</div>'
    return ""
