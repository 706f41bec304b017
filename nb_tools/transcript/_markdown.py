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

from nb_tools.transcript._diff import PRE_STYLE
from nb_tools.transcript._visible import visible_html, visible_spans

# pygments token type -> (short class, JupyterLab editor colour). Classes keep a streamed
# code block small; TOKEN_CSS (shown once per view) colours them by the theme's variables.
_TOKENS = {
    "Keyword": ("k", "var(--jp-mirror-editor-keyword-color,#008000);font-weight:bold"),
    "Operator.Word": ("k", ""),
    "Name.Builtin": ("b", "var(--jp-mirror-editor-builtin-color,#008000)"),
    "Name.Function": ("f", "var(--jp-mirror-editor-def-color,#0000ff)"),
    "Name.Class": ("f", ""),
    "Name.Decorator": ("m", "var(--jp-mirror-editor-meta-color,#aa22ff)"),
    "Literal.String": ("s", "var(--jp-mirror-editor-string-color,#ba2121)"),
    "Literal.Number": ("n", "var(--jp-mirror-editor-number-color,#080)"),
    "Comment": ("c", "var(--jp-mirror-editor-comment-color,#408080);font-style:italic"),
}
TEXT_BOX = (
    "display:flow-root;box-sizing:border-box;width:100%;padding:0 8px;"
    "border-left:3px solid var(--jp-border-color2,#d0d7de)"
)
"""The assistant's text box: a bar on the left. ``flow-root`` keeps the last paragraph's
margin inside the bar, so the live view's pieces (one widget each) join into one bar."""
TOKEN_CSS = (
    f"<style>.nbtools-code,.jp-RenderedHTMLCommon pre.nbtools-code{{{PRE_STYLE};"
    "white-space:pre-wrap;overflow-wrap:anywhere}"
    ".nbtools-busy{animation:nbtools-pulse .8s ease-in-out infinite alternate}"
    # the live answer's pieces: the text box's look once here, not on every update; no
    # margin between their widgets (no seam); the HTMLMath content, which shrinks to its
    # text, spans the output
    f".nbtools-assistant{{{TEXT_BOX}}}"
    ".widget-htmlmath.nbtools-assistant{margin:0}"
    ".nbtools-assistant>.widget-htmlmath-content{flex:1 1 auto;min-width:0}"
    "@keyframes nbtools-pulse{from{opacity:1}to{opacity:.25}}"
    + "".join(
        f".nbtools-code .t{cls}{{color:{colour}}}" for cls, colour in _TOKENS.values() if colour
    )
    + "</style>"
)
"""Code blocks' look and token colours, as a ``<style>`` element that the live view and
the HTML fallback hold once (not on every block: a streamed piece stays small)."""
_LANGUAGE = re.compile(r"^[\w+#.-]{1,40}$")


def _token_class(token: Any) -> str | None:
    while token is not None and len(token) > 0:
        found = _TOKENS.get(".".join(token))
        if found is not None:
            return found[0]
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
    language is unknown or none), hidden characters (bidi controls, zero-width, tags,
    controls) shown as markers (:mod:`nb_tools.transcript._visible`). The markers are put in
    from the original text and pygments' token lengths, never from pygments' text."""
    lexer = _lexer(language.lower()) if language and _LANGUAGE.match(language) else None
    if lexer is None:
        return visible_html(code)
    from pygments import lex

    spans: list[tuple[int, int, str | None]] = []
    pos = 0
    for token, text in lex(code, lexer):
        if code[pos : pos + len(text)] != text:
            return visible_html(code)  # see below
        cls = _token_class(token)
        spans.append((pos, pos + len(text), f"t{cls}" if cls else None))
        pos += len(text)
    if pos != len(code):
        # pygments changed the text (it drops a leading U+FEFF, reads a bare CR as a
        # newline): show it as it is, unhighlighted, rather than what pygments made of it
        return visible_html(code)
    return visible_spans(code, spans)


def code_block_html(code: str, language: str | None = None, *, field: str = "") -> str:
    """A highlighted ``<pre>`` (also used for the command or code on an approval card);
    ``field``: its ``data-nbt`` mark for the golden tests."""
    mark = f' data-nbt="{field}"' if field else ""
    lang = f' data-language="{escape(language)}"' if language else ""
    return f'<pre{mark} class="nbtools-code"{lang}>{highlight(code, language)}</pre>'


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
FORCE_FACTOR = 3
"""A piece with no clean place to cut is cut anyway at a line end once it is this many
times the wanted size (a long code block or list), so no piece grows without bound."""


def safe_split(text: str, start: int, min_size: int, fence: str = "") -> tuple[int, str] | None:
    """Where to cut ``text[start:]`` for the live view: ``(end, reopen)``, or ``None``.

    Preferably the end of a blank line outside any code fence or ``$$`` block, before a
    new paragraph or heading, at least ``min_size`` characters in: the two pieces then
    render as the whole would. Failing that, once the piece is ``FORCE_FACTOR`` times
    ``min_size``, the last line end: ``reopen`` is then the code fence's opening line when
    the cut falls inside one (the next piece is rendered after it, so it is still code).
    ``fence``: the opening line of the code fence ``text[start:]`` starts inside, if any."""
    dollars = 0
    pos = start
    best: int | None = None
    last_line_end: tuple[int, str] | None = None
    for line in text[start:].splitlines(keepends=True):
        end = pos + len(line)
        if not line.endswith("\n"):
            break  # the line is still being written
        if _FENCE.match(line):
            fence = "" if fence else line
        elif line.strip() == "$$":
            dollars ^= 1
        elif not line.strip() and not fence and not dollars and end - start >= min_size:
            nxt = text[end:].lstrip("\n")
            # Cut before a new top-level paragraph or heading only: a list or an indented
            # block may go on after the blank line.
            if len(nxt) >= 3 and not nxt[0].isspace() and not _LIST.match(nxt):
                best = end
        if end - start >= min_size and not dollars:
            last_line_end = (end, fence)
        pos = end
    if best is not None:
        return best, ""
    if len(text) - start < FORCE_FACTOR * min_size:
        return None
    if last_line_end is not None:
        return last_line_end
    # One long line (a paragraph without line breaks): cut after a sentence's end (else
    # after a space); the two pieces show as two paragraphs, which beats re-sending an
    # ever longer one. Never after the last word so far: it may be cut short, and would
    # stand alone in the next piece (a stray word at the seam).
    if fence or dollars:
        return None
    last_space = text.rfind(" ", start + min_size, len(text) - 1)
    ends = [m.end() for m in _SENTENCE_END.finditer(text, start + min_size, max(last_space, 0))]
    cut = ends[-1] if ends else (last_space + 1 if last_space > 0 else 0)
    if cut > 0 and "`" not in text[start:cut]:
        return cut, ""
    return None


_SENTENCE_END = re.compile(r"[.!?:;][)\]\"'”’]? +(?=\S)")


_LIST = re.compile(r"^([-*+]|\d+[.)])\s")
