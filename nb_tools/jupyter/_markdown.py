"""The assistant's Markdown as safe HTML, for the live widgets and the ``text/html`` fallback.

mistune with ``escape=True``: raw HTML in the model's text is shown as text, never passed
through; links with a ``javascript:``-like scheme become ``#harmful-link``; images become
links (a model's text must not make the browser fetch anything). Code blocks are
highlighted with pygments into spans coloured by JupyterLab's editor variables (so they
follow the theme), math is kept as ``\\(…\\)`` / ``$$…$$`` for MathJax (``HTMLMath``
widgets and JupyterLab's HTML outputs typeset it).
"""

from __future__ import annotations

import re
from functools import lru_cache
from html import escape
from typing import Any

import mistune

from nb_tools.jupyter._diff import PRE_STYLE

# pygments token type (its first name, e.g. "Keyword") -> JupyterLab editor colour.
_TOKEN_COLOURS = {
    "Keyword": "var(--jp-mirror-editor-keyword-color,#008000);font-weight:bold",
    "Name.Builtin": "var(--jp-mirror-editor-builtin-color,#008000)",
    "Name.Function": "var(--jp-mirror-editor-def-color,#0000ff)",
    "Name.Class": "var(--jp-mirror-editor-def-color,#0000ff)",
    "Name.Decorator": "var(--jp-mirror-editor-meta-color,#aa22ff)",
    "Literal.String": "var(--jp-mirror-editor-string-color,#ba2121)",
    "Literal.Number": "var(--jp-mirror-editor-number-color,#080)",
    "Comment": "var(--jp-mirror-editor-comment-color,#408080);font-style:italic",
    "Operator": "var(--jp-mirror-editor-operator-color,#aa22ff)",
    "Operator.Word": "var(--jp-mirror-editor-keyword-color,#008000);font-weight:bold",
}
_CODE_STYLE = f"{PRE_STYLE};white-space:pre-wrap"
_LANGUAGE = re.compile(r"^[\w+#.-]{1,40}$")


def _colour(token: Any) -> str | None:
    while token is not None and len(token) > 0:
        name = ".".join(token)
        if name in _TOKEN_COLOURS:
            return _TOKEN_COLOURS[name]
        token = token.parent
    return None


@lru_cache(maxsize=32)
def _lexer(language: str) -> Any:
    from pygments.lexers import get_lexer_by_name
    from pygments.util import ClassNotFound

    try:
        return get_lexer_by_name(language, stripnl=False, ensurenl=False)
    except ClassNotFound:
        return None


def highlight(code: str, language: str | None) -> str:
    """``code`` as escaped HTML spans coloured by token (plain escaped text when the
    language is unknown or none)."""
    lexer = _lexer(language.lower()) if language and _LANGUAGE.match(language) else None
    if lexer is None:
        return escape(code)
    from pygments import lex

    out = []
    for token, text in lex(code, lexer):
        colour = _colour(token)
        out.append(
            f'<span style="color:{colour}">{escape(text)}</span>' if colour else escape(text)
        )
    return "".join(out)


def code_block_html(code: str, language: str | None = None) -> str:
    """A highlighted ``<pre>`` (also used for the command or code on an approval card)."""
    lang = f' data-language="{escape(language)}"' if language else ""
    return (
        f'<pre class="nbtools-code" style="{_CODE_STYLE}"{lang}>{highlight(code, language)}</pre>'
    )


class _Renderer(mistune.HTMLRenderer):
    def block_code(self, code: str, info: str | None = None) -> str:
        language = info.split(None, 1)[0] if info and info.strip() else None
        return code_block_html(code, language) + "\n"

    def codespan(self, text: str) -> str:
        return (
            '<code style="font-family:var(--jp-code-font-family,monospace);'
            'background:var(--jp-layout-color2,#f6f8fa);padding:0 2px;border-radius:2px">'
            f"{escape(text)}</code>"
        )

    def image(self, text: str, url: str, title: str | None = None) -> str:
        return self.link(f"[image: {text}]", url, title)


_MARKDOWN = mistune.create_markdown(
    escape=True,
    renderer=_Renderer(escape=True),
    plugins=["table", "strikethrough", "math", "url"],
)


def markdown_html(text: str) -> str:
    """The HTML of the Markdown ``text`` (safe: see the module docstring)."""
    return str(_MARKDOWN(text))


_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})", re.MULTILINE)


def safe_split(text: str, start: int, min_size: int) -> int | None:
    """A place at or after ``start + min_size`` where ``text`` can be cut into two pieces
    that render as Markdown the same as the whole: the end of a blank line outside any
    code fence or ``$$`` block. ``None`` when there is none (yet)."""
    fences = 0
    dollars = 0
    pos = start
    best: int | None = None
    for line in text[start:].splitlines(keepends=True):
        end = pos + len(line)
        if _FENCE.match(line):
            fences ^= 1
        elif line.strip() == "$$":
            dollars ^= 1
        elif (
            not line.strip()
            and fences == 0
            and dollars == 0
            and end - start >= min_size
            and end < len(text)
            and line.endswith("\n")
        ):
            nxt = text[end:].lstrip("\n")
            # A list or an indented block may go on after the blank line: cut before
            # a line that starts a new top-level paragraph or heading only.
            if nxt and not nxt[0].isspace() and not re.match(r"^([-*+]|\d+[.)])\s", nxt):
                best = end
        pos = end
    return best
