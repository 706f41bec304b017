"""A tolerant read of a tool call's arguments while the model is still writing them.

The JSON text arrives in pieces cut anywhere: inside a key, a number, an escape, between
the two halves of a surrogate pair. :class:`PartialArguments` takes the pieces and gives,
at any moment, the value so far: complete members as they are, the string being written
up to its last whole character, and nothing of what cannot be known yet (a key in
progress, a number or ``true`` that may go on, half an escape, the high half of a pair).
Each piece is scanned once (the state carries over), so a long file streams in linear
time; :meth:`PartialArguments.value` then parses a completed copy of the text with
``json``.
"""

from __future__ import annotations

import json
import re
from typing import Any

from nb_tools.transcript._visible import NOT_SHOWN, SHOWN_DEPTH, shown_arguments

_PLAIN = re.compile(r'[^"\\]*')
_HEX = frozenset("0123456789abcdefABCDEF")
_DELIMITERS = frozenset(",}] \t\r\n")


class PartialArguments:
    """Feed pieces with :meth:`feed`; read the arguments so far with :meth:`value`."""

    def __init__(self) -> None:
        self.text = ""
        self._pos = 0  # scanned up to here
        self._stack: list[str] = []  # the open containers, "{" or "["
        self._expect: list[str] = []  # per container: "key", "colon", "value", "comma"
        self._safe = 0  # text[:safe] + closers(safe_stack) is valid JSON
        self._safe_stack: tuple[str, ...] = ()
        self._in_string = False
        self._string_start = 0
        self._string_is_key = False
        self._keys: list[str] = []  # per open container: its last key ("" in an array)
        self._escape: int | None = None  # where an unfinished escape started
        self._high: int | None = None  # where a \\uD8xx-\\uDBxx escape just ended (its start)
        self._high_end = -1
        self._scalar: int | None = None  # a number or literal in progress
        self._broken = False
        self._last: Any = None

    def feed(self, piece: str) -> None:
        """Add the next piece of the JSON text."""
        self.text += piece
        if not self._broken:
            self._scan()

    # -- scanning ----------------------------------------------------------------------

    def _scan(self) -> None:
        text, i, n = self.text, self._pos, len(self.text)
        while i < n:
            if self._in_string:
                i = self._scan_string(text, i, n)
                continue
            ch = text[i]
            if self._scalar is not None:
                if ch not in _DELIMITERS:
                    i += 1
                    continue
                self._scalar = None
                self._after_value(i)
            if ch in " \t\r\n":
                i += 1
                continue
            expect = self._expect[-1] if self._expect else "value"
            if ch == '"':
                if expect not in ("key", "value"):
                    return self._break()
                self._in_string, self._string_start = True, i
                self._string_is_key = expect == "key"
            elif ch in "{[":
                if expect != "value" or len(self._stack) >= SHOWN_DEPTH:
                    return self._break()  # deeper than any view shows: read no further
                self._stack.append(ch)
                self._expect.append("key" if ch == "{" else "value")
                self._keys.append("")
                self._mark(i + 1)
            elif ch in "}]":
                if not self._stack or "{[".index(self._stack[-1]) != "}]".index(ch):
                    return self._break()
                if expect not in ("comma", "key" if ch == "}" else "value"):
                    return self._break()  # a trailing comma, or "}" after a colon
                self._stack.pop()
                self._expect.pop()
                self._keys.pop()
                self._after_value(i + 1)
            elif ch == ":":
                if expect != "colon":
                    return self._break()
                self._expect[-1] = "value"
            elif ch == ",":
                if expect != "comma":
                    return self._break()
                self._expect[-1] = "key" if self._stack[-1] == "{" else "value"
            else:
                if expect != "value":
                    return self._break()
                self._scalar = i
            i += 1
        self._pos = i

    def _scan_string(self, text: str, i: int, n: int) -> int:
        """Scan inside a string from ``i``; return where scanning goes on."""
        start = self._escape
        if start is not None:
            if i == start + 1:  # the character after the backslash
                if text[i] in '"\\/bfnrt':
                    self._escape = None
                    return i + 1
                if text[i] != "u":
                    self._break()
                    return n
                i += 1
            end = start + 6
            while i < min(n, end):
                if text[i] not in _HEX:
                    self._break()
                    return n
                i += 1
            if i < end:
                return i
            if 0xD800 <= int(text[start + 2 : end], 16) <= 0xDBFF:
                self._high, self._high_end = start, end
            self._escape = None
            return i
        match = _PLAIN.match(text, i)
        i = match.end() if match else i
        if i >= n:
            return i
        if text[i] == "\\":
            self._escape = i
            return i + 1
        self._in_string = False  # the closing quote
        if self._string_is_key:
            self._expect[-1] = "colon"
            try:
                self._keys[-1] = json.loads(text[self._string_start : i + 1])
            except ValueError:
                self._keys[-1] = ""
        else:
            self._after_value(i + 1)
        return i + 1

    def _after_value(self, end: int) -> None:
        if self._expect:
            self._expect[-1] = "comma"
        self._mark(end)

    def _mark(self, end: int) -> None:
        self._safe, self._safe_stack = end, tuple(self._stack)

    def _break(self) -> None:
        """Not JSON: keep the last value read, read no further."""
        self._broken = True

    # -- reading -----------------------------------------------------------------------

    @property
    def open_key(self) -> str | None:
        """The top-level member whose string value is being written (``None``: none is),
        e.g. to wait until a path is whole before using it."""
        if self._in_string and not self._string_is_key and len(self._stack) == 1:
            return self._keys[0] if self._stack[0] == "{" else None
        return None

    def value(self) -> Any:
        """The arguments so far (``None`` before anything can be read). A string being
        written is cut after its last whole character (an escape or a surrogate pair
        still incomplete is left out); a member whose key or scalar is unfinished is
        left out."""
        if self._broken:
            return self._last
        text = self.text
        if self._in_string and not self._string_is_key and self._stack:
            end = len(text)
            if self._escape is not None:
                end = self._escape
            if self._high is not None and self._high_end == end:
                end = self._high  # a pair's first half alone would be a lone surrogate
            completed = text[:end] + '"' + _closers(self._stack)
        elif self._safe_stack:
            completed = text[: self._safe] + _closers(self._safe_stack)
        elif self._safe and not self._stack and not self._in_string:
            completed = text[: self._safe]  # a complete top-level value
        else:
            return self._last
        value = shown_arguments(completed)
        if value is NOT_SHOWN:
            return self._last
        self._last = value
        return value


def _closers(stack: tuple[str, ...] | list[str]) -> str:
    return "".join("}" if c == "{" else "]" for c in reversed(stack))


def completed_arguments(text: str) -> Any:
    """The arguments readable from ``text``, a prefix of a call's JSON (one-shot
    :class:`PartialArguments`)."""
    reader = PartialArguments()
    reader.feed(text)
    return reader.value()
