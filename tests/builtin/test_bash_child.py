"""bash's child process as the event loop watches it (``_child.Child``): the exit through a
pidfd without a thread, the pipe read to its end, the exact exit status, an interrupt's
SIGKILL reaching grandchildren, and the waiter-thread fallback where no pidfd opens."""

from __future__ import annotations

import asyncio
import errno
import json
import os
import threading
import time
import warnings
from pathlib import Path

import pytest

from nb_tools.builtin._bash import BashTool
from nb_tools.builtin._child import pidfd_works
from nb_tools.builtin._workspace import Workspace


@pytest.fixture
def tool(tmp_path: Path) -> BashTool:
    """Outside the sandbox: the host sees the children's pids."""
    return BashTool(Workspace(tmp_path), kill_grace=0.3, progress_interval=0.1, sandbox="off")


def args(command: str, **kw: object) -> str:
    return json.dumps({"command": command, **kw})


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


async def _until(check, within: float = 5.0) -> bool:  # type: ignore[no-untyped-def]
    end = time.monotonic() + within
    while time.monotonic() < end:
        if check():
            return True
        await asyncio.sleep(0.02)
    return check()


async def test_exit_status_is_exact(tool: BashTool) -> None:
    r = await tool.call(args("echo x; exit 77"))
    assert r.content == "x\n\n[exit code 77]" and r.metadata["exit_code"] == 77
    r = await tool.call(args("echo y; kill -9 $$"))
    assert r.content == "y\n\n[exit code -9]" and r.metadata["exit_code"] == -9


@pytest.mark.skipif(not pidfd_works(), reason="no pidfd on this system")
async def test_the_exit_arrives_without_a_thread(tool: BashTool, tmp_path: Path) -> None:
    """While a call runs, no thread waits for its child (asyncio's watcher starts one per
    child); the exit still ends the call, output first, status after."""
    before = set(threading.enumerate())
    task = asyncio.ensure_future(tool.call(args("echo a; exec >&- 2>&-; sleep 0.4; exit 5")))
    await asyncio.sleep(0.2)
    new = [t.name for t in threading.enumerate() if t not in before]
    r = await task
    assert new == []
    assert r.content == "a\n\n[exit code 5]"


async def test_closed_output_waits_for_the_exit(tool: BashTool) -> None:
    t = time.monotonic()
    r = await tool.call(args("echo early; exec >&- 2>&-; sleep 0.5; exit 3"))
    assert time.monotonic() - t >= 0.5  # the end of output did not end the call
    assert r.content == "early\n\n[exit code 3]" and r.metadata["exit_code"] == 3


async def test_a_child_holding_the_pipe_is_drained_not_waited_for(
    tool: BashTool, tmp_path: Path
) -> None:
    """bash exits while a background child still writes 2 MB into the pipe (more than a pipe
    holds): the call ends within its 0.5 s grace, and the child is not blocked on a full
    pipe: it finishes and leaves its mark."""
    done = tmp_path / "done"
    script = f"(sleep 0.3; head -c 2000000 /dev/zero; touch {done}) & echo parent"
    t = time.monotonic()
    r = await tool.call(args(script, timeout=30_000))
    assert time.monotonic() - t < 5
    assert r.content.startswith("parent\n") and r.metadata["exit_code"] == 0
    assert await _until(done.exists), "the background writer blocked on a full pipe"


async def test_cancel_kills_a_term_ignoring_grandchild(tool: BashTool, tmp_path: Path) -> None:
    """An interrupt: SIGTERM to the group, then SIGKILL, which reaches a grandchild that
    ignores SIGTERM (a shell inside a shell, same group)."""
    pidfile = tmp_path / "gc.pid"
    inner = tmp_path / "inner.sh"
    inner.write_text(
        "trap '' TERM\n"  # ignored signals stay ignored across exec: sleep ignores it too
        f"sh -c 'echo $$ > {pidfile}; sleep 60' &\n"
        "wait\n"
    )
    script = f"bash {inner} & wait"
    task = asyncio.ensure_future(tool.call(args(script)))
    assert await _until(lambda: pidfile.exists() and pidfile.read_text().strip() != "")
    grandchild = int(pidfile.read_text())
    assert _alive(grandchild)
    task.cancel()
    r = await task
    assert r.metadata["cancelled"] and r.is_error
    assert await _until(lambda: not _alive(grandchild)), "the grandchild survived the interrupt"


async def test_without_pidfd_a_waiter_thread_reports_the_exit(
    tool: BashTool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The fallback where no pidfd opens (an old kernel, a seccomp filter): same results,
    a timeout included."""
    calls: list[int] = []

    def no_pidfd(pid: int, flags: int = 0) -> int:
        calls.append(pid)
        raise OSError(errno.ENOSYS, "Function not implemented")

    monkeypatch.setattr(os, "pidfd_open", no_pidfd, raising=False)
    r = await tool.call(args("echo out; echo err >&2; exit 6", timeout=20_000))
    assert r.content == "out\nerr\n\n[exit code 6]"
    r = await tool.call(args("echo early; exec >&- 2>&-; sleep 0.3; exit 2", timeout=20_000))
    assert r.content == "early\n\n[exit code 2]"
    r = await tool.call(args("echo started; sleep 60", timeout=400))
    assert r.metadata["timed_out"] and r.content.startswith("started\n\n[timed out after 0.4 s")
    assert len(calls) == 3


async def test_a_loop_that_cannot_watch_the_pipe_leaves_no_process(
    tool: BashTool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A loop without ``add_reader`` (Windows' proactor): the call says it could not
    start, and the process it had started is killed and reaped, not left to run."""
    loop = asyncio.get_running_loop()

    def refuse(*a: object) -> None:
        raise NotImplementedError("no add_reader here")

    monkeypatch.setattr(loop, "add_reader", refuse)
    mark = tmp_path / "ran"
    r = await tool.call(args(f"sleep 0.5; touch {mark}"))
    monkeypatch.undo()
    assert r.is_error and r.content.startswith("bash: could not start bash: no add_reader")
    await asyncio.sleep(1.0)
    assert not mark.exists(), "the started process ran on"


@pytest.mark.skipif(not pidfd_works(), reason="no pidfd on this system")
def test_a_child_dropped_with_its_loop_closes_its_pidfd() -> None:
    """A call's loop ends before the child does (an interrupt, then the cell's loop
    closes): the pidfd is not left open."""
    import gc

    from nb_tools.builtin._child import Child

    async def start() -> Child:
        return Child(["sleep", "0.5"], cwd="/", env={}, on_output=lambda b: None)

    def pidfd_at(fd: int) -> bool:
        try:
            return "pidfd" in os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            return False

    loop = asyncio.new_event_loop()
    child = loop.run_until_complete(start())
    fd, pid = child._pidfd, child.pid
    assert pidfd_at(fd)
    with warnings.catch_warnings():  # Popen says the process still runs: it does
        warnings.simplefilter("ignore", ResourceWarning)
        del child
        loop.close()
        gc.collect()
    try:
        assert not pidfd_at(fd)
    finally:
        os.waitpid(pid, 0)


async def test_the_sandboxed_command_leads_its_own_session(tmp_path: Path) -> None:
    """bubblewrap is started in its own process group only (a new session would cost a
    scheduler autogroup); the command inside still gets a session of its own
    (bubblewrap's --new-session), so no controlling terminal of the kernel's."""
    from nb_tools.sandbox import sandbox_available

    if not sandbox_available().ok:
        pytest.skip("no sandbox here")
    tool = BashTool(Workspace(tmp_path), sandbox="read-only")
    # The session field of /proc/PID/stat, as the sandbox's PID namespace numbers it: 0
    # when the session's leader is outside the namespace (the kernel's session).
    r = await tool.call(args('read -r line < /proc/$$/stat; set -- ${line##*) }; echo "$4"'))
    sid = r.content.split("\n")[0]
    assert sid.isdigit() and sid != "0", r.content
