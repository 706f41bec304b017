"""bash: exit codes, output cap, timeouts and cancellation end the whole process group,
progress streams, stdin is closed, the root is the working folder."""

from __future__ import annotations

import asyncio
import json
import os
import time
from pathlib import Path

import pytest

from nb_tools.builtin._bash import MAX_OUTPUT_CHARS, BashTool
from nb_tools.builtin._workspace import Workspace
from nb_tools.tool._progress import Progress, bind_call, progress_sink


@pytest.fixture
def tool(tmp_path: Path) -> BashTool:
    """Outside the sandbox, so the host sees the children's pids (tests/security/
    test_sandbox_*.py cover the same behaviour inside the sandbox)."""
    return BashTool(Workspace(tmp_path), kill_grace=0.5, progress_interval=0.1, sandbox="off")


def args(command: str, **kw: object) -> str:
    return json.dumps({"command": command, **kw})


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie still answers kill(0): look at its state.
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


async def _wait_dead(pid: int, within: float = 5.0) -> bool:
    end = time.monotonic() + within
    while time.monotonic() < end:
        if not _alive(pid):
            return True
        await asyncio.sleep(0.05)
    return False


async def test_exit_code_zero(tool: BashTool) -> None:
    r = await tool.call(args("echo hello"))
    assert r.content == "hello\n\n[exit code 0]"
    assert not r.is_error
    assert r.metadata["exit_code"] == 0


async def test_nonzero_exit_code_is_an_error_with_output(tool: BashTool) -> None:
    r = await tool.call(args("echo out; echo err >&2; exit 3"))
    assert r.content == "out\nerr\n\n[exit code 3]"
    assert r.is_error
    assert r.metadata["exit_code"] == 3


async def test_no_output(tool: BashTool) -> None:
    r = await tool.call(args("true"))
    assert r.content == "(no output)\n\n[exit code 0]"


async def test_cwd_is_the_root(tool: BashTool, tmp_path: Path) -> None:
    r = await tool.call(args("pwd"))
    assert r.content.splitlines()[0] == os.path.realpath(tmp_path)


async def test_stdin_is_closed(tool: BashTool) -> None:
    r = await tool.call(args("cat; echo done", timeout=20_000))
    assert not r.metadata["timed_out"], "cat waited for input"
    assert r.content == "done\n\n[exit code 0]"


async def test_output_is_capped_head_and_tail(tool: BashTool) -> None:
    r = await tool.call(args("seq 1 30000"))
    body = r.content
    assert len(body) < MAX_OUTPUT_CHARS + 200
    assert body.startswith("1\n2\n3\n")
    assert "characters omitted" in body
    assert body.endswith("29999\n30000\n\n[exit code 0]")
    assert r.metadata["output_bytes"] == len("\n".join(map(str, range(1, 30001)))) + 1


async def test_huge_output_stays_bounded_in_memory(tool: BashTool) -> None:
    r = await tool.call(args("head -c 20000000 /dev/zero | tr '\\0' a; echo; echo END"))
    assert "output truncated: 20000005 bytes in all" in r.content
    assert r.content.endswith("END\n\n[exit code 0]")
    assert len(r.content) < MAX_OUTPUT_CHARS + 300


async def test_timeout_kills_the_whole_group(tool: BashTool, tmp_path: Path) -> None:
    pidfile = tmp_path / "child.pid"
    r = await tool.call(args(f"echo started; sleep 60 & echo $! > {pidfile}; wait", timeout=700))
    assert r.metadata["timed_out"]
    assert r.is_error
    assert r.content.startswith("started\n\n[timed out after 0.7 s")
    child = int(pidfile.read_text())
    assert await _wait_dead(child), "the background sleep survived the timeout"


async def test_term_ignoring_child_gets_killed(tool: BashTool, tmp_path: Path) -> None:
    pidfile = tmp_path / "child.pid"
    script = f"bash -c 'trap \"\" TERM; echo $$ > {pidfile}; sleep 60' & wait"
    r = await tool.call(args(script, timeout=500))
    assert r.metadata["timed_out"]
    assert await _wait_dead(int(pidfile.read_text()))


async def test_cancellation_returns_partial_output(tool: BashTool, tmp_path: Path) -> None:
    pidfile = tmp_path / "child.pid"
    task = asyncio.ensure_future(
        tool.call(args(f"echo partial; sleep 60 & echo $! > {pidfile}; wait"))
    )
    while not pidfile.exists() or not pidfile.read_text().strip():
        await asyncio.sleep(0.05)
    await asyncio.sleep(0.2)
    task.cancel()
    r = await task
    assert r.metadata["cancelled"]
    assert r.content.startswith("partial\n\n[cut off: the call was cancelled")
    assert await _wait_dead(int(pidfile.read_text()))


async def test_progress_streams_output_while_running(tool: BashTool, tmp_path: Path) -> None:
    """The command waits until the test has seen its first line as progress."""
    seen: list[tuple[str, Progress]] = []

    def sink(cid: str, p: Progress) -> None:
        seen.append((cid, p))
        if "one" in p.text:
            (tmp_path / "go").touch()

    command = "echo one; while [ ! -f go ]; do sleep 0.02; done; echo two"
    with progress_sink(sink), bind_call("call-1"):
        r = await tool.call(args(command, timeout=60_000))
    assert r.content == "one\ntwo\n\n[exit code 0]"
    assert {cid for cid, _ in seen} == {"call-1"}
    assert [p.text for _, p in seen] == ["one\n", "two\n"]


async def test_background_child_does_not_hold_the_call(tool: BashTool, tmp_path: Path) -> None:
    """A background child keeps the output pipe open; the call still ends with bash."""
    pidfile = tmp_path / "bg.pid"
    r = await tool.call(args(f"sleep 60 & echo $! > {pidfile}; echo bg", timeout=30_000))
    assert not r.metadata["timed_out"]
    assert r.content == "bg\n\n[exit code 0]"
    pid = int(pidfile.read_text())
    os.kill(pid, 9)
    assert await _wait_dead(pid)
    await asyncio.sleep(0.1)  # let the loop see the pipe close before the test ends


async def test_invalid_arguments(tool: BashTool) -> None:
    r = await tool.call(json.dumps({"command": "ls", "timeout": 600_001}))
    assert r.is_error and "timeout" in r.content
    r = await tool.call(json.dumps({"command": "  "}))
    assert r.is_error and "empty" in r.content


def test_read_only_vote_and_approval(tool: BashTool) -> None:
    assert tool.read_only_call(args("git status && ls -la"))
    assert not tool.requires_approval_for(args("git status && ls -la"))
    assert not tool.read_only_call(args("rm -rf build"))
    assert tool.requires_approval_for(args("rm -rf build"))
    assert tool.requires_approval_for("not json")
    assert tool.requires_approval_for(json.dumps({"command": 3}))
    info = tool.info()
    assert info.name == "bash" and info.requires_approval and not info.read_only


async def test_closed_output_then_exit(tool: BashTool) -> None:
    r = await tool.call(args("echo before; exec >&- 2>&-; sleep 0.3; exit 4"))
    assert r.content == "before\n\n[exit code 4]"
