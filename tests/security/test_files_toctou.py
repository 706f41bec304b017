"""What was approved is what is written: a symlink (or a folder) swapped in between the
card and the write makes the call fail, and nothing lands where the swap points.

The attack: the model gets ``write_file notes.txt`` approved, then (while the approval
waits, or between the check and the write) ``notes.txt`` becomes a symlink to
``.git/hooks/pre-commit``. Each test checks the disk: ``.git`` and the outside folder
are byte-for-byte (and inode-for-inode) what they were."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from files_attack import (
    HOOK,
    NOTES,
    SUB_WRITERS,
    WRITERS,
    SwapOnOpen,
    approved_write,
    args_json,
    fingerprint,
    make_world,
    notebook_bytes,
    preview,
    read_all,
    sha,
    swap_for_link,
    tools,
)

from nb_tools.builtin import _atomic
from nb_tools.builtin._workspace import Workspace


@pytest.fixture
def world(tmp_path: Path) -> Path:
    return make_world(tmp_path)


# Which path each writer targets, and what the swap turns it into (relative to the root).
FINAL_SWAPS: dict[str, tuple[str, str]] = {
    "write_file": ("notes.txt", ".git/hooks/pre-commit"),
    "edit_file": ("notes.txt", ".git/hooks/pre-commit"),
    "patch_update": ("notes.txt", ".git/hooks/pre-commit"),
    "patch_delete": ("notes.txt", ".git/hooks/pre-commit"),
    "patch_add": ("new.txt", ".git/hooks/post-checkout"),
    "patch_move": ("new.txt", ".git/hooks/post-checkout"),
    "create": ("new.txt", ".git/hooks/post-checkout"),
    "str_replace": ("notes.txt", ".git/hooks/pre-commit"),
    "insert": ("notes.txt", ".git/hooks/pre-commit"),
}


def swap_to_link(root: Path, name: str, target: str) -> None:
    p = root / name
    if p.exists() or p.is_symlink():
        p.unlink()
    p.symlink_to(root / target)


async def approved_then_swapped(root: Path, writer: str, name: str, target: str) -> Any:
    t = tools(root)
    await read_all(t, "notes.txt", "a.txt", ".git/hooks/pre-commit")
    key, make = WRITERS[writer]
    args = make(name)
    preview(t[key], args)  # the card: what the person approves
    swap_to_link(root, name, target)
    return await t[key].call(args_json(args))


@pytest.mark.parametrize("writer", list(FINAL_SWAPS))
async def test_final_component_swapped_to_git_hook_after_approval(world: Path, writer: str) -> None:
    root = world / "root"
    name, target = FINAL_SWAPS[writer]
    before_git = fingerprint(root / ".git")
    before_out = fingerprint(world / "outside")
    result = await approved_then_swapped(root, writer, name, target)
    assert result.is_error, result.content
    assert "approved" in result.content or "swapped" in result.content, result.content
    assert fingerprint(root / ".git") == before_git
    assert fingerprint(world / "outside") == before_out
    assert (root / ".git" / "hooks" / "pre-commit").read_bytes() == HOOK
    assert not (root / ".git" / "hooks" / "post-checkout").exists()


@pytest.mark.parametrize("writer", ["write_file", "edit_file", "patch_update"])
async def test_without_the_binding_the_same_call_would_reach_the_hook(
    world: Path, writer: str
) -> None:
    """The control: the attack is real. A call made with no card (nothing approved, so
    nothing to hold it to) resolves the swapped link and writes where it points; this is
    why the card's resolved path must bind the call."""
    root = world / "root"
    t = tools(root)
    swap_to_link(root, "notes.txt", ".git/hooks/pre-commit")
    await read_all(t, "notes.txt")
    key, make = WRITERS[writer]
    result = await t[key].call(args_json(make("notes.txt")))
    assert not result.is_error, result.content
    assert (root / ".git" / "hooks" / "pre-commit").read_bytes() != HOOK


@pytest.mark.parametrize("writer", list(FINAL_SWAPS))
async def test_final_component_swapped_to_outside_after_approval(world: Path, writer: str) -> None:
    root = world / "root"
    name, _ = FINAL_SWAPS[writer]
    (world / "outside" / "notes.txt").write_bytes(NOTES)
    before = fingerprint(world / "outside")
    t = tools(root)
    await read_all(t, "notes.txt", "a.txt")
    key, make = WRITERS[writer]
    args = make(name)
    preview(t[key], args)
    p = root / name
    if p.exists():
        p.unlink()
    p.symlink_to(world / "outside" / "notes.txt")
    result = await t[key].call(args_json(args))
    assert result.is_error
    assert fingerprint(world / "outside") == before


def swap_parent(world: Path, to: str) -> Path:
    """Replace root/sub by a symlink to an identical folder at ``to`` (relative to the
    root, or "outside")."""
    root = world / "root"
    return swap_for_link(root / "sub", world / "outside" / "sub" if to == "outside" else root / to)


@pytest.mark.parametrize("to", [".git/hooks", ".nb_tools", "outside"])
@pytest.mark.parametrize("writer", list(SUB_WRITERS))
async def test_parent_folder_swapped_for_a_symlink_after_approval(
    world: Path, writer: str, to: str
) -> None:
    root = world / "root"
    t = tools(root)
    await read_all(t, "sub/f.txt", "a.txt", "sub/nb.ipynb")
    key, args = SUB_WRITERS[writer]
    preview(t[key], args)
    dest = swap_parent(world, to)
    # The model also "read" the swapped-in copies, so only the binding stands in the way.
    rel = os.path.relpath(dest, root)
    await read_all(t, f"{rel}/f.txt", f"{rel}/nb.ipynb")
    before = fingerprint(world)
    result = await t[key].call(args_json(args))
    assert result.is_error, result.content
    assert fingerprint(world) == before


@pytest.mark.parametrize("writer", ["write_file", "edit_file", "patch_update", "notebook_edit"])
@pytest.mark.parametrize("to", [".git/hooks", "outside"])
async def test_folder_swapped_between_check_and_write(world: Path, writer: str, to: str) -> None:
    root = world / "root"
    ws = SwapOnOpen(root)
    t = tools(root, ws)
    await read_all(t, "sub/f.txt", "sub/nb.ipynb")
    key, args = SUB_WRITERS[writer]
    preview(t[key], args)
    ws.swap = lambda: swap_parent(world, to)
    result = await t[key].call(args_json(args))
    assert result.is_error, result.content
    assert "symlink" in result.content, result.content
    after = fingerprint(world)
    assert after["root/sub"][0] == "link"  # the swap happened
    dest = world / ("outside/sub" if to == "outside" else f"root/{to}")
    assert (dest / "f.txt").read_text() == "secret f\n"
    assert (dest / "nb.ipynb").read_bytes() == notebook_bytes("secret")
    assert not (dest / "moved").exists() and not (dest / "new").exists()
    assert (root / ".git" / "hooks" / "pre-commit").read_bytes() == HOOK


@pytest.mark.parametrize("writer", ["write_file", "edit_file", "patch_update", "str_replace"])
async def test_file_swapped_for_a_link_after_the_folder_was_opened(
    world: Path, writer: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = world / "root"
    t = tools(root)
    await read_all(t, "notes.txt")
    key, make = WRITERS[writer]
    args = make("notes.txt")
    preview(t[key], args)
    real = _atomic._remember_original

    def swap_first(op: Any, ws: Workspace, tool: str) -> None:
        swap_to_link(root, "notes.txt", ".git/hooks/pre-commit")
        real(op, ws, tool)

    monkeypatch.setattr(_atomic, "_remember_original", swap_first)
    result = await t[key].call(args_json(args))
    assert result.is_error and "symlink" in result.content, result.content
    assert (root / ".git" / "hooks" / "pre-commit").read_bytes() == HOOK


async def test_link_swapped_in_just_before_the_rename_is_replaced_not_followed(
    world: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The last window (after every check, before the rename): ``rename`` replaces the
    directory entry itself, so the link is gone and the hook is untouched."""
    root = world / "root"
    t = tools(root)
    await read_all(t, "notes.txt")
    args = {"file_path": "notes.txt", "content": "approved\n"}
    preview(t["write_file"], args)
    real = _atomic._rename

    def swap_then_rename(folder: Any, src: str, dst: str) -> None:
        swap_to_link(root, "notes.txt", ".git/hooks/pre-commit")
        real(folder, src, dst)

    monkeypatch.setattr(_atomic, "_rename", swap_then_rename)
    result = await t["write_file"].call(args_json(args))
    assert not result.is_error, result.content
    assert (root / ".git" / "hooks" / "pre-commit").read_bytes() == HOOK
    assert not (root / "notes.txt").is_symlink()
    assert (root / "notes.txt").read_text() == "approved\n"


HARDLINK_WRITERS = ["write_file", "edit_file", "patch_update", "str_replace", "insert"]


@pytest.mark.parametrize("victim", ["outside/secret.txt", "root/.git/hooks/pre-commit"])
@pytest.mark.parametrize("writer", HARDLINK_WRITERS)
async def test_writing_through_a_hardlink_leaves_the_other_name_alone(
    world: Path, writer: str, victim: str
) -> None:
    """``notes.txt`` is a second name of a file outside (or of the git hook). The write
    replaces the name with a new inode; the other name keeps its bytes and inode."""
    root = world / "root"
    other = world / victim
    other.write_bytes(NOTES)
    (root / "notes.txt").unlink()
    os.link(other, root / "notes.txt")
    ino = other.stat().st_ino
    digest = sha(other)
    t = tools(root)
    await read_all(t, "notes.txt")
    result = await approved_write(t, writer, "notes.txt")
    assert not result.is_error, result.content
    assert sha(other) == digest and other.stat().st_ino == ino
    assert (root / "notes.txt").read_bytes() != NOTES
    assert (root / "notes.txt").stat().st_ino != ino


async def test_notebook_swapped_to_a_link_into_git_after_approval(world: Path) -> None:
    root = world / "root"
    (root / ".git" / "nb.ipynb").write_bytes(notebook_bytes("secret"))
    t = tools(root)
    await read_all(t, "sub/nb.ipynb", ".git/nb.ipynb")
    args = {"notebook_path": "sub/nb.ipynb", "cell_id": "c1", "new_source": "pwned"}
    preview(t["notebook_edit"], args)
    before = fingerprint(root / ".git")
    swap_to_link(root, "sub/nb.ipynb", ".git/nb.ipynb")
    result = await t["notebook_edit"].call(args_json(args))
    assert result.is_error and "approved" in result.content, result.content
    assert fingerprint(root / ".git") == before


async def test_reading_while_a_folder_is_swapped_for_a_link_outside(world: Path) -> None:
    root = world / "root"
    (world / "outside" / "f.txt").write_text("outside secret\n")
    ws = SwapOnOpen(root)
    t = tools(root, ws)

    def swap() -> None:
        shutil.rmtree(root / "sub")
        (root / "sub").symlink_to(world / "outside", target_is_directory=True)

    ws.swap, ws.on_reads = swap, True
    result = await t["read_file"].call({"file_path": "sub/f.txt"})
    assert result.is_error and "symlink" in result.content, result.content
    assert "outside secret" not in result.content


@pytest.mark.parametrize("writer", ["write_file", "edit_file", "patch_update", "str_replace"])
async def test_the_protection_check_alone_binds_the_path(world: Path, writer: str) -> None:
    """No card was made (the preview failed or the tool has none): the policy's look at
    the call (``is_protected_call``) binds the path it judged."""
    root = world / "root"
    t = tools(root)
    await read_all(t, "notes.txt", ".git/hooks/pre-commit")
    key, make = WRITERS[writer]
    args = args_json(make("notes.txt"))
    assert not t[key].is_protected_call(args)
    swap_to_link(root, "notes.txt", ".git/hooks/pre-commit")
    assert t[key].is_protected_call(args)  # asked again: it would now be protected
    result = await t[key].call(args)
    assert result.is_error and "approved" in result.content, result.content
    assert (root / ".git" / "hooks" / "pre-commit").read_bytes() == HOOK


async def test_a_newer_card_replaces_a_stale_binding(world: Path) -> None:
    """A card that was denied leaves a binding; the person then makes notes.txt a link
    to other.txt on purpose and the next card shows other.txt: that card is what counts."""
    root = world / "root"
    (root / "other.txt").write_bytes(NOTES)
    t = tools(root)
    await read_all(t, "notes.txt", "other.txt")
    args = {"file_path": "notes.txt", "content": "new\n"}
    preview(t["write_file"], args)  # denied: never called
    swap_to_link(root, "notes.txt", "other.txt")
    preview(t["write_file"], args)  # the new card: other.txt
    result = await t["write_file"].call(args_json(args))
    assert not result.is_error, result.content
    assert (root / "other.txt").read_text() == "new\n"
    assert (root / ".git" / "hooks" / "pre-commit").read_bytes() == HOOK
