"""Strict parsing of I-JSON messages (RFC 7493).

Python's ``json`` accepts NaN/Infinity, keeps the last of duplicate keys, lets lone
surrogate escapes through and, given bytes, accepts UTF-16 and a BOM. Tool arguments are
read by hooks, permission rules and remote servers as well as by the tool, so anything two
parsers could read differently is rejected here, with the JSON path of each problem.

The fast path is one C-scanner pass with a duplicate-detecting pairs hook; the slower
walk that names paths only runs when something is wrong (or a ``\\ud`` escape occurs).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from json.scanner import make_scanner
from typing import Any

from nb_tools.tool._types import ValidationError

__all__ = ["json_type", "loads_ijson", "pointer", "pointer_token"]

_WS = " \t\n\r"
_WS_CHARS = frozenset(_WS)
_BOMS = (b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff")
_SURROGATE = re.compile("[\ud800-\udfff]")


class _DuplicateKey(Exception):
    pass


class _NonFinite(Exception):
    pass


def _pairs_fast(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    d = dict(pairs)
    if len(d) != len(pairs):
        raise _DuplicateKey
    return d


def _reject_constant(name: str) -> Any:
    raise _NonFinite(name)


def _finite_float(literal: str) -> float:
    f = float(literal)
    if f - f != 0.0:  # 1e400 overflows to inf
        raise _NonFinite(literal)
    return f


# ``make_scanner`` (json.scanner's one public name) gives the C scanner without
# JSONDecoder.decode's extra whitespace regex passes; we skip whitespace ourselves.
_scan_fast = make_scanner(
    json.JSONDecoder(  # type: ignore[arg-type]  # typeshed's odd stub
        object_pairs_hook=_pairs_fast, parse_constant=_reject_constant, parse_float=_finite_float
    )
)


class _Pairs(list):  # type: ignore[type-arg]
    """An object as its member list, duplicates kept (slow path only)."""


class _Constant:
    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name


def _float_or_constant(literal: str) -> Any:
    f = float(literal)
    return f if f - f == 0.0 else _Constant(literal)


_scan_slow = make_scanner(
    json.JSONDecoder(  # type: ignore[arg-type]
        object_pairs_hook=_Pairs, parse_constant=_Constant, parse_float=_float_or_constant
    )
)


def pointer_token(key: str) -> str:
    """One JSON Pointer reference token (RFC 6901), printable even for lone surrogates."""
    token = key.replace("~", "~0").replace("/", "~1")
    if _SURROGATE.search(token):
        token = _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", token)
    return token


def pointer(parts: list[str | int] | tuple[str | int, ...]) -> str:
    """A JSON Pointer for display; the root is ``/``."""
    if not parts:
        return "/"
    return "".join("/" + (pointer_token(p) if isinstance(p, str) else str(p)) for p in parts)


def json_type(value: Any) -> str:
    """The JSON Schema type name of a parsed JSON value (``1.0`` is an integer)."""
    t = type(value)
    if t is str:
        return "string"
    if t is bool:
        return "boolean"
    if t is int:
        return "integer"
    if t is float:
        return "integer" if value.is_integer() else "number"
    if value is None:
        return "null"
    if t is list:
        return "array"
    if t is dict:
        return "object"
    return type(value).__name__


def _syntax_problem(text: str, msg: str, pos: int) -> ValidationError:
    line = text.count("\n", 0, pos) + 1
    col = pos - text.rfind("\n", 0, pos)
    return ValidationError([f"invalid JSON at line {line} column {col}: {msg}"])


def _too_deep() -> ValidationError:
    return ValidationError(["invalid JSON: nested too deeply to parse; flatten the arguments"])


def _decode_bytes(raw: bytes) -> str:
    if raw.startswith(_BOMS):
        raise ValidationError(
            ["invalid JSON: the text starts with a byte order mark; send UTF-8 without a BOM"]
        )
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ValidationError(
            [f"invalid JSON: not valid UTF-8 at byte {e.start} ({e.reason}); send UTF-8 text"]
        ) from None


def _check_str(text: str) -> None:
    if text.startswith("\ufeff"):
        raise ValidationError(
            ["invalid JSON: the text starts with a byte order mark (U+FEFF); remove it"]
        )
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as e:
            raise ValidationError(
                [
                    f"invalid JSON: lone surrogate U+{ord(text[e.start]):04X} at offset {e.start} "
                    "is not Unicode text"
                ]
            ) from None


def loads_ijson(raw: str | bytes | bytearray | memoryview) -> Any:
    """Parse ``raw`` as an I-JSON message, raising ``ValidationError`` for anything else:
    invalid JSON, trailing data, invalid UTF-8, a BOM, duplicate member names, lone
    surrogate escapes, NaN/Infinity, numbers that overflow a double and nesting too deep
    for the parser."""
    if type(raw) is str:
        text = raw
        if not text.isascii():
            _check_str(text)
    elif isinstance(raw, str):
        text = str(raw)
        _check_str(text)
    elif isinstance(raw, bytes | bytearray | memoryview):
        text = _decode_bytes(bytes(raw))
    else:
        raise TypeError(f"loads_ijson: expected str or bytes, got {type(raw).__name__}")

    start = 0
    if text[:1] in _WS_CHARS:
        start = len(text) - len(text.lstrip(_WS))
    try:
        value, end = _scan(_scan_fast, text, start)
    except (_DuplicateKey, _NonFinite):
        _slow(text, start)
        raise AssertionError("unreachable: the slow path found no problem") from None
    if end != len(text):
        rest = text[end:]
        if rest.strip(_WS):
            raise _syntax_problem(text, "Extra data", end + len(rest) - len(rest.lstrip(_WS)))
    if "\\u" in text and ("\\ud" in text or "\\uD" in text):
        problems = _walk(value)
        if problems:
            raise ValidationError(problems)
    return value


def _scan(scan: Callable[[str, int], tuple[Any, int]], text: str, start: int) -> tuple[Any, int]:
    """``scan(text, start)`` with the scanner's failures raised as ``ValidationError``:
    a syntax error at its position, nesting too deep for the parser."""
    try:
        return scan(text, start)
    except StopIteration as e:
        raise _syntax_problem(text, "Expecting value", e.value) from None
    except json.JSONDecodeError as e:
        raise _syntax_problem(text, e.msg, e.pos) from None
    except RecursionError:
        raise _too_deep() from None


def _slow(text: str, start: int) -> None:
    """Re-parse keeping duplicates and constants, then raise with every problem's path."""
    value, end = _scan(_scan_slow, text, start)
    problems = _walk(value)
    if end != len(text) and text[end:].strip(_WS):
        problems.append(_syntax_problem(text, "Extra data", end).problems[0])
    raise ValidationError(problems)


def _walk(root: Any) -> list[str]:
    """Every I-JSON problem in a parsed tree, iteratively (the tree may be deep)."""
    problems: list[str] = []
    stack: list[tuple[Any, tuple[str | int, ...]]] = [(root, ())]
    while stack:
        value, path = stack.pop()
        t = type(value)
        if t is str:
            if _SURROGATE.search(value):
                problems.append(
                    f"{pointer(path)}: string contains a lone surrogate escape "
                    "(\\ud800-\\udfff without its pair)"
                )
        elif t is _Constant:
            if value.name in ("NaN", "Infinity", "-Infinity"):
                problems.append(
                    f"{pointer(path)}: {value.name} is not a JSON number; use null or a string"
                )
            else:
                shown = value.name if len(value.name) <= 30 else value.name[:27] + "..."
                problems.append(
                    f"{pointer(path)}: {shown} is out of the range of a double "
                    "(I-JSON); send it as a string"
                )
        elif t is list:
            stack.extend((v, (*path, i)) for i, v in reversed(list(enumerate(value))))
        elif t is _Pairs or t is dict:
            items = list(value) if t is _Pairs else list(value.items())
            seen: set[str] = set()
            todo = []
            for k, v in items:
                here = (*path, k)
                if _SURROGATE.search(k):
                    problems.append(
                        f"{pointer(here)}: member name contains a lone surrogate escape"
                    )
                if k in seen:
                    problems.append(f"{pointer(here)}: duplicate key")
                    continue
                seen.add(k)
                todo.append((v, here))
            stack.extend(reversed(todo))
    return problems
