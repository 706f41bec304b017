"""A sandbox made ready ahead of a no-click bash call is a snapshot of its mounts: a change
made after it and before the call must never be shown through it (attacks written as an
attacker would; each ends with ``cat`` of the secret through a no-click call)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from sandbox_helpers import NOT_APPROVED, require_sandbox

from nb_tools.builtin._bash import BashTool
from nb_tools.builtin._workspace import Workspace
from nb_tools.sandbox import _ready, close_ready
from nb_tools.tool import Result
from nb_tools.tool._grant import granted

TOKEN = "quokka771canary"
"""A secret no output redaction recognises (the sandbox alone must keep it out)."""


def _made(root: Path) -> None:
    assert _ready.wait_ready(root), "no ready sandbox was set up"


async def _call(tool: BashTool, command: str) -> Result:
    with granted(NOT_APPROVED):
        return await tool.call(json.dumps({"command": command, "timeout": 20_000}))


def attack(root: Path, change: Callable[[], None], command: str) -> Result:
    """A first no-click call (a ready sandbox is made after it), the attacker's change
    once it is made, then the no-click call that would show the secret."""
    require_sandbox()
    tool = BashTool(Workspace(root))

    async def main() -> Result:
        await _call(tool, "true")
        _made(root)
        change()
        seen = _ready.counts["taken"] + _ready.counts["discarded"]
        r = await _call(tool, command)
        # The ready sandbox was there for this call (taken, or thrown away as stale).
        assert _ready.counts["taken"] + _ready.counts["discarded"] == seen + 1
        return r

    try:
        return asyncio.run(main())
    finally:
        close_ready()


def test_a_new_env_file(ws: Path) -> None:
    def change() -> None:
        (ws / ".env").write_text(f"{TOKEN}\n")

    r = attack(ws, change, "cat .env; echo done")
    assert "done" in r.content
    assert TOKEN not in r.content


def test_git_config_renamed_over(ws: Path) -> None:
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    cfg = ws / ".git" / "config"
    with cfg.open("a") as f:
        f.write('[remote "origin"]\n\turl = https://old-canary@example.com/x.git\n')

    def change() -> None:  # as `git config` writes it: config.lock renamed over config
        text = cfg.read_text().replace("old-canary", TOKEN)
        lock = cfg.with_name("config.lock")
        lock.write_text(text)
        os.rename(lock, cfg)

    r = attack(ws, change, "cat .git/config; echo done")
    assert "done" in r.content and "example.com" in r.content
    assert TOKEN not in r.content


def test_masked_folder_replaced(ws: Path, tmp_path: Path) -> None:
    (ws / ".ssh").mkdir()
    (ws / ".ssh" / "id_ed25519").write_text("old key\n")

    def change() -> None:  # the hidden folder moved away, a new one under its name
        os.rename(ws / ".ssh", tmp_path / "moved")
        (ws / ".ssh").mkdir()
        (ws / ".ssh" / "id_ed25519").write_text(f"{TOKEN}\n")

    r = attack(ws, change, "cat .ssh/id_ed25519; ls -a .ssh; echo done")
    assert "done" in r.content
    assert TOKEN not in r.content


def test_hard_link_from_outside(ws: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside-secret.txt"
    outside.write_text(f"{TOKEN}\n")
    (ws / "notes.txt").write_text("notes\n")

    def change() -> None:
        os.link(outside, ws / "linked.txt")

    r = attack(ws, change, "cat linked.txt; cat notes.txt; echo done")
    assert "done" in r.content and "notes" in r.content
    assert TOKEN not in r.content


def test_credentials_in_a_home_tool_folder(
    ws: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The home (outside the workspace) is masked; a tool folder of it on ``PATH`` comes
    back read-only (``~/.cargo``); its credentials appear after the ready sandbox was
    made (no scan watches there)."""
    home = tmp_path / "home"
    (home / ".cargo" / "bin").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    # ~/.cargo on PATH: the whole folder comes back (its credentials hidden).
    monkeypatch.setenv("PATH", f"{home / '.cargo'}{os.pathsep}{os.environ['PATH']}")
    creds = home / ".cargo" / "credentials.toml"

    def change() -> None:
        creds.write_text(f"{TOKEN}\n")

    r = attack(ws, change, f"ls {home / '.cargo'}; cat {creds}; echo done")
    assert "done" in r.content and "bin" in r.content
    assert TOKEN not in r.content
