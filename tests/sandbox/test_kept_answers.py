"""What prepare() keeps between calls is looked at again on each: a change to what an
answer was read from shows in the very next command line."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from nb_tools.sandbox import SandboxPolicy, prepare, sandbox_available
from nb_tools.sandbox._kept import SETTLED_NS, kept


@pytest.fixture(autouse=True)
def _bwrap() -> None:
    if not sys.platform.startswith("linux") or not sandbox_available().ok:
        pytest.skip("needs bubblewrap")


def _settle() -> None:
    """Wait until what was just changed is old enough for an answer read from it to be
    kept."""
    time.sleep(SETTLED_NS / 1e9 + 0.03)


def test_kept_reads_again_after_a_change_and_not_from_a_fresh_path(tmp_path: Path) -> None:
    f = tmp_path / "f"
    f.write_text("one")
    cache: dict = {}
    reads: list[str] = []

    def read() -> str:
        reads.append(f.read_text())
        return reads[-1]

    assert kept(cache, "k", (str(f),), read) == "one"
    assert kept(cache, "k", (str(f),), read) == "one"
    assert len(reads) == 2  # just changed: not kept (a second change may keep its times)
    _settle()
    kept(cache, "k", (str(f),), read)
    assert kept(cache, "k", (str(f),), read) == "one" and len(reads) == 3
    f.write_text("two")  # same size, new times
    assert kept(cache, "k", (str(f),), read) == "two"
    _settle()
    kept(cache, "k", (str(f),), read)
    old = os.stat(f)
    f.write_text("six")
    os.utime(f, ns=(old.st_atime_ns, old.st_mtime_ns))  # the times set back by hand
    assert kept(cache, "k", (str(f),), read) == "six"  # its change time moved


def test_a_new_top_level_folder_is_masked_at_the_next_call(tmp_path: Path) -> None:
    if not os.access("/", os.W_OK):
        pytest.skip("cannot make a folder in /")
    policy = SandboxPolicy(mode="read-only", workspace=tmp_path).unapproved()
    _settle()
    prepare(["true"], policy)
    new = Path(f"/nb-tools-probe-{uuid.uuid4().hex[:8]}")
    new.mkdir()
    try:
        argv = prepare(["true"], policy).argv
        assert str(new) in argv and argv[argv.index(str(new)) - 1] == "--tmpfs"
    finally:
        new.rmdir()
    assert str(new) not in prepare(["true"], policy).argv


def test_a_new_home_is_masked_at_the_next_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    home = Path(f"/nb-tools-home-probe-{uuid.uuid4().hex[:8]}")  # under no mask yet
    home.mkdir()
    try:
        policy = SandboxPolicy(mode="read-only", workspace=ws)
        assert str(home) not in prepare(["true"], policy).argv
        monkeypatch.setenv("HOME", str(home))
        argv = prepare(["true"], policy).argv
        assert argv[argv.index(str(home)) - 1] == "--tmpfs"
    finally:
        home.rmdir()


def test_a_new_secret_in_a_home_shows_at_the_next_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The workspace is a home: its credentials are hidden; one made after a call (at the
    top, and in a sub-folder that existed) is hidden from the next."""
    ws = (tmp_path / "home").resolve()
    (ws / ".config").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(ws))
    policy = SandboxPolicy(mode="read-only", workspace=ws)
    _settle()
    argv = prepare(["true"], policy).argv
    assert str(ws / ".pypirc") not in argv
    (ws / ".pypirc").write_text("[pypi]\npassword = x\n")
    (ws / ".config" / "gh").mkdir()
    argv = prepare(["true"], policy).argv
    assert argv[argv.index(str(ws / ".pypirc")) - 2 :][:2] == ["--ro-bind", "/dev/null"]
    assert argv[argv.index(str(ws / ".config" / "gh")) - 1] == "--tmpfs"


def test_a_git_config_that_gains_credentials_is_cleaned_at_the_next_call(tmp_path: Path) -> None:
    ws = (tmp_path / "ws").resolve()
    ws.mkdir()
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    cfg = ws / ".git" / "config"
    policy = SandboxPolicy(mode="read-only", workspace=ws).unapproved()
    _settle()
    argv = prepare(["true"], policy).argv
    assert str(cfg) not in argv
    with cfg.open("a") as f:
        f.write('[remote "origin"]\n\turl = https://user:TOKEN-4711@example.com/x\n')
    argv = prepare(["true"], policy).argv
    clean = argv[argv.index(str(cfg)) - 1]
    assert "TOKEN-4711" not in Path(clean).read_text()


def test_a_driver_added_to_the_git_config_is_switched_off_at_the_next_call(tmp_path: Path) -> None:
    ws = (tmp_path / "ws").resolve()
    ws.mkdir()
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    policy = SandboxPolicy(mode="read-only", workspace=ws).unapproved()
    _settle()
    env = prepare(["true"], policy).env
    assert "diff.evil.textconv" not in env.values()
    with (ws / ".git" / "config").open("a") as f:
        f.write('[diff "evil"]\n\ttextconv = touch /tmp/pwned\n')
    env = prepare(["true"], policy).env
    key = next(k for k, v in env.items() if v == "diff.evil.textconv")
    assert env[key.replace("KEY", "VALUE")] == "cat"
