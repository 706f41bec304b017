"""Nothing outlives a sandboxed call: background, setsid and double-forked children end
with it; a timeout or a cancellation kills the tree; so does the death of the process that
launched the sandbox (the kernel)."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from sandbox_helpers import APPROVED, gone, pids_with, require_sandbox, run

from nb_tools.builtin._bash import BashTool
from nb_tools.builtin._workspace import Workspace
from nb_tools.tool._grant import granted


@pytest.fixture(autouse=True)
def sandbox() -> None:
    require_sandbox()


def _marker() -> str:
    return f"nbsbx-{uuid.uuid4().hex[:10]}"


LEFTOVERS = {
    "background": "sh -c 'sleep 1000; : {m}' &",
    "nohup disown": "nohup sh -c 'sleep 1000; : {m}' >/dev/null 2>&1 & disown",
    "setsid": "setsid sh -c 'sleep 1000; : {m}' &",
    "double fork": "( ( sh -c 'sleep 1000; : {m}' & ) & )",
    "daemon python": (
        "python3 -c 'import os,time\nif os.fork(): raise SystemExit\nos.setsid()\n"
        'if os.fork(): raise SystemExit\nos.execvp("sh", ["sh", "-c", "sleep 1000; : {m}"])\' '
    ),
}


@pytest.mark.parametrize("kind", sorted(LEFTOVERS))
@pytest.mark.parametrize("approved", [False, True])
async def test_no_process_left_after_the_call(kind: str, approved: bool, ws: Path) -> None:
    m = _marker()
    started = LEFTOVERS[kind].format(m=m) + "\nsleep 0.3\necho DONE$((40 + 2))"
    r = await run(ws, started, approved=approved)
    assert "DONE42" in r.content and not r.is_error
    assert await gone(m), f"{kind}: a process with {m} survived the call: {pids_with(m)}"


async def test_positive_control_outside_the_sandbox_the_child_survives(ws: Path) -> None:
    m = _marker()
    r = await run(ws, LEFTOVERS["setsid"].format(m=m) + "\nsleep 0.3", approved=True, sandbox="off")
    assert not r.is_error
    try:
        assert pids_with(m), "the check for leftovers cannot see a surviving child"
    finally:
        for pid in pids_with(m):  # setsid: the marked shell leads its group (with its sleep)
            os.killpg(pid, signal.SIGKILL)
        await gone(m)
        await asyncio.sleep(0.2)  # let the loop see the child's pipe close


@pytest.mark.parametrize("approved", [False, True])
async def test_timeout_kills_the_tree(approved: bool, ws: Path) -> None:
    m = _marker()
    command = f"sh -c 'trap \"\" TERM; sleep 1000; : {m}' & setsid sh -c 'sleep 1000; : {m}' & wait"
    r = await run(ws, command, approved=approved, timeout_ms=800)
    assert r.metadata["timed_out"] and r.is_error
    assert await gone(m), pids_with(m)


async def test_cancel_kills_the_tree(ws: Path) -> None:
    m = _marker()
    tool = BashTool(Workspace(ws), kill_grace=0.3)
    # Only the inner shell's command line holds the expanded marker (not bwrap's).
    command = f'M={m}; echo started; setsid sh -c "sleep 1000; : $M-in" & wait'
    with granted(APPROVED):
        task = asyncio.ensure_future(tool.call(json.dumps({"command": command})))
        for _ in range(100):
            if pids_with(f"{m}-in"):
                break
            await asyncio.sleep(0.05)
        assert pids_with(f"{m}-in")
        task.cancel()
        r = await task
    assert r.metadata["cancelled"]
    assert await gone(m), pids_with(m)


async def test_killing_the_launcher_kills_the_sandbox(ws: Path) -> None:
    """The kernel dies (SIGKILL): --die-with-parent takes the sandbox with it."""
    m = _marker()
    code = (
        "import asyncio, json\n"
        "from nb_tools.builtin._bash import BashTool\n"
        "from nb_tools.builtin._workspace import Workspace\n"
        f"t = BashTool(Workspace({str(ws)!r}), sandbox='read-only')\n"
        f"asyncio.run(t.call(json.dumps({{'command': \"setsid sh -c 'sleep 1000; : {m}' & wait\"}})))\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    kernel = subprocess.Popen([sys.executable, "-c", code], env=env)
    try:
        for _ in range(200):
            if pids_with(m):
                break
            await asyncio.sleep(0.05)
        assert pids_with(m), "the sandboxed command never started"
    finally:
        kernel.kill()
        kernel.wait()
    assert await gone(m), pids_with(m)
