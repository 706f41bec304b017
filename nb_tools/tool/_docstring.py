"""Split a docstring into the tool description and per-parameter descriptions.

Understands the three styles in common use: Google (``Args:`` sections), NumPy
(``Parameters`` underlined with dashes) and reST/Sphinx (``:param name: desc``). Parameter,
Returns, Raises and Yields sections are removed from the description; other sections
(Examples, Notes) stay, since they can help the model.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable

__all__ = ["parse_docstring"]

_PARAM_SECTIONS = frozenset(
    {
        "args",
        "arguments",
        "parameters",
        "params",
        "keyword args",
        "keyword arguments",
        "kwargs",
        "other parameters",
        "other params",
        "attributes",
    }
)
_DROP_SECTIONS = frozenset(
    {
        "returns",
        "return",
        "yields",
        "yield",
        "raises",
        "raise",
        "exceptions",
        "except",
        "receives",
        "warns",
    }
)
_KNOWN_SECTIONS = (
    _PARAM_SECTIONS
    | _DROP_SECTIONS
    | frozenset(
        {
            "examples",
            "example",
            "notes",
            "note",
            "see also",
            "references",
            "methods",
            "todo",
            "warning",
            "warnings",
            "tip",
            "important",
        }
    )
)

_GOOGLE_HEADER = re.compile(r"^([A-Za-z][A-Za-z ]*):\s*$")
_GOOGLE_ENTRY = re.compile(r"^\*{0,2}([A-Za-z_]\w*)\s*(?:\((.*?)\))?\s*:\s*(.*)$")
_NUMPY_RULE = re.compile(r"^\s*-{3,}\s*$")
_NUMPY_ENTRY = re.compile(r"^\*{0,2}([A-Za-z_]\w*(?:\s*,\s*\*{0,2}[A-Za-z_]\w*)*)\s*(?::\s*(.*))?$")
_REST_FIELD = re.compile(r"^:(\w+)((?:\s+[^:]+?)?)\s*:\s*(.*)$")
_REST_PARAM = frozenset({"param", "parameter", "arg", "argument", "key", "keyword"})


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _join(parts: list[str]) -> str:
    return " ".join(p.strip() for p in parts if p.strip())


def parse_docstring(doc: str | None) -> tuple[str, dict[str, str]]:
    """Return ``(description, {parameter: description})`` for a docstring."""
    if not doc:
        return "", {}
    lines = inspect.cleandoc(doc).splitlines()
    params: dict[str, str] = {}
    kept: list[str] = []
    i = 0
    n = len(lines)
    while i < n:
        line = lines[i]
        stripped = line.strip()
        section = _numpy_section(lines, i) or _google_section(lines, i)
        if section is not None:
            name, body_start, j, read_params = section
            if name in _PARAM_SECTIONS:
                read_params(lines[body_start:j], params)
            elif name not in _DROP_SECTIONS:
                kept.extend(lines[i:j])
            i = j
            continue
        # reST field list: ":param x: ..." plus more-indented continuation lines.
        m = _REST_FIELD.match(stripped)
        if m:
            base = _indent(line)
            j = i + 1
            cont = [m.group(3)]
            while j < n and lines[j].strip() and _indent(lines[j]) > base:
                cont.append(lines[j])
                j += 1
            kind, arg = m.group(1).lower(), m.group(2).split()
            if kind in _REST_PARAM and arg:
                params[arg[-1].lstrip("*")] = _join(cont)
            i = j
            continue
        kept.append(line)
        i += 1
    description = "\n".join(kept).strip()
    description = re.sub(r"\n{3,}", "\n\n", description)
    return description, params


_Section = tuple[str, int, int, Callable[[list[str], dict[str, str]], None]]
"""A section starting at a line: its name, where its body starts and ends, and the reader
of its parameter entries."""


def _numpy_section(lines: list[str], i: int) -> _Section | None:
    """NumPy: a known section name underlined with dashes; it runs to the next underline."""
    n = len(lines)
    stripped = lines[i].strip()
    if not (
        i + 1 < n
        and _NUMPY_RULE.match(lines[i + 1])
        and stripped
        and stripped.lower() in _KNOWN_SECTIONS
    ):
        return None
    j = i + 2
    while j < n and not (j + 1 < n and _NUMPY_RULE.match(lines[j + 1]) and lines[j].strip()):
        j += 1
    return stripped.lower(), i + 2, j, _numpy_params


def _google_section(lines: list[str], i: int) -> _Section | None:
    """Google: "Args:" (a known section name and a colon) followed by an indented block."""
    m = _GOOGLE_HEADER.match(lines[i])
    if not (m and m.group(1).strip().lower() in _KNOWN_SECTIONS):
        return None
    base = _indent(lines[i])
    j = i + 1
    while j < len(lines) and (not lines[j].strip() or _indent(lines[j]) > base):
        j += 1
    return m.group(1).strip().lower(), i + 1, j, _google_params


def _google_params(body: list[str], params: dict[str, str]) -> None:
    entries = [ln for ln in body if ln.strip()]
    if not entries:
        return
    base = _indent(entries[0])
    current: str | None = None
    parts: list[str] = []
    for line in body:
        if not line.strip():
            continue
        m = _GOOGLE_ENTRY.match(line.strip()) if _indent(line) <= base else None
        if m:
            if current is not None:
                params[current] = _join(parts)
            current, parts = m.group(1), [m.group(3)]
        elif current is not None:
            parts.append(line)
    if current is not None:
        params[current] = _join(parts)


def _numpy_params(body: list[str], params: dict[str, str]) -> None:
    entries = [ln for ln in body if ln.strip()]
    if not entries:
        return
    base = _indent(entries[0])
    names: list[str] = []
    parts: list[str] = []

    def flush() -> None:
        for name in names:
            params[name] = _join(parts)

    for line in body:
        if not line.strip():
            continue
        m = _NUMPY_ENTRY.match(line.strip()) if _indent(line) <= base else None
        if m:
            flush()
            names = [x.strip().lstrip("*") for x in m.group(1).split(",")]
            parts = []
        else:
            parts.append(line)
    flush()
