"""The machine lookups behind the sandbox's masks keep only what the environment decides:
a changed variable or a retargeted link shows in the next call's masks."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from nb_tools.sandbox._hide import coarse_masks, home_dirs, jupyter_runtime_dir


def test_the_runtime_folder_follows_the_environment_and_links(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b, data = tmp_path / "a", tmp_path / "b", tmp_path / "data"
    for d in (a, b, data / "runtime"):
        d.mkdir(parents=True)
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(a))
    assert jupyter_runtime_dir() == a.resolve() and a.resolve() in coarse_masks()
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(b))
    assert jupyter_runtime_dir() == b.resolve() and a.resolve() not in coarse_masks()
    monkeypatch.delenv("JUPYTER_RUNTIME_DIR")
    monkeypatch.setenv("JUPYTER_DATA_DIR", str(data))
    assert jupyter_runtime_dir() == (data / "runtime").resolve()
    link = tmp_path / "link"
    link.symlink_to(a)
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(link))
    assert jupyter_runtime_dir() == a.resolve()
    link.unlink()
    link.symlink_to(b)  # the link now leads elsewhere: the mask follows it
    assert jupyter_runtime_dir() == b.resolve() and b.resolve() in coarse_masks()


def test_home_folders_follow_home_and_its_link(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    one, two = tmp_path / "one", tmp_path / "two"
    one.mkdir()
    two.mkdir()
    monkeypatch.setenv("HOME", str(one))
    assert one.resolve() in home_dirs()
    monkeypatch.setenv("HOME", str(two))
    assert two.resolve() in home_dirs() and one.resolve() not in home_dirs()
    link = tmp_path / "home-link"
    link.symlink_to(one)
    monkeypatch.setenv("HOME", str(link))
    assert one.resolve() in home_dirs()
    os.unlink(link)
    link.symlink_to(two)
    assert two.resolve() in home_dirs() and one.resolve() not in home_dirs()


def test_homes_are_pinned_for_one_command_line_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """bwrap_command resolves the homes once (``homes_pinned``); the next call looks again."""
    from nb_tools.sandbox import SandboxPolicy
    from nb_tools.sandbox._bwrap import bwrap_command
    from nb_tools.sandbox._hide import homes_pinned

    one, two, ws = tmp_path / "one", tmp_path / "two", tmp_path / "ws"
    for d in (one, two, ws):
        d.mkdir()
    monkeypatch.setenv("HOME", str(one))
    with homes_pinned():
        monkeypatch.setenv("HOME", str(two))
        assert one.resolve() in home_dirs() and two.resolve() not in home_dirs()
    assert two.resolve() in home_dirs() and one.resolve() not in home_dirs()
    policy = SandboxPolicy(mode="read-only", workspace=ws).unapproved()
    bwrap_command("bwrap", policy, ["true"], cwd=ws)
    monkeypatch.setenv("HOME", str(one))  # no pin outlives the command line
    assert one.resolve() in home_dirs() and two.resolve() not in home_dirs()


def test_the_masked_parent_check_matches_the_parents_walk() -> None:
    from nb_tools.sandbox._bwrap import _in_masked

    paths = [Path(p) for p in ("/", "/a", "/a/b", "/a/b/c", "/ab/c", "/a/bc", "/x/a/b")]
    for masked in (set(), {"/"}, {"/a"}, {"/a/b"}, {"/ab"}, {"/a/b/c"}, {"/a", "/x/a"}):
        for p in paths:
            assert _in_masked(p, masked) == any(str(d) in masked for d in p.parents), (p, masked)
