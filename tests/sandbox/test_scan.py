"""The scan's two passes: the walk (names only, what every call needs) and the look at
each file's link count (only a call without a click needs it). The walk looks at no file;
an approved call never waits for the link pass; a call without a click that comes before
the background pass is done finishes it, and the hard link stays out of its view; a
change sends only the folder it touched back to the link pass."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from nb_tools.sandbox import SandboxPolicy, _folder, _scan, prepare, sandbox_available

SECRET = f"SECRET-{uuid.uuid4().hex}"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """A workspace whose ``src/notes.txt`` is a second name of a secret outside it."""
    ws = (tmp_path / "ws").resolve()
    for d in ("src", "docs", "data/a", "data/b"):
        (ws / d).mkdir(parents=True)
        (ws / d / "plain.txt").write_text("nothing here\n")
    outside = tmp_path / "credentials"
    outside.write_text(f"token = {SECRET}\n")
    os.link(outside, ws / "src" / "notes.txt")
    _scan._scan_cache.clear()
    yield ws
    _scan._scan_cache.clear()


@pytest.fixture
def looks(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The folders whose files' link counts were looked at."""
    seen: list[str] = []
    real = _folder.links

    def counting(f: _folder.Folder) -> list[Path]:
        seen.append(f.todo.path)
        return real(f)

    monkeypatch.setattr(_folder, "links", counting)
    return seen


def _require_sandbox() -> None:
    if not sys.platform.startswith("linux"):
        pytest.skip("the OS sandbox (bubblewrap) exists only on Linux")
    assert sandbox_available(refresh=True).ok


def _run(ws: Path, command: str, policy: SandboxPolicy) -> str:
    launch = prepare(["bash", "-c", command], policy, cwd=ws)
    r = subprocess.run(launch.argv, cwd=launch.cwd, env=launch.env, capture_output=True)
    return (r.stdout + r.stderr).decode(errors="replace")


def test_the_walk_and_an_approved_call_look_at_no_link_count(root: Path, looks: list[str]) -> None:
    _require_sandbox()
    assert _scan.scan_all(root).linked is None
    out = _run(root, "ls src", SandboxPolicy(mode="workspace-write", workspace=root))
    assert "notes.txt" in out
    assert looks == []
    assert _scan.scan_all(root, links=True).linked == (root / "src" / "notes.txt",)
    assert sorted(looks) == [str(root / d) for d in ("data/a", "data/b", "docs", "src")]


def test_a_call_without_a_click_finishes_the_link_pass(root: Path) -> None:
    _require_sandbox()
    _scan.scan_all(root)  # the walk only: the background pass has not run
    assert _scan._scan_cache[str(root)].unlinked
    policy = SandboxPolicy(mode="read-only", workspace=root).unapproved()
    out = _run(root, "cat src/notes.txt; grep -r token .; cat src/plain.txt", policy)
    assert SECRET not in out
    assert "nothing here" in out


def test_the_background_pass_leaves_nothing_for_the_call(root: Path, looks: list[str]) -> None:
    _require_sandbox()
    _scan.warm_up(root)
    end = time.monotonic() + 20
    while time.monotonic() < end:
        with _scan._scan_lock:
            cached = _scan._scan_cache.get(str(root))
            if (
                cached is not None
                and cached.result is not None
                and all(f.linked is not None for f in cached.folders.values())
            ):
                break
        time.sleep(0.02)
    else:
        pytest.fail("the background link pass did not finish")
    done = len(looks)
    assert _scan.scan_all(root, links=True).linked == (root / "src" / "notes.txt",)
    assert len(looks) == done


def test_a_change_sends_only_its_folder_back(root: Path, tmp_path: Path, looks: list[str]) -> None:
    first = _scan.scan_all(root, links=True)
    assert _scan.scan_all(root, links=True) is first
    looks.clear()
    other = tmp_path / "other-secret"
    other.write_text("x")
    os.link(other, root / "data" / "b" / "copy.txt")
    found = _scan.scan_all(root, links=True)
    assert looks == [str(root / "data" / "b")]
    assert sorted(found.linked or ()) == [
        root / "data" / "b" / "copy.txt",
        root / "src" / "notes.txt",
    ]
    os.unlink(root / "src" / "notes.txt")
    assert _scan.scan_all(root, links=True).linked == (root / "data" / "b" / "copy.txt",)


def test_a_sandboxed_call_cannot_link_across_its_mounts(root: Path) -> None:
    """What the docs rely on: a link to a file outside the workspace, to a hidden secret
    or to a read-only path inside it is refused (EXDEV), even in workspace-write."""
    _require_sandbox()
    (root / ".env").write_text(f"KEY={SECRET}\n")
    (root / ".npmrc").write_text("//registry/:_authToken=x\n")
    tries = {"h1": "/etc/hostname", "h2": ".env", "h3": ".npmrc", "h4": "/usr/bin/env"}
    script = "; ".join(f"ln {src} {dst}" for dst, src in tries.items())
    out = _run(
        root,
        f"{script}; ln docs/plain.txt h5; echo done",
        SandboxPolicy(mode="workspace-write", workspace=root),
    )
    assert "done" in out
    assert out.count("Invalid cross-device link") == len(tries), out
    assert not any((root / dst).exists() for dst in tries)
    assert (root / "h5").stat().st_nlink == 2  # inside one mount a link is made...
    linked = _scan.scan_all(root, links=True).linked or ()
    assert {root / "h5", root / "docs" / "plain.txt"} <= set(linked)  # ...and masked next


def test_every_root_sees_a_change_across_the_forgetting_of_kept_scans(tmp_path: Path) -> None:
    """Past 64 kept roots every kept scan is forgotten, watches and all; the root whose
    scan comes then must still be watched (forgetting it too left its scan stale, and an
    approved call's ``sitecustomize.py`` in the 65th workspace of a session stayed)."""
    for i in range(70):
        root = (tmp_path / f"r{i}").resolve()
        root.mkdir()
        _scan.scan_all(root)
        (root / "sitecustomize.py").write_text("print('runs at start-up')\n")
        assert root / "sitecustomize.py" in _scan.scan_all(root).writes, i
