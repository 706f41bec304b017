"""The safety suite: no reader or writer leaves the workspace, whatever the path looks like,
and a refused call changes nothing anywhere (inside the root or outside it)."""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from files_attack import (
    SUB_WRITERS,
    WRITERS,
    fingerprint,
    notebook_bytes,
    patch,
    swap_for_link,
    tools,
)

from nb_tools.agent import is_protected_call
from nb_tools.builtin import _atomic
from nb_tools.builtin._atomic import write_files
from nb_tools.builtin._workspace import Workspace, WorkspaceError


@pytest.fixture
def world(tmp_path: Path) -> Path:
    root = tmp_path / "root"
    outside = tmp_path / "outside"
    (root / "sub").mkdir(parents=True)
    outside.mkdir()
    (root / "a.txt").write_text("secret a\n")
    (root / "sub" / "f.txt").write_text("secret f\n")
    (root / "sub" / "nb.ipynb").write_bytes(notebook_bytes("secret"))
    (outside / "secret.txt").write_text("secret\n")
    (outside / "secret.ipynb").write_bytes(notebook_bytes("secret"))
    (root / "link_file").symlink_to(outside / "secret.txt")
    (root / "link_nb.ipynb").symlink_to(outside / "secret.ipynb")
    (root / "link_dir").symlink_to(outside, target_is_directory=True)
    return tmp_path


READERS: dict[str, tuple[str, Callable[[str], dict[str, Any]]]] = {
    "read_file": ("read_file", lambda p: {"file_path": p}),
    "notebook_read": ("notebook_read", lambda p: {"notebook_path": p}),
    "view": ("editor", lambda p: {"command": "view", "path": p}),
}
CALLS = {
    **READERS,
    **WRITERS,
    # The escape targets hold "secret" (not "secret notes"): the patch must match them,
    # so that only the path check can refuse it.
    "patch_update": (
        "apply_patch",
        lambda p: patch(f"*** Update File: {p}", "@@", "-secret", "+pwned"),
    ),
    "notebook_edit": (
        "notebook_edit",
        lambda p: {"notebook_path": p, "cell_id": "c1", "new_source": "pwned"},
    ),
}

BAD_PATHS = {
    "dotdot": ("../outside/secret.txt", "outside the workspace"),
    "dotdot_nb": ("../outside/secret.ipynb", "outside the workspace"),
    "absolute": ("{OUT}/secret.txt", "outside the workspace"),
    "absolute_nb": ("{OUT}/secret.ipynb", "outside the workspace"),
    "absolute_new": ("{OUT}/new.txt", "outside the workspace"),
    "link_file": ("link_file", "outside the workspace"),
    "link_nb": ("link_nb.ipynb", "outside the workspace"),
    "link_dir": ("link_dir", "outside the workspace"),
    "through_link_dir": ("link_dir/secret.txt", "outside the workspace"),
    "through_link_dir_nb": ("link_dir/secret.ipynb", "outside the workspace"),
    "new_through_link_dir": ("link_dir/new.txt", "outside the workspace"),
    "tilde": ("~", "'~' is not expanded"),
    "tilde_slash": ("~/x.txt", "'~' is not expanded"),
    "tilde_user": ("~root/x.txt", "'~' is not expanded"),
    "nul": ("a.txt\x00.ipynb", "NUL byte"),
    "unc_slash": ("//server/share/x.txt", "UNC"),
    "unc_backslash": ("\\\\server\\share\\x.txt", "UNC"),
}


@pytest.mark.parametrize("bad", list(BAD_PATHS), ids=list(BAD_PATHS))
@pytest.mark.parametrize("call", list(CALLS), ids=list(CALLS))
async def test_every_tool_refuses_every_escape(world: Path, call: str, bad: str) -> None:
    root, outside = world / "root", world / "outside"
    tool_name, make_args = CALLS[call]
    path, needle = BAD_PATHS[bad]
    path = path.replace("{OUT}", str(outside))
    tool = tools(root)[tool_name]
    args = json.dumps(make_args(path))
    before = fingerprint(world)
    if call not in READERS:
        with pytest.raises(ValueError, match=needle):
            (tool.preview_files if tool_name == "apply_patch" else tool.preview)(args)
    result = await tool.call(args)
    assert result.is_error
    assert needle in result.content, result.content
    assert fingerprint(world) == before


async def test_reading_etc_passwd_is_refused(world: Path) -> None:
    t = tools(world / "root")
    for tool, args in [
        (t["read_file"], {"file_path": "/etc/passwd"}),
        (t["notebook_read"], {"notebook_path": "/etc/passwd"}),
        (t["editor"], {"command": "view", "path": "/etc/passwd"}),
        (t["editor"], {"command": "view", "path": "/etc"}),
    ]:
        result = await tool.call(args)
        assert result.is_error and "outside the workspace" in result.content
        assert "root:" not in result.content


def swap_sub_for_outside_copy(world: Path) -> Path:
    """Replace root/sub by a symlink to an identical folder outside the root."""
    return swap_for_link(world / "root" / "sub", world / "elsewhere")


SWAPS: dict[str, tuple[str, dict[str, Any]]] = {
    "write_new": ("write_file", {"file_path": "sub/new.txt", "content": "x\n"}),
    **SUB_WRITERS,
}


@pytest.mark.parametrize("case", list(SWAPS), ids=list(SWAPS))
async def test_symlink_swapped_in_after_preview(world: Path, case: str) -> None:
    root = world / "root"
    t = tools(root)
    await t["read_file"].call({"file_path": "sub/f.txt"})
    await t["notebook_read"].call({"notebook_path": "sub/nb.ipynb"})
    tool_name, args = SWAPS[case]
    tool = t[tool_name]
    changes = tool.preview_files(args) if tool_name == "apply_patch" else [tool.preview(args)]
    assert changes  # the preview was fine while sub/ was a real folder
    elsewhere = swap_sub_for_outside_copy(world)
    before = fingerprint(world)
    result = await tool.call(args)
    assert result.is_error
    assert "outside the workspace" in result.content, result.content
    assert fingerprint(world) == before
    assert fingerprint(elsewhere) == fingerprint(world / "elsewhere")


def test_swap_between_resolve_and_write_is_refused(world: Path) -> None:
    ws = Workspace(world / "root")
    target = ws.resolve("sub/f.txt", for_write=True)
    fresh = ws.resolve("sub/fresh/new.txt", for_write=True)
    swap_sub_for_outside_copy(world)
    before = fingerprint(world)
    for path in (target, fresh):
        with pytest.raises(WorkspaceError, match="symlink"):
            write_files([(path, b"pwned\n")], workspace=ws, tool="write_file")
    assert fingerprint(world) == before


PROTECTED = [
    ".env",
    ".env.production",
    ".git/config",
    "sub/.git/HEAD",
    ".bashrc",
    ".zshrc",
    ".profile",
    ".ssh/authorized_keys",
]


@pytest.mark.parametrize("path", PROTECTED)
def test_protected_paths_need_approval(world: Path, path: str) -> None:
    t = tools(world / "root")
    for call, (tool_name, make_args) in CALLS.items():
        args = json.dumps(make_args(path))
        assert t[tool_name].requires_approval_for(args), call
        assert is_protected_call(t[tool_name], args), call  # what the agent layer asks


def test_readers_inside_the_root_need_no_approval(world: Path) -> None:
    t = tools(world / "root")
    for call in ("read_file", "notebook_read", "view"):
        tool_name, make_args = CALLS[call]
        assert not t[tool_name].requires_approval_for(json.dumps(make_args("sub/f.txt")))


async def test_protected_write_is_marked(world: Path) -> None:
    t = tools(world / "root")
    result = await t["write_file"].call({"file_path": ".env", "content": "K=1\n"})
    undo = result.metadata.pop("undo")
    assert result.metadata == {"path": ".env", "change": "create", "protected": True}
    assert (undo.path, undo.kind, undo.before) == (".env", "create", None)


def tmp_files(top: Path) -> list[str]:
    return [p.name for p in top.rglob("*") if p.name.endswith(".nbtools-tmp")]


async def test_writes_keep_the_mode_and_leave_no_temp_files(world: Path) -> None:
    root = world / "root"
    t = tools(root)
    os.chmod(root / "sub" / "f.txt", 0o640)
    os.chmod(root / "a.txt", 0o755)
    os.chmod(root / "sub" / "nb.ipynb", 0o600)
    await t["read_file"].call({"file_path": "sub/f.txt"})
    await t["notebook_read"].call({"notebook_path": "sub/nb.ipynb"})
    results = [
        await t["edit_file"].call(
            {"file_path": "sub/f.txt", "old_string": "secret", "new_string": "public"}
        ),
        await t["write_file"].call({"file_path": "sub/f.txt", "content": "public\n"}),
        await t["apply_patch"].call(patch("*** Update File: a.txt", "@@", "-secret a", "+b")),
        await t["notebook_edit"].call(
            {"notebook_path": "sub/nb.ipynb", "cell_id": "c1", "new_source": "1"}
        ),
        await t["write_file"].call({"file_path": "sub/brand_new.txt", "content": "n\n"}),
    ]
    assert [r.is_error for r in results] == [False] * 5, [r.content for r in results]
    assert stat.S_IMODE((root / "sub" / "f.txt").stat().st_mode) == 0o640
    assert stat.S_IMODE((root / "a.txt").stat().st_mode) == 0o755
    assert stat.S_IMODE((root / "sub" / "nb.ipynb").stat().st_mode) == 0o600
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE((root / "sub" / "brand_new.txt").stat().st_mode) == 0o666 & ~umask
    assert tmp_files(world) == []


async def test_failed_write_leaves_no_temp_files(world: Path) -> None:
    root = world / "root"
    ws = Workspace(root)
    (root / "plain").write_text("a file, not a folder\n")
    before = fingerprint(world)
    with pytest.raises(Exception, match="nothing was changed"):
        write_files(
            [
                (ws.root / "a.txt", b"x\n"),
                (ws.root / "new" / "n.txt", b"y\n"),
                (ws.root / "plain" / "z.txt", b"z\n"),
            ],
            workspace=ws,
            tool="apply_patch",
        )
    assert fingerprint(world) == before
    assert tmp_files(world) == []


@pytest.mark.skipif(not _atomic._USE_DIR_FD, reason="needs dir_fd support (POSIX)")
def test_swap_after_the_folder_check_cannot_redirect_the_write(world: Path) -> None:
    """White-box: once write_files has verified and opened a folder, later steps go through
    its descriptor, so a folder swapped for a symlink afterwards is not followed."""
    root, outside = world / "root", world / "outside"
    ws = Workspace(root)
    target = ws.resolve("sub/f.txt", for_write=True)
    folder = _atomic._folder(target.parent, ws, "write_file", {})
    try:
        (root / "sub").rename(root / "sub_moved")
        (root / "sub").symlink_to(outside, target_is_directory=True)
        before_outside = fingerprint(outside)
        op = _atomic._Op(path=target, data=b"new\n", folder=folder)
        _atomic._rename(folder, _atomic._stage(op, b"new\n", None), "f.txt")
    finally:
        folder.close()
    assert fingerprint(outside) == before_outside
    assert (root / "sub_moved" / "f.txt").read_bytes() == b"new\n"
