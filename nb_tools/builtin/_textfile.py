"""Reading text files the way the file tools need them: refused by ``stat`` when they are not
regular files, refused when binary or too big, decoded with their encoding and BOM noted so
that a write can give the bytes back in the same form."""

from __future__ import annotations

import codecs
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

__all__ = [
    "MAX_FILE_BYTES",
    "TextFile",
    "TextFileError",
    "decode",
    "load_text",
    "split_lines",
]

MAX_FILE_BYTES = 10 * 1024 * 1024
_SNIFF = 8192
_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)


def split_lines(text: str) -> list[str]:
    """Lines split on ``\\n`` only (a final newline ends the last line, it does not start
    a new one); one trailing ``\\r`` per line is dropped. This is Rust's ``str::lines``,
    which the apply_patch port relies on."""
    if not text:
        return []
    lines = text.split("\n")
    if text.endswith("\n"):
        lines.pop()
    if "\r" not in text:
        return lines
    return [line[:-1] if line.endswith("\r") else line for line in lines]


class TextFileError(ValueError):
    """A file the text tools cannot handle; the message is for the model."""


@dataclass(frozen=True, kw_only=True)
class TextFile:
    """A decoded text file. ``text`` keeps the file's own line endings."""

    data: bytes
    text: str
    encoding: str
    bom: bytes
    mtime_ns: int

    @property
    def crlf(self) -> bool:
        """Every line break is CRLF (and there is at least one)."""
        crlf = self.text.count("\r\n")
        return crlf > 0 and crlf == self.text.count("\n")

    def encode(self, text: str) -> bytes:
        """``text`` in this file's encoding, with its BOM."""
        return self.bom + text.encode(self.encoding)


def decode(data: bytes) -> tuple[str, str, bytes] | None:
    """``(text, encoding, bom)``, or ``None`` for binary data."""
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            try:
                return data[len(bom) :].decode(encoding), encoding, bom
            except UnicodeDecodeError:
                return None
    if b"\x00" in data[:_SNIFF]:
        return None
    try:
        return data.decode("utf-8"), "utf-8", b""
    except UnicodeDecodeError:
        pass
    from charset_normalizer import from_bytes

    matches = from_bytes(data)
    best = matches.best()
    if best is None or best.encoding is None:
        return None
    encoding = best.encoding
    # On a tie (short texts often tie), prefer the most common legacy code page.
    for m in matches:
        if m.encoding == "cp1252" and m.chaos <= best.chaos and m.coherence >= best.coherence:
            encoding = "cp1252"
    try:
        return data.decode(encoding), encoding, b""
    except (UnicodeDecodeError, LookupError):
        return None


def load_text(
    path: Path,
    *,
    tool: str,
    shown: str,
    max_bytes: int = MAX_FILE_BYTES,
    opener: Callable[[Path], int] | None = None,
) -> TextFile:
    """Read and decode ``path``; raises ``FileNotFoundError`` when it does not exist and
    ``TextFileError`` for anything that is not a readable text file. ``opener`` (the
    workspace's race-free ``open_file``) opens it; its refusals propagate."""
    if opener is not None:
        try:
            fd = opener(path)
        except IsADirectoryError:
            raise TextFileError(
                f"{tool}: {shown} is a directory, not a file; use glob to list its contents"
            ) from None
        with os.fdopen(fd, "rb") as f:
            return _load_open(f, tool=tool, shown=shown, max_bytes=max_bytes)
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise TextFileError(f"{tool}: cannot read {shown}: {exc.strerror}") from exc
    mode = st.st_mode
    if stat.S_ISDIR(mode):
        raise TextFileError(
            f"{tool}: {shown} is a directory, not a file; use glob to list its contents"
        )
    if not stat.S_ISREG(mode):
        kind = (
            "a FIFO"
            if stat.S_ISFIFO(mode)
            else "a device"
            if stat.S_ISCHR(mode) or stat.S_ISBLK(mode)
            else "a socket"
            if stat.S_ISSOCK(mode)
            else "not a regular file"
        )
        raise TextFileError(f"{tool}: {shown} is {kind}; only regular files can be read")
    with open(path, "rb") as f:
        return _load_open(f, tool=tool, shown=shown, max_bytes=max_bytes)


def _load_open(f: BinaryIO, *, tool: str, shown: str, max_bytes: int) -> TextFile:
    st = os.fstat(f.fileno())
    if not stat.S_ISREG(st.st_mode):
        raise TextFileError(f"{tool}: {shown} is not a regular file; only those can be read")
    if st.st_size > max_bytes:
        raise TextFileError(
            f"{tool}: {shown} is {st.st_size:,} bytes, over the {max_bytes:,}-byte limit; "
            f"use grep to find the part you need, or bash with head/tail/sed"
        )
    try:
        data = f.read(max_bytes + 1)
    except OSError as exc:
        raise TextFileError(f"{tool}: cannot read {shown}: {exc.strerror}") from exc
    if len(data) > max_bytes:
        raise TextFileError(f"{tool}: {shown} grew over the {max_bytes:,}-byte limit while read")
    decoded = decode(data)
    if decoded is None:
        raise TextFileError(
            f"{tool}: {shown} looks binary (it has a NUL byte or no text encoding fits); "
            f"the file tools handle text only"
        )
    text, encoding, bom = decoded
    return TextFile(data=data, text=text, encoding=encoding, bom=bom, mtime_ns=st.st_mtime_ns)
