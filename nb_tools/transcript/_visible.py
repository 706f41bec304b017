"""Characters that change how text looks but not what it does, made visible.

"Trojan Source" (CVE-2021-42574) and "ASCII smuggling": a call's code can hold Unicode
bidi controls that reorder what a reader sees, zero-width and other format characters,
Unicode tag characters (invisible ASCII), control characters (an ANSI escape, a bare
carriage return). On an approval card what the person reads must be what runs, so every
such character in a call's arguments, code, command, diff or rule text is shown as a
styled marker such as ``⟨U+202E⟩`` (its title names it: "RIGHT-TO-LEFT OVERRIDE"), and
the card counts them. Ordinary non-ASCII text (accents, CJK, emoji, Arabic and Hebrew
letters) is left alone.

Pure Python (no IPython): :func:`hidden_runs` finds them, :func:`visible_html` and
:func:`visible_text` show them, :func:`count_hidden` counts them in parsed arguments.
The labextension's ``src/visible.ts`` is the same rules for the saved transcript.
"""

from __future__ import annotations

import json
import unicodedata
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from html import escape
from typing import Any, Literal, TypeAlias

HiddenKind: TypeAlias = Literal["direction", "invisible", "tag", "control"]

# Bidi controls: embeddings, overrides, isolates, marks (U+202A-E, U+2066-9, U+200E/F, U+061C).
BIDI = frozenset([0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A)])
# Invisible letters and marks that are not format characters: combining grapheme joiner,
# Hangul fillers, Khmer inherent vowels, Mongolian free variation selectors; and the
# format characters Unicode 15 added (Egyptian hieroglyphs), for Pythons whose Unicode
# is older (the labextension's is newer: both mark the same).
_EXTRA_INVISIBLE = frozenset(
    [0x034F, 0x115F, 0x1160, 0x17B4, 0x17B5, 0x180B, 0x180C, 0x180D, 0x180F, 0x3164, 0xFFA0,
     *range(0x13439, 0x13440)]
)  # fmt: skip
_NAMES = {  # control characters have no unicodedata name
    0x00: "NULL", 0x07: "BELL", 0x08: "BACKSPACE", 0x0B: "LINE TABULATION",
    0x0C: "FORM FEED", 0x0D: "CARRIAGE RETURN", 0x1B: "ESCAPE (starts an ANSI escape)",
    0x7F: "DELETE", 0x85: "NEXT LINE", 0x9B: "CONTROL SEQUENCE INTRODUCER",
}  # fmt: skip
MARKER_STYLE = (
    "color:var(--jp-warn-color0,#7d4e00);background:rgba(255,196,0,.22);"
    "border:1px solid var(--jp-warn-color2,#d4a72c);border-radius:3px;padding:0 2px;"
    "font-family:var(--jp-code-font-family,monospace);font-size:85%;font-style:normal;"
    "font-weight:normal;white-space:pre-wrap;overflow-wrap:anywhere"
)
"""The marker's look: the theme's warning colour on a light amber tint (reads in light
and dark themes); small, so a few markers do not drown the code."""


def _is_vs(cp: int) -> bool:
    return 0xFE00 <= cp <= 0xFE0F or 0xE0100 <= cp <= 0xE01EF


def hidden_kind(text: str, i: int) -> HiddenKind | None:
    """The kind of hidden character at ``text[i]``, or ``None`` for an ordinary one."""
    ch = text[i]
    cp = ord(ch)
    if 0x20 <= cp < 0x7F or ch in "\n\t":
        return None
    if cp in BIDI:
        return "direction"
    if 0xE0000 <= cp <= 0xE007F:
        return "tag"
    category = unicodedata.category(ch)
    if category == "Cc":
        if ch == "\r" and text[i + 1 : i + 2] == "\n":
            return None  # a Windows line end
        return "control"
    if category in ("Cf", "Cs", "Zl", "Zp") or cp in _EXTRA_INVISIBLE:
        return "invisible"
    if 0xE0100 <= cp <= 0xE01EF:
        return "invisible"  # variation selectors 17-256: emoji smuggling, not text
    if 0xFE00 <= cp <= 0xFE0F and i > 0 and _is_vs(ord(text[i - 1])):
        return "invisible"  # one selector after a character is normal (❤️); a run is not
    return None


def _tag_ascii(ch: str) -> str:
    cp = ord(ch)
    return chr(cp - 0xE0000) if 0xE0020 <= cp <= 0xE007E else "·"


def char_name(ch: str) -> str:
    """``U+202E RIGHT-TO-LEFT OVERRIDE``."""
    cp = ord(ch)
    name = _NAMES.get(cp) or unicodedata.name(ch, "")
    if not name:
        category = unicodedata.category(ch)
        name = {"Cc": "control character", "Cs": "lone surrogate"}.get(category, category)
    return f"U+{cp:04X} {name}"


@dataclass(frozen=True)
class Run:
    """Hidden characters at ``text[start:end]``, shown as one marker: ``label`` (between
    ⟨ and ⟩) with ``title`` as its tooltip; ``kind`` of the first one."""

    start: int
    end: int
    kind: HiddenKind
    label: str
    title: str


def _run(text: str, start: int, end: int, kind: HiddenKind) -> Run:
    piece = text[start:end]
    first = piece[0]
    if kind == "tag":
        shown = "".join(_tag_ascii(c) for c in piece)
        title = f"{len(piece)} Unicode tag character(s): invisible ASCII"
        return Run(start, end, kind, f'tags "{shown}"', title)
    if _is_vs(ord(first)) and len(piece) > 1:
        return Run(start, end, kind, f"variation selectors ×{len(piece)}", "hidden data")
    code = f"U+{ord(first):04X}"
    if len(piece) > 1:
        return Run(start, end, kind, f"{code}×{len(piece)}", f"{len(piece)} × {char_name(first)}")
    return Run(start, end, kind, code, char_name(first))


def hidden_runs(text: str) -> list[Run]:
    """The hidden characters of ``text`` as markers: a run of tag characters is one
    marker (its ASCII decoded), as is a run of one repeated character or of variation
    selectors; every other hidden character is a marker of its own."""
    runs: list[Run] = []
    i, n = 0, len(text)
    while i < n:
        kind = hidden_kind(text, i)
        if kind is None:
            i += 1
            continue
        j = i + 1
        cp = ord(text[i])
        while j < n and hidden_kind(text, j) == kind:
            nxt = ord(text[j])
            if not (
                kind == "tag" or nxt == cp or (_is_vs(cp) and _is_vs(nxt) and kind == "invisible")
            ):
                break
            j += 1
        runs.append(_run(text, i, j, kind))
        i = j
    return runs


def marker_html(run: Run) -> str:
    return (
        f'<span class="nbtools-hidden" data-hidden="{run.kind}" title="{escape(run.title)}" '
        f'style="{MARKER_STYLE}">⟨{escape(run.label)}⟩</span>'
    )


def _pieces(text: str, start: int, end: int, runs: list[Run]) -> Iterator[str]:
    pos = start
    for run in runs:
        if run.end <= start or run.start >= end:
            continue
        if run.start > pos:
            yield escape(text[pos : run.start])
        if run.start >= start:
            yield marker_html(run)
        pos = min(run.end, end)
    if pos < end:
        yield escape(text[pos:end])


def visible_html(text: str) -> str:
    """``text`` HTML-escaped, each hidden character (run) replaced by its marker."""
    if text.isascii() and text.isprintable():
        return escape(text)
    return "".join(_pieces(text, 0, len(text), hidden_runs(text)))


def visible_spans(text: str, spans: list[tuple[int, int, str | None]]) -> str:
    """``text`` cut in ``spans`` ``(start, end, css_class)`` (a highlighter's tokens, in
    order, covering it), each a ``<span>`` when it has a class, hidden characters marked:
    a run is one marker at its start, whatever tokens it crosses."""
    runs = hidden_runs(text) if not (text.isascii() and text.isprintable()) else []
    out: list[str] = []
    first = 0  # the first run that may overlap this span (spans are in order)
    for start, end, cls in spans:
        while first < len(runs) and runs[first].end <= start:
            first += 1
        last = first
        while last < len(runs) and runs[last].start < end:
            last += 1
        body = "".join(_pieces(text, start, end, runs[first:last]))
        out.append(f'<span class="{cls}">{body}</span>' if cls and body else body)
    return "".join(out)


def visible_text(text: str) -> str:
    """``text`` with each hidden character (run) as ``⟨U+202E⟩`` (for plain text, such
    as a button's label or a tooltip)."""
    runs = hidden_runs(text)
    out: list[str] = []
    pos = 0
    for run in runs:
        out.append(text[pos : run.start])
        out.append(f"⟨{run.label}⟩")
        pos = run.end
    out.append(text[pos:])
    return "".join(out)


def count_hidden(text: str) -> Counter[HiddenKind]:
    """How many hidden characters of each kind ``text`` holds."""
    found: Counter[HiddenKind] = Counter()
    if text.isascii() and text.isprintable():
        return found
    for run in hidden_runs(text):
        found[run.kind] += run.end - run.start
    return found


def json_strings(value: Any) -> Iterator[str]:
    """Every key and string of a parsed JSON value, depth first."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield str(key)
            yield from json_strings(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from json_strings(item)


SHOWN_DEPTH = 64
"""How deep the JSON of a call's arguments may nest and still be shown as a tree; deeper
(``[[[[...]]]]`` thousands deep, which the model may send) is shown as its text."""
NOT_SHOWN: Any = object()
"""What ``shown_arguments`` returns for text it does not show as a tree."""


def shown_arguments(raw: object) -> Any:
    """A call's argument text parsed for display, or ``NOT_SHOWN`` (not JSON, or nested
    deeper than ``SHOWN_DEPTH``): the one parse every view of a call's arguments uses, so
    no text the model sends can make a view or the transcript fail."""
    if type(raw) is not str or _depth_over(raw, SHOWN_DEPTH):
        return NOT_SHOWN
    try:
        return json.loads(raw)
    except (ValueError, TypeError, RecursionError):
        return NOT_SHOWN


def _depth_over(text: str, limit: int) -> bool:
    """Whether the brackets of ``text`` (outside strings) nest deeper than ``limit``."""
    if text.count("[") + text.count("{") <= limit:
        return False
    depth = 0
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            if depth > limit:
                return True
        elif ch in "]}":
            depth -= 1
    return False


def count_in_arguments(raw: str) -> Counter[HiddenKind]:
    """Hidden characters in a call's arguments: in the keys and strings of the JSON
    (``"\\u202e"`` in the raw text is one), or in the raw text when it is not JSON."""
    parsed = shown_arguments(raw)
    if parsed is NOT_SHOWN:
        parsed = raw
    total: Counter[HiddenKind] = Counter()
    for s in json_strings(parsed):
        total.update(count_hidden(s))
    return total


_KIND_WORDS: dict[HiddenKind, str] = {
    "direction": "direction-changing",
    "invisible": "invisible",
    "tag": "hidden-ASCII tag",
    "control": "control",
}


def hidden_summary(found: Counter[HiddenKind]) -> str:
    """``3 invisible or direction-changing characters (2 direction-changing, 1 invisible)``;
    "" when there are none."""
    total = sum(found.values())
    if not total:
        return ""
    kinds = ", ".join(f"{found[k]} {_KIND_WORDS[k]}" for k in _KIND_WORDS if found[k])
    noun = "character" if total == 1 else "characters"
    return f"{total} invisible or direction-changing {noun} ({kinds})"


def hidden_warning(found: Counter[HiddenKind]) -> str:
    """The approval card's warning line ("" when there is nothing to warn about)."""
    summary = hidden_summary(found)
    if not summary:
        return ""
    return f"⚠ This call contains {summary}, shown as ⟨U+…⟩; what you see may not be what runs."


def transcript_warning(found: Counter[HiddenKind]) -> str:
    """The transcript's line on a call whose arguments held hidden characters."""
    summary = hidden_summary(found)
    return f"⚠ The arguments contain {summary}, shown as ⟨U+…⟩." if summary else ""
