"""The Anthropic-defined text editor tool (``str_replace_based_edit_tool``, API type
``text_editor_20250728``), mapped onto ``read_file``, ``write_file`` and ``edit_file``.

The API declares this tool by type, not by schema (``{"type": "text_editor_20250728", "name":
"str_replace_based_edit_tool"}``); ``ANTHROPIC_TYPE`` says which. The schema in ``Info`` is
ours, used to validate the calls. Commands: ``view`` (a file, with an optional
``view_range``, or a directory two levels deep), ``create``, ``str_replace`` and ``insert``
(the text may come as ``insert_text`` or ``new_str``). The same read-before-write rule as
the tools above applies, and a ``view`` of the whole file counts as a read.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

from nb_tools.builtin._binding import Target, verify
from nb_tools.builtin._common import Args, ToolError, guarded
from nb_tools.builtin._files import (
    EditFileTool,
    ReadFileTool,
    WriteFileTool,
    _FileTool,
    load_checked,
)
from nb_tools.builtin._glob import hidden_note, name_visible
from nb_tools.builtin._readstate import ReadState
from nb_tools.builtin._textfile import split_lines
from nb_tools.builtin._workspace import Workspace
from nb_tools.tool import Change, Info, Result, Schema

__all__ = ["TextEditorTool"]


_MAX_LISTING = 1000
_SKIP_DIRS = frozenset({"node_modules", "__pycache__"})
_RENAMES = (
    ("with read_file", "with the view command"),
    ("from read_file", "from the view output"),
    ("read_file line-number prefixes", "line-number prefixes of the view output"),
    ("with write_file", "with the create command"),
    ("use write_file", "use the create command"),
    ("use glob to find files", "view a directory to list its files"),
)


class TextEditorTool(_FileTool):
    """``str_replace_based_edit_tool``: view / create / str_replace / insert."""

    name = "str_replace_based_edit_tool"
    reads_files = True
    path_key = "path"
    ANTHROPIC_TYPE = "text_editor_20250728"

    def __init__(self, workspace: Workspace, state: ReadState) -> None:
        super().__init__(workspace, state)
        self.reader = ReadFileTool(workspace, state)
        self.writer = WriteFileTool(workspace, state)
        self.editor = EditFileTool(workspace, state)

    def _make_info(self) -> Info:
        return Info(
            name=self.name,
            subject=self.subject,
            description=(
                "View, create and edit text files in the workspace. Commands: view (a file, "
                "optionally view_range [first, last] with last -1 for the end; or a "
                "directory), create (path, file_text), str_replace (path, old_str, new_str; "
                "old_str must occur exactly once), insert (path, insert_line: the text goes "
                "after that line, 0 for the top; insert_text)."
            ),
            parameters=Schema.object(
                {
                    "command": Schema(
                        type="string",
                        enum=["view", "create", "str_replace", "insert"],
                        description="The command",
                    ),
                    "path": Schema.string("The file or directory"),
                    "file_text": Schema.string("create: the content of the new file"),
                    "old_str": Schema.string("str_replace: the exact text to replace"),
                    "new_str": Schema.string("str_replace: the replacement; insert: the text"),
                    "insert_line": Schema(
                        type="integer", minimum=0, description="insert: the line to insert after"
                    ),
                    "insert_text": Schema.string("insert: the text to insert"),
                    "view_range": Schema(
                        type="array",
                        items=Schema.integer(),
                        min_items=2,
                        max_items=2,
                        description="view: [first, last]",
                    ),
                },
                "command",
                "path",
            ),
            requires_approval=True,
        )

    # -- approval and preview -------------------------------------------------------------

    def read_only_call(self, args: Args) -> bool:
        try:
            return bool(self._parse(args)["command"] == "view")
        except ValueError:
            return False

    def requires_approval_for(self, args: Args) -> bool:
        try:
            parsed = self._parse(args)
        except ValueError:
            return True
        if parsed["command"] != "view":
            return True
        return self.workspace.is_protected(parsed["path"], write=False)

    def _binds(self, parsed: dict[str, Any]) -> bool:
        return bool(parsed["command"] != "view")

    def preview(self, args: Args) -> Change:
        parsed = self._parse(args)
        tool, mapped = self._map(parsed)
        if not isinstance(tool, WriteFileTool | EditFileTool):
            raise ToolError(f"{self.name}: view changes nothing")
        change = tool.preview(mapped)
        # Hold this call to what the writer's card bound (the path and the change shown).
        held = tool.binding_for(mapped)
        self.bindings.bind(
            self._key(parsed), held or (self._target(str(parsed["path"])),), replace=True
        )
        return change

    def _checked_target(self, parsed: dict[str, Any]) -> tuple[Target, ...]:
        """Hold the call to the path this tool's preview bound (``_binding``)."""
        bound = self.bindings.take(self._key(parsed))
        now = self._target(str(parsed["path"]))
        verify(self.name, bound, (now,), self.workspace.display)
        return bound or (now,)

    # -- the call -------------------------------------------------------------------------

    async def call(self, args: Args) -> Result:
        try:
            parsed = self._parse(args)
            if parsed["command"] == "view":
                path = self.workspace.resolve(parsed["path"], tool=self.name)
                if path.is_dir():
                    return await asyncio.to_thread(guarded, self.name, lambda: self._listing(path))
            target = None if parsed["command"] == "view" else self._checked_target(parsed)
            tool, mapped = self._map(parsed)
            if target is not None:  # the tool mapped onto is held to the same target
                tool.hold_to(mapped, target)
        except ValueError as exc:
            return Result.error(str(exc))
        result = await tool.call(mapped)
        if result.is_error:
            result.content = self._in_our_words(result.content, tool.name)
        return result

    def _in_our_words(self, message: str, via: str) -> str:
        """An error of the tool we mapped onto, named as this tool's commands."""
        if message.startswith(f"{via}: "):
            message = f"{self.name}: {message[len(via) + 2 :]}"
        for theirs, ours in _RENAMES:
            message = message.replace(theirs, ours)
        return message

    def _map(
        self, p: dict[str, Any]
    ) -> tuple[ReadFileTool | WriteFileTool | EditFileTool, dict[str, Any]]:
        """The tool and arguments a command maps onto."""
        command, path = p["command"], p["path"]
        if command == "view":
            first, last = p.get("view_range") or (1, -1)
            mapped: dict[str, Any] = {"file_path": path, "offset": max(first, 1)}
            if last != -1:
                if last < first:
                    raise ToolError(
                        f"{self.name}: view_range [{first}, {last}] ends before "
                        f"it starts; use [first, last] or [first, -1]"
                    )
                mapped["limit"] = last - max(first, 1) + 1
            return self.reader, mapped
        if command == "create":
            if "file_text" not in p:
                raise ToolError(f"{self.name}: create needs file_text")
            return self.writer, {"file_path": path, "content": p["file_text"]}
        if command == "str_replace":
            if "old_str" not in p:
                raise ToolError(f"{self.name}: str_replace needs old_str")
            return self.editor, {
                "file_path": path,
                "old_string": p["old_str"],
                "new_string": p.get("new_str", ""),
            }
        return self.writer, {"file_path": path, "content": self._inserted(p)}

    def _inserted(self, p: dict[str, Any]) -> str:
        """The whole new content for an ``insert``."""
        text = p.get("insert_text", p.get("new_str"))
        if text is None or "insert_line" not in p:
            raise ToolError(f"{self.name}: insert needs insert_line and insert_text")
        target = self.workspace.resolve(p["path"], for_write=True, tool=self.name)
        shown = self.workspace.display(target)
        tf = load_checked(
            self.state,
            target,
            tool=self.name,
            shown=shown,
            reader="view",
            opener=self.workspace.opener(self.name, write=True),
        )
        if tf is None:
            raise ToolError(f"{self.name}: {shown} does not exist; use the create command")
        current = tf.text.replace("\r\n", "\n") if tf.crlf else tf.text
        n = len(split_lines(current))
        at = p["insert_line"]
        if at > n:
            raise ToolError(
                f"{self.name}: insert_line {at} is past the end of {shown}, which "
                f"has {n} lines; use a line from 0 to {n}"
            )
        text = text.replace("\r\n", "\n") if tf.crlf else text
        if text.endswith("\n"):
            text = text[:-1]
        lines = current.split("\n")
        return "\n".join(lines[:at] + text.split("\n") + lines[at:])

    def _listing(self, folder: os.PathLike[str]) -> Result:
        shown = self.workspace.display(folder)
        entries: list[str] = []
        base = os.fspath(folder)
        keep = name_visible(self.workspace)  # no secret's name, as glob lists
        hidden = 0
        for dirpath, dirnames, filenames in os.walk(base):
            depth = os.path.relpath(dirpath, base).count(os.sep) + (dirpath != base)
            dirnames[:] = sorted(
                d for d in dirnames if not d.startswith(".") and d not in _SKIP_DIRS
            )
            shown_dirs = [d for d in dirnames if keep(Path(dirpath, d))]
            hidden += len(dirnames) - len(shown_dirs)
            dirnames[:] = shown_dirs
            for name in dirnames:
                entries.append(self.workspace.display(os.path.join(dirpath, name)) + "/")
            for name in sorted(filenames):
                if name.startswith("."):
                    continue
                if not keep(Path(dirpath, name)):
                    hidden += 1
                    continue
                entries.append(self.workspace.display(os.path.join(dirpath, name)))
            if depth >= 1:
                dirnames[:] = []
            if len(entries) > _MAX_LISTING:
                break
        cut = len(entries) > _MAX_LISTING
        entries = sorted(entries[:_MAX_LISTING])
        head = f"Files and directories up to 2 levels deep in {shown}, excluding hidden items:"
        tail = [f"(listing cut at {_MAX_LISTING} entries)"] if cut else []
        if hidden:
            tail.append(f"({hidden_note(hidden, 'entry', 'entries')})")
        return Result(content="\n".join([head, *entries, *tail]))
