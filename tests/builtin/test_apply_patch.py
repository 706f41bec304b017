"""apply_patch beyond the Codex conformance suite: all or nothing, previews, confinement,
line endings, the read state."""

from __future__ import annotations

import difflib
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nb_tools.builtin._atomic import WriteFailed, write_files
from nb_tools.builtin._files import EditFileTool, ReadFileTool
from nb_tools.builtin._patch import ApplyPatchTool
from nb_tools.builtin._patch_parse import UpdateFile, apply_chunks, parse_patch
from nb_tools.builtin._readstate import ReadState
from nb_tools.builtin._workspace import Workspace
from nb_tools.tool import Change


@pytest.fixture
def tool(ws: Workspace, state: ReadState) -> ApplyPatchTool:
    return ApplyPatchTool(ws, state)


def tree(root: Path) -> dict[str, bytes | str]:
    return {
        p.relative_to(root).as_posix(): "DIR" if p.is_dir() else p.read_bytes()
        for p in sorted(root.rglob("*"))
    }


def patch(*body: str) -> str:
    return "\n".join(["*** Begin Patch", *body, "*** End Patch"]) + "\n"


def test_info(tool: ApplyPatchTool) -> None:
    info = tool.info()
    assert info.name == "apply_patch" and info.requires_approval and not info.read_only
    assert info.parameters is not None
    assert info.parameters.to_dict() == {
        "type": "object",
        "properties": {
            "input": {
                "type": "string",
                "description": "The whole patch, from *** Begin Patch to *** End Patch",
            }
        },
        "required": ["input"],
    }
    assert info.grammar is not None and info.grammar.syntax == "lark"


async def test_failure_late_in_patch_writes_nothing(tool: ApplyPatchTool, root: Path) -> None:
    (root / "a.txt").write_text("a\n")
    (root / "b.txt").write_text("b\n")
    (root / "gone.txt").write_text("g\n")
    before = tree(root)
    text = patch(
        "*** Add File: new.txt",
        "+new",
        "*** Delete File: gone.txt",
        "*** Update File: a.txt",
        "@@",
        "-a",
        "+A",
        "*** Update File: b.txt",
        "@@",
        "-not there",
        "+B",
    )
    result = await tool.call({"input": text})
    assert result.is_error
    assert result.content == (
        "apply_patch: Failed to find expected lines in b.txt:\nnot there\n"
        "Nothing was changed (a patch applies all or nothing); fix this part and send the "
        "whole patch again."
    )
    assert tree(root) == before


async def test_add_then_update_in_one_patch(tool: ApplyPatchTool, root: Path) -> None:
    text = patch("*** Add File: n.txt", "+one", "*** Update File: n.txt", "@@", "-one", "+two")
    result = await tool.call({"input": text})
    assert not result.is_error, result.content
    assert (root / "n.txt").read_text() == "two\n"


async def test_preview_files_move_is_delete_plus_create(tool: ApplyPatchTool, root: Path) -> None:
    (root / "old.txt").write_text("x\ny\n")
    text = patch("*** Update File: old.txt", "*** Move to: sub/new.txt", "@@", " x", "-y", "+z")
    changes = tool.preview_files(json.dumps({"input": text}))
    assert changes == [
        Change(path="old.txt", before="x\ny\n", after=None),
        Change(path="sub/new.txt", before=None, after="x\nz\n"),
    ]
    assert tree(root) == {"old.txt": b"x\ny\n"}  # a preview writes nothing
    result = await tool.call({"input": text})
    assert result.content == "Success. Updated the following files:\nM sub/new.txt\n"
    assert tree(root) == {"sub": "DIR", "sub/new.txt": b"x\nz\n"}


async def test_outside_paths_are_refused(tool: ApplyPatchTool, root: Path, tmp_path: Path) -> None:
    (root / "a.txt").write_text("a\n")
    before = tree(tmp_path)
    for path in ["../evil.txt", str(tmp_path / "evil.txt"), "~/evil.txt"]:
        result = await tool.call(
            {"input": patch("*** Add File: a2.txt", "+ok", f"*** Add File: {path}", "+evil")}
        )
        assert result.is_error
        assert path in result.content
        assert tree(tmp_path) == before


async def test_absolute_path_inside_root_is_accepted(tool: ApplyPatchTool, root: Path) -> None:
    inside = Workspace(root).root / "abs.txt"
    result = await tool.call({"input": patch(f"*** Add File: {inside}", "+hi")})
    assert result.content == "Success. Updated the following files:\nA abs.txt\n"


async def test_crlf_file_keeps_crlf(tool: ApplyPatchTool, root: Path) -> None:
    (root / "w.txt").write_bytes(b"one\r\ntwo\r\nthree\r\n")
    result = await tool.call({"input": patch("*** Update File: w.txt", "@@", " one", "-two", "+2")})
    assert not result.is_error, result.content
    assert (root / "w.txt").read_bytes() == b"one\r\n2\r\nthree\r\n"


async def test_freeform_patch_text_is_accepted(tool: ApplyPatchTool, root: Path) -> None:
    result = await tool.call(patch("*** Add File: f.txt", "+free"))
    assert not result.is_error, result.content
    assert (root / "f.txt").read_text() == "free\n"


async def test_parse_errors_keep_codex_wording(tool: ApplyPatchTool) -> None:
    stacked = patch(
        "*** Add File: x", "+x", "*** Update File: x", "@@ class A", "@@ def f", " pass"
    )
    result = await tool.call({"input": stacked})
    assert result.content == (
        "apply_patch: Invalid patch hunk on line 6: Unexpected line found in update hunk: "
        "'@@ def f'. Every line should start with ' ' (context line), '+' (added line), or "
        "'-' (removed line); nothing was changed"
    )


async def test_delete_and_update_errors(tool: ApplyPatchTool, root: Path) -> None:
    (root / "d").mkdir()
    gone = await tool.call({"input": patch("*** Delete File: nope.txt")})
    assert gone.content.startswith(
        "apply_patch: Failed to delete file nope.txt: No such file or directory"
    )
    folder = await tool.call({"input": patch("*** Delete File: d")})
    assert folder.content.startswith("apply_patch: Failed to delete file d: it is a directory")


async def test_no_read_needed_and_read_state_updated(
    root: Path, state: ReadState, tool: ApplyPatchTool
) -> None:
    ws = Workspace(root)
    (root / "read.txt").write_text("r\n")
    (root / "unread.txt").write_text("u\n")
    await ReadFileTool(ws, state).call({"file_path": "read.txt"})
    result = await tool.call(
        {
            "input": patch(
                "*** Update File: read.txt",
                "@@",
                "-r",
                "+R",
                "*** Update File: unread.txt",
                "@@",
                "-u",
                "+U",
                "*** Add File: added.txt",
                "+a",
            )
        }
    )
    assert not result.is_error, result.content
    edit = EditFileTool(ws, state)
    ok = await edit.call({"file_path": "read.txt", "old_string": "R", "new_string": "RR"})
    assert not ok.is_error, ok.content
    ok = await edit.call({"file_path": "added.txt", "old_string": "a", "new_string": "A"})
    assert not ok.is_error, ok.content
    refused = await edit.call({"file_path": "unread.txt", "old_string": "U", "new_string": "x"})
    assert "has not been read yet" in refused.content


async def test_protected_paths_are_marked(tool: ApplyPatchTool, root: Path) -> None:
    text = patch("*** Add File: .env.local", "+KEY=1")
    assert tool.is_protected_call({"input": text})
    assert not tool.is_protected_call({"input": patch("*** Add File: ok.txt", "+x")})
    result = await tool.call({"input": text})
    assert result.metadata["protected"] is True


def test_staging_failure_leaves_nothing(root: Path) -> None:
    ws = Workspace(root)
    (root / "a.txt").write_text("a\n")
    (root / "file").write_text("not a folder\n")
    before = tree(root)
    with pytest.raises(WriteFailed, match="nothing was changed"):
        write_files(
            [(root / "a.txt", b"A\n"), (ws.root / "file" / "x.txt", b"x\n")],
            workspace=ws,
            tool="apply_patch",
        )
    assert tree(root) == before


def codex_patch(path: str, before: list[str], after: list[str]) -> str:
    """A Codex patch turning ``before`` into ``after``, from difflib's grouped opcodes."""
    out = ["*** Begin Patch", f"*** Update File: {path}"]
    matcher = difflib.SequenceMatcher(a=before, b=after, autojunk=False)
    for group in matcher.get_grouped_opcodes(3):
        out.append("@@")
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                out += [f" {line}" for line in before[i1:i2]]
            if tag in ("replace", "delete"):
                out += [f"-{line}" for line in before[i1:i2]]
            if tag in ("replace", "insert"):
                out += [f"+{line}" for line in after[j1:j2]]
    out.append("*** End Patch")
    return "\n".join(out)


@settings(max_examples=60, deadline=None)
@given(
    before=st.lists(st.integers(0, 40), unique=True, max_size=25).map(
        lambda xs: [f"line {x}" for x in xs]
    ),
    edits=st.lists(st.tuples(st.booleans(), st.integers(0, 30)), max_size=12),
)
def test_generated_patches_reproduce_the_new_file(
    before: list[str], edits: list[tuple[bool, int]]
) -> None:
    after = list(before)
    for n, (insert, at) in enumerate(edits):
        if insert:
            after.insert(min(at, len(after)), f"new {n}")
        elif after:
            del after[at % len(after)]
    if after == before:
        return
    [hunk] = parse_patch(codex_patch("f.txt", before, after))
    assert isinstance(hunk, UpdateFile)
    text = "".join(f"{line}\n" for line in before)
    assert apply_chunks(text, hunk.chunks, "f.txt") == "".join(f"{line}\n" for line in after)


async def test_binary_files_can_be_deleted_or_replaced_but_not_updated(
    tool: ApplyPatchTool, root: Path
) -> None:
    (root / "a.bin").write_bytes(b"\x00\x01")
    (root / "b.bin").write_bytes(b"\x00\x02")
    (root / "c.bin").write_bytes(b"\x00\x03")
    update = await tool.call(patch("*** Update File: c.bin", "@@", "-x", "+y"))
    assert update.content.startswith(
        "apply_patch: Failed to read file to update c.bin: c.bin looks binary"
    )
    text = patch("*** Delete File: a.bin", "*** Add File: b.bin", "+text now")
    assert tool.preview_files(text) == [
        Change(path="a.bin", before="", after=None, binary=True),
        # the text that replaces it is on the card, line by line (red team: a script could
        # go in under "Binary file b.bin updated")
        Change(path="b.bin", before="[old content not shown: a binary file]\n", after="text now\n"),
    ]
    result = await tool.call(text)
    assert result.content == "Success. Updated the following files:\nA b.bin\nD a.bin\n"
    assert tree(root) == {"b.bin": b"text now\n", "c.bin": b"\x00\x03"}
