"""What a rendered transcript shows, as data both renderers can be compared on: per item
its kind, whether it is open, and the normalised text of each marked piece (``data-nbt``
attributes: name, status, duration, result, image, ...), plus the footer, error and ending.
``labextension/test/view.js`` is the same extraction over the labextension's DOM."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from html.parser import HTMLParser
from typing import Any

_VOID = {"img", "br", "hr", "input", "meta", "link", "wbr", "source"}
_SPACE = re.compile(r"[ \t\n\r\f\v]+")
TOP_FIELDS = ("footer", "error", "ending")


@dataclass
class Node:
    tag: str
    attrs: dict[str, str | None]
    children: list[Node | str] = field(default_factory=list)

    def text(self) -> str:
        if self.tag in ("style", "script", "button"):  # a button is an action, not content
            return ""
        return "".join(c if isinstance(c, str) else c.text() for c in self.children)


class _Builder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Node("#root", {})
        self.stack = [self.root]

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        node = Node(tag, dict(attrs))
        self.stack[-1].children.append(node)
        if tag not in _VOID:
            self.stack.append(node)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.stack[-1].children.append(Node(tag, dict(attrs)))

    def handle_endtag(self, tag: str) -> None:
        for i in range(len(self.stack) - 1, 0, -1):
            if self.stack[i].tag == tag:
                del self.stack[i:]
                return

    def handle_data(self, data: str) -> None:
        self.stack[-1].children.append(data)


def normalise(text: str) -> str:
    """Whitespace runs as one space; a long text as its head, length and tail."""
    text = _SPACE.sub(" ", text).strip(" ")
    if len(text) > 300:
        return f"{text[:150]} …[{len(text)} chars]… {text[-80:]}"
    return text


def field_text(node: Node) -> str:
    if node.tag == "img":
        src = str(node.attrs.get("src") or "")
        match = re.fullmatch(r"data:([^;,]*);base64,(.*)", src, re.DOTALL)
        return f"{match[1]} base64:{len(match[2])}" if match else f"src:{src[:40]}"
    if "data-nbt-lines" in node.attrs:
        lines = [c.text().removesuffix("\n") for c in node.children if isinstance(c, Node)]
        return normalise("\n".join(lines))
    return normalise(node.text())


def view_of_html(html: str) -> dict[str, Any]:
    builder = _Builder()
    builder.feed(html)
    builder.close()
    out: dict[str, Any] = {"items": [], **dict.fromkeys(TOP_FIELDS, "")}

    def walk(node: Node, item: dict[str, Any] | None) -> None:
        for child in node.children:
            if isinstance(child, str):
                continue
            kind = child.attrs.get("data-nbt-item")
            if kind is not None:
                found: dict[str, Any] = {"kind": kind, "fields": {}}
                if child.tag == "details":
                    found["open"] = "open" in child.attrs
                out["items"].append(found)
                walk(child, found)
                continue
            name = child.attrs.get("data-nbt")
            if name is not None:
                if item is None and name in TOP_FIELDS:
                    out[name] = field_text(child)
                elif item is not None:
                    item["fields"].setdefault(name, []).append(field_text(child))
                continue
            walk(child, item)

    walk(builder.root, None)
    return out
