"""Transcript items for the Messages API's own blocks and events: thinking, server tools
(search results with their links, code and its output, fetched pages), citations,
compaction and notices. Format: docs/transcript.md."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, TypeAlias, assert_never

from nb_tools.agent._notices import (
    CitationsReceived,
    ContextCompacted,
    RunNotice,
    ServerToolUsed,
    ThinkingDelta,
)
from nb_tools.transcript._types import (
    CitationsItem,
    CitationSource,
    CompactionItem,
    NoticeItem,
    SearchResult,
    ServerToolItem,
    ThinkingItem,
)
from nb_tools.transcript._visible import shown_arguments

OUTPUT_MAX_CHARS = 20_000

MessagesEvent: TypeAlias = (
    ThinkingDelta | ServerToolUsed | CitationsReceived | ContextCompacted | RunNotice
)
MessagesItem: TypeAlias = (
    ThinkingItem | ServerToolItem | CitationsItem | CompactionItem | NoticeItem
)


def messages_item(event: MessagesEvent) -> MessagesItem:
    if isinstance(event, ThinkingDelta):
        return {"kind": "thinking", "text": event.text}
    if isinstance(event, ServerToolUsed):
        return server_tool_item(event)
    if isinstance(event, CitationsReceived):
        return {"kind": "citations", "sources": [citation(c) for c in event.citations]}
    if isinstance(event, ContextCompacted):
        return {
            "kind": "compaction",
            "how": event.how,
            "text": event.message,
            "tokens_before": event.tokens_before,
        }
    if isinstance(event, RunNotice):
        return {"kind": "notice", "notice": event.kind, "text": event.message}
    assert_never(event)


def _text(value: object) -> str | None:
    """A value the API sent where text belongs, as text (``None`` stays ``None``)."""
    if value is None or isinstance(value, str):
        return value
    return json.dumps(value) if isinstance(value, dict | list) else str(value)


def citation(c: Mapping[str, Any]) -> CitationSource:
    return {
        "type": _text(c.get("type")) or "",
        "title": _text(c.get("title") or c.get("document_title")) or "",
        "url": _text(c.get("url")) or "",
        "cited_text": _text(c.get("cited_text")) or "",
    }


def _search_result(r: Mapping[str, Any]) -> SearchResult:
    return {
        "title": _text(r.get("title")) or "",
        "url": _text(r.get("url")) or "",
        "page_age": _text(r.get("page_age")),
    }


def server_tool_item(event: ServerToolUsed) -> ServerToolItem:
    """``{"kind": "server_tool", "name", "arguments", "result_type", "error", "results":
    [{"title", "url", "page_age"}], "code", "stdout", "stderr", "return_code", "url"}``."""
    item: ServerToolItem = {
        "kind": "server_tool",
        "id": event.id,
        "name": event.name,
        "arguments": event.arguments,
        "result_type": event.result_type,
        "error": None,
        "results": [],
        "code": None,
        "stdout": None,
        "stderr": None,
        "return_code": None,
        "url": None,
    }
    args = shown_arguments(event.arguments or "{}")
    if isinstance(args, dict):
        item["code"] = _text(args.get("code") or args.get("command"))
        item["url"] = _text(args.get("url"))
    content = event.content
    if isinstance(content, Mapping) and str(content.get("type", "")).endswith("_error"):
        item["error"] = str(content.get("error_code", "error"))
    elif isinstance(content, list):  # web search results
        item["results"] = [_search_result(r) for r in content if isinstance(r, Mapping)]
    elif isinstance(content, Mapping):  # code execution, web fetch
        for key in ("stdout", "stderr"):
            text = _text(content.get(key))
            if text is not None:
                item[key] = text[:OUTPUT_MAX_CHARS]
        code = content.get("return_code")
        if isinstance(code, int) and not isinstance(code, bool):
            item["return_code"] = code
        if content.get("url"):
            item["url"] = _text(content["url"])
    return item


def item_text_lines(item: Mapping[str, Any]) -> list[str]:
    """The plain-text form of a Messages API item (thinking is shortened to a line)."""
    kind = item.get("kind")
    if kind == "thinking":
        text = " ".join(str(item.get("text", "")).split())
        return [f"[thinking] {text[:200]}{'…' if len(text) > 200 else ''}"]
    if kind == "server_tool":
        lines = [f"[server tool] {item.get('name')}({item.get('arguments', '')})"]
        if item.get("error"):
            lines.append(f"  → error: {item['error']}")
        for r in item.get("results") or []:
            lines.append(f"  - {r.get('title', '')} <{r.get('url', '')}>")
        for key in ("stdout", "stderr"):
            if item.get(key):
                lines.extend(f"  {key}| {line}" for line in str(item[key]).splitlines()[:12])
        return lines
    if kind == "citations":
        return [
            f"  [source] {s.get('title') or s.get('url')} <{s.get('url', '')}>"
            for s in item.get("sources") or []
        ]
    if kind in ("compaction", "notice"):
        return [f"[{kind}] {item.get('text', '')}"]
    return []
