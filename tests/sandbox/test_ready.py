"""Ready sandboxes (``nb_tools.sandbox._ready``) with real bubblewrap: a no-click bash call
that takes one behaves as a call started cold, and none is left running."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from processes import pids_with

from nb_tools.builtin._bash import BashTool
from nb_tools.builtin._workspace import Workspace
from nb_tools.sandbox import READY_ENV, _ready, close_ready, sandbox_available
from nb_tools.tool import Result
from nb_tools.tool._grant import Grant, granted

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux") or not sandbox_available().ok,
    reason="needs bubblewrap",
)


def wait_made(root: Path) -> None:
    assert _ready.wait_ready(root), "no ready sandbox was set up"


async def call(tool: BashTool, command: str, timeout_ms: int = 20_000) -> Result:
    with granted(Grant(approved=False)):
        return await tool.call(json.dumps({"command": command, "timeout": timeout_ms}))


def children() -> list[int]:
    """This process's live children (zombies excluded)."""
    out = []
    me = os.getpid()
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            stat = Path(f"/proc/{name}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(stat[1]) == me and stat[0] != "Z":
            out.append(int(name))
    return out


COMMANDS = [
    "exit 3",
    "nosuchcommand_xyz",
    "echo out; echo err >&2; exit 1",
    "cat; echo stdin-rc=$?",  # stdin is /dev/null: EOF at once
    "echo " + "x" * 70_000 + " | wc -c",  # more than a pipe holds
    "sleep 30 & echo started",  # a background child holding the pipe dies with the call
    "env | sort; echo $0 $$ $SHLVL; pwd; ls -a",
    "printf 'caf\\xc3\\xa9 \\xff\\n'",
]


def test_ready_path_answers_as_the_cold_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.txt").write_text("hello\n")
    tool = BashTool(Workspace(root))

    async def main() -> list[tuple[Result, Result, bool]]:
        await call(tool, "true")  # cold; a ready one is made after it
        out = []
        for command in COMMANDS:
            monkeypatch.delenv(READY_ENV, raising=False)
            # A sandbox made ready is thrown away when anything it mounts changed (on a
            # busy machine: a Unix socket bound elsewhere); then the next one is tried.
            for _ in range(3):
                wait_made(root)
                taken = _ready.counts["taken"]
                t = time.monotonic()
                warm = await call(tool, command)
                assert time.monotonic() - t < 5, command  # the background child let go
                used = _ready.counts["taken"] == taken + 1
                if used:
                    break
            monkeypatch.setenv(READY_ENV, "0")
            cold = await call(tool, command)
            out.append((warm, cold, used))
        return out

    try:
        for command, (warm, cold, used) in zip(COMMANDS, asyncio.run(main()), strict=True):
            assert used, command
            assert warm.content == cold.content, command
            assert warm.is_error == cold.is_error
            assert warm.metadata == cold.metadata
        assert "[exit code 3]" in asyncio.run(main_once(tool, "exit 3"))
    finally:
        close_ready()


async def main_once(tool: BashTool, command: str) -> str:
    return (await call(tool, command)).content


def test_timeout_and_cancel_on_the_ready_path(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    tool = BashTool(Workspace(root), kill_grace=0.2)
    marker = "nbt_ready_sleep_4711"

    async def main() -> tuple[Result, bool]:
        await call(tool, "true")
        wait_made(root)
        taken = _ready.counts["taken"]
        r = await call(tool, f"sleep 30 # {marker}", timeout_ms=300)
        used = _ready.counts["taken"] == taken + 1
        wait_made(root)
        task = asyncio.ensure_future(call(tool, f"sleep 31 # {marker}"))
        await asyncio.sleep(0.3)
        task.cancel()
        cancelled = await task
        assert cancelled.metadata["cancelled"] is True
        return r, used

    try:
        r, used = asyncio.run(main())
        assert used
        assert r.metadata["timed_out"] is True and "[timed out after 0.3 s" in r.content
        end = time.monotonic() + 3
        while pids_with(marker) and time.monotonic() < end:
            time.sleep(0.05)
        assert pids_with(marker) == []
    finally:
        close_ready()


def test_fifty_calls_keep_the_process_count_flat(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    tool = BashTool(Workspace(root))

    async def main() -> list[int]:
        counts = []
        for i in range(50):
            r = await call(tool, f"echo {i}")
            assert r.content.startswith(f"{i}\n"), r.content
            await asyncio.sleep(0.01)
            counts.append(len(children()))
        return counts

    close_ready()  # those other tests' tools left (one per workspace, at most 4)
    base = len(children())  # other tests' servers and kernels, in the whole suite
    try:
        made = _ready.counts["made"]
        counts = asyncio.run(main())
        # the ready sandbox (and one being started), however many calls
        assert max(counts) <= base + 2, (base, counts)
        assert _ready.counts["made"] - made >= 25  # most calls took a ready one
    finally:
        assert close_ready() <= 1
    end = time.monotonic() + 3
    while pids_with(str(root)) and time.monotonic() < end:
        time.sleep(0.05)
    assert pids_with(str(root)) == []


def test_switched_off_makes_none(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(READY_ENV, "0")
    root = tmp_path / "ws"
    root.mkdir()
    tool = BashTool(Workspace(root))
    made = _ready.counts["made"]
    for _ in range(3):
        assert "[exit code 0]" in asyncio.run(main_once(tool, "ls"))
    time.sleep(0.2)
    assert _ready.counts["made"] == made
    assert pids_with(str(root)) == []


def test_none_left_after_close_and_after_exit(tmp_path: Path) -> None:
    root = tmp_path / "ws-exit"
    root.mkdir()
    code = textwrap.dedent(
        """
        import asyncio, json, sys, time
        from pathlib import Path
        from nb_tools.builtin._bash import BashTool
        from nb_tools.builtin._workspace import Workspace
        from nb_tools.sandbox import _ready
        from nb_tools.tool._grant import Grant, granted
        tool = BashTool(Workspace(Path(sys.argv[1])))
        async def main():
            with granted(Grant(approved=False)):
                await tool.call(json.dumps({"command": "true"}))
        asyncio.run(main())
        end = time.monotonic() + 10
        while _ready.counts["made"] == 0 and time.monotonic() < end:
            time.sleep(0.01)
        print(_ready.counts["made"], flush=True)
        if sys.argv[2] == "close":
            print(_ready.close_ready(sys.argv[1]), flush=True)
        """
    )
    for how in ("close", "exit"):
        out = subprocess.run(
            [sys.executable, "-c", code, str(root), how],
            capture_output=True,
            text=True,
            timeout=60,
            env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
        )
        assert out.returncode == 0, out.stderr
        assert out.stdout.split()[0] == "1", out.stdout
        if how == "close":
            assert out.stdout.split()[1] == "1"
        end = time.monotonic() + 3
        while pids_with(str(root)) and time.monotonic() < end:
            time.sleep(0.05)
        assert pids_with(str(root)) == [], how


def test_first_call_takes_the_one_made_after_the_scan(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.txt").write_text("hello\n")
    tool = BashTool(Workspace(root))  # scans, then has one made
    try:
        wait_made(root)
        taken = _ready.counts["taken"]
        r = asyncio.run(call(tool, "cat a.txt"))
        assert r.content.startswith("hello\n\n[exit code 0]")
        assert _ready.counts["taken"] == taken + 1
    finally:
        close_ready()


def test_a_forked_child_owns_none(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    BashTool(Workspace(root))
    try:
        wait_made(root)
        pid = os.fork()
        if pid == 0:  # the child: none to take, none to kill
            os._exit(0 if not _ready._slots and close_ready() == 0 else 1)
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0
        assert _ready.wait_ready(root, within=0.1)  # the parent's is still there
    finally:
        close_ready()
