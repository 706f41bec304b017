"""write_file and edit_file: read-before-write, previews, line endings, encodings, errors."""

from __future__ import annotations

import codecs
import json
from pathlib import Path

import pytest

from nb_tools.builtin._files import EditFileTool, ReadFileTool, WriteFileTool
from nb_tools.builtin._readstate import ReadState
from nb_tools.builtin._workspace import Workspace
from nb_tools.tool import Change


@pytest.fixture
def read(ws: Workspace, state: ReadState) -> ReadFileTool:
    return ReadFileTool(ws, state)


@pytest.fixture
def write(ws: Workspace, state: ReadState) -> WriteFileTool:
    return WriteFileTool(ws, state)


@pytest.fixture
def edit(ws: Workspace, state: ReadState) -> EditFileTool:
    return EditFileTool(ws, state)


def test_writers_ask_by_default(write: WriteFileTool, edit: EditFileTool) -> None:
    for tool in (write, edit):
        info = tool.info()
        assert info.requires_approval and not info.read_only
    assert write.requires_approval_for('{"file_path": "a", "content": ""}')
    assert edit.requires_approval_for("not json")


# -- write_file ----------------------------------------------------------------------------


async def test_create_needs_no_read_and_makes_folders(write: WriteFileTool, root: Path) -> None:
    result = await write.call({"file_path": "new/dir/a.txt", "content": "one\ntwo\n"})
    assert result.content == "Created new/dir/a.txt (2 lines, 8 bytes)"
    undo = result.metadata.pop("undo")  # the way back, for the run's journal
    assert result.metadata == {"path": "new/dir/a.txt", "change": "create"}
    assert (undo.path, undo.kind, undo.before) == ("new/dir/a.txt", "create", None)
    assert (root / "new/dir/a.txt").read_text() == "one\ntwo\n"


async def test_overwrite_requires_full_read(
    write: WriteFileTool, read: ReadFileTool, root: Path
) -> None:
    (root / "a.txt").write_text("".join(f"{i}\n" for i in range(10)))
    result = await write.call({"file_path": "a.txt", "content": "x\n"})
    assert result.is_error
    assert result.content == (
        "write_file: a.txt has not been read yet; read it first with read_file (the whole "
        "file), then retry"
    )
    await read.call({"file_path": "a.txt", "limit": 3})  # a partial read is not enough
    assert (await write.call({"file_path": "a.txt", "content": "x\n"})).is_error
    await read.call({"file_path": "a.txt"})
    result = await write.call({"file_path": "a.txt", "content": "x\n"})
    assert result.content == "Wrote a.txt (1 line, 2 bytes)"
    assert (root / "a.txt").read_text() == "x\n"


async def test_write_preview_is_what_is_written(
    write: WriteFileTool, read: ReadFileTool, root: Path
) -> None:
    (root / "a.txt").write_text("old\n")
    await read.call({"file_path": "a.txt"})
    args = json.dumps({"file_path": "a.txt", "content": "new\n"})
    change = write.preview(args)
    assert change == Change(path="a.txt", before="old\n", after="new\n")
    assert (root / "a.txt").read_text() == "old\n"  # preview writes nothing
    await write.call(args)
    assert (root / "a.txt").read_text() == change.after
    assert write.preview('{"file_path": "b.txt", "content": "x"}').kind == "create"


async def test_write_keeps_crlf_encoding_and_bom(
    write: WriteFileTool, read: ReadFileTool, root: Path
) -> None:
    (root / "win.txt").write_bytes(b"a\r\nb\r\n")
    (root / "latin.txt").write_bytes("café crème brûlée à la carte\n".encode("cp1252"))
    (root / "bom.txt").write_bytes(codecs.BOM_UTF8 + b"x\n")
    for name in ("win.txt", "latin.txt", "bom.txt"):
        await read.call({"file_path": name})
    await write.call({"file_path": "win.txt", "content": "c\nd\n"})
    await write.call({"file_path": "latin.txt", "content": "déjà\n"})
    await write.call({"file_path": "bom.txt", "content": "y\n"})
    assert (root / "win.txt").read_bytes() == b"c\r\nd\r\n"
    assert (root / "latin.txt").read_bytes() == "déjà\n".encode("cp1252")
    assert (root / "bom.txt").read_bytes() == codecs.BOM_UTF8 + b"y\n"


async def test_write_refuses_unencodable_text(
    write: WriteFileTool, read: ReadFileTool, root: Path
) -> None:
    (root / "latin.txt").write_bytes("café crème brûlée à la carte\n".encode("cp1252"))
    await read.call({"file_path": "latin.txt"})
    result = await write.call({"file_path": "latin.txt", "content": "snow ☃\n"})
    assert result.is_error
    assert "'☃', which the file's encoding (cp1252) cannot hold" in result.content


# -- edit_file -----------------------------------------------------------------------------


async def prepared(root: Path, read: ReadFileTool, name: str, data: bytes) -> None:
    (root / name).write_bytes(data)
    result = await read.call({"file_path": name})
    assert not result.is_error


async def test_single_replacement(edit: EditFileTool, read: ReadFileTool, root: Path) -> None:
    await prepared(root, read, "notes.md", b"alpha\nbeta\ngamma\n")
    result = await edit.call({"file_path": "notes.md", "old_string": "beta", "new_string": "B"})
    assert result.content == "Edited notes.md: 1 replacement (line 2)"
    assert (root / "notes.md").read_text() == "alpha\nB\ngamma\n"


async def test_consecutive_edits_need_no_reread(
    edit: EditFileTool, read: ReadFileTool, root: Path
) -> None:
    await prepared(root, read, "a.txt", b"one two three\n")
    for old, new in [("one", "1"), ("two", "2"), ("three", "3")]:
        result = await edit.call({"file_path": "a.txt", "old_string": old, "new_string": new})
        assert not result.is_error, result.content
    assert (root / "a.txt").read_text() == "1 2 3\n"


async def test_ambiguous_lists_lines(edit: EditFileTool, read: ReadFileTool, root: Path) -> None:
    await prepared(root, read, "a.py", b"x = 1\ny = 2\nx = 1\n\nx = 1\n")
    result = await edit.call({"file_path": "a.py", "old_string": "x = 1", "new_string": "x = 0"})
    assert result.is_error
    assert result.content == (
        "edit_file: old_string occurs 3 times in a.py (lines 1, 3, 5); pass replace_all=true "
        "or include more context to make it unique"
    )
    result = await edit.call(
        {"file_path": "a.py", "old_string": "x = 1", "new_string": "x = 0", "replace_all": True}
    )
    assert result.content == "Edited a.py: 3 replacements (lines 1, 3, 5)"
    assert (root / "a.py").read_text() == "x = 0\ny = 2\nx = 0\n\nx = 0\n"


async def test_equal_strings_and_not_found(
    edit: EditFileTool, read: ReadFileTool, root: Path
) -> None:
    await prepared(root, read, "a.txt", b"hello\n")
    same = await edit.call({"file_path": "a.txt", "old_string": "hello", "new_string": "hello"})
    assert same.content == (
        "edit_file: old_string and new_string are the same; there is nothing to change"
    )
    missing = await edit.call({"file_path": "a.txt", "old_string": "bye", "new_string": "x"})
    assert missing.is_error
    assert missing.content == (
        "edit_file: old_string was not found in a.txt; read the file again and copy the exact "
        "text to replace"
    )
    assert (root / "a.txt").read_text() == "hello\n"


async def test_not_found_hints(edit: EditFileTool, read: ReadFileTool, root: Path) -> None:
    await prepared(root, read, "a.py", b"def f():\n    return  1\n")
    loose = await edit.call(
        {"file_path": "a.py", "old_string": "def f():\n  return 1", "new_string": "x"}
    )
    assert loose.content == (
        "edit_file: old_string was not found in a.py exactly, but it matches at line 1 when "
        "whitespace and line endings are ignored; copy the exact text (indentation, tabs, "
        "trailing spaces) from read_file and retry"
    )
    prefixed = await edit.call(
        {"file_path": "a.py", "old_string": "     1\tdef f():", "new_string": "def g():"}
    )
    assert "line-number prefixes" in prefixed.content


async def test_literal_not_regex(edit: EditFileTool, read: ReadFileTool, root: Path) -> None:
    await prepared(root, read, "r.txt", b"a.b\naxb\n(x)+\n")
    await edit.call({"file_path": "r.txt", "old_string": "a.b", "new_string": "A"})
    await edit.call({"file_path": "r.txt", "old_string": "(x)+", "new_string": r"\1"})
    assert (root / "r.txt").read_text() == "A\naxb\n\\1\n"


async def test_crlf_kept_and_matched_with_lf(
    edit: EditFileTool, read: ReadFileTool, root: Path
) -> None:
    await prepared(root, read, "w.txt", b"one\r\ntwo\r\nthree\r\n")
    result = await edit.call(
        {"file_path": "w.txt", "old_string": "one\ntwo", "new_string": "1\n2\n2.5"}
    )
    assert not result.is_error, result.content
    assert (root / "w.txt").read_bytes() == b"1\r\n2\r\n2.5\r\nthree\r\n"


async def test_bom_encoding_and_trailing_newline_kept(
    edit: EditFileTool, read: ReadFileTool, root: Path
) -> None:
    await prepared(root, read, "bom.txt", codecs.BOM_UTF8 + "größe\nend\n".encode())
    await edit.call({"file_path": "bom.txt", "old_string": "end\n", "new_string": "fin"})
    assert (root / "bom.txt").read_bytes() == codecs.BOM_UTF8 + "größe\nfin\n".encode()
    await prepared(root, read, "nonl.txt", b"a\nb")
    await edit.call({"file_path": "nonl.txt", "old_string": "b", "new_string": "c"})
    assert (root / "nonl.txt").read_bytes() == b"a\nc"


async def test_edit_requires_read_and_existing_file(edit: EditFileTool, root: Path) -> None:
    (root / "a.txt").write_text("x\n")
    unread = await edit.call({"file_path": "a.txt", "old_string": "x", "new_string": "y"})
    assert "has not been read yet; read it first with read_file" in unread.content
    missing = await edit.call({"file_path": "b.txt", "old_string": "x", "new_string": "y"})
    assert missing.content == "edit_file: b.txt does not exist; create it with write_file"
    created = await edit.call({"file_path": "c.txt", "old_string": "", "new_string": "new\n"})
    assert created.content == "Created c.txt"
    assert (root / "c.txt").read_text() == "new\n"


async def test_edit_preview_is_what_is_written(
    edit: EditFileTool, read: ReadFileTool, root: Path
) -> None:
    await prepared(root, read, "a.txt", b"one\ntwo\n")
    args = {"file_path": "a.txt", "old_string": "two", "new_string": "2"}
    change = edit.preview(args)
    assert change.diff() == "--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+2\n"
    await edit.call(args)
    assert (root / "a.txt").read_text() == change.after


async def test_edit_after_outside_change_is_refused(
    edit: EditFileTool, read: ReadFileTool, root: Path
) -> None:
    await prepared(root, read, "a.txt", b"one\n")
    (root / "a.txt").write_text("one\nmore\n")
    result = await edit.call({"file_path": "a.txt", "old_string": "one", "new_string": "1"})
    assert "has changed since you read it" in result.content
    assert (root / "a.txt").read_text() == "one\nmore\n"
