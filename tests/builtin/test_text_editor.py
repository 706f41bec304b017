"""The Anthropic text editor tool (text_editor_20250728) mapped onto the file tools."""

from __future__ import annotations

from pathlib import Path

import pytest

from nb_tools.builtin._files import ReadFileTool
from nb_tools.builtin._readstate import ReadState
from nb_tools.builtin._text_editor import TextEditorTool
from nb_tools.builtin._workspace import Workspace
from nb_tools.tool import Change


@pytest.fixture
def tool(ws: Workspace, state: ReadState) -> TextEditorTool:
    return TextEditorTool(ws, state)


def test_identity(tool: TextEditorTool) -> None:
    assert tool.info().name == "str_replace_based_edit_tool"
    assert TextEditorTool.ANTHROPIC_TYPE == "text_editor_20250728"
    assert tool.read_only_call({"command": "view", "path": "a"})
    assert not tool.read_only_call({"command": "create", "path": "a", "file_text": ""})
    assert not tool.requires_approval_for({"command": "view", "path": "a"})
    assert tool.requires_approval_for({"command": "view", "path": ".env"})
    assert tool.requires_approval_for({"command": "str_replace", "path": "a", "old_str": "x"})


async def test_view_file_is_read_file(tool: TextEditorTool, root: Path, state: ReadState) -> None:
    (root / "a.txt").write_text("one\ntwo\nthree\n")
    view = await tool.call({"command": "view", "path": "a.txt"})
    same = await ReadFileTool(Workspace(root), ReadState()).call({"file_path": "a.txt"})
    assert view.content == same.content == "     1\tone\n     2\ttwo\n     3\tthree"
    assert state.has_read(Workspace(root).root / "a.txt")
    ranged = await tool.call({"command": "view", "path": "a.txt", "view_range": [2, 2]})
    assert ranged.content == "     2\ttwo\n\n(Showing lines 2-2 of 3. Pass offset=3 to read on.)"
    to_end = await tool.call({"command": "view", "path": "a.txt", "view_range": [2, -1]})
    assert to_end.content.startswith("     2\ttwo\n     3\tthree")


async def test_view_directory(tool: TextEditorTool, root: Path) -> None:
    (root / "src" / "pkg" / "deep").mkdir(parents=True)
    (root / "src" / "pkg" / "deep" / "x.py").write_text("")
    (root / "src" / "main.py").write_text("")
    (root / ".hidden").mkdir()
    (root / "README.md").write_text("")
    result = await tool.call({"command": "view", "path": "."})
    assert result.content == (
        "Files and directories up to 2 levels deep in ., excluding hidden items:\n"
        "README.md\nsrc/\nsrc/main.py\nsrc/pkg/"
    )


async def test_create_str_replace_insert(tool: TextEditorTool, root: Path) -> None:
    created = await tool.call({"command": "create", "path": "f.py", "file_text": "a\nb\n"})
    assert created.content == "Created f.py (2 lines, 4 bytes)"
    args = {"command": "str_replace", "path": "f.py", "old_str": "b", "new_str": "B"}
    assert tool.preview(args) == Change(path="f.py", before="a\nb\n", after="a\nB\n")
    replaced = await tool.call(args)
    assert replaced.content == "Edited f.py: 1 replacement (line 2)"
    inserted = await tool.call(
        {"command": "insert", "path": "f.py", "insert_line": 1, "insert_text": "x\n"}
    )
    assert not inserted.is_error, inserted.content
    assert (root / "f.py").read_text() == "a\nx\nB\n"
    top = await tool.call({"command": "insert", "path": "f.py", "insert_line": 0, "new_str": "0"})
    assert not top.is_error, top.content
    end = await tool.call({"command": "insert", "path": "f.py", "insert_line": 4, "new_str": "z"})
    assert not end.is_error, end.content
    assert (root / "f.py").read_text() == "0\na\nx\nB\nz\n"


async def test_insert_errors(tool: TextEditorTool, root: Path) -> None:
    (root / "g.txt").write_text("1\n2\n")
    unread = await tool.call(
        {"command": "insert", "path": "g.txt", "insert_line": 0, "insert_text": "x"}
    )
    assert unread.content == (
        "str_replace_based_edit_tool: g.txt has not been read yet; read it first with view "
        "(the whole file), then retry"
    )
    await tool.call({"command": "view", "path": "g.txt"})
    past = await tool.call(
        {"command": "insert", "path": "g.txt", "insert_line": 5, "insert_text": "x"}
    )
    assert past.content == (
        "str_replace_based_edit_tool: insert_line 5 is past the end of g.txt, which has 2 "
        "lines; use a line from 0 to 2"
    )
    missing = await tool.call({"command": "insert", "path": "g.txt", "insert_line": 1})
    assert missing.content == (
        "str_replace_based_edit_tool: insert needs insert_line and insert_text"
    )


async def test_crlf_insert_keeps_crlf(tool: TextEditorTool, root: Path) -> None:
    (root / "w.txt").write_bytes(b"a\r\nb\r\n")
    await tool.call({"command": "view", "path": "w.txt"})
    await tool.call({"command": "insert", "path": "w.txt", "insert_line": 1, "insert_text": "m"})
    assert (root / "w.txt").read_bytes() == b"a\r\nm\r\nb\r\n"


async def test_unknown_command_and_bad_range(tool: TextEditorTool, root: Path) -> None:
    undo = await tool.call({"command": "undo_edit", "path": "a"})
    assert undo.is_error and undo.content.startswith(
        "str_replace_based_edit_tool: invalid arguments: /command"
    )
    (root / "a.txt").write_text("x\n")
    bad = await tool.call({"command": "view", "path": "a.txt", "view_range": [3, 1]})
    assert bad.content == (
        "str_replace_based_edit_tool: view_range [3, 1] ends before it starts; use "
        "[first, last] or [first, -1]"
    )


async def test_errors_speak_of_this_tools_commands(tool: TextEditorTool, root: Path) -> None:
    (root / "h.txt").write_text("x\n")
    unread = await tool.call(
        {"command": "str_replace", "path": "h.txt", "old_str": "x", "new_str": "y"}
    )
    assert unread.content == (
        "str_replace_based_edit_tool: h.txt has not been read yet; read it first with the view "
        "command (the whole file), then retry"
    )
    missing = await tool.call({"command": "view", "path": "nope.txt"})
    assert missing.content == (
        "str_replace_based_edit_tool: nope.txt does not exist; view a directory to list its files"
    )
    absent = await tool.call(
        {"command": "str_replace", "path": "nope.txt", "old_str": "x", "new_str": "y"}
    )
    assert absent.content == (
        "str_replace_based_edit_tool: nope.txt does not exist; create it with the create command"
    )
