"""Where one unapproved ``ls`` through the ``bash`` tool spends its time, layer by layer.

    python benchmarks/bench_bash_call.py [--repeat N] [--workspace small|packages]

Runs these side by side, interleaved (load from elsewhere hits each alike), on a generated
workspace (``packages``, the default: a small repository with a ``node_modules`` and a
``.venv``):

* ``bash -c ls`` started plainly (``subprocess.run``): what a user would compare with;
* bubblewrap alone (the minimal command line: system read-only, private ``/tmp``, the
  workspace, no network), no Python work;
* our command line (``prepare`` once, then ``subprocess.run`` of its argv each time): what
  the extra mounts cost, no Python work per call;
* ``prepare()`` alone: the per-call Python work that builds the command line;
* ``BashTool.run`` on one event loop: the launch, the pipe and the exit as the tool does
  them;
* an ``Agent`` run (a scripted model asks for the ``ls``, no click: the read-only vote),
  each in its own ``asyncio.run``, as ``bench_sandbox.py --only agent`` times it (a
  script's way);
* the same run on the one event loop the tool row uses (a notebook's way: the kernel's
  loop runs it), cold, so the layers show the Agent's own work apart from what
  ``asyncio.run`` adds (a new loop, the Ctrl-C handler, the loop's shutdown).

The tool and Agent rows run twice: "cold" with the ready sandboxes switched off
(``NB_TOOLS_READY_SANDBOX=0``: bubblewrap starts at the call), and on the ready path (the
sandbox made after the previous call, during a pause of ``--gap`` seconds before the call,
as a model's reply would leave; the CPU the background spends making it in that pause is
the ``(made ahead)`` row, and counts toward the call).

It prints the median wall and CPU time of each (CPU: this process and its children), what
each layer adds over the one before, and the load average. Target (issue 20): the Agent
row at most 15 ms over plain bash (median).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _workspaces import add_packages, bwrap_alone, small_repo

from nb_tools.sandbox import READY_ENV, SandboxPolicy, prepare, sandbox_available


def _cpu() -> float:
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def _no_click(request: Any) -> bool:
    raise SystemExit("bench_bash_call: the ls asked for a click; it must run without one")


def cases(root: Path, bwrap: str) -> dict[str, Callable[[], object]]:
    from nb_tools.agent import Agent
    from nb_tools.builtin import builtin_tools
    from nb_tools.testing import ScriptedModel, call, reply

    tools = builtin_tools(root, include=["bash"])
    bash = tools[0]
    policy = SandboxPolicy(mode="read-only", workspace=root).unapproved()
    launch = prepare(["bash", "-c", "ls"], policy, cwd=root)
    loop = asyncio.new_event_loop()

    def make() -> Agent:
        script = [reply("", call("bash", id="b0", command="ls")), reply("ok")]
        return Agent(ScriptedModel(script), tools=tools, approval="ask", approver=_no_click)

    def agent() -> float:
        """The run's wall time; the Agent's construction is not timed (as in
        bench_sandbox)."""
        a = make()
        t = time.perf_counter()
        asyncio.run(a.run("list the files"))
        return time.perf_counter() - t

    def agent_one_loop() -> float:
        a = make()
        t = time.perf_counter()
        loop.run_until_complete(a.run("list the files"))
        return time.perf_counter() - t

    def tool_run() -> None:
        r = loop.run_until_complete(bash.run("ls", 30, policy=policy))
        if r.metadata.get("exit_code") != 0:
            raise SystemExit(f"bench_bash_call: ls failed: {r.content[-400:]}")

    def cold(fn: Callable[[], object]) -> Callable[[], object]:
        def run_cold() -> object:
            os.environ[READY_ENV] = "0"
            try:
                return fn()
            finally:
                os.environ.pop(READY_ENV, None)

        return run_cold

    run = subprocess.run
    return {
        "bash -c ls": lambda: run(["bash", "-c", "ls"], cwd=root, capture_output=True),
        "bwrap alone": lambda: run(bwrap_alone(bwrap, root), capture_output=True),
        "our command line": lambda: run(
            launch.argv, cwd=launch.cwd, env=launch.env, capture_output=True
        ),
        "prepare()": lambda: prepare(["bash", "-c", "ls"], policy, cwd=root),
        "BashTool.run cold": cold(tool_run),
        "Agent cold": cold(agent),
        "Agent cold, one loop": cold(agent_one_loop),
        "BashTool.run": tool_run,
        "Agent": agent,
    }


READY = ("BashTool.run", "Agent")
MADE = "(made ahead)"


def measure(root: Path, n: int, bwrap: str, gap: float) -> None:
    table = cases(root, bwrap)
    labels = [*table, MADE]
    wall: dict[str, list[float]] = {k: [] for k in labels}
    cpu: dict[str, list[float]] = {k: [] for k in labels}
    for fn in table.values():  # warm-up
        fn()
    for _ in range(n):
        for label, fn in table.items():
            if label in READY:  # a model's reply: the next sandbox is made meanwhile
                c = _cpu()
                time.sleep(gap)
                cpu[MADE].append(_cpu() - c)
                wall[MADE].append(0.0)
            t, c = time.perf_counter(), _cpu()
            took = fn()
            wall[label].append(took if isinstance(took, float) else time.perf_counter() - t)
            cpu[label].append(_cpu() - c)
    med = {k: statistics.median(v) * 1e3 for k, v in wall.items()}
    cmed = {k: statistics.median(v) * 1e3 for k, v in cpu.items()}
    plain = med["bash -c ls"]
    print(f"{'case':<20}{'wall ms':>9}{'over bash':>11}{'CPU ms':>9}")
    for k in labels:
        over = "" if k in ("prepare()", MADE) else f"{med[k] - plain:>11.2f}"
        shown = "" if k == MADE else f"{med[k]:>9.2f}"
        print(f"{k:<20}{shown:>9}{over:>11}{cmed[k]:>9.2f}")
    print(
        f"layers: mounts {med['our command line'] - med['bwrap alone']:+.2f} ms, "
        f"tool over its command line {med['BashTool.run cold'] - med['our command line']:+.2f} "
        f"ms, Agent over the tool {med['Agent cold'] - med['BashTool.run cold']:+.2f} ms (on one "
        f"loop {med['Agent cold, one loop'] - med['BashTool.run cold']:+.2f} ms, asyncio.run "
        f"{med['Agent cold'] - med['Agent cold, one loop']:+.2f} ms); "
        f"ready path: tool {med['BashTool.run'] - med['BashTool.run cold']:+.2f} ms, Agent "
        f"{med['Agent'] - med['Agent cold']:+.2f} ms against cold; CPU a call on the ready "
        f"path with its making {cmed['Agent'] + cmed[MADE]:.2f} ms (cold {cmed['Agent cold']:.2f})"
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=40)
    ap.add_argument("--workspace", choices=["small", "packages"], default="packages")
    ap.add_argument("--gap", type=float, default=0.05, help="seconds before a ready-path call")
    a = ap.parse_args()
    found = sandbox_available()
    if not found.ok:
        raise SystemExit(f"bench_bash_call: {found.reason}")
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"{found.version}; {a.repeat} runs per case; {os.cpu_count()} cores; load {load}")
    base = Path(tempfile.mkdtemp(prefix="nbt-bench-"))
    try:
        root = base / "proj"
        root.mkdir()
        small_repo(root)
        if a.workspace == "packages":
            add_packages(root)
        time.sleep(1.0)  # the tools' background scan
        measure(root, a.repeat, found.bwrap or "bwrap", a.gap)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"load average (1, 5, 15 min) at the end: {load}")


if __name__ == "__main__":
    main()
