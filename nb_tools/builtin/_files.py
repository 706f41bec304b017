"""``read_file``, ``write_file`` and ``edit_file``.

Writers compute a plan (target, new bytes, the ``Change`` to show) in one function that
both ``preview`` and ``call`` use, so what is shown is what is written. They refuse to
overwrite a file the model has not read in full or that changed since (see ``_readstate``).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nb_tools.builtin._atomic import atomic_write
from nb_tools.builtin._binding import Bindings, Target, call_key, card_digest, verify
from nb_tools.builtin._common import Args, ToolError, guarded, parse_args, redact_output
from nb_tools.builtin._readstate import ReadState
from nb_tools.builtin._textfile import TextFile, load_text, split_lines
from nb_tools.builtin._undo import undo_for, written_before
from nb_tools.builtin._workspace import Workspace
from nb_tools.sandbox import hard_linked
from nb_tools.tool import Change, Info, Result, Schema, Subject

__all__ = ["EditFileTool", "ReadFileTool", "WriteFileTool", "format_lines"]


MAX_LINE_CHARS = 2000
DEFAULT_LIMIT = 2000
MAX_OUTPUT_CHARS = 250_000


SECRETS_NOTE = (
    "secrets in this file (a private key's lines, passwords, tokens) read as <hidden: ...>; "
    "the file itself is unchanged, and a program that uses them reads them from there"
)


def _int(desc: str, *, minimum: int, default: int) -> Schema:
    return Schema(type="integer", description=desc, minimum=minimum, default=default)


def format_lines(lines: list[str], first: int) -> tuple[str, int]:
    """``cat -n`` style: number right-aligned in 6 columns, a tab, the line (cut at 2000
    characters). Returns the text and how many lines fit under the output limit."""
    out: list[str] = []
    size = 0
    for i, line in enumerate(lines):
        if len(line) > MAX_LINE_CHARS:
            line = (
                f"{line[:MAX_LINE_CHARS]}… [line cut: {len(line):,} characters, "
                f"first {MAX_LINE_CHARS:,} shown]"
            )
        entry = f"{first + i:>6}\t{line}"
        if out and size + len(entry) + 1 > MAX_OUTPUT_CHARS:
            return "\n".join(out), i
        out.append(entry)
        size += len(entry) + 1
    return "\n".join(out), len(lines)


class _FileTool:
    """Shared plumbing: the workspace, the read state, argument parsing, approval for
    protected paths, and ``call`` running ``_run`` in a thread with errors as results."""

    name = ""
    path_key = "file_path"
    writes = False  # writers bind the resolved path when asked about protection
    reads_files = False  # a deny or ask rule for read_file covers it (it shows contents)

    @property
    def subject(self) -> Subject:
        """What a permission rule reads: the path argument."""
        return Subject(arg=self.path_key, kind="path", reads_files=self.reads_files)

    def __init__(self, workspace: Workspace, state: ReadState) -> None:
        self.workspace = workspace
        self.state = state
        self.bindings = Bindings()
        self._info = self._make_info()

    def _make_info(self) -> Info:
        raise NotImplementedError

    def info(self) -> Info:
        return self._info

    def _parse(self, args: Args) -> dict[str, Any]:
        schema = self._info.parameters
        if schema is None:
            raise ToolError(f"{self.name}: no parameters schema")
        return parse_args(self.name, schema, args)

    def is_protected_call(self, args: Args) -> bool:
        """Whether the call touches a protected path (``.git/``, ``.nb_tools/``, IPython
        start-up files, ``.env*``, rc files, ``.ssh/``, ...; see ``_protected``), as
        written or as resolved: such calls ask for approval even where a policy would
        not. A writer binds the resolved path here if no preview did (see ``_binding``);
        a path that no longer resolves where its binding says counts as protected."""
        try:
            parsed = self._parse(args)
        except ValueError:
            return False
        raw = str(parsed[self.path_key])
        if self.workspace.is_protected(raw, write=self.writes):
            return True
        if self.reads_files and not self.writes and self._hard_linked(raw):
            return True
        if not self._binds(parsed):
            return False
        try:
            now = self._target(raw)
        except ValueError:
            return False  # the call will refuse the path itself
        bound = self.bindings.bind(self._key(parsed), (now,))
        return any(t.raw == raw and (t.path != now.path or t.protected) for t in bound)

    def _hard_linked(self, raw: str) -> bool:
        """A file with more than one hard link (outside package managers' folders): its
        other name may be a secret outside the workspace, so a tool that shows a file's
        contents asks before reading it."""
        try:
            return hard_linked(self.workspace.resolve(raw))
        except ValueError:
            return False

    def _binds(self, parsed: dict[str, Any]) -> bool:
        return self.writes

    def _key(self, parsed: dict[str, Any]) -> str:
        return f"{self.name}:{call_key(parsed)}"

    def hold_to(self, args: Args, target: tuple[Target, ...]) -> None:
        """Bind the call with ``args`` to ``target``: when it runs it must still resolve
        there (another tool that maps its calls onto this one decided the target)."""
        self.bindings.bind(self._key(self._parse(args)), target, replace=True)

    def binding_for(self, args: Args) -> tuple[Target, ...] | None:
        """What the call with ``args`` is bound to now (its card's paths and change)."""
        return self.bindings.peek(self._key(self._parse(args)))

    def _target(self, raw: str) -> Target:
        path = self.workspace.resolve(raw, tool=self.name)
        return Target(raw=raw, path=path, protected=self.workspace.is_protected(raw))

    def requires_approval_for(self, args: Args) -> bool:
        try:
            self._parse(args)
        except ValueError:
            return True  # fail closed; the call itself will report the problem
        return self._info.requires_approval or self.is_protected_call(args)

    async def call(self, args: Args) -> Result:
        return await asyncio.to_thread(guarded, self.name, lambda: self._run(args))

    def _run(self, args: Args) -> Result:
        raise NotImplementedError


class ReadFileTool(_FileTool):
    """``read_file``: numbered lines of a text file, a window of it for big files."""

    name = "read_file"
    reads_files = True

    def _make_info(self) -> Info:
        return Info(
            name=self.name,
            subject=self.subject,
            description=(
                "Read a text file from the workspace. file_path is relative to the workspace "
                "root or absolute inside it. Returns up to `limit` lines (default 2000) from "
                "line `offset` (1-based), each as its line number right-aligned in 6 columns, "
                "a tab, then the line; lines over 2000 characters are cut. A partial view "
                "ends with a footer saying which lines were shown. Read a file in full before "
                "changing it with write_file or edit_file. Binary files are refused."
            ),
            parameters=Schema.object(
                {
                    "file_path": Schema.string(
                        "The file to read (relative to the workspace root, or absolute inside it)"
                    ),
                    "offset": _int("Line number to start at (1-based)", minimum=0, default=1),
                    "limit": _int("How many lines to show", minimum=1, default=DEFAULT_LIMIT),
                },
                "file_path",
            ),
            read_only=True,
            concurrent=True,
        )

    def _run(self, args: Args) -> Result:
        parsed = self._parse(args)
        raw = parsed["file_path"]
        path = self.workspace.resolve(raw, tool=self.name)
        shown = self.workspace.display(path)
        try:
            tf = load_text(
                path, tool=self.name, shown=shown, opener=self.workspace.opener(self.name)
            )
        except FileNotFoundError:
            raise ToolError(
                f"{self.name}: {shown} does not exist; use glob to find files"
            ) from None
        meta: dict[str, Any] = {"path": shown}
        if self.workspace.is_protected(raw):
            meta["protected"] = True
        text, hidden = redact_output(tf.text)
        lines = split_lines(text)
        total = len(lines)
        key_note = ""
        if hidden:
            meta["secrets_hidden"] = hidden
            key_note = f"\n\n({SECRETS_NOTE})"
        if total == 0:
            self.state.record(path, tf.data, mtime_ns=tf.mtime_ns)
            return Result(content=f"({shown} is empty: 0 lines)", metadata=meta | {"lines": 0})
        offset = max(int(parsed.get("offset", 1)), 1)
        limit = int(parsed.get("limit", DEFAULT_LIMIT))
        if offset > total:
            raise ToolError(
                f"{self.name}: offset {offset} is past the end of {shown}, which has "
                f"{total} line{'s' if total != 1 else ''}; pass an offset from 1 to {total}"
            )
        window = lines[offset - 1 : offset - 1 + limit]
        body, fitted = format_lines(window, offset)
        last = offset + fitted - 1
        meta |= {"lines": total, "first": offset, "last": last}
        if offset == 1 and last == total:
            self.state.record(path, tf.data, mtime_ns=tf.mtime_ns)
            return Result(content=body + key_note, metadata=meta)
        cut = " (output size limit reached)" if fitted < len(window) else ""
        more = f" Pass offset={last + 1} to read on." if last < total else ""
        footer = f"\n\n(Showing lines {offset}-{last} of {total}{cut}.{more})"
        return Result(content=body + footer + key_note, metadata=meta | {"partial": True})


@dataclass(frozen=True, kw_only=True)
class _Plan:
    path: Path
    shown: str
    data: bytes
    change: Change
    summary: str
    protected: bool
    cells: str | None = None  # a notebook's cell fingerprint, for the read state


def load_checked(
    state: ReadState,
    path: Path,
    *,
    tool: str,
    shown: str,
    reader: str = "read_file",
    opener: Callable[[Path], int] | None = None,
) -> TextFile | None:
    """The current file, refused unless the model read all of it and it is unchanged since
    (see ``ReadState.check``); ``None`` if it does not exist."""
    try:
        tf = load_text(path, tool=tool, shown=shown, opener=opener)
    except FileNotFoundError:
        return None
    problem = state.check(path, tf.data, tool=tool, shown=shown, reader=reader)
    if problem:
        raise ToolError(problem)
    return tf


class _Writer(_FileTool):
    """A tool that writes one file: ``preview`` and ``call`` share ``_plan``; the path
    the preview resolved is bound to the call (``_binding``)."""

    writes = True
    checks_card = False  # the call must make the change its card showed (``_binding``)

    def _plan(self, parsed: dict[str, Any]) -> _Plan:
        raise NotImplementedError

    def _raw_path(self, parsed: dict[str, Any]) -> str:
        return str(parsed[self.path_key])

    def _plan_target(self, parsed: dict[str, Any], plan: _Plan) -> Target:
        raw = self._raw_path(parsed)
        card = card_digest([plan.change]) if self.checks_card else None
        return Target(
            raw=raw, path=plan.path, protected=self.workspace.is_protected(raw), card=card
        )

    def preview(self, args: Args) -> Change:
        parsed = self._parse(args)
        plan = self._plan(parsed)
        self.bindings.bind(self._key(parsed), (self._plan_target(parsed, plan),), replace=True)
        return plan.change

    def _run(self, args: Args) -> Result:
        parsed = self._parse(args)
        bound = self.bindings.take(self._key(parsed))
        verify(self.name, bound, (self._target(self._raw_path(parsed)),), self.workspace.display)
        plan = self._plan(parsed)  # reads the file: checked above, and again below
        verify(self.name, bound, (self._plan_target(parsed, plan),), self.workspace.display)
        before = written_before(plan.path)
        atomic_write(plan.path, plan.data, workspace=self.workspace, tool=self.name)
        self.state.record(plan.path, plan.data, cells=plan.cells)
        meta: dict[str, Any] = {"path": plan.shown, "change": plan.change.kind}
        meta["undo"] = undo_for(self.workspace, self.name, plan.shown, plan.path, before, plan.data)
        content = self._written(plan, meta)
        if plan.protected:
            meta["protected"] = True
        return Result(content=content, metadata=meta)

    def _written(self, plan: _Plan, meta: dict[str, Any]) -> str:
        """The message once ``plan`` is on disk; a subclass may add to ``meta``."""
        return plan.summary

    def _existing(self, path: Path, shown: str) -> TextFile | None:
        return load_checked(
            self.state,
            path,
            tool=self.name,
            shown=shown,
            opener=self.workspace.opener(self.name, write=True),
        )


def _encode(tf: TextFile | None, text: str, tool: str, shown: str) -> bytes:
    try:
        return tf.encode(text) if tf else text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ToolError(
            f"{tool}: the new text has {exc.object[exc.start : exc.end]!r}, which the file's "
            f"encoding ({tf.encoding if tf else 'utf-8'}) cannot hold; keep to characters "
            f"it can encode"
        ) from None


def _count_lines(text: str) -> int:
    return len(split_lines(text))


class WriteFileTool(_Writer):
    """``write_file``: create a file or replace all of it."""

    name = "write_file"
    checks_card = True

    def _make_info(self) -> Info:
        return Info(
            name=self.name,
            subject=self.subject,
            description=(
                "Write a file in the workspace, creating it (and missing folders) or replacing "
                "all of its content. To change an existing file, read it in full with "
                "read_file first; prefer edit_file for changes to part of a file. An existing "
                "file keeps its encoding and, if it uses CRLF line endings, those."
            ),
            eager_input_streaming=True,  # the content streams onto the card as written
            parameters=Schema.object(
                {
                    "file_path": Schema.string(
                        "The file to write (relative to the workspace root, or absolute inside it)"
                    ),
                    "content": Schema.string("The complete new content of the file"),
                },
                "file_path",
                "content",
            ),
            requires_approval=True,
        )

    def _plan(self, parsed: dict[str, Any]) -> _Plan:
        raw = parsed["file_path"]
        content: str = parsed["content"]
        path = self.workspace.resolve(raw, for_write=True, tool=self.name)
        shown = self.workspace.display(path)
        tf = self._existing(path, shown)
        if tf is not None and tf.crlf and "\r" not in content:
            content = content.replace("\n", "\r\n")
        data = _encode(tf, content, self.name, shown)
        verb = "Created" if tf is None else "Wrote"
        n = _count_lines(content)
        return _Plan(
            path=path,
            shown=shown,
            data=data,
            change=Change(path=shown, before=tf.text if tf else None, after=content),
            summary=f"{verb} {shown} ({n} line{'s' if n != 1 else ''}, {len(data):,} bytes)",
            protected=self.workspace.is_protected(raw),
        )


_LINE_PREFIX = re.compile(r"^ *\d+\t", re.M)


def _loose(text: str) -> str:
    """Each line with runs of whitespace collapsed and its ends trimmed (line count kept)."""
    return "\n".join(" ".join(line.split()) for line in text.replace("\r\n", "\n").split("\n"))


def _line_of(text: str, pos: int) -> int:
    return text.count("\n", 0, pos) + 1


def _positions(text: str, needle: str) -> list[int]:
    found: list[int] = []
    start = text.find(needle)
    while start != -1:
        found.append(start)
        start = text.find(needle, start + len(needle))
    return found


class EditFileTool(_Writer):
    """``edit_file``: replace an exact piece of text (once, or everywhere)."""

    name = "edit_file"
    checks_card = True

    def _make_info(self) -> Info:
        return Info(
            name=self.name,
            subject=self.subject,
            description=(
                "Replace exact text in a file of the workspace. old_string must occur exactly "
                "once (include enough surrounding lines to make it unique) unless replace_all "
                "is true; matching is literal, never a regex. Copy old_string from read_file "
                "output without the line-number prefix, keeping indentation exactly. Read the "
                "file in full with read_file first. The file keeps its line endings, encoding "
                "and final newline."
            ),
            eager_input_streaming=True,
            parameters=Schema.object(
                {
                    "file_path": Schema.string(
                        "The file to edit (relative to the workspace root, or absolute inside it)"
                    ),
                    "old_string": Schema.string("The exact text to replace"),
                    "new_string": Schema.string("The text to put in its place (must differ)"),
                    "replace_all": Schema(
                        type="boolean", default=False, description="Replace every occurrence"
                    ),
                },
                "file_path",
                "old_string",
                "new_string",
            ),
            requires_approval=True,
        )

    def _plan(self, parsed: dict[str, Any]) -> _Plan:
        raw = parsed["file_path"]
        old: str = parsed["old_string"]
        new: str = parsed["new_string"]
        replace_all = bool(parsed.get("replace_all", False))
        path = self.workspace.resolve(raw, for_write=True, tool=self.name)
        shown = self.workspace.display(path)
        protected = self.workspace.is_protected(raw)
        if old == new:
            raise ToolError(
                f"{self.name}: old_string and new_string are the same; there is nothing to change"
            )
        tf = self._existing(path, shown)
        if tf is None:
            if old:
                raise ToolError(f"{self.name}: {shown} does not exist; create it with write_file")
            data = _encode(None, new, self.name, shown)
            return _Plan(
                path=path,
                shown=shown,
                data=data,
                protected=protected,
                change=Change(path=shown, before=None, after=new),
                summary=f"Created {shown}",
            )
        crlf = tf.crlf
        text = tf.text.replace("\r\n", "\n") if crlf else tf.text
        if crlf:
            old, new = old.replace("\r\n", "\n"), new.replace("\r\n", "\n")
        if not old:
            if text:
                raise ToolError(
                    f"{self.name}: old_string is empty but {shown} is not; give "
                    f"the text to replace, or use write_file to replace it all"
                )
            result, where = new, [1]
        else:
            where = self._find(text, old, replace_all, shown)
            result = text.replace(old, new) if replace_all else text.replace(old, new, 1)
        if text.endswith("\n") and result and not result.endswith("\n"):
            result += "\n"
        final = result.replace("\n", "\r\n") if crlf else result
        data = _encode(tf, final, self.name, shown)
        count = len(where)
        lines = ", ".join(map(str, where[:10])) + (", …" if count > 10 else "")
        summary = (
            f"Edited {shown}: {count} replacement{'s' if count != 1 else ''} "
            f"(line{'s' if count != 1 else ''} {lines})"
        )
        return _Plan(
            path=path,
            shown=shown,
            data=data,
            protected=protected,
            change=Change(path=shown, before=tf.text, after=final),
            summary=summary,
        )

    def _find(self, text: str, old: str, replace_all: bool, shown: str) -> list[int]:
        """Line numbers of the occurrences; raises unless the count suits ``replace_all``."""
        found = [_line_of(text, p) for p in _positions(text, old)]
        if not found:
            raise ToolError(self._not_found(text, old, shown))
        if len(found) > 1 and not replace_all:
            raise ToolError(
                f"{self.name}: old_string occurs {len(found)} times in {shown} (lines "
                f"{', '.join(map(str, found))}); pass replace_all=true or include more context "
                f"to make it unique"
            )
        return found

    def _not_found(self, text: str, old: str, shown: str) -> str:
        base = f"{self.name}: old_string was not found in {shown}"
        stripped = _LINE_PREFIX.sub("", old)
        if stripped != old and stripped and stripped in text:
            return (
                f"{base}; it seems to include read_file line-number prefixes "
                f"(number + tab): remove them and retry"
            )
        loose_old = _loose(old).strip("\n")
        if loose_old:
            pos = _loose(text).find(loose_old)
            if pos != -1:
                line = _line_of(_loose(text), pos)
                return (
                    f"{base} exactly, but it matches at line {line} when whitespace and "
                    f"line endings are ignored; copy the exact text (indentation, tabs, "
                    f"trailing spaces) from read_file and retry"
                )
        return f"{base}; read the file again and copy the exact text to replace"
