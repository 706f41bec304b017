"""The write itself: a file keeps its mode (a 0600 secret is not widened, a 0755 script
stays executable), a refused multi-file patch leaves every file as it was even when the
refusal comes mid-write, and no temp file is left behind."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from files_attack import (
    SUB_WRITERS,
    SwapOnOpen,
    WriteWalkWorkspace,
    approved_write,
    args_json,
    fingerprint,
    make_world,
    patch,
    preview,
    read_all,
    swap_for_link,
)
from files_attack import tools as make_tools

MODE_WRITERS = ["write_file", "edit_file", "patch_update", "str_replace", "insert"]


@pytest.fixture
def world(tmp_path: Path) -> Path:
    return make_world(tmp_path)


@pytest.mark.parametrize("mode", [0o600, 0o755, 0o640])
@pytest.mark.parametrize("writer", MODE_WRITERS)
async def test_a_written_file_keeps_its_mode(world: Path, writer: str, mode: int) -> None:
    root = world / "root"
    (root / "notes.txt").chmod(mode)
    t = make_tools(root)
    await read_all(t, "notes.txt")
    result = await approved_write(t, writer, "notes.txt")
    assert not result.is_error, result.content
    assert stat.S_IMODE((root / "notes.txt").stat().st_mode) == mode
    assert (root / "notes.txt").read_bytes() != b"secret notes\n"
    assert not [p for p in os.listdir(root) if p.endswith(".nbtools-tmp")]


async def test_a_patch_refused_mid_write_changes_no_file(world: Path) -> None:
    """The first folder is opened, then the second is swapped for a link: the patch
    fails and the file already staged in the first folder is not changed either."""
    root = world / "root"
    ws = SwapOnOpen(root)
    t = make_tools(root, ws)
    args = patch(
        "*** Update File: a.txt",
        "@@",
        "-secret a",
        "+changed a",
        "*** Update File: sub/f.txt",
        "@@",
        "-secret f",
        "+changed f",
    )
    preview(t["apply_patch"], args)
    elsewhere = world / "outside" / "sub"
    ws.swap = lambda: swap_for_link(root / "sub", elsewhere)
    result = await t["apply_patch"].call(args_json(args))
    assert result.is_error and "symlink" in result.content, result.content
    assert (root / "a.txt").read_text() == "secret a\n"
    assert (elsewhere / "f.txt").read_text() == "secret f\n"
    assert not [p for p in fingerprint(world) if p.endswith(".nbtools-tmp")]


@pytest.mark.parametrize("writer", ["write_file", "patch_add", "create"])
async def test_a_new_file_in_new_folders_is_created_through_descriptors(
    world: Path, writer: str
) -> None:
    root = world / "root"
    t = make_tools(root)
    result = await approved_write(t, writer, "new/deeper/file.txt")
    assert not result.is_error, result.content
    assert (root / "new" / "deeper" / "file.txt").read_text() == "pwned\n"


class MoveAfterOpen(WriteWalkWorkspace):
    """Moves ``sub`` into ``.git`` right after a write has opened it (the descriptor
    follows the folder), and leaves ``replacement`` in its place."""

    replacement = "nothing"
    _moved = False

    def open_dir(self, path: Path, *, tool: str | None = None) -> int:
        fd = super().open_dir(path, tool=tool)
        if not self._reading and not self._moved and path.name == "sub":
            self._moved = True
            os.rename(self.root / "sub", self.root / ".git" / "moved")
            if self.replacement == "folder":
                (self.root / "sub").mkdir()
            elif self.replacement == "link":
                (self.root / "sub").symlink_to(self.root / ".git" / "moved")
        return fd


@pytest.mark.parametrize("replacement", ["nothing", "folder", "link"])
@pytest.mark.parametrize("writer", ["write_file", "edit_file", "patch_update", "patch_add"])
async def test_a_folder_moved_after_it_was_opened_gets_the_write_undone(
    world: Path, writer: str, replacement: str
) -> None:
    root = world / "root"
    ws = MoveAfterOpen(root)
    ws.replacement = replacement
    t = make_tools(root, ws)
    await read_all(t, "sub/f.txt")
    key, args = SUB_WRITERS[writer]
    preview(t[key], args)
    result = await t[key].call(args_json(args))
    assert result.is_error, result.content
    moved = root / ".git" / "moved"
    assert sorted(os.listdir(moved)) == ["f.txt", "nb.ipynb"]
    assert (moved / "f.txt").read_text() == "secret f\n"
