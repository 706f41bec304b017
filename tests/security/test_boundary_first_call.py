"""The first call does not wait for the whole scan, and a kept scan follows changes by the
names inotify reports; neither shows a secret to a call without a click.

- A no-click call that comes while the first scan is still under way runs with the
  folders not read yet hidden: a secret in a package folder the walk has not reached is
  not shown, the project is.
- A change in a folder of many files is looked at name by name (no listing of the folder
  again, no look at every file's link count): a ``.env`` written there, a file renamed into
  place (inotify's move events), a second name of a secret outside (a hard link) are
  hidden from the next call.
- A folder deleted, or moved away, and made again under the same name is read anew: a
  secret in a sub-folder of the same name as before is hidden.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import uuid
from pathlib import Path

import pytest
from sandbox_helpers import require_sandbox, run

from nb_tools.builtin import BashTool, _bash
from nb_tools.builtin._workspace import Workspace
from nb_tools.sandbox import SandboxPolicy, _folder, _scan, prepare
from nb_tools.sandbox._watch import watcher

SECRET = f"SECRET-{uuid.uuid4().hex}"


@pytest.fixture
def root(ws: Path) -> Path:
    require_sandbox()
    if watcher() is None:
        pytest.skip("no inotify here")
    root = ws.resolve()
    _scan._scan_cache.clear()
    yield root
    _scan._scan_cache.clear()


def _no_click(root: Path, command: str) -> str:
    policy = SandboxPolicy(mode="read-only", workspace=root).unapproved()
    launch = prepare(["bash", "-c", command], policy, cwd=root)
    r = subprocess.run(launch.argv, cwd=launch.cwd, env=launch.env, capture_output=True)
    return (r.stdout + r.stderr).decode(errors="replace")


def test_a_call_during_the_first_scan_hides_what_is_not_read_yet(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (root / "src").mkdir()
    (root / "src" / "app.py").write_text("print('hello')\n")
    pkg = root / "node_modules" / "pkg"
    pkg.mkdir(parents=True)
    (pkg / "index.js").write_text("module.exports = 1;\n")
    (pkg / ".env").write_text(f"KEY={SECRET}\n")
    # The state warm_up leaves at once: a walk started, for the background to read (no
    # thread here: nothing reads it but the call), and no time to wait for it.
    monkeypatch.setattr(_scan, "FIRST_CALL_WAIT", 0.0)
    key = str(root)
    with _scan._scan_lock:
        cached = _scan._scan_cache[key] = _scan._rescan(key, watcher())
        _scan._drive(cached)
    monkeypatch.setattr(_bash, "warm_up", lambda root: None)  # the state above stays
    tool = BashTool(Workspace(root))  # outside a loop: a call without a click
    result = asyncio.run(tool.call(json.dumps({"command": "ls node_modules; echo done"})))
    assert "done" in result.content and "pkg" not in result.content.split("[")[0]
    assert "node_modules looked empty to this call" in result.content, result.content
    assert result.metadata["unread"] == [str(root / "node_modules")]
    out = _no_click(root, "cat node_modules/pkg/.env; ls src; echo done")
    assert "done" in out and "app.py" in out, out  # the project was read: the call sees it
    assert SECRET not in out, out
    assert cached.result is None  # it ran while the scan was still under way
    assert _scan.unapproved_problem(root) is None  # a partial scan asks for no click
    while cached.result is None:  # the background's part
        with _scan._scan_lock:
            if _scan._step(key, cached, 50):
                _scan._finish(key, cached)
    out = _no_click(root, "cat node_modules/pkg/.env node_modules/pkg/index.js; echo done")
    assert "module.exports" in out and SECRET not in out, out
    result = asyncio.run(tool.call(json.dumps({"command": "ls node_modules"})))
    assert "pkg" in result.content and "looked empty" not in result.content, result.content


def _many(root: Path, n: int = 400) -> Path:
    data = root / "data"
    data.mkdir()
    for i in range(n):
        (data / f"f{i:04d}.csv").write_text("1,2\n")
    (data / "notes.txt").write_text("notes\n")
    return data


def test_a_change_in_a_big_folder_is_looked_at_by_name(
    root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = _many(root)
    pkg = root / ".venv" / "lib" / "site-packages" / "pkg"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("x = 1\n")
    assert SECRET not in _no_click(root, "cat data/notes.txt")
    lists: list[str] = []
    looked: list[int] = []
    real_read, real_links = _folder.read, _folder.links

    def counting_read(todo: _folder.Todo, watch: object) -> object:
        lists.append(todo.path)
        return real_read(todo, watch)  # type: ignore[arg-type]

    def counting_links(f: _folder.Folder) -> list[Path]:
        looked.append(len(f.files))
        return real_links(f)

    monkeypatch.setattr(_folder, "read", counting_read)
    monkeypatch.setattr(_folder, "links", counting_links)
    (data / ".env").write_text(f"KEY={SECRET}\n")  # written in place
    staged = tmp_path / "staged"
    staged.write_text(f"token = {SECRET}\n")
    os.rename(staged, data / "terraform.tfstate")  # renamed in from outside
    os.rename(data / "notes.txt", data / ".envrc")  # renamed inside the folder
    (data / ".envrc").write_text(f"export KEY={SECRET}\n")
    outside = tmp_path / "credentials"
    outside.write_text(f"aws_secret = {SECRET}\n")
    os.link(outside, data / "f0007-copy.csv")  # a second name of a secret outside
    (pkg / ".env").write_text(f"KEY={SECRET}\n")  # in a package folder
    out = _no_click(
        root,
        "cat data/.env data/terraform.tfstate data/.envrc data/f0007-copy.csv; "
        f"cat {pkg.relative_to(root)}/.env; grep -r SECRET data .venv; cat data/f0001.csv; "
        "echo done",
    )
    assert "done" in out and "1,2" in out, out
    assert SECRET not in out, out
    assert str(data) not in lists  # not listed again
    assert sum(looked) < 10, looked  # the new names' link counts, not every file's
    fresh = _scan._result(*_scan._walk(str(root)))
    kept = _scan.scan_all(root)
    assert sorted(kept.secrets) == sorted(fresh.secrets)


@pytest.mark.parametrize("how", ["deleted", "moved away"])
async def test_a_folder_made_again_under_its_name_is_read_anew(root: Path, how: str) -> None:
    (root / "d" / "sub").mkdir(parents=True)
    (root / "d" / "sub" / "plain.txt").write_text("nothing\n")
    first = await run(root, "cat d/sub/plain.txt", approved=False)
    assert "nothing" in first.content
    if how == "deleted":
        shutil.rmtree(root / "d")
    else:
        os.rename(root / "d", root / "d.old")
    (root / "d" / "sub").mkdir(parents=True)
    (root / "d" / "sub" / ".env").write_text(f"KEY={SECRET}\n")
    r = await run(root, "cat d/sub/.env; grep -r SECRET d; echo done", approved=False)
    assert "done" in r.content and SECRET not in r.content, r.content


def test_out_of_watches_mid_walk_falls_back_to_mtimes(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """inotify refuses a watch half-way through a walk (none left): the walk starts again
    unwatched, and a change is still seen (by the folders' modification times)."""
    for i in range(6):
        (root / f"d{i}").mkdir()
    real = type(watcher()).add
    added: list[str] = []

    def add(self: object, folder: str) -> int:
        if len(added) >= 3:
            raise OSError(28, "No space left on device", folder)
        added.append(folder)
        return real(self, folder)  # type: ignore[arg-type]

    monkeypatch.setattr(type(watcher()), "add", add)
    assert _scan.scan_all(root).secrets == ()
    assert not _scan._scan_cache[str(root)].watched
    (root / "d4" / ".env").write_text(f"KEY={SECRET}\n")
    assert root / "d4" / ".env" in _scan.scan_all(root).secrets
    out = _no_click(root, "cat d4/.env; echo done")
    assert "done" in out and SECRET not in out, out
