"""A tool's own HTML (a DataFrame's table, a ``Styler``, any ``_repr_html_``) made safe to
put in the live view and the ``text/html`` fallback.

The live view's widgets set ``innerHTML`` with no sanitizer, and a session's own outputs
are trusted by JupyterLab: an ``<img onerror>`` or a ``<style>`` in a tool's value would
run in the page (and could click the next card's Approve) or lay itself over the card.
A tool's value may hold text the model chose (pandas' ``Styler`` does not escape its
cells), so the HTML is rebuilt from a whitelist rather than filtered: text is escaped,
only table and text-formatting tags are kept, with only ``colspan``/``rowspan``/``align``;
``<script>``, ``<style>``, ``<svg>``, ``<iframe>``, ... are dropped with their content;
every other tag is dropped and its text kept. No attribute can carry a URL, a script or
CSS, so nothing is fetched, run or styled by the value.
"""

from __future__ import annotations

import re
from html import escape
from html.parser import HTMLParser

__all__ = ["safe_html"]

_KEPT = frozenset(
    [
        "table",
        "thead",
        "tbody",
        "tfoot",
        "tr",
        "th",
        "td",
        "caption",
        "colgroup",
        "col",
        "div",
        "span",
        "p",
        "br",
        "hr",
        "b",
        "i",
        "u",
        "s",
        "em",
        "strong",
        "code",
        "pre",
        "kbd",
        "samp",
        "var",
        "ul",
        "ol",
        "li",
        "dl",
        "dt",
        "dd",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "small",
        "sub",
        "sup",
        "blockquote",
        "abbr",
    ]
)
_VOID = frozenset(("br", "hr", "col"))
_DROPPED = frozenset(
    [
        "script",
        "style",
        "template",
        "iframe",
        "frame",
        "frameset",
        "object",
        "embed",
        "applet",
        "svg",
        "math",
        "noscript",
        "noembed",
        "noframes",
        "title",
        "head",
        "textarea",
        "select",
        "option",
        "xmp",
        "plaintext",
    ]
)
"""Tags whose content is not text to show (code, CSS, another document)."""
_ATTRS = {
    "colspan": re.compile(r"[0-9]{1,3}"),
    "rowspan": re.compile(r"[0-9]{1,3}"),
    "align": re.compile(r"left|right|center|justify", re.IGNORECASE),
}


class _Rebuild(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.out: list[str] = []
        self.open: list[str] = []
        self.dropping: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self.dropping:
            if tag in _DROPPED and tag not in _VOID:
                self.dropping.append(tag)
            return
        if tag in _DROPPED:
            self.dropping.append(tag)
            return
        if tag not in _KEPT:
            return
        kept = "".join(
            f' {name}="{escape(value)}"'
            for name, value in attrs
            if name in _ATTRS and value is not None and _ATTRS[name].fullmatch(value)
        )
        self.out.append(f"<{tag}{kept}>")
        if tag not in _VOID:
            self.open.append(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _DROPPED:
            return  # <svg/>: nothing inside
        self.handle_starttag(tag, attrs)
        if tag in _KEPT and tag not in _VOID and self.open and self.open[-1] == tag:
            self.handle_endtag(tag)

    def handle_endtag(self, tag: str) -> None:
        if self.dropping:
            if tag == self.dropping[-1]:
                self.dropping.pop()
            return
        if tag not in self.open:
            return
        while self.open:
            last = self.open.pop()
            self.out.append(f"</{last}>")
            if last == tag:
                break

    def handle_data(self, data: str) -> None:
        if not self.dropping:
            self.out.append(escape(data, quote=False))

    def result(self) -> str:
        self.close()
        return "".join(self.out) + "".join(f"</{t}>" for t in reversed(self.open))


def safe_html(html: str) -> str:
    """``html`` rebuilt from the whitelist (see the module docstring): its tables and text,
    nothing that runs, fetches or styles."""
    parser = _Rebuild()
    parser.feed(html)
    return parser.result()
