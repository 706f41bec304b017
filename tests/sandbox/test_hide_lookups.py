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
