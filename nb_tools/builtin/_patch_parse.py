"""The Codex patch format: parser, hunk location (``seek_sequence``) and new contents.

A line-for-line port of ``codex-rs/apply-patch`` (commit 46f30d0, see
``shared/conformance/apply_patch/README.md``): the same leniency (trimmed markers and
headers, heredoc wrapper removed, CRLF patches), the same four-pass line matching with the
punctuation mapping, and the same error wording. Nothing here touches the file system.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from nb_tools.builtin._textfile import split_lines

__all__ = [
    "AddFile",
    "Chunk",
    "DeleteFile",
    "Hunk",
    "ParseError",
    "PatchApplyError",
    "UpdateFile",
    "apply_chunks",
    "hunk_paths",
    "parse_patch",
    "parse_update_chunk",
    "patch_lines",
    "patch_paths",
    "seek_sequence",
]

BEGIN = "*** Begin Patch"
END = "*** End Patch"
ADD = "*** Add File: "
DELETE = "*** Delete File: "
UPDATE = "*** Update File: "
MOVE = "*** Move to: "
EOF_MARKER = "*** End of File"
ENV_ID = "*** Environment ID:"
_HEREDOC_OPENERS = ("<<EOF", "<<'EOF'", '<<"EOF"')


class ParseError(ValueError):
    """A malformed patch. ``str()`` is the Codex CLI's wording (``Invalid patch: ...`` /
    ``Invalid patch hunk on line N: ...``); ``codex_display()`` is its ``ParseError``
    Display text."""

    def __init__(self, message: str, line: int | None = None) -> None:
        self.message = message
        self.line = line
        if line is None:
            super().__init__(f"Invalid patch: {message}")
        else:
            super().__init__(f"Invalid patch hunk on line {line}: {message}")

    def codex_display(self) -> str:
        if self.line is None:
            return f"invalid patch: {self.message}"
        return f"invalid hunk at line {self.line}, {self.message}"


class PatchApplyError(ValueError):
    """A hunk that does not fit the file (context or old lines not found)."""


@dataclass(frozen=True, kw_only=True)
class Chunk:
    change_context: str | None
    old_lines: list[str]
    new_lines: list[str]
    is_end_of_file: bool = False


@dataclass(frozen=True, kw_only=True)
class AddFile:
    path: str
    contents: str


@dataclass(frozen=True, kw_only=True)
class DeleteFile:
    path: str


@dataclass(frozen=True, kw_only=True)
class UpdateFile:
    path: str
    move_path: str | None = None
    chunks: list[Chunk] = field(default_factory=list)


Hunk = AddFile | DeleteFile | UpdateFile


def _check_boundaries(lines: list[str]) -> None:
    first = lines[0].strip() if lines else None
    last = lines[-1].strip() if lines else None
    if first == BEGIN and last == END:
        return
    if first is not None and first != BEGIN:
        raise ParseError("The first line of the patch must be '*** Begin Patch'")
    raise ParseError("The last line of the patch must be '*** End Patch'")


def _check_boundaries_lenient(lines: list[str], error: ParseError) -> list[str]:
    if len(lines) >= 4 and lines[0] in _HEREDOC_OPENERS and lines[-1].endswith("EOF"):
        inner = lines[1:-1]
        _check_boundaries(inner)
        return inner
    raise error


def patch_lines(text: str) -> list[str]:
    """The one way a patch is cut into lines, for the parser and for everything that reads
    headers (permission rules, previews): on ``\n`` only, one trailing ``\r`` dropped
    (Rust's ``str::lines``). U+2028, U+0085, U+000B, U+000C, U+001C-U+001E and a lone CR
    are NOT line breaks: they stay inside the line (hunk lines keep them as text; a
    header path holding one is refused, see ``_header_path``). Python's
    ``str.splitlines`` would split on all of them, so never use it on a patch."""
    return split_lines(text.strip())


def patch_paths(text: str) -> list[str]:
    """Every path a patch names (Add, Delete, Update, Move to), exactly as the parser
    reads them. A patch that does not parse is scanned line by line with the same line
    splitting and header prefixes; that may name more paths than the parser would (a
    header-like content line), never fewer."""
    try:
        hunks = parse_patch(text)
    except ParseError:
        paths: list[str] = []
        for line in patch_lines(text):
            s = line.strip()
            for head in (ADD, DELETE, UPDATE, MOVE, ADD.rstrip(), DELETE.rstrip()):
                if s.startswith(head):
                    paths.append(s[len(head) :].strip())
            if line.startswith(MOVE):
                paths.append(line[len(MOVE) :])
        return list(dict.fromkeys(paths))
    return hunk_paths(hunks)


def hunk_paths(hunks: list[Hunk]) -> list[str]:
    """The paths parsed hunks name, in order: each hunk's path, then its move target."""
    out: list[str] = []
    for h in hunks:
        out.append(h.path)
        if isinstance(h, UpdateFile) and h.move_path is not None:
            out.append(h.move_path)
    return out


def _header_path(path: str, line_number: int) -> str:
    """A header's path, refused if it holds a control character or a Unicode line or
    paragraph separator: one of those would make the path mean one thing to a reader
    that splits lines differently and another to the file system."""
    import unicodedata

    for c in path:
        if unicodedata.category(c) in ("Cc", "Zl", "Zp"):
            what = "a NUL byte" if c == "\x00" else unicodedata.name(c, "a control character")
            raise ParseError(
                f"the path {path!r} holds U+{ord(c):04X} ({what}); paths in a patch may "
                "not contain line breaks or control characters",
                line_number,
            )
    return path


def parse_patch(text: str, *, lenient: bool = True) -> list[Hunk]:
    """The hunks of a patch, in order; raises ``ParseError``."""
    lines = patch_lines(text)
    try:
        _check_boundaries(lines)
    except ParseError as exc:
        if not lenient:
            raise
        lines = _check_boundaries_lenient(lines, exc)
    remaining = lines[1:-1]
    line_number = 2
    if remaining and remaining[0].strip().startswith(ENV_ID):
        if not remaining[0].strip()[len(ENV_ID) :].strip():
            raise ParseError("apply_patch environment_id cannot be empty")
        remaining = remaining[1:]
        line_number += 1
    hunks: list[Hunk] = []
    while remaining:
        hunk, used = parse_one_hunk(remaining, line_number)
        hunks.append(hunk)
        line_number += used
        remaining = remaining[used:]
    return hunks


def parse_one_hunk(lines: list[str], line_number: int) -> tuple[Hunk, int]:
    first = lines[0].strip()
    if first.startswith(ADD):
        contents: list[str] = []
        for line in lines[1:]:
            if not line.startswith("+"):
                break
            contents.append(line[1:] + "\n")
        path = _header_path(first[len(ADD) :], line_number)
        return AddFile(path=path, contents="".join(contents)), 1 + len(contents)
    if first.startswith(DELETE):
        return DeleteFile(path=_header_path(first[len(DELETE) :], line_number)), 1
    if first.startswith(UPDATE):
        path = _header_path(first[len(UPDATE) :], line_number)
        rest = lines[1:]
        used = 1
        move_path = None
        if rest and rest[0].startswith(MOVE):
            move_path = _header_path(rest[0][len(MOVE) :], line_number + 1)
            rest = rest[1:]
            used += 1
        chunks: list[Chunk] = []
        while rest:
            if not rest[0].strip():
                used += 1
                rest = rest[1:]
                continue
            if rest[0].startswith("*"):
                break
            chunk, n = parse_update_chunk(rest, line_number + used, not chunks)
            chunks.append(chunk)
            used += n
            rest = rest[n:]
        if not chunks:
            raise ParseError(f"Update file hunk for path '{path}' is empty", line_number)
        return UpdateFile(path=path, move_path=move_path, chunks=chunks), used
    raise ParseError(
        f"'{first}' is not a valid hunk header. Valid hunk headers: '*** Add File: {{path}}', "
        "'*** Delete File: {path}', '*** Update File: {path}'",
        line_number,
    )


def parse_update_chunk(
    lines: list[str], line_number: int, allow_missing_context: bool
) -> tuple[Chunk, int]:
    """One ``@@`` chunk of an Update; returns it and the number of lines it used."""
    if not lines:
        raise ParseError("Update hunk does not contain any lines", line_number)
    if lines[0] == "@@":
        context, start = None, 1
    elif lines[0].startswith("@@ "):
        context, start = lines[0][3:], 1
    else:
        if not allow_missing_context:
            raise ParseError(
                f"Expected update hunk to start with a @@ context marker, got: '{lines[0]}'",
                line_number,
            )
        context, start = None, 0
    if start >= len(lines):
        raise ParseError("Update hunk does not contain any lines", line_number + 1)
    old: list[str] = []
    new: list[str] = []
    eof = False
    used = 0
    for line in lines[start:]:
        if line == EOF_MARKER:
            if used == 0:
                raise ParseError("Update hunk does not contain any lines", line_number + 1)
            eof = True
            used += 1
            break
        head, body = line[:1], line[1:]
        if head == "":
            old.append("")
            new.append("")
        elif head == " ":
            old.append(body)
            new.append(body)
        elif head == "+":
            new.append(body)
        elif head == "-":
            old.append(body)
        else:
            if used == 0:
                raise ParseError(
                    f"Unexpected line found in update hunk: '{line}'. Every line should start "
                    "with ' ' (context line), '+' (added line), or '-' (removed line)",
                    line_number + 1,
                )
            break
        used += 1
    chunk = Chunk(change_context=context, old_lines=old, new_lines=new, is_end_of_file=eof)
    return chunk, used + start


_PUNCT = str.maketrans(
    {
        **dict.fromkeys(
            ["\u2010", "\u2011", "\u2012", "\u2013", "\u2014", "\u2015", "\u2212"], "-"
        ),
        **dict.fromkeys(["\u2018", "\u2019", "\u201a", "\u201b"], "'"),
        **dict.fromkeys(["\u201c", "\u201d", "\u201e", "\u201f"], '"'),
        **dict.fromkeys(
            ["\u00a0", *(chr(c) for c in range(0x2002, 0x200B)), "\u202f", "\u205f", "\u3000"],
            " ",
        ),
    }
)


def _normalise(s: str) -> str:
    return s.strip().translate(_PUNCT)


_PASSES = (lambda s: s, str.rstrip, str.strip, _normalise)


def seek_sequence(lines: list[str], pattern: list[str], start: int, eof: bool) -> int | None:
    """First index >= ``start`` where ``pattern`` matches ``lines``: exactly, then ignoring
    trailing whitespace, then surrounding whitespace, then also typographic punctuation.
    With ``eof`` only a match that ends the file counts."""
    if not pattern:
        return start
    if len(pattern) > len(lines):
        return None
    begin = len(lines) - len(pattern) if eof else start
    stop = len(lines) - len(pattern)
    for norm in _PASSES:
        want = [norm(p) for p in pattern]
        for i in range(begin, stop + 1):
            if all(norm(lines[i + j]) == w for j, w in enumerate(want)):
                return i
    return None


def apply_chunks(text: str, chunks: list[Chunk], shown: str) -> str:
    """``text`` (LF line endings) with ``chunks`` applied, as Codex computes it: the result
    always ends with a newline. Raises ``PatchApplyError``."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    replacements: list[tuple[int, int, list[str]]] = []
    index = 0
    for chunk in chunks:
        if chunk.change_context is not None:
            found = seek_sequence(lines, [chunk.change_context], index, False)
            if found is None:
                raise PatchApplyError(f"Failed to find context '{chunk.change_context}' in {shown}")
            index = found + 1
        if not chunk.old_lines:
            at = len(lines) - 1 if lines and lines[-1] == "" else len(lines)
            replacements.append((at, 0, list(chunk.new_lines)))
            continue
        pattern, new = chunk.old_lines, chunk.new_lines
        found = seek_sequence(lines, pattern, index, chunk.is_end_of_file)
        if found is None and pattern[-1] == "":
            pattern = pattern[:-1]
            if new and new[-1] == "":
                new = new[:-1]
            found = seek_sequence(lines, pattern, index, chunk.is_end_of_file)
        if found is None:
            raise PatchApplyError(
                f"Failed to find expected lines in {shown}:\n" + "\n".join(chunk.old_lines)
            )
        replacements.append((found, len(pattern), list(new)))
        index = found + len(pattern)
    replacements.sort(key=lambda r: r[0])
    for at, length, new in reversed(replacements):
        lines[at : at + length] = new
    if not lines or lines[-1] != "":
        lines.append("")
    return "\n".join(lines)
