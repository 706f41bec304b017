"""No file tool reaches outside the workspace, whatever the path looks like, and a refused
call changes nothing anywhere (checked on disk: every entry of the test's folder, inside
the root and out, has the bytes, mode and inode it had)."""

from __future__ import annotations

import os
import socket
from pathlib import Path
from typing import Any

import pytest
from files_attack import WRITERS, args_json, fingerprint, make_world, read_all, tools


@pytest.fixture
def world(tmp_path: Path) -> Path:
    w = make_world(tmp_path)
    root, out = w / "root", w / "outside"
    (root / "link_file").symlink_to(out / "secret.txt")
    (root / "link_dir").symlink_to(out, target_is_directory=True)
    (root / "dangling_out").symlink_to(out / "not-there.txt")
    (root / "dangling_chain").symlink_to(root / "dangling_out")
    (root / "dangling_dir").symlink_to(out / "no-dir", target_is_directory=True)
    (root / "dev_null").symlink_to("/dev/null")
    (root / "proc_self").symlink_to("/proc/self/environ")
    (root / "rel_up").symlink_to("../outside/secret.txt")
    (root / "sub" / "deep_up").symlink_to("../../outside", target_is_directory=True)
    return w


BAD = {
    "dotdot": "../outside/secret.txt",
    "dotdot_deep": "sub/../../outside/secret.txt",
    "dotdot_new": "../outside/new.txt",
    "dotdot_many": "a/" * 50 + "../" * 52 + "outside/secret.txt",
    "absolute": "{OUT}/secret.txt",
    "absolute_new": "{OUT}/new.txt",
    "absolute_etc": "/etc/hostname",
    "tilde": "~/x.txt",
    "tilde_user": "~root/.bashrc",
    "nul": "notes.txt\x00.txt",
    "unc": "//server/share/x.txt",
    "link_file": "link_file",
    "link_rel_up": "rel_up",
    "through_link_dir": "link_dir/secret.txt",
    "new_through_link_dir": "link_dir/new.txt",
    "nested_link_up": "sub/deep_up/secret.txt",
    "dangling_out": "dangling_out",
    "dangling_chain": "dangling_chain",
    "through_dangling_dir": "dangling_dir/x.txt",
    "dev_null": "dev_null",
    "proc_environ": "proc_self",
}


def _path(bad: str, world: Path) -> str:
    return BAD[bad].replace("{OUT}", str(world / "outside"))


@pytest.mark.parametrize("bad", list(BAD))
@pytest.mark.parametrize("writer", list(WRITERS))
async def test_no_writer_escapes(world: Path, writer: str, bad: str) -> None:
    root = world / "root"
    t = tools(root)
    await read_all(t, "notes.txt", "a.txt")
    key, make = WRITERS[writer]
    before = fingerprint(world)
    result = await t[key].call(args_json(make(_path(bad, world))))
    assert result.is_error, result.content
    assert fingerprint(world) == before


NB_BAD = ["../outside/secret.ipynb", "{OUT}/secret.ipynb", "link_dir/secret.ipynb"]


@pytest.mark.parametrize("bad", NB_BAD)
async def test_notebook_edit_does_not_escape(world: Path, bad: str) -> None:
    root = world / "root"
    (root / "link_nb.ipynb").symlink_to(world / "outside" / "secret.ipynb")
    t = tools(root)
    before = fingerprint(world)
    for path in (bad.replace("{OUT}", str(world / "outside")), "link_nb.ipynb"):
        args = {"notebook_path": path, "cell_id": "c1", "new_source": "pwned"}
        result = await t["notebook_edit"].call(args_json(args))
        assert result.is_error and "outside the workspace" in result.content
    assert fingerprint(world) == before


READERS: dict[str, tuple[str, Any]] = {
    "read_file": ("read_file", lambda p: {"file_path": p}),
    "view": ("editor", lambda p: {"command": "view", "path": p}),
    "notebook_read": ("notebook_read", lambda p: {"notebook_path": p}),
}


@pytest.mark.parametrize(
    "bad", ["link_file", "link_rel_up", "through_link_dir", "nested_link_up", "proc_environ"]
)
@pytest.mark.parametrize("reader", list(READERS))
async def test_reads_through_a_symlink_outside_are_refused(
    world: Path, reader: str, bad: str
) -> None:
    root = world / "root"
    t = tools(root)
    key, make = READERS[reader]
    result = await t[key].call(args_json(make(_path(bad, world))))
    assert result.is_error and "outside the workspace" in result.content, result.content
    assert "secret" not in result.content.replace("secret.", "")
    assert "PATH=" not in result.content


def _special(root: Path, kind: str) -> tuple[str, Any]:
    if kind == "fifo":
        os.mkfifo(root / "fifo")
        return "fifo", None
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(str(root / "sock"))
    return "sock", sock


SPECIAL_CALLS: dict[str, tuple[str, Any]] = {
    "read_file": ("read_file", lambda p: {"file_path": p}),
    "view": ("editor", lambda p: {"command": "view", "path": p}),
    **{w: WRITERS[w] for w in ("write_file", "edit_file", "patch_update", "patch_delete")},
    **{w: WRITERS[w] for w in ("str_replace", "insert")},
}


@pytest.mark.timeout(20)
@pytest.mark.parametrize("kind", ["fifo", "socket"])
@pytest.mark.parametrize("call", list(SPECIAL_CALLS))
async def test_fifos_and_sockets_are_refused_without_hanging(
    world: Path, call: str, kind: str
) -> None:
    root = world / "root"
    name, sock = _special(root, kind)
    try:
        t = tools(root)
        key, make = SPECIAL_CALLS[call]
        before = fingerprint(world)
        result = await t[key].call(args_json(make(name)))
        assert result.is_error, result.content
        assert fingerprint(world) == before
    finally:
        if sock is not None:
            sock.close()


@pytest.mark.parametrize("writer", ["write_file", "patch_add", "create"])
async def test_a_name_too_long_fails_cleanly(world: Path, writer: str) -> None:
    root = world / "root"
    t = tools(root)
    key, make = WRITERS[writer]
    before = fingerprint(world)
    result = await t[key].call(args_json(make("sub/" + "n" * 300 + ".txt")))
    assert result.is_error
    assert fingerprint(world) == before


@pytest.mark.parametrize("writer", ["write_file", "patch_add", "create"])
async def test_a_very_deep_path_stays_inside_or_fails_cleanly(world: Path, writer: str) -> None:
    """Past PATH_MAX: created component by component under the root (descriptors have no
    path limit), or refused with nothing left behind; never anywhere else."""
    root = world / "root"
    t = tools(root)
    key, make = WRITERS[writer]
    outside_before = fingerprint(world / "outside")
    inside_before = fingerprint(root)
    deep = "/".join(["d" * 200] * 25) + "/x.txt"
    result = await t[key].call(args_json(make(deep)))
    assert fingerprint(world / "outside") == outside_before
    if result.is_error:
        assert fingerprint(root) == inside_before
    else:
        after = fingerprint(root)
        new = set(after) - set(inside_before)
        assert all(p.startswith("d" * 200) for p in new)


async def test_backslashes_are_names_not_separators_on_posix(world: Path) -> None:
    root = world / "root"
    t = tools(root)
    before = fingerprint(world / "outside")
    result = await t["write_file"].call(
        args_json({"file_path": "..\\outside\\secret.txt", "content": "x"})
    )
    assert fingerprint(world / "outside") == before
    if not result.is_error:
        assert (root / "..\\outside\\secret.txt").read_text() == "x"
