"""The pure-Python engine of ``grep``: the same output as ripgrep, for when ``rg`` is
missing. Files come from the ripgrep-compatible walker of ``_ignore``; files holding a NUL
byte are skipped (as rg skips binary files it finds by walking); the regex runs over the
whole text with ``re.MULTILINE`` and reports lines as rg does (in line mode a match never
spans lines: one that does is re-tried line by line)."""

from __future__ import annotations

import os
import re
import stat
import threading
from typing import TYPE_CHECKING, Any

from nb_tools.builtin._common import ToolError
from nb_tools.builtin._ignore import PathFilter, walk_files

if TYPE_CHECKING:
    from nb_tools.builtin._grep import Found, Query

__all__ = ["python_pattern", "search_python"]

_POSIX = {
    "alnum": "0-9A-Za-z", "alpha": "A-Za-z", "ascii": "\\x00-\\x7F", "blank": "\\t ",
    "cntrl": "\\x00-\\x1F\\x7F", "digit": "0-9", "graph": "!-~", "lower": "a-z",
    "print": " -~", "punct": "!-/:-@\\[-`{-~", "space": "\\t\\n\\v\\f\\r ", "upper": "A-Z",
    "word": "0-9A-Za-z_", "xdigit": "0-9A-Fa-f",
}  # fmt: skip
_RUST_ONLY = re.compile(r"\\.|\[:(\^?)([a-z]+):\]|\(\?<(?=[A-Za-z_])")


def python_pattern(pattern: str) -> str:
    """Rust regex syntax that Python's ``re`` spells differently: POSIX classes
    (``[[:alpha:]]``), ``\\z``, ``(?<name>...)``. Other Rust-only syntax (``\\pL``) makes
    ``re`` fail with an error that names it."""

    def swap(m: re.Match[str]) -> str:
        tok = m.group()
        if tok == "\\z":
            return "\\Z"
        if tok.startswith("(?<"):
            return "(?P<"
        if tok.startswith("[:") and m.group(2) in _POSIX:
            if m.group(1):
                raise ToolError(f"grep: negated POSIX class {tok} is not supported here")
            return _POSIX[m.group(2)]
        return tok

    return _RUST_ONLY.sub(swap, pattern)


def search_python(
    rx: re.Pattern[str],
    q: Query,
    target: str,
    found: Found,
    stop: threading.Event,
    max_lines: int,
) -> None:
    """Search ``target`` (a folder: the files ripgrep would list; or one file) into
    ``found``, in path order, until done, ``stop`` is set or ``max_lines`` are collected."""
    if os.path.isdir(target):
        base = target
        names = walk_files(target, stop)
        keep = PathFilter(q.globs, q.types)
        if keep.active:
            names = [n for n in names if keep(n)]
        names.sort()
    else:
        base, names = os.path.dirname(target), [os.path.basename(target)]
    for name in names:
        if stop.is_set():
            return
        data = _read_text_bytes(os.path.join(base, name))
        if data is None:
            continue
        text, lossy = _decode(data)
        if q.mode == "files_with_matches":
            if _first_line(rx, text, q.multiline) is not None:
                found.files.append(name)
                found.collected += 1
            continue
        hits = _matching_lines(rx, text, q.multiline)
        if not hits:
            continue
        if q.mode == "count":
            found.counts[name] = len(hits)
            found.collected += 1
            continue
        lines = _context_lines(text, hits, q, lossy)
        found.lines[name] = lines
        found.collected += len(lines)
        if found.collected > max_lines:
            found.overflow = True
            return


def _decode(data: bytes) -> tuple[str, bool]:
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    elif data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return data.decode("utf-16", "replace"), False
    try:
        return data.decode("utf-8"), False
    except UnicodeDecodeError:
        return data.decode("utf-8", "surrogateescape"), True


def _iter_hits(rx: re.Pattern[str], text: str, multiline: bool) -> Any:
    """Yield (first line, last line) of each match, 1-based, as ripgrep reports them:
    in line mode a match never spans lines (one that does is re-tried line by line)."""
    n = len(text)
    phantom = n == 0 or text.endswith("\n")  # no line starts at the very end
    line = 1
    pos = 0
    for m in rx.finditer(text):
        s, e = m.span()
        if s == n and phantom:
            return
        line += text.count("\n", pos, s)
        pos = s
        end_line = line + text.count("\n", s, max(s, e - 1))
        if multiline:
            yield line, end_line
            continue
        if text.find("\n", s, e) < 0:
            yield line, line
            continue
        start = text.rfind("\n", 0, s) + 1
        for k in range(line, end_line + 1):
            stop = text.find("\n", start)
            stop = n if stop < 0 else stop
            if rx.search(text, start, stop) is not None:
                yield k, k
            start = stop + 1


def _first_line(rx: re.Pattern[str], text: str, multiline: bool) -> int | None:
    for first, _ in _iter_hits(rx, text, multiline):
        return first
    return None


def _matching_lines(rx: re.Pattern[str], text: str, multiline: bool) -> list[tuple[int, int]]:
    """Distinct (start, end) line spans; the count is the number of distinct start lines."""
    out: list[tuple[int, int]] = []
    for first, last in _iter_hits(rx, text, multiline):
        if out and out[-1][0] == first:
            if last > out[-1][1]:
                out[-1] = (first, last)
            continue
        out.append((first, last))
    return out


def _context_lines(
    text: str, hits: list[tuple[int, int]], q: Query, lossy: bool
) -> list[tuple[int, bool, str]]:
    lines = text.split("\n")
    if text.endswith("\n"):
        lines.pop()
    total = len(lines)
    matched: set[int] = set()
    for first, last in hits:
        matched.update(range(first, last + 1))
    wanted: set[int] = set(matched)
    if q.before or q.after:
        for k in matched:
            wanted.update(range(max(1, k - q.before), min(total, k + q.after) + 1))
    out = []
    for k in sorted(wanted):
        line = lines[k - 1]
        if lossy:
            line = line.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
        out.append((k, k in matched, line))
    return out


MAX_SEARCH_BYTES = 256 << 20
"""The pure-Python search skips a file larger than this (it reads a file whole; ripgrep
streams it): a huge log or a sparse file would exhaust the kernel's memory."""
_NONBLOCK = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0)


def _read_text_bytes(path: str) -> bytes | None:
    """The bytes of the regular file ``path``, or ``None`` for what is not searched: not a
    regular file (a FIFO swapped in never blocks: opened non-blocking), binary (a NUL byte,
    looked for in the first 8 KiB before the rest is read), larger than
    :data:`MAX_SEARCH_BYTES`, or unreadable."""
    try:
        fd = os.open(path, _NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_SEARCH_BYTES:
            return None
        head = os.read(fd, 8192)
        if b"\0" in head:
            return None
        with os.fdopen(os.dup(fd), "rb") as f:
            data = head + f.read(MAX_SEARCH_BYTES)
    except OSError:
        return None
    finally:
        os.close(fd)
    return None if b"\0" in data else data
