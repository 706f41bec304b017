"""``memory``: Claude's memory tool, handled here, on a folder of the workspace.

The Messages API defines the tool (``{"type": "memory_20250818", "name": "memory"}``); the
model calls it with a command (``view``, ``create``, ``str_replace``, ``insert``,
``delete``, ``rename``) on paths under ``/memories``, and the calls run here, on
``<workspace>/.nb_tools/memories``, so what the model keeps lasts across the notebooks of a
project. That folder is inside ``.nb_tools/``, which the protection table guards: the
file tools ask a person before writing there and the shell sandbox keeps it read-only, so
memories change only through this tool. The tool itself stays inside its folder: a path
that leaves it (``..``, an absolute path elsewhere, a symbolic link) is refused, and it
writes plain text files only, which nothing runs.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from nb_tools.tool import Info, Result, Schema

MEMORY_FOLDER = (".nb_tools", "memories")
VIRTUAL_ROOT = "/memories"
MAX_FILE_BYTES = 256 * 1024
_READ_ONLY = frozenset({"view"})


class MemoryTool:
    """The memory tool on ``<root>/.nb_tools/memories`` (made when first written)."""

    ANTHROPIC_TYPE = "memory_20250818"
    name = "memory"

    def __init__(self, root: str | os.PathLike[str] = ".") -> None:
        self.folder = Path(root).resolve().joinpath(*MEMORY_FOLDER)
        self._info = Info(
            name=self.name,
            description=(
                "Your memory across conversations: a folder /memories of text files. View "
                "it before starting a task; record progress, decisions and facts worth "
                "keeping with create, str_replace, insert, delete and rename."
            ),
            parameters=Schema.object(
                {
                    "command": Schema.enum(
                        "What to do",
                        "view",
                        "create",
                        "str_replace",
                        "insert",
                        "delete",
                        "rename",
                    ),
                    "path": Schema.string("A path under /memories"),
                    "file_text": Schema.string("create: the file's content"),
                    "old_str": Schema.string("str_replace: the exact text to replace"),
                    "new_str": Schema.string("str_replace: the new text"),
                    "insert_line": Schema.integer("insert: the line after which to insert"),
                    "insert_text": Schema.string("insert: the text to insert"),
                    "old_path": Schema.string("rename: the path to move"),
                    "new_path": Schema.string("rename: where to move it"),
                },
                "command",
            ),
        )

    def info(self) -> Info:
        return self._info

    def read_only_call(self, args: str | bytes) -> bool:
        """Only ``view`` reads without changing anything."""
        try:
            command = json.loads(args or "{}").get("command")
        except (ValueError, AttributeError):
            return False
        return command in _READ_ONLY

    def call(self, args: str | bytes) -> Result:
        try:
            a: dict[str, Any] = json.loads(args or "{}")
            command = a.get("command")
            handler = getattr(self, f"_{command}", None) if isinstance(command, str) else None
            if handler is None:
                return Result.error(
                    f"memory: unknown command {command!r}; use view, create, str_replace, "
                    "insert, delete or rename"
                )
            result: Result = handler(a)
            return result
        except _Refused as exc:
            return Result.error(f"memory: {exc}")

    # -- paths --------------------------------------------------------------------------

    def _path(self, virtual: object) -> Path:
        """The real path for a path under /memories; refuses one that leaves the folder."""
        if not isinstance(virtual, str) or not (
            virtual == VIRTUAL_ROOT or virtual.startswith(VIRTUAL_ROOT + "/")
        ):
            raise _Refused(f"the path {virtual!r} is not under {VIRTUAL_ROOT}")
        rest = virtual[len(VIRTUAL_ROOT) :].strip("/")
        parts = [p for p in rest.split("/") if p not in ("", ".")]
        if any(p == ".." or "\\" in p or "\x00" in p for p in parts):
            raise _Refused(f"the path {virtual!r} leaves {VIRTUAL_ROOT}")
        path = self.folder.joinpath(*parts)
        # No symbolic link anywhere from the workspace down: a link could point outside.
        probe = self.folder.parent
        for part in (self.folder.name, *parts):
            probe = probe / part
            if probe.is_symlink():
                raise _Refused(
                    f"{virtual!r} goes through a symbolic link; memories are plain files"
                )
        if path != self.folder and self.folder not in path.parents:
            raise _Refused(f"the path {virtual!r} leaves {VIRTUAL_ROOT}")
        return path

    def _text(self, path: Path, virtual: str) -> str:
        if not path.is_file():
            raise _Refused(f"{virtual} does not exist; view {VIRTUAL_ROOT} to see the files")
        return path.read_text(encoding="utf-8", errors="replace")

    def _write(self, path: Path, text: str) -> None:
        data = text.encode("utf-8")
        if len(data) > MAX_FILE_BYTES:
            raise _Refused(f"a memory file holds at most {MAX_FILE_BYTES} bytes; split it")
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".memory-")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    # -- commands -----------------------------------------------------------------------

    def _view(self, a: dict[str, Any]) -> Result:
        virtual = a.get("path") or VIRTUAL_ROOT
        path = self._path(virtual)
        if path == self.folder and not path.exists():
            return Result(content=f"{VIRTUAL_ROOT} is empty")
        if path.is_dir():
            lines = [
                f"{VIRTUAL_ROOT}/{p.relative_to(self.folder).as_posix()}"
                + ("/" if p.is_dir() else "")
                for p in sorted(path.rglob("*"))
                if not p.name.startswith(".memory-")
            ]
            return Result(content="\n".join(lines) if lines else f"{virtual} is empty")
        text = self._text(path, virtual)
        numbered = [f"{n:6d}\t{line}" for n, line in enumerate(text.splitlines(), 1)]
        return Result(content="\n".join(numbered))

    def _create(self, a: dict[str, Any]) -> Result:
        virtual = a.get("path")
        path = self._path(virtual)
        if path == self.folder or path.is_dir():
            raise _Refused(f"{virtual} is a folder")
        self._write(path, str(a.get("file_text", "")))
        return Result(content=f"{virtual} written")

    def _str_replace(self, a: dict[str, Any]) -> Result:
        virtual = a.get("path")
        path = self._path(virtual)
        text = self._text(path, str(virtual))
        old, new = str(a.get("old_str", "")), str(a.get("new_str", ""))
        count = text.count(old) if old else 0
        if count != 1:
            raise _Refused(f"old_str occurs {count} times in {virtual}; it must occur exactly once")
        self._write(path, text.replace(old, new, 1))
        return Result(content=f"{virtual} edited")

    def _insert(self, a: dict[str, Any]) -> Result:
        virtual = a.get("path")
        path = self._path(virtual)
        lines = self._text(path, str(virtual)).splitlines(keepends=True)
        at = a.get("insert_line")
        if not isinstance(at, int) or not 0 <= at <= len(lines):
            raise _Refused(f"insert_line must be between 0 and {len(lines)}")
        text = str(a.get("insert_text", ""))
        if lines and not lines[-1].endswith("\n") and at == len(lines):
            lines[-1] += "\n"
        lines.insert(at, text if text.endswith("\n") else text + "\n")
        self._write(path, "".join(lines))
        return Result(content=f"{virtual} edited")

    def _delete(self, a: dict[str, Any]) -> Result:
        virtual = a.get("path")
        path = self._path(virtual)
        if path == self.folder:
            raise _Refused(f"{VIRTUAL_ROOT} itself cannot be deleted")
        if path.is_dir():
            for p in sorted(path.rglob("*"), reverse=True):
                p.rmdir() if p.is_dir() else p.unlink()
            path.rmdir()
        elif path.is_file():
            path.unlink()
        else:
            raise _Refused(f"{virtual} does not exist")
        return Result(content=f"{virtual} deleted")

    def _rename(self, a: dict[str, Any]) -> Result:
        old, new = self._path(a.get("old_path")), self._path(a.get("new_path"))
        if not old.exists() or old == self.folder:
            raise _Refused(f"{a.get('old_path')} does not exist")
        if new.exists():
            raise _Refused(f"{a.get('new_path')} exists already")
        new.parent.mkdir(parents=True, exist_ok=True)
        old.rename(new)
        return Result(content=f"{a.get('old_path')} renamed to {a.get('new_path')}")


class _Refused(Exception):
    """A memory call that cannot be done; the message says why."""


__all__ = ["MEMORY_FOLDER", "MemoryTool"]
