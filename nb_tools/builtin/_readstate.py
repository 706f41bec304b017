"""Which files the model has read in full, and what they looked like then.

Writers (write_file, edit_file, notebook_edit) refuse to overwrite a file the model has not
read in full, or one that changed on disk since it was read: the model would be editing
from a stale picture. One ``ReadState`` is shared by the tools of one ``builtin_tools()``
set (one conversation).

A file counts as unchanged when its bytes hash to what was read. The modification time is
kept too, and a differing mtime with identical bytes (a ``touch``, a re-save) is accepted:
what matters to the model is the content. Notebooks may also record a fingerprint of their
cells, so that a re-save that only changes outputs or metadata does not force a re-read.
"""

from __future__ import annotations

import hashlib
import threading
from dataclasses import dataclass
from pathlib import Path

__all__ = ["ReadState", "Stamp", "digest"]


def digest(data: bytes) -> str:
    """The content hash the read state compares (sha256, hex)."""
    return hashlib.sha256(data).hexdigest()


@dataclass(frozen=True, kw_only=True)
class Stamp:
    """What a file looked like when it was fully read."""

    mtime_ns: int
    sha256: str
    cells: str | None = None


class ReadState:
    """Thread-safe map from a file's realpath to its ``Stamp`` at the last full read."""

    def __init__(self) -> None:
        self._stamps: dict[Path, Stamp] = {}
        self._lock = threading.Lock()

    def record(
        self, path: Path, data: bytes, *, mtime_ns: int | None = None, cells: str | None = None
    ) -> None:
        """Note that the model has seen all of ``path`` whose bytes are ``data``."""
        if mtime_ns is None:
            try:
                mtime_ns = path.stat().st_mtime_ns
            except OSError:
                mtime_ns = 0
        stamp = Stamp(mtime_ns=mtime_ns, sha256=digest(data), cells=cells)
        with self._lock:
            self._stamps[path] = stamp

    def forget(self, path: Path) -> None:
        with self._lock:
            self._stamps.pop(path, None)

    def get(self, path: Path) -> Stamp | None:
        with self._lock:
            return self._stamps.get(path)

    def has_read(self, path: Path) -> bool:
        return self.get(path) is not None

    def check(
        self,
        path: Path,
        data: bytes,
        *,
        tool: str,
        shown: str,
        cells: str | None = None,
        reader: str = "read_file",
    ) -> str | None:
        """``None`` when ``path`` (now holding ``data``) was fully read and is unchanged;
        otherwise the message for the model. ``shown`` is the path as the model knows it.
        ``cells``: the current cell fingerprint of a notebook (compared when bytes differ)."""
        stamp = self.get(path)
        if stamp is None:
            return (
                f"{tool}: {shown} has not been read yet; read it first with {reader} "
                f"(the whole file), then retry"
            )
        if stamp.sha256 == digest(data):
            return None
        if cells is not None and stamp.cells is not None and stamp.cells == cells:
            return None
        return (
            f"{tool}: {shown} has changed since you read it (modified on disk by someone "
            f"else); read it again with {reader}, then retry"
        )

    def clear(self) -> None:
        with self._lock:
            self._stamps.clear()

    def __len__(self) -> int:
        with self._lock:
            return len(self._stamps)
