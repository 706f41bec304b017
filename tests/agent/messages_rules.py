"""The Messages API's rules for a request body, checked on every request the fake server
received in the tests of ``test_messages_api*.py``."""

from __future__ import annotations

import base64
import io
import json
from typing import Any

from nb_tools.testing._sse import signature_for


def problems(body: dict[str, Any]) -> list[str]:
    out: list[str] = []
    messages = body.get("messages") or []
    if not messages or messages[0].get("role") != "user":
        out.append("the first message must be the user's")
    images = 0
    for i, m in enumerate(messages):
        if i and m["role"] == messages[i - 1]["role"]:
            out.append(f"messages.{i}: roles must alternate (two {m['role']} messages)")
        raw = m["content"]
        content = raw if isinstance(raw, list) else [{"type": "text", "text": raw}]
        if not content:
            out.append(f"messages.{i}: empty content")
        results = [j for j, b in enumerate(content) if b.get("type") == "tool_result"]
        if results and results != list(range(len(results))):
            out.append(f"messages.{i}: tool_result blocks must come first")
        for j, b in enumerate(content):
            kind = b.get("type")
            if kind == "text" and not str(b.get("text", "")).strip():
                out.append(f"messages.{i}.content.{j}: empty or whitespace-only text")
            if kind == "thinking" and b.get("signature") != signature_for(b.get("thinking", "")):
                out.append(f"messages.{i}.content.{j}: a thinking block was changed")
            if kind == "image":
                images += 1
        if m["role"] == "assistant":
            used = [b["id"] for b in content if b.get("type") == "tool_use"]
            if used:
                following = messages[i + 1] if i + 1 < len(messages) else None
                answered = [
                    b["tool_use_id"]
                    for b in (following or {}).get("content", [])
                    if isinstance(b, dict) and b.get("type") == "tool_result"
                ]
                if following is None or sorted(answered) != sorted(used):
                    out.append(f"messages.{i}: tool_use {used} answered by {answered}")
        elif i:
            prev = messages[i - 1]
            prev_content = prev["content"] if isinstance(prev["content"], list) else []
            used = {b["id"] for b in prev_content if b.get("type") == "tool_use"}
            for b in content:
                if b.get("type") == "tool_result" and b["tool_use_id"] not in used:
                    out.append(f"messages.{i}: tool_result {b['tool_use_id']} answers no call")
    marks = json.dumps(body).count('"cache_control"')
    if marks > 4:
        out.append(f"{marks} cache_control marks (at most 4)")
    side = 2000 if images > 20 else 8000
    for block in _image_blocks(messages):
        data = base64.b64decode(block["source"]["data"])
        if len(data) > 5 * 1024 * 1024:
            out.append(f"an image of {len(data)} bytes (at most 5 MB)")
        from PIL import Image

        w, h = Image.open(io.BytesIO(data)).size
        if max(w, h) > side:
            out.append(f"an image of {w}x{h} pixels (at most {side})")
    return out


def _image_blocks(value: Any) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    if isinstance(value, dict):
        if value.get("type") == "image" and isinstance(value.get("source"), dict):
            found.append(value)
        for v in value.values():
            found += _image_blocks(v)
    elif isinstance(value, list):
        for v in value:
            found += _image_blocks(v)
    return found


def check_all(requests: list[Any]) -> None:
    """Fail with every problem of every ``/v1/messages`` request recorded."""
    for n, r in enumerate(requests):
        if r.path.split("?")[0] != "/v1/messages":
            continue
        found = problems(r.body)
        assert not found, f"request {n}: {found}"
