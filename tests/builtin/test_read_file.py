"""read_file: numbered lines, windows, refusals by stat, encodings, read-state records."""

from __future__ import annotations

import codecs
import os
import socket
from pathlib import Path

import pytest

from nb_tools.builtin._files import ReadFileTool, WriteFileTool
from nb_tools.builtin._readstate import ReadState
from nb_tools.builtin._workspace import Workspace


@pytest.fixture
def tool(ws: Workspace, state: ReadState) -> ReadFileTool:
    return ReadFileTool(ws, state)


def test_info_is_what_the_model_sees(tool: ReadFileTool) -> None:
    info = tool.info()
    assert (info.name, info.read_only, info.requires_approval) == ("read_file", True, False)
    assert info.parameters is not None
    assert info.parameters.to_dict() == {
        "type": "object",
        "properties": {
            "file_path": {
                "type": "string",
                "description": "The file to read (relative to the workspace root, or absolute "
                "inside it)",
            },
            "offset": {
                "type": "integer",
                "description": "Line number to start at (1-based)",
                "default": 1,
                "minimum": 0,
            },
            "limit": {
                "type": "integer",
                "description": "How many lines to show",
                "default": 2000,
                "minimum": 1,
            },
        },
        "required": ["file_path"],
    }


async def test_numbered_lines(tool: ReadFileTool, root: Path, state: ReadState) -> None:
    (root / "a.py").write_text("import os\n\n    x = 1\n")
    result = await tool.call('{"file_path": "a.py"}')
    assert not result.is_error
    assert result.content == "     1\timport os\n     2\t\n     3\t    x = 1"
    assert state.has_read(root / "a.py")


async def test_window_has_footer_and_does_not_count_as_read(
    tool: ReadFileTool, root: Path, state: ReadState
) -> None:
    (root / "big.txt").write_text("".join(f"line {i}\n" for i in range(1, 11)))
    result = await tool.call({"file_path": "big.txt", "offset": 3, "limit": 2})
    assert result.content == (
        "     3\tline 3\n     4\tline 4\n\n(Showing lines 3-4 of 10. Pass offset=5 to read on.)"
    )
    assert result.metadata["partial"] is True
    assert not state.has_read(root / "big.txt")
    tail = await tool.call({"file_path": "big.txt", "offset": 9})
    assert tail.content.endswith("(Showing lines 9-10 of 10.)")


async def test_offset_past_end(tool: ReadFileTool, root: Path) -> None:
    (root / "a.txt").write_text("one\ntwo\n")
    result = await tool.call({"file_path": "a.txt", "offset": 5})
    assert result.is_error
    assert result.content == (
        "read_file: offset 5 is past the end of a.txt, which has 2 lines; pass an offset "
        "from 1 to 2"
    )


async def test_long_lines_are_cut(tool: ReadFileTool, root: Path) -> None:
    (root / "wide.txt").write_text("x" * 2500 + "\nshort\n")
    result = await tool.call({"file_path": "wide.txt"})
    first, second = result.content.split("\n")
    assert first == "     1\t" + "x" * 2000 + "… [line cut: 2,500 characters, first 2,000 shown]"
    assert second == "     2\tshort"


async def test_empty_file(tool: ReadFileTool, root: Path, state: ReadState) -> None:
    (root / "empty.txt").write_text("")
    result = await tool.call({"file_path": "empty.txt"})
    assert result.content == "(empty.txt is empty: 0 lines)"
    assert state.has_read(root / "empty.txt")


async def test_missing_file(tool: ReadFileTool) -> None:
    result = await tool.call({"file_path": "nope.txt"})
    assert result.is_error
    assert result.content == "read_file: nope.txt does not exist; use glob to find files"


@pytest.mark.parametrize("data", [b"abc\x00def", b"\x00" * 100, b"PK\x03\x04\x00\x00"])
async def test_binary_is_refused(tool: ReadFileTool, root: Path, data: bytes) -> None:
    (root / "blob.bin").write_bytes(data)
    result = await tool.call({"file_path": "blob.bin"})
    assert result.is_error
    assert "looks binary" in result.content


async def test_directory_fifo_socket_are_refused_by_stat(tool: ReadFileTool, root: Path) -> None:
    (root / "dir").mkdir()
    os.mkfifo(root / "pipe.txt")  # a text-like name: refused by what stat says
    sock = socket.socket(socket.AF_UNIX)
    try:
        sock.bind(str(root / "sock"))
        results = {
            name: await tool.call({"file_path": name}) for name in ["dir", "pipe.txt", "sock"]
        }
    finally:
        sock.close()
    assert results["dir"].content == (
        "read_file: dir is a directory, not a file; use glob to list its contents"
    )
    assert results["pipe.txt"].content == (
        "read_file: pipe.txt is a FIFO; only regular files can be read"
    )
    assert results["sock"].content == "read_file: sock is a socket; only regular files can be read"


async def test_size_limit_says_so(tool: ReadFileTool, root: Path) -> None:
    with open(root / "huge.log", "wb") as f:
        f.truncate(11 * 1024 * 1024)
    result = await tool.call({"file_path": "huge.log"})
    assert result.is_error
    assert result.content.startswith(
        "read_file: huge.log is 11,534,336 bytes, over the 10,485,760-byte limit"
    )


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (codecs.BOM_UTF8 + "héllo\n".encode(), "héllo"),
        ("naïve café déjà vu, über straße\n".encode("cp1252"), "naïve café déjà vu, über straße"),
        (codecs.BOM_UTF16_LE + "wide\n".encode("utf-16-le"), "wide"),
    ],
)
async def test_encodings(tool: ReadFileTool, root: Path, data: bytes, expected: str) -> None:
    (root / "t.txt").write_bytes(data)
    result = await tool.call({"file_path": "t.txt"})
    assert result.content == f"     1\t{expected}"


async def test_crlf_shown_without_carriage_returns(tool: ReadFileTool, root: Path) -> None:
    (root / "w.txt").write_bytes(b"a\r\nb\r\n")
    assert (await tool.call({"file_path": "w.txt"})).content == "     1\ta\n     2\tb"


async def test_invalid_arguments(tool: ReadFileTool) -> None:
    result = await tool.call('{"file_path": 3}')
    assert result.is_error
    assert result.content.startswith("read_file: invalid arguments: /file_path")


async def test_protected_paths_ask_and_are_marked(tool: ReadFileTool, root: Path) -> None:
    (root / ".env").write_text("KEY=1\n")
    (root / "notes.md").write_text("hi\n")
    assert tool.requires_approval_for('{"file_path": ".env"}')
    assert not tool.requires_approval_for('{"file_path": "notes.md"}')
    result = await tool.call({"file_path": ".env"})
    assert result.metadata["protected"] is True


async def test_read_then_changed_on_disk(root: Path, ws: Workspace, state: ReadState) -> None:
    (root / "a.txt").write_text("one\n")
    await ReadFileTool(ws, state).call({"file_path": "a.txt"})
    (root / "a.txt").write_text("two\n")
    result = await WriteFileTool(ws, state).call({"file_path": "a.txt", "content": "x\n"})
    assert result.content == (
        "write_file: a.txt has changed since you read it (modified on disk by someone else); "
        "read it again with read_file, then retry"
    )
