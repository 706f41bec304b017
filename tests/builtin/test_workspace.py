"""Workspace confinement: resolve, display, protected paths."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from nb_tools.builtin._workspace import Workspace, WorkspaceError


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    root = tmp_path / "root"
    root.mkdir()
    (root / "a.txt").write_text("a\n")
    (root / "sub").mkdir()
    (root / "sub" / "b.txt").write_text("b\n")
    return Workspace(root)


def test_root_is_realpath(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    link = tmp_path / "link"
    link.symlink_to(real, target_is_directory=True)
    assert Workspace(link).root == Path(os.path.realpath(real))


def test_root_must_be_a_directory(tmp_path: Path) -> None:
    with pytest.raises(WorkspaceError, match="is not a directory"):
        Workspace(tmp_path / "missing")


def test_resolve_relative_absolute_and_new(ws: Workspace) -> None:
    assert ws.resolve("a.txt") == ws.root / "a.txt"
    assert ws.resolve(str(ws.root / "sub" / "b.txt")) == ws.root / "sub" / "b.txt"
    assert ws.resolve("new/dir/c.txt") == ws.root / "new" / "dir" / "c.txt"
    assert ws.resolve("sub/../a.txt") == ws.root / "a.txt"
    assert ws.resolve(".") == ws.root


@pytest.mark.parametrize(
    ("path", "needle"),
    [
        ("", "empty"),
        ("   ", "empty"),
        ("a\x00b", "NUL"),
        ("~", "'~' is not expanded"),
        ("~/x", "'~' is not expanded"),
        ("~root/x", "'~' is not expanded"),
        ("\\\\server\\share\\x", "UNC"),
        ("//server/share/x", "UNC"),
        ("../x", "outside the workspace"),
        ("sub/../../x", "outside the workspace"),
        ("/etc/passwd", "outside the workspace"),
    ],
)
def test_resolve_refuses(ws: Workspace, path: str, needle: str) -> None:
    with pytest.raises(WorkspaceError, match=needle):
        ws.resolve(path)


def test_message_names_tool_path_and_root(ws: Workspace) -> None:
    with pytest.raises(WorkspaceError) as err:
        ws.resolve("/etc/passwd", tool="read_file")
    assert str(err.value) == (
        f"read_file: '/etc/passwd' is outside the workspace {ws.root}; use a path inside it"
    )


def test_symlinks_pointing_out_are_outside(ws: Workspace, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret").write_text("s")
    (ws.root / "file_link").symlink_to(outside / "secret")
    (ws.root / "dir_link").symlink_to(outside, target_is_directory=True)
    (ws.root / "dangling").symlink_to(outside / "not-there")
    for path in ["file_link", "dir_link", "dir_link/secret", "dir_link/new.txt", "dangling"]:
        with pytest.raises(WorkspaceError, match="outside the workspace"):
            ws.resolve(path)


def test_symlink_inside_root_resolves_to_target(ws: Workspace) -> None:
    (ws.root / "inner").symlink_to(ws.root / "sub", target_is_directory=True)
    assert ws.resolve("inner/b.txt") == ws.root / "sub" / "b.txt"


def test_prefix_sibling_is_not_inside(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    root.mkdir()
    (tmp_path / "proj2").mkdir()
    ws = Workspace(root)
    with pytest.raises(WorkspaceError, match="outside"):
        ws.resolve(str(tmp_path / "proj2" / "x"))


def test_for_write_refuses_root_and_directories(ws: Workspace) -> None:
    with pytest.raises(WorkspaceError, match="workspace root"):
        ws.resolve(".", for_write=True)
    with pytest.raises(WorkspaceError, match="is a directory"):
        ws.resolve("sub", for_write=True)
    assert ws.resolve("sub/new.txt", for_write=True) == ws.root / "sub" / "new.txt"


def test_recheck_detects_swapped_symlink(ws: Workspace, tmp_path: Path) -> None:
    target = ws.resolve("sub/new.txt", for_write=True)
    ws.recheck(target)
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (ws.root / "sub" / "b.txt").unlink()
    (ws.root / "sub").rmdir()
    (ws.root / "sub").symlink_to(outside, target_is_directory=True)
    with pytest.raises(WorkspaceError, match="symlink"):
        ws.recheck(target, tool="write_file")


def test_display(ws: Workspace) -> None:
    assert ws.display(ws.root / "sub" / "b.txt") == "sub/b.txt"
    assert ws.display("a.txt") == "a.txt"
    assert ws.display(ws.root) == "."
    assert ws.display("/etc/passwd") == "/etc/passwd"


@pytest.mark.parametrize(
    "path",
    [
        ".git/config",
        "sub/.git/HEAD",
        ".env",
        ".env.local",
        "sub/.envrc",
        ".bashrc",
        ".zshrc",
        ".profile",
        ".bash_profile",
        ".ssh/id_rsa",
        "sub/.ssh/authorized_keys",
    ],
)
def test_protected(ws: Workspace, path: str) -> None:
    assert ws.is_protected(path)
    assert ws.is_protected(ws.root / path)


@pytest.mark.parametrize("path", ["a.txt", ".gitignore", "environment.yml", "sub/git/x", "rc"])
def test_not_protected(ws: Workspace, path: str) -> None:
    assert not ws.is_protected(path)


def test_protected_through_symlink(ws: Workspace) -> None:
    (ws.root / ".git").mkdir()
    (ws.root / ".git" / "config").write_text("[core]\n")
    (ws.root / "innocent").symlink_to(ws.root / ".git" / "config")
    assert ws.is_protected("innocent")
