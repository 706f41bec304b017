"""``grep``: regex search over the workspace, with Claude Code's Grep parameters.

ripgrep does the search when its binary is there (see ``_rg``); otherwise a pure-Python
search gives the same output. Both list files with ripgrep's ignore rules
(``--no-require-git``: ``.gitignore`` counts outside git repositories too), apply the
user's glob and type after listing (a positive ``rg -g`` would bring ignored files back,
so what it brings back is dropped again), skip binary files (a NUL byte), and sort the
result by path afterwards (``rg --sort path`` would turn off its parallelism).
"""

from __future__ import annotations

import asyncio
import os
import re
import stat
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from nb_tools.builtin._common import ToolError, redact_output
from nb_tools.builtin._grep_python import python_pattern, search_python
from nb_tools.builtin._ignore import (
    TYPES,
    PathFilter,
    check_glob,
    recheck_paths,
    rg_filter_args,
)
from nb_tools.builtin._rg import RgUnavailable, run_rg
from nb_tools.builtin._searchtool import SearchTool
from nb_tools.builtin._workspace import Workspace, WorkspaceError
from nb_tools.sandbox import (
    hard_linked,
    holds_private_key,
    home_dot_reason,
    homes_in,
    write_protected,
)
from nb_tools.tool import Result, Schema, progress
from nb_tools.tool._grant import current_grant

__all__ = ["GrepTool"]

_T = TypeVar("_T")

MAX_LINE_CHARS = 500
MAX_COLLECTED_LINES = 100_000
MAX_COLLECTED_BYTES = 32 << 20
"""What rg may print before the search stops (one minified bundle or one-line JSON of a
GB would otherwise be held, several times over, in the kernel)."""
MAX_COLUMNS = 1 << 16
"""rg prints at most this many bytes of a line (``--max-columns``), then its marker."""
_RG_LONG_LINE = " [... omitted end of long line]"
PROGRESS_EVERY = 1.0  # seconds

_DESCRIPTION = """\
Search file contents with a regular expression (ripgrep syntax, e.g. "log.*Error", \
"function\\s+\\w+"). Honours .gitignore/.ignore and skips hidden and binary files, and \
protected files (.env*, .ssh/, credentials) unless `path` names one (that asks the user). \
Literal braces need escaping ("interface\\{\\}"). Look-around and backreferences are not \
supported. Filter files with `glob` ("*.py", "**/*.{ts,tsx}", "!*.min.js") or `type` \
("py", "js", "rust"). output_mode: "files_with_matches" (default: paths), "content" \
(matching lines as path:line:text; -A/-B/-C context, -n line numbers, -i ignore case) or \
"count" (matching lines per file). `multiline` lets . and patterns span lines. Results \
are sorted by path; head_limit (default 250, 0 = all) and offset page through them. \
Paths are relative to the workspace root."""

PARAMETERS = Schema.object(
    {
        "pattern": Schema.string("The regular expression to search for."),
        "path": Schema.string("File or folder to search (default: the workspace root)."),
        "glob": Schema.string('Only files matching this glob, e.g. "*.js", "**/*.{ts,tsx}".'),
        "type": Schema.string('Only files of this type (ripgrep names: "py", "js", "rust"...).'),
        "output_mode": Schema(
            type="string",
            enum=["files_with_matches", "content", "count"],
            description='What to show (default "files_with_matches").',
        ),
        "-i": Schema.boolean("Case-insensitive search."),
        "-n": Schema.boolean("Show line numbers (content mode; default true)."),
        "-A": Schema(type="integer", minimum=0, description="Lines of context after a match."),
        "-B": Schema(type="integer", minimum=0, description="Lines of context before a match."),
        "-C": Schema(type="integer", minimum=0, description="Lines of context around a match."),
        "multiline": Schema.boolean("Let patterns span lines; . matches newlines."),
        "head_limit": Schema(
            type="integer", minimum=0, description="Show at most this many (default 250; 0: all)."
        ),
        "offset": Schema(type="integer", minimum=0, description="Skip this many first (0)."),
    },
    "pattern",
)


@dataclass(frozen=True, kw_only=True)
class Query:
    """A parsed grep call, independent of the engine that runs it."""

    pattern: str
    mode: str
    ignore_case: bool
    multiline: bool
    before: int
    after: int
    globs: tuple[str, ...] = ()
    types: tuple[str, ...] = ()


@dataclass
class Found:
    """What a search collected: per file (path relative to the searched folder), its
    output lines (line number, is a match, text) or its count."""

    lines: dict[str, list[tuple[int, bool, str]]] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)
    files: list[str] = field(default_factory=list)
    collected: int = 0
    overflow: bool = False
    too_big: bool = False  # stopped at MAX_COLLECTED_BYTES
    cut_off: bool = False


_UNSUPPORTED = re.compile(r"\\.|\(\?<?[=!]")


_NEWLINE_ESCAPES = ("\\n", "\\x0a", "\\x0A", "\\x{a}", "\\x{A}", "\\u000a", "\\u000A")


def _matches_newline(pattern: str) -> bool:
    """Whether a pattern holds a line break outside a negated class (rg refuses those
    unless multiline is on)."""
    i, n = 0, len(pattern)
    cls: str | None = None  # None outside a class, else "^" (negated) or "" (plain)
    while i < n:
        c = pattern[i]
        if c == "\\":
            if cls != "^" and pattern.startswith(_NEWLINE_ESCAPES, i):
                return True
            i += 2
            continue
        if c == "\n" and cls != "^":
            return True
        if cls is None and c == "[":
            cls = "^" if pattern.startswith("[^", i) else ""
            i += 2 if cls else 1
            if i < n and pattern[i] == "]":
                i += 1
            continue
        if cls is not None and c == "]":
            cls = None
        i += 1
    return False


def check_pattern(pattern: str, multiline: bool = False) -> None:
    """Refuse look-around, backreferences and (without multiline) line breaks up front,
    the same way with or without rg."""
    if not multiline and _matches_newline(pattern):
        raise ToolError(
            f"grep: the pattern {pattern!r} matches a line break (\\n); pass multiline: true "
            f"to search across lines"
        )
    for m in _UNSUPPORTED.finditer(pattern):
        tok = m.group()
        if tok.startswith("("):
            raise ToolError(
                f"grep: the pattern {pattern!r} uses look-around ({tok}...), which ripgrep's "
                f"regex engine does not support (this ripgrep has no PCRE2); match the wider "
                f"text instead, or use -A/-B context and read the lines around the match"
            )
        if tok[1] in "123456789":
            raise ToolError(
                f"grep: the pattern {pattern!r} uses a backreference ({tok}), which ripgrep's "
                f"regex engine does not support; search for the literal text instead"
            )


class GrepTool(SearchTool):
    """The ``grep`` tool (``rg=None``: the pure-Python search)."""

    name = "grep"
    description = _DESCRIPTION
    reads_files = True
    parameters = PARAMETERS

    async def call(self, args: str | bytes) -> Result:
        try:
            a = self._parse(args)
            query, target = self._query(a)
            if target.is_file():
                self.workspace.refuse_unapproved_read(target, self.name)
        except (ToolError, WorkspaceError) as exc:
            return Result.error(str(exc))
        head = a.get("head_limit", 250)
        offset = a.get("offset", 0)
        show_n = a.get("-n", True)
        rel_base = self._prefix(target.parent if target.is_file() else target)
        try:
            rg = self.rg
            found = None
            if rg is not None:
                try:
                    found = await _run_rg(rg, query, str(target), str(self.workspace.root))
                except RgUnavailable:
                    rg = None  # fall back to the Python engine, same output
            if found is None:
                found = await _run_python(query, str(target))
        except ToolError as exc:
            return Result.error(str(exc))
        except OSError as exc:
            return Result.error(f"grep: {exc}")
        keep = None
        if not (_person_said_yes() and self.is_protected_call(args)):
            # Only a person's yes to a protected path shows everything; judged now too, the
            # protection could have been swapped in since the decision (a link).
            keep = _visible(str(target.parent if target.is_file() else target), self.workspace)
        text = render(found, query, rel_base, show_n=show_n, head=head, offset=offset, keep=keep)
        text, _hidden = redact_output(text)
        return Result(
            content=text,
            metadata={"engine": "rg" if rg is not None else "python", "cut_off": found.cut_off},
        )

    def _query(self, a: dict[str, Any]) -> tuple[Query, Any]:
        pattern = a["pattern"]
        check_pattern(pattern, bool(a.get("multiline")))
        target = self.workspace.resolve(a.get("path") or ".", tool="grep")
        try:
            mode = os.stat(target).st_mode
        except FileNotFoundError:
            raise ToolError(f"grep: {a.get('path')!r} does not exist in the workspace") from None
        if not (stat.S_ISDIR(mode) or stat.S_ISREG(mode)):
            kind = "a FIFO" if stat.S_ISFIFO(mode) else "a device, socket or other special file"
            raise ToolError(
                f"grep: {a.get('path')!r} is {kind}; grep searches regular files and folders "
                f"(opening it could block forever)"
            )
        too_long = check_glob(a.get("glob") or "", "grep")
        if too_long:
            raise ToolError(too_long)
        typ = a.get("type")
        if typ is not None and typ not in TYPES:
            raise ToolError(
                f"grep: unknown file type {typ!r}; use one of {', '.join(sorted(TYPES))}, "
                f"or a glob such as '*.ext'"
            )
        ctx = a.get("-C", 0)
        query = Query(
            pattern=pattern,
            mode=a.get("output_mode", "files_with_matches"),
            ignore_case=a.get("-i", False),
            multiline=a.get("multiline", False),
            before=a.get("-B", ctx),
            after=a.get("-A", ctx),
            globs=(a["glob"],) if a.get("glob") else (),
            types=(typ,) if typ else (),
        )
        return query, target


def _person_said_yes() -> bool:
    grant = current_grant()
    return grant is None or (grant.approved and grant.kind == "person")


LAZY_ABOVE = 1000
"""With more matching files than this, the protection check runs only until the page
(``offset`` + ``head_limit``) is full, and the total is given as "more than"."""


def _visible(search_dir: str, workspace: Workspace) -> Callable[[str], bool]:
    """Whether a file found (its path relative to ``search_dir``) may be shown: not a
    protected file (the protection table's ``.env*``, ``.ssh/``, credentials, ..., and a
    home folder's dot-entries), not a file with several hard links (another name of it
    may be a secret outside the workspace), not a file that holds a private key whatever
    its name (``notes.txt`` holding an ``id_rsa``: a search for its base64 lines would show
    them, cut from their BEGIN line). The walk skips protected files as hidden
    files, but an ignore file's ``!`` line (text the repository controls) re-includes a
    hidden file, and a search is no click: its matches, counts and even the list of
    matching files (an oracle for the content, pattern after pattern) would leak a secret
    that ``read_file`` asks for. Saying which files were dropped would be the same oracle,
    so nothing is said. The search never follows symlinks, so the lexical path is the
    file's real one."""
    base = Path(search_dir)
    homes = homes_in(workspace.root)

    def keep(rel: str) -> bool:
        path = base / rel
        if write_protected(path.parts) is not None:
            return False
        if home_dot_reason(path, homes, workspace.root) is not None:
            return False
        return not hard_linked(path) and not holds_private_key(path)

    return keep


# -- output ------------------------------------------------------------------------------


def _cut(text: str) -> str:
    if text.endswith(_RG_LONG_LINE):  # rg kept only the first MAX_COLUMNS bytes
        return f"{text[:MAX_LINE_CHARS]} [... more than {MAX_COLUMNS - MAX_LINE_CHARS} more bytes]"
    if len(text) <= MAX_LINE_CHARS:
        return text
    return f"{text[:MAX_LINE_CHARS]} [... {len(text) - MAX_LINE_CHARS} more characters]"


def _visible_page(
    items: list[_T],
    key: Callable[[_T], str],
    keep: Callable[[str], bool] | None,
    head: int,
    offset: int,
) -> tuple[list[_T], int | None]:
    """The page ``[offset, offset + head)`` of the sorted ``items`` that ``keep`` accepts
    (by their file, ``key``), and how many it accepts in all; ``None`` when that was not
    counted (more than :data:`LAZY_ABOVE` files: checked only until the page is full and
    one more is found)."""
    end = offset + head if head else None
    if keep is None:
        return items[offset:end], len(items)
    files = {key(i) for i in items}
    if not head or len(files) <= LAZY_ABOVE:
        ok = {f for f in files if keep(f)}
        shown = [i for i in items if key(i) in ok]
        return shown[offset:end], len(shown)
    verdict: dict[str, bool] = {}
    out: list[_T] = []
    for item in items:
        f = key(item)
        if f not in verdict:
            verdict[f] = keep(f)
        if verdict[f]:
            if len(out) == offset + head:
                return out[offset:], None
            out.append(item)
    return out[offset:], len(out)


def _page_note(total: int | None, shown: int, offset: int, what: str) -> str:
    if total is None:
        end = offset + shown
        return f"(showing {what} {offset + 1}-{end}; pass offset={end} to see more)"
    if offset == 0 and shown == total:
        return ""
    end = offset + shown
    if not shown:
        return f"(offset {offset} is past the end: there are {total} {what})"
    more = f"; pass offset={end} to see more" if end < total else ""
    return f"(showing {what} {offset + 1}-{end} of {total}{more})"


def _count(n: int | None, shown: int, offset: int, what: str) -> str:
    return (
        f"{n} {what}{'s' if n != 1 else ''}"
        if n is not None
        else (f"more than {offset + shown} {what}s")
    )


def render(
    found: Found,
    q: Query,
    rel_base: str,
    *,
    show_n: bool,
    head: int,
    offset: int,
    keep: Callable[[str], bool] | None = None,
) -> str:
    """The text the model sees; the same for both engines. ``keep``: which files (paths
    relative to the searched folder) may be shown (``None``: all)."""
    notes: list[str] = []
    if q.mode == "files_with_matches":
        files = sorted(found.files)
        page, total = _visible_page(files, lambda p: p, keep, head, offset)
        note = _page_note(total, len(page), offset, "files")
        body = f"Found {_count(total, len(page), offset, 'file')}"
        text = (
            "\n".join([body + (f" {note}" if note else ""), *(rel_base + p for p in page)])
            if total != 0
            else "No files found"
        )
    elif q.mode == "count":
        items = sorted(found.counts.items())
        page, total = _visible_page(items, lambda i: i[0], keep, head, offset)
        if total == 0:
            text = "No matches found"
        else:
            lines = [f"{rel_base}{p}:{n}" for p, n in page]
            if total is None:
                summary = (
                    f"{sum(n for _, n in page)} matching lines in these files; "
                    f"{_count(total, len(page), offset, 'file')} match"
                )
            else:
                ok = found.counts if keep is None else None
                all_items = ok.items() if ok is not None else _all_visible(items, keep)
                n_lines = sum(n for _, n in all_items)
                summary = (
                    f"{n_lines} matching line{'s' if n_lines != 1 else ''} in "
                    f"{total} file{'s' if total != 1 else ''}"
                )
            text = "\n".join(lines) + f"\n\nFound {summary}"
            note = _page_note(total, len(page), offset, "files")
            if note:
                notes.append(note)
    else:
        rows: list[tuple[str, int, bool, str]] = [
            (path, ln, is_match, line)
            for path in sorted(found.lines)
            for ln, is_match, line in found.lines[path]
        ]
        files_seen = {r[0] for r in rows}
        if keep is not None and len(files_seen) <= LAZY_ABOVE:
            ok = {f for f in files_seen if keep(f)}
            rows = [r for r in rows if r[0] in ok]
            keep = None
        out, path_of = _content_lines(rows, q, rel_base, show_n)
        page, total = _visible_page(list(range(len(out))), lambda i: path_of[i], keep, head, offset)
        shown = [out[i] for i in page]
        text = "\n".join(shown) if total != 0 else "No matches found"
        note = _page_note(total, len(shown), offset, "lines")
        if note:
            notes.append(note)
    if found.overflow:
        notes.append(
            "(stopped after collecting "
            + (
                f"{MAX_COLLECTED_BYTES >> 20} MB of results"
                if found.too_big
                else f"{MAX_COLLECTED_LINES} result lines"
            )
            + ": the list is incomplete; narrow the pattern, path or glob)"
        )
    if found.cut_off:
        notes.append("(search cut off: cancelled before it finished; results are partial)")
    return "\n\n".join([text, *notes]) if notes else text


def _all_visible(
    items: list[tuple[str, int]], keep: Callable[[str], bool] | None
) -> list[tuple[str, int]]:
    return [i for i in items if keep is None or keep(i[0])]


def _content_lines(
    rows: list[tuple[str, int, bool, str]], q: Query, rel_base: str, show_n: bool
) -> tuple[list[str], list[str]]:
    """The content mode's output lines (``--`` between context groups) and, for each,
    the file it belongs to."""
    out: list[str] = []
    path_of: list[str] = []
    context = q.before > 0 or q.after > 0
    prev = -1
    for path, ln, is_match, line in rows:
        shown_path = rel_base + path
        if context and out and ln != prev + 1:
            out.append("--")
            path_of.append(path)
        sep = ":" if is_match else "-"
        line = _cut(line)
        out.append(f"{shown_path}{sep}{ln}{sep}{line}" if show_n else f"{shown_path}{sep}{line}")
        path_of.append(path)
        prev = ln
    return out, path_of


# -- ripgrep -----------------------------------------------------------------------------

_RG_LINE = re.compile(rb"(\d+)([:-])")


def rg_command(rg: str, q: Query, target: str) -> tuple[list[str], str, str]:
    """argv, working folder and whether results need the ignore re-check."""
    argv = [
        rg, "--no-config", "--no-require-git", "--no-ignore-global",
        "--color", "never", "--null", "--no-heading", "--with-filename",
    ]  # fmt: skip
    if q.ignore_case:
        argv.append("-i")
    if q.multiline:
        argv += ["-U", "--multiline-dotall"]
    if q.mode == "files_with_matches":
        argv.append("-l")
    elif q.mode == "count":
        argv.append("-c")
    else:
        argv += ["-n", "--max-columns", str(MAX_COLUMNS), "--max-columns-preview"]
        if q.before:
            argv += ["-B", str(q.before)]
        if q.after:
            argv += ["-A", str(q.after)]
    recheck = "none"
    if os.path.isdir(target):
        cwd = target
        narrow, recheck = rg_filter_args(q.globs, q.types)
        argv += [*narrow, "-g", "!.git", "-e", q.pattern]
    else:
        cwd = os.path.dirname(target)
        argv += ["-e", q.pattern, "--", os.path.basename(target)]
    return argv, cwd, recheck


async def _run_rg(rg: str, q: Query, target: str, workspace: str) -> Found:
    if os.path.isfile(target):
        await _check_text(target)
    argv, cwd, recheck = rg_command(rg, q, target)
    records = size = 0
    overflow = too_big = False
    last = time.monotonic()

    def on_chunk(chunk: bytes) -> bool:
        nonlocal records, size, overflow, too_big, last
        records += chunk.count(b"\0")
        size += len(chunk)
        too_big = size > MAX_COLLECTED_BYTES
        if records > MAX_COLLECTED_LINES or too_big:
            overflow = True
            return False
        now = time.monotonic()
        if now - last >= PROGRESS_EVERY:
            last = now
            progress(f"grep: {records} results so far\n")
        return True

    data, err, code, cut_off = await run_rg(argv, cwd, workspace=workspace, on_chunk=on_chunk)
    message = err.decode("utf-8", "replace").strip()
    if code == 2 and not data and message and "No files were searched" not in message:
        # A bad pattern; unreadable files alone still give results (and exit code 2).
        message = message.removeprefix("rg: ")
        raise ToolError(f"grep: ripgrep refused the pattern {q.pattern!r}: {message}")
    found = _parse_rg(data, q, complete=not (cut_off or overflow))
    found.cut_off, found.overflow, found.too_big = cut_off, overflow, too_big
    if os.path.isdir(target) and (q.globs or q.types):
        _recheck(found, target, q, recheck)
    return found


def _parse_rg(data: bytes, q: Query, *, complete: bool) -> Found:
    found = Found()
    if q.mode == "files_with_matches":
        parts = data.split(b"\0")
        if not complete:
            parts = parts[:-1]
        found.files = [p.decode("utf-8", "replace") for p in parts if p]
        return found
    lines = data.split(b"\n")
    if (lines and lines[-1] == b"") or not complete:
        lines.pop()
    if q.mode == "count":
        for line in lines:
            path, _, n = line.partition(b"\0")
            if n:
                found.counts[path.decode("utf-8", "replace")] = int(n)
        return found
    by_path = found.lines
    match = _RG_LINE.match
    last_path = b""
    bucket: list[tuple[int, bool, str]] = []
    for line in lines:
        path, sep, rest = line.partition(b"\0")
        if not sep:
            continue  # "--" between context groups: rebuilt when rendering
        m = match(rest)
        if m is None:
            continue
        if path != last_path:
            last_path = path
            bucket = by_path.setdefault(path.decode("utf-8", "replace"), [])
        bucket.append(
            (int(m.group(1)), m.group(2) == b":", rest[m.end() :].decode("utf-8", "replace"))
        )
    found.collected = len(lines)
    return found


def _recheck(found: Found, search_dir: str, q: Query, kind: str) -> None:
    """Apply glob and type exactly as the Python engine does, and drop what the rg filter
    let through that the ignore rules exclude."""
    keep = PathFilter(q.globs, q.types)
    paths = [p for p in (found.files or found.counts or found.lines) if keep(p)]
    allowed = set(recheck_paths(paths, search_dir, kind))
    found.files = [p for p in found.files if p in allowed]
    found.counts = {p: n for p, n in found.counts.items() if p in allowed}
    found.lines = {p: v for p, v in found.lines.items() if p in allowed}


def _refuse_binary(path: str, stop: threading.Event | None = None) -> None:
    """Raise ``ToolError`` if the regular file ``path`` holds a NUL byte. Reads the whole
    file (GBs for a data file): run it off the event loop (``_check_text``). Opened
    without blocking (a FIFO swapped in since the check) and refused unless regular."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            raise ToolError(f"grep: {os.path.basename(path)!r} is not a regular file")
        while chunk := f.read(1 << 20):
            if b"\0" in chunk:
                raise ToolError(
                    f"grep: {os.path.basename(path)!r} is a binary file (it holds NUL bytes); "
                    f"grep searches text files only"
                )
            if stop is not None and stop.is_set():
                return


async def _check_text(path: str) -> None:
    """``_refuse_binary`` in a thread: the kernel's event loop (and the Stop button) stays
    responsive while a big file is scanned; a cancelled call stops the scan."""
    stop = threading.Event()
    task = asyncio.ensure_future(asyncio.to_thread(_refuse_binary, path, stop))
    try:
        await asyncio.shield(task)
    except asyncio.CancelledError:
        stop.set()
        raise


# -- pure Python -------------------------------------------------------------------------


async def _run_python(q: Query, target: str) -> Found:
    try:
        flags = re.MULTILINE | (re.IGNORECASE if q.ignore_case else 0)
        rx = re.compile(python_pattern(q.pattern), flags | (re.DOTALL if q.multiline else 0))
    except re.error as exc:
        raise ToolError(f"grep: invalid pattern {q.pattern!r}: {exc}") from None
    if os.path.isfile(target):
        await _check_text(target)
    found = Found()
    stop = threading.Event()
    work = asyncio.ensure_future(
        asyncio.to_thread(search_python, rx, q, target, found, stop, MAX_COLLECTED_LINES)
    )
    last = time.monotonic()
    try:
        while not work.done():
            await asyncio.wait({work}, timeout=0.25)
            if time.monotonic() - last >= PROGRESS_EVERY and not work.done():
                last = time.monotonic()
                progress(f"grep: {found.collected} results so far\n")
        work.result()
    except asyncio.CancelledError:
        stop.set()
        found.cut_off = True
    return found
