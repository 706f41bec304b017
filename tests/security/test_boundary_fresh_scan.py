"""The secret scan is kept between calls, and a kept scan never hides less than a new one
would: a ``.env`` made between two no-click calls (by the user's code in the kernel, by a
folder renamed in, by an approved sandboxed call, by a hard link) is hidden in the second.
Also where inotify cannot watch (the stat fallback)."""

from __future__ import annotations

import os
import shutil
import uuid
from pathlib import Path

import pytest
from sandbox_helpers import require_sandbox, run

from nb_tools.sandbox import _folder, _scan

SECRET = f"SECRET-{uuid.uuid4().hex}"
LOOK = "cat .env sub/.env moved/.env 2>&1; grep -r SECRET . 2>&1; echo done"


@pytest.fixture(params=["inotify", "stat"])
def ws_fresh(ws: Path, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Path:
    require_sandbox()
    if request.param == "stat":  # a file system inotify cannot watch
        monkeypatch.setattr(_scan, "watchable", lambda path: False)
    _scan._scan_cache.clear()
    (ws / "src").mkdir()
    (ws / "src" / "a.py").write_text("x = 1\n")
    return ws


async def _first(ws: Path) -> None:
    r = await run(ws, LOOK, approved=False)
    assert "done" in r.content and SECRET not in r.content


async def test_env_written_by_the_user_between_calls(ws_fresh: Path) -> None:
    await _first(ws_fresh)
    (ws_fresh / ".env").write_text(f"KEY={SECRET}\n")
    r = await run(ws_fresh, LOOK, approved=False)
    assert "done" in r.content and SECRET not in r.content, r.content


async def test_env_in_a_new_sub_folder(ws_fresh: Path) -> None:
    await _first(ws_fresh)
    (ws_fresh / "sub").mkdir()
    (ws_fresh / "sub" / ".env").write_text(f"KEY={SECRET}\n")
    r = await run(ws_fresh, LOOK, approved=False)
    assert "done" in r.content and SECRET not in r.content, r.content


async def test_folder_holding_an_env_renamed_in(ws_fresh: Path, tmp_path: Path) -> None:
    await _first(ws_fresh)
    staged = tmp_path / "staged"
    staged.mkdir()
    (staged / ".env").write_text(f"KEY={SECRET}\n")
    os.rename(staged, ws_fresh / "moved")
    r = await run(ws_fresh, LOOK, approved=False)
    assert "done" in r.content and SECRET not in r.content, r.content


async def test_env_written_by_an_approved_call(ws_fresh: Path) -> None:
    await _first(ws_fresh)
    # A new .env is removed after the call (the protection table); a secret store a
    # program writes without a leading dot stays, and the next call must hide it.
    w = await run(
        ws_fresh, f"mkdir -p sub && echo KEY={SECRET} > sub/terraform.tfstate", approved=True
    )
    assert (ws_fresh / "sub" / "terraform.tfstate").exists(), w.content
    r = await run(ws_fresh, LOOK, approved=False)
    assert "done" in r.content and SECRET not in r.content, r.content


async def test_hard_link_made_between_calls(ws_fresh: Path, tmp_path: Path) -> None:
    await _first(ws_fresh)
    outside = tmp_path / "outside-secret"
    outside.write_text(f"KEY={SECRET}\n")
    os.link(outside, ws_fresh / "src" / "notes.txt")
    r = await run(ws_fresh, "cat src/notes.txt; grep -r SECRET .; echo done", approved=False)
    assert "done" in r.content and SECRET not in r.content, r.content


def test_an_unchanged_workspace_is_not_read_again(ws: Path) -> None:
    """The point of keeping the scan: no change, no second walk (inotify)."""
    _scan._scan_cache.clear()
    (ws / "a").mkdir()
    first = _scan.scan_all(ws.resolve())
    assert _scan.scan_all(ws.resolve()) is first
    (ws / "a" / ".env").write_text("x")
    again = _scan.scan_all(ws.resolve())
    assert again is not first and ws.resolve() / "a" / ".env" in again.secrets


async def test_folder_renamed_inside_the_workspace(ws_fresh: Path) -> None:
    (ws_fresh / "a" / "deep").mkdir(parents=True)
    (ws_fresh / "a" / "deep" / ".env").write_text(f"KEY={SECRET}\n")
    await _first(ws_fresh)
    os.rename(ws_fresh / "a", ws_fresh / "b")
    r = await run(ws_fresh, "cat b/deep/.env; grep -r SECRET .; echo done", approved=False)
    assert "done" in r.content and SECRET not in r.content, r.content


def test_a_change_reads_only_that_folder_again(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _scan._scan_cache.clear()
    for i in range(40):
        (ws / f"d{i:02d}" / "x").mkdir(parents=True)
    root = ws.resolve()
    _scan.scan_all(root)
    reads: list[str] = []
    real = _folder.read

    def counting(todo: tuple[str, int, str, bool], watch: object) -> object:
        reads.append(todo[0])
        return real(todo, watch)  # type: ignore[arg-type]

    monkeypatch.setattr(_folder, "read", counting)
    (ws / "d07" / "x" / ".env").write_text("x")
    (ws / "d09" / "new" / "deeper").mkdir(parents=True)
    (ws / "d09" / "new" / "deeper" / ".envrc").write_text("x")
    shutil.rmtree(ws / "d11")
    found = _scan.scan_all(root)
    assert root / "d07" / "x" / ".env" in found.secrets
    assert root / "d09" / "new" / "deeper" / ".envrc" in found.secrets
    # The changed folders are looked at name by name (the names inotify reported); only
    # the new folders are listed.
    expected = [str(root / p) for p in ("d09/new", "d09/new/deeper")]
    assert sorted(reads) == sorted(expected), reads
    fresh = _scan._result(*_scan._walk(str(root)))
    assert sorted(found.secrets) == sorted(fresh.secrets)
    assert not any(str(p).startswith(str(root / "d11")) for p in found.secrets)


def test_growing_past_the_cap_reads_the_whole_tree(
    ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_scan, "MAX_SCAN_ENTRIES", 20)
    _scan._scan_cache.clear()
    (ws / "a").mkdir()
    root = ws.resolve()
    assert _scan.scan_all(root).unscanned == ()
    for i in range(30):
        (ws / "a" / f"d{i:02d}").mkdir()
    assert _scan.scan_all(root).unscanned != ()
    _scan._scan_cache.clear()
