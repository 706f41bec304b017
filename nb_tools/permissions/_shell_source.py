"""Where tree-sitter-bash and bash read the same source differently, and the fixes: the
parser object (built once), characters that are refused, backslash-newline removed as bash
removes it, and here-document delimiters compared after quote removal as bash does.
Checked against GNU bash 5.2 with tree-sitter-bash 0.25 (see the differential tests).
"""

from __future__ import annotations

import functools
import re
import unicodedata
from typing import Any

from nb_tools.permissions._shell_words import decode_ansi_c

__all__ = [
    "heredoc_delimiter",
    "join_continuations",
    "live_expansion",
    "odd_chars",
    "parser",
    "quoted_heredoc",
]


def _t(node: Any) -> str:
    return str(node.text.decode("utf-8", "surrogatepass"))


@functools.lru_cache(maxsize=1)
def parser() -> Any:
    import tree_sitter_bash
    from tree_sitter import Language, Parser

    return Parser(Language(tree_sitter_bash.language()))


# Characters on which bash and tree-sitter may disagree, or that a reader would misread.
_ODD_SPACE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


# Invisible characters that are letters or marks, not format characters: combining
# grapheme joiner, Hangul fillers, Khmer inherent vowels, Mongolian free variation
# selectors, variation selectors (emoji smuggling hides bytes in runs of them).
_INVISIBLE = frozenset(
    [0x034F, 0x115F, 0x1160, 0x17B4, 0x17B5, 0x180B, 0x180C, 0x180D, 0x180F, 0x3164, 0xFFA0,
     *range(0xFE00, 0xFE10), *range(0xE0100, 0xE01F0)]
)  # fmt: skip
_UNUSUAL = ("Zs", "Zl", "Zp", "Cc", "Cf", "Co", "Cn", "Cs")


def odd_chars(source: str) -> str | None:
    """The first character a reader would misread or not see (controls, bidi controls,
    zero-width and tag characters, odd spaces, invisible letters), or ``None``: a rule
    cannot tell what such a command does, so it asks."""
    m = _ODD_SPACE.search(source)
    if m:
        return f"control character U+{ord(m.group()):04X}"
    for ch in source:
        cp = ord(ch)
        if cp > 127 and (unicodedata.category(ch) in _UNUSUAL or cp in _INVISIBLE):
            return f"unusual character U+{cp:04X}"
    return None


def join_continuations(source: str) -> str:
    r"""Remove backslash-newline where bash does (not inside '..', $'..', comments or quoted
    here-doc bodies), so that ``r\<newline>m`` reads as ``rm`` as it does in bash."""
    if "\\\n" not in source:
        return source
    data = source.encode("utf-8", "surrogatepass")
    try:
        root = parser().parse(data).root_node
    except Exception:
        return source
    cut: list[int] = []
    blank: list[int] = []
    for m in re.finditer(rb"(\\+)\n", data):
        if len(m.group(1)) % 2 == 0:
            continue
        pos = m.end() - 2  # the backslash
        node = root.descendant_for_byte_range(pos, pos + 1)
        keep = False
        while node is not None:
            if node.type == "comment":
                blank.append(pos)  # a comment ends at the newline all the same
                keep = True
                break
            if node.type in ("raw_string", "ansi_c_string"):
                keep = True
                break
            if node.type == "heredoc_body" and quoted_heredoc(node):
                keep = True
                break
            node = node.parent
        if not keep:
            cut.append(pos)
    if not cut and not blank:
        return source
    out = bytearray(data)
    for pos in blank:
        out[pos] = ord(" ")
    for pos in reversed(cut):
        del out[pos : pos + 2]
    return out.decode("utf-8", "surrogatepass")


def quoted_heredoc(body: Any) -> bool:
    start = body.prev_sibling
    while start is not None and start.type != "heredoc_start":
        start = start.prev_sibling
    return start is not None and any(q in _t(start) for q in "'\"\\")


def heredoc_delimiter(word: str) -> str:
    """The delimiter bash compares lines with: the word after quote removal."""
    out: list[str] = []
    i = 0
    while i < len(word):
        c = word[i]
        if c == "\\" and i + 1 < len(word):
            out.append(word[i + 1])
            i += 2
        elif c == "'" or (c == "$" and word[i + 1 : i + 2] in ("'", '"')):
            q = word[i + 1] if c == "$" else c
            j = word.find(q, i + (2 if c == "$" else 1))
            j = len(word) if j < 0 else j
            inner = word[i + (2 if c == "$" else 1) : j]
            out.append(decode_ansi_c(inner) if c == "$" and q == "'" else inner)
            i = j + 1
        elif c == '"':
            j = word.find('"', i + 1)
            j = len(word) if j < 0 else j
            out.append(re.sub(r'\\([$`"\\])', r"\1", word[i + 1 : j]))
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def live_expansion(text: str) -> bool:
    i = 0
    while i < len(text):
        if text[i] == "\\":
            i += 2
            continue
        if text[i] in "$`":
            return True
        i += 1
    return False
