"""A small world for the file-tool attack suites (``tests/security/test_files_*``,
``tests/builtin/test_escapes.py``): a workspace with a git repository, the nb_tools rules,
notebooks and a folder outside it, plus helpers that fingerprint every entry on disk
(without following symlinks) so a test checks effects, not messages, and that swap a
folder for a symlink at the moment an attacker would."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

import nbformat

from nb_tools.builtin._files import EditFileTool, ReadFileTool, WriteFileTool
from nb_tools.builtin._notebook import NotebookEditTool, NotebookReadTool
from nb_tools.builtin._patch import ApplyPatchTool
from nb_tools.builtin._readstate import ReadState
from nb_tools.builtin._text_editor import TextEditorTool
from nb_tools.builtin._workspace import Workspace
from nb_tools.tool import Result

HOOK = b"#!/bin/sh\nsecret notes\n"  # holds the text the writers look for
NOTES = b"secret notes\n"


def fingerprint(top: Path) -> dict[str, tuple[Any, ...]]:
    """Every entry under ``top``: kind, sha256 and mode for files (and the inode, so a
    replaced file shows), the target for links."""
    out: dict[str, tuple[Any, ...]] = {}
    for dirpath, dirnames, filenames in os.walk(top, followlinks=False):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            st = p.lstat()
            rel = p.relative_to(top).as_posix()
            if stat.S_ISLNK(st.st_mode):
                out[rel] = ("link", os.readlink(p))
            elif stat.S_ISDIR(st.st_mode):
                out[rel] = ("dir", stat.S_IMODE(st.st_mode))
            elif stat.S_ISREG(st.st_mode):
                digest = hashlib.sha256(p.read_bytes()).hexdigest()
                out[rel] = ("file", digest, stat.S_IMODE(st.st_mode), st.st_ino)
            else:
                out[rel] = ("other", stat.S_IFMT(st.st_mode))
    return out


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def notebook_bytes(source: str) -> bytes:
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell(source)
    cell["id"] = "c1"
    nb.cells = [cell]
    return (nbformat.writes(nb) + "\n").encode()


def make_world(tmp: Path) -> Path:
    """``tmp/root`` (the workspace) and ``tmp/outside``; returns ``tmp``."""
    root, outside = tmp / "root", tmp / "outside"
    for d in (root / ".git" / "hooks", root / "sub", root / ".nb_tools", outside):
        d.mkdir(parents=True)
    (root / ".git" / "hooks" / "pre-commit").write_bytes(HOOK)
    (root / ".git" / "hooks" / "pre-commit").chmod(0o755)
    (root / ".git" / "config").write_text("[core]\n\tbare = false\n")
    (root / ".nb_tools" / "settings.json").write_text('{"permissions": {"deny": ["bash"]}}\n')
    (root / "notes.txt").write_bytes(NOTES)
    (root / "a.txt").write_text("secret a\n")
    (root / "sub" / "f.txt").write_text("secret f\n")
    (root / "sub" / "nb.ipynb").write_bytes(notebook_bytes("secret"))
    (outside / "secret.txt").write_text("secret\n")
    (outside / "secret.ipynb").write_bytes(notebook_bytes("secret"))
    return tmp


def tools(root: Path, workspace: Workspace | None = None) -> dict[str, Any]:
    ws, state = workspace or Workspace(root), ReadState()
    return {
        "read_file": ReadFileTool(ws, state),
        "write_file": WriteFileTool(ws, state),
        "edit_file": EditFileTool(ws, state),
        "apply_patch": ApplyPatchTool(ws, state),
        "notebook_read": NotebookReadTool(ws, state),
        "notebook_edit": NotebookEditTool(ws, state),
        "editor": TextEditorTool(ws, state),
    }


def patch(*body: str) -> dict[str, str]:
    return {"input": "\n".join(["*** Begin Patch", *body, "*** End Patch"])}


# Every writer, as (tool key, arguments for a path). The path must hold "secret" text.
WRITERS: dict[str, tuple[str, Callable[[str], dict[str, Any]]]] = {
    "write_file": ("write_file", lambda p: {"file_path": p, "content": "pwned\n"}),
    "edit_file": (
        "edit_file",
        lambda p: {"file_path": p, "old_string": "secret", "new_string": "pwned"},
    ),
    "patch_add": ("apply_patch", lambda p: patch(f"*** Add File: {p}", "+pwned")),
    "patch_update": (
        "apply_patch",
        lambda p: patch(f"*** Update File: {p}", "@@", "-secret notes", "+pwned"),
    ),
    "patch_delete": ("apply_patch", lambda p: patch(f"*** Delete File: {p}")),
    "patch_move": (
        "apply_patch",
        lambda p: patch("*** Update File: a.txt", f"*** Move to: {p}", "@@", "-secret a", "+pwned"),
    ),
    "create": ("editor", lambda p: {"command": "create", "path": p, "file_text": "pwned\n"}),
    "str_replace": (
        "editor",
        lambda p: {"command": "str_replace", "path": p, "old_str": "secret", "new_str": "pwned"},
    ),
    "insert": (
        "editor",
        lambda p: {"command": "insert", "path": p, "insert_line": 0, "insert_text": "pwned"},
    ),
}


# Every writer aimed at a file in ``sub/`` (the folder the attacks swap for a link), as
# (tool key, arguments).
SUB_WRITERS: dict[str, tuple[str, dict[str, Any]]] = {
    "write_file": ("write_file", {"file_path": "sub/f.txt", "content": "pwned\n"}),
    "edit_file": (
        "edit_file",
        {"file_path": "sub/f.txt", "old_string": "secret", "new_string": "pwned"},
    ),
    "patch_update": ("apply_patch", patch("*** Update File: sub/f.txt", "@@", "-secret f", "+x")),
    "patch_add": ("apply_patch", patch("*** Add File: sub/new", "+pwned")),
    "patch_delete": ("apply_patch", patch("*** Delete File: sub/f.txt")),
    "patch_move": (
        "apply_patch",
        patch("*** Update File: a.txt", "*** Move to: sub/moved", "@@", "-secret a", "+x"),
    ),
    "notebook_edit": (
        "notebook_edit",
        {"notebook_path": "sub/nb.ipynb", "cell_id": "c1", "new_source": "pwned"},
    ),
    "create": ("editor", {"command": "create", "path": "sub/new", "file_text": "pwned"}),
    "str_replace": (
        "editor",
        {"command": "str_replace", "path": "sub/f.txt", "old_str": "secret", "new_str": "x"},
    ),
    "insert": (
        "editor",
        {"command": "insert", "path": "sub/f.txt", "insert_line": 1, "insert_text": "x"},
    ),
}


def args_json(args: dict[str, Any]) -> str:
    return json.dumps(args)


async def read_all(t: dict[str, Any], *paths: str) -> None:
    """Let the model have read these files in full (the read-before-write rule)."""
    for p in paths:
        if p.endswith(".ipynb"):
            await t["notebook_read"].call({"notebook_path": p})
        else:
            await t["read_file"].call({"file_path": p})


def preview(tool: Any, args: dict[str, Any]) -> None:
    """What the agent does before asking: compute the card (binding the paths)."""
    if hasattr(tool, "preview_files"):
        tool.preview_files(args_json(args))
    else:
        tool.preview(args_json(args))


async def approved_write(t: dict[str, Any], writer: str, path: str) -> Result:
    """Run one of ``WRITERS`` on ``path`` as the agent does once the call is approved:
    the card first, then the call."""
    key, make = WRITERS[writer]
    args = make(path)
    preview(t[key], args)
    return await t[key].call(args_json(args))


def swap_for_link(folder: Path, copy: Path) -> Path:
    """Replace ``folder`` by a symlink to an identical copy of it at ``copy``: the same
    bytes, so only the path differs. Returns ``copy``."""
    copy.parent.mkdir(parents=True, exist_ok=True)
    shutil.copytree(folder, copy, dirs_exist_ok=True)
    shutil.rmtree(folder)
    folder.symlink_to(copy, target_is_directory=True)
    return copy


class WriteWalkWorkspace(Workspace):
    """A workspace that knows whether the folder it opens is on a write's walk or on a
    read's (``_reading``), for subclasses that strike in the middle of a write."""

    _reading = False

    def open_file(self, path: Path, *, tool: str | None = None) -> int:
        self._reading = True
        try:
            return super().open_file(path, tool=tool)
        finally:
            self._reading = False


class SwapOnOpen(WriteWalkWorkspace):
    """A workspace that runs ``swap`` once, just before the write walks to its folder:
    after every path check has passed, the last moment a swap can happen."""

    swap: Any = None
    on_reads = False  # also swap on the walk of a read (by default only a write's)

    def open_dir(self, path: Path, *, tool: str | None = None) -> int:
        if self.swap is not None and (self.on_reads or not self._reading):
            swap, self.swap = self.swap, None
            swap()
        return super().open_dir(path, tool=tool)
