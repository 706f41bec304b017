"""Shell commands inside the sandbox (bubblewrap) vs the same commands run plainly.

    python benchmarks/bench_sandbox.py [--repeat N] [--only agent|prepare]

First, an unapproved ``ls`` through ``Agent`` (a scripted model asks for it; the read-only
vote lets it run without a click, in the read-only sandbox), against ``bash -c ls`` and
against bubblewrap alone (the minimal command line, no Python work), on three generated
workspaces: a small git repository; the same with a real-looking ``node_modules`` and
``.venv``; and that with 50,000 more files. It prints the medians, the time added over
plain bash and the ratios, and the first call's time in a fresh process (nothing scanned
yet), at once and one second after the tools were made (the scan starts then; a call at
once reads it for up to 30 ms and runs with the folders not read yet masked), wall and
CPU time, and the load average (the figures mean little on a busy machine). Targets: at
most 15 ms added (median) on all three, the first call under 150 ms.

The Agent runs twice per round: "cold", with the ready sandboxes switched off
(``NB_TOOLS_READY_SANDBOX=0``: bubblewrap starts at the call, as before they existed), and
on the ready path, after a pause of ``--gap`` seconds (a model's reply: the sandbox for the
call is made meanwhile, and the CPU of that pause counts toward the call). "2nd at once":
what a second call adds to a run when it comes right after the first (no pause: its
sandbox is still being made, so it starts cold).

Each case runs ``bash -c CMD`` N times, sandboxed and plain alternating (so load from
elsewhere hits both), and prints the medians, the time the sandbox adds per call and the
ratio. "Sandboxed" includes the per-call Python work (``prepare``: masks, the ``.env``
scan of the workspace, the environment), as the bash tool pays it. Target: at most 15 ms
added per call (median). Cases: ``true``, ``ls`` in the workspace, and ``git status`` on a
2,000-file git repository (the workspace-write sandbox, the mode of approved calls).
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
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _workspaces import add_many_files, add_packages, bwrap_alone, small_repo

from nb_tools.sandbox import READY_ENV, SandboxPolicy, prepare, sandbox_available


def _repo(root: Path, files: int = 2000) -> None:
    for i in range(files):
        d = root / f"pkg{i // 100:02d}"
        d.mkdir(exist_ok=True)
        (d / f"mod{i:04d}.py").write_text(f"x = {i}\n")
    git = ["git", "-C", str(root), "-c", "user.email=b@b", "-c", "user.name=b"]
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "init"], check=True)
    subprocess.run(
        ["git", "-C", str(root), "status", "--porcelain"], check=True, capture_output=True
    )


def _load() -> str:
    return ", ".join(f"{x:.2f}" for x in os.getloadavg())


def _cpu() -> float:
    """CPU seconds of this process and its finished children (less sensitive than wall
    time to other load on the machine)."""
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def _plain(cmd: str, root: Path) -> tuple[float, float]:
    t, c = time.perf_counter(), _cpu()
    subprocess.run(["bash", "-c", cmd], cwd=root, capture_output=True, check=True)
    return time.perf_counter() - t, _cpu() - c


def _sandboxed(cmd: str, policy: SandboxPolicy) -> tuple[float, float]:
    t, c = time.perf_counter(), _cpu()
    launch = prepare(["bash", "-c", cmd], policy)
    subprocess.run(launch.argv, cwd=launch.cwd, env=launch.env, capture_output=True, check=True)
    return time.perf_counter() - t, _cpu() - c


def _prepare_only(policy: SandboxPolicy, n: int) -> float:
    times = []
    for _ in range(n):
        t = time.perf_counter()
        prepare(["true"], policy)
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def _breakdown(root: Path, bwrap: str, n: int) -> None:
    """Where a sandboxed ``true`` spends its time: bubblewrap's start, the namespaces, our
    mounts (run interleaved, medians)."""
    launch = prepare(["true"], SandboxPolicy(mode="workspace-write", workspace=root))
    ro = [bwrap, "--ro-bind", "/", "/"]
    steps = {
        "exec true": ["true"],
        "bwrap --ro-bind / /": [*ro, "--", "true"],
        "+ --dev --proc": [*ro, "--dev", "/dev", "--proc", "/proc", "--", "true"],
        "+ --unshare-all": [*ro, "--dev", "/dev", "--proc", "/proc", "--unshare-all", "--", "true"],
        f"ours ({launch.argv.count('--')} sep, {len(launch.argv)} args)": launch.argv,
    }
    times: dict[str, list[float]] = {k: [] for k in steps}
    for _ in range(n):
        for label, argv in steps.items():
            t = time.perf_counter()
            subprocess.run(argv, env=launch.env, capture_output=True, check=False)
            times[label].append(time.perf_counter() - t)
    print("breakdown of a sandboxed `true` (no Python work):")
    for label, ts in times.items():
        print(f"  {label:<36}{statistics.median(ts) * 1e3:>8.2f} ms")


def _agent_ls_once(tools: list[Any], calls: int = 1) -> tuple[float, str]:
    """One unapproved ``ls`` (or ``calls`` of them, one after the other) through ``Agent``:
    wall seconds of the run and the (first) result."""
    from nb_tools.agent import Agent
    from nb_tools.model import ToolResultBlock
    from nb_tools.testing import ScriptedModel, call, reply

    script = [reply("", call("bash", id=f"b{i}", command="ls")) for i in range(calls)]
    script.append(reply("ok"))
    agent = Agent(ScriptedModel(script), tools=tools, approval="ask", approver=_no_click)
    t = time.perf_counter()
    asyncio.run(agent.run("list the files"))
    took = time.perf_counter() - t
    for m in agent.messages:
        for b in m.content:
            if isinstance(b, ToolResultBlock):
                return took, b.result.content
    return took, "(no result)"


def _no_click(request: Any) -> bool:
    raise SystemExit("bench_sandbox: the ls asked for a click; it must run without one")


def _first_call(root: Path, delay: float = 0.0) -> tuple[float, float]:
    """The first unapproved ``ls`` in a fresh Python process (nb_tools imported, nothing
    scanned or probed yet), ``delay`` seconds after the tools were made (a model's first
    reply takes longer than a second: the tools use that time): wall seconds of the call,
    and the CPU seconds the process and its children spent meanwhile (the background
    scan's included)."""
    code = (
        "import sys, time; sys.path[:0] = [sys.argv[1], sys.argv[2]]\n"
        "import bench_sandbox as b\n"
        "import nb_tools.agent, nb_tools.model, nb_tools.testing\n"
        "from nb_tools.builtin import builtin_tools\n"
        "tools = builtin_tools(sys.argv[3], include=['bash'])\n"
        "time.sleep(float(sys.argv[4]))\n"
        "c = b._cpu()\n"
        "print(b._agent_ls_once(tools)[0], b._cpu() - c)\n"
    )
    here = Path(__file__).resolve().parent
    out = subprocess.run(
        [sys.executable, "-c", code, str(here), str(here.parent), str(root), str(delay)],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    wall, cpu = out.stdout.strip().splitlines()[-1].split()
    return float(wall), float(cpu)


def _cold(fn: Any, *args: Any) -> Any:
    os.environ[READY_ENV] = "0"
    try:
        return fn(*args)
    finally:
        os.environ.pop(READY_ENV, None)


def agent_cases(n: int, bwrap: str, gap: float = 0.05) -> float:
    """The unapproved ``ls`` through ``Agent`` on the three workspaces; returns the most
    time added over plain bash (median, on the ready path)."""
    from nb_tools.builtin import builtin_tools

    print(
        f"\nunapproved `ls` through Agent, {n} runs each, medians (ms); Agent: on the ready "
        f"path ({gap * 1e3:.0f} ms pause before the call), cold: ready sandboxes off\n"
        f"{'workspace':<44}{'bash':>7}{'bwrap':>7}{'Agent':>8}{'added':>8}{'cold':>8}"
        f"{'added':>8}{'2nd at once':>12}{'first':>8}{'1st+1s':>8}"
    )
    worst = 0.0
    cpu_rows: list[str] = []
    base = Path(tempfile.mkdtemp(prefix="nbt-bench-"))
    try:
        root = base / "proj"
        root.mkdir()
        steps = [
            ("small repo", lambda: small_repo(root)),
            ("+ node_modules and .venv", lambda: add_packages(root)),
            ("+ 50,000 files", lambda: add_many_files(root)),
        ]
        for label, build in steps:
            build()
            entries = sum(len(d) + len(f) for _, d, f in os.walk(root))
            tools = builtin_tools(root, include=["bash"])
            (first, first_cpu), (later, later_cpu) = _first_call(root), _first_call(root, 1.0)
            _, content = _agent_ls_once(tools)  # warm-up, and a check of the result
            if "exit code 0" not in content:
                raise SystemExit(f"bench_sandbox: ls failed on {label}: {content[-500:]}")
            plain, alone, ours, cpu, cold, cold_cpu, two = [], [], [], [], [], [], []
            for _ in range(n):
                plain.append(_plain("ls", root))
                t, c = time.perf_counter(), _cpu()
                subprocess.run(bwrap_alone(bwrap, root), capture_output=True, check=True)
                alone.append((time.perf_counter() - t, _cpu() - c))
                c = _cpu()
                cold.append(_cold(_agent_ls_once, tools)[0])
                cold_cpu.append(_cpu() - c)
                c = _cpu()
                time.sleep(gap)  # the model's reply: the ready sandbox is made meanwhile
                ours.append(_agent_ls_once(tools)[0])
                cpu.append(_cpu() - c)
                time.sleep(gap)
                two.append(_agent_ls_once(tools, calls=2)[0])
            p, b = (statistics.median(w for w, _ in x) * 1e3 for x in (plain, alone))
            a, k = statistics.median(ours) * 1e3, statistics.median(cold) * 1e3
            second = statistics.median(two) * 1e3 - a
            cp, cb = (statistics.median(c for _, c in x) * 1e3 for x in (plain, alone))
            ca, ck = statistics.median(cpu) * 1e3, statistics.median(cold_cpu) * 1e3
            worst = max(worst, a - p)
            name = f"{label} ({entries:,} entries)"
            print(
                f"{name:<44}{p:>7.1f}{b:>7.1f}{a:>8.1f}{a - p:>8.1f}{k:>8.1f}{k - p:>8.1f}"
                f"{second:>12.1f}{first * 1e3:>8.0f}{later * 1e3:>8.0f}"
            )
            cpu_rows.append(
                f"{name:<44}{cp:>7.1f}{cb:>7.1f}{ca:>8.1f}{ca - cp:>8.1f}{ck:>8.1f}"
                f"{ck - cp:>8.1f}{first_cpu * 1e3:>8.0f}{later_cpu * 1e3:>8.0f}"
            )
    finally:
        shutil.rmtree(base, ignore_errors=True)
    print(
        "CPU time per call (this process and its children; steadier than wall time on a "
        "busy machine; the ready path's includes the pause before the call, when its sandbox "
        f"is made), medians (ms)\n{'workspace':<44}{'bash':>7}{'bwrap':>7}{'Agent':>8}"
        f"{'added':>8}{'cold':>8}{'added':>8}{'first':>8}{'1st+1s':>8}"
    )
    print("\n".join(cpu_rows))
    print(f"load average (1, 5, 15 min) at the end: {_load()}")
    verdict = "within" if worst <= 15 else "OVER"
    print(f"most added over plain bash: {worst:.1f} ms ({verdict} the 15 ms target)")
    return worst


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=40)
    ap.add_argument("--only", choices=["agent", "prepare"])
    ap.add_argument("--gap", type=float, default=0.05, help="seconds before a ready-path call")
    a = ap.parse_args()
    n = a.repeat
    found = sandbox_available()
    if not found.ok:
        raise SystemExit(f"bench_sandbox: {found.reason}")
    print(
        f"{found.version}; {n} runs per case, medians; {os.cpu_count()} cores; "
        f"load average (1, 5, 15 min) {_load()}"
    )
    if a.only != "prepare":
        agent_cases(n, found.bwrap or "bwrap", a.gap)
    if a.only == "agent":
        return
    with tempfile.TemporaryDirectory(dir=os.getcwd()) as tmp:
        root = Path(tmp) / "repo"
        root.mkdir()
        _repo(root)
        print(
            f"{'case':<28}{'plain ms':>10}{'sandbox ms':>12}{'added ms':>10}{'ratio':>8}"
            f"{'CPU added ms':>14}"
        )
        worst = 0.0
        for label, cmd, mode in [
            ("true (read-only)", "true", "read-only"),
            ("ls (read-only)", "ls", "read-only"),
            ("true (workspace-write)", "true", "workspace-write"),
            ("git status, 2000 files (ww)", "git status --porcelain", "workspace-write"),
        ]:
            policy = SandboxPolicy(mode=mode, workspace=root)  # type: ignore[arg-type]
            _plain(cmd, root), _sandboxed(cmd, policy)  # warm-up
            plain, boxed = [], []
            for _ in range(n):
                plain.append(_plain(cmd, root))
                boxed.append(_sandboxed(cmd, policy))
            p = statistics.median(w for w, _ in plain) * 1e3
            b = statistics.median(w for w, _ in boxed) * 1e3
            cpu = statistics.median(c for _, c in boxed) - statistics.median(c for _, c in plain)
            worst = max(worst, b - p)
            print(f"{label:<28}{p:>10.2f}{b:>12.2f}{b - p:>10.2f}{b / p:>7.2f}x{cpu * 1e3:>14.2f}")
        prep = _prepare_only(SandboxPolicy(mode="workspace-write", workspace=root), n) * 1e3
        print(f"of which prepare() (Python: masks, .env scan, env): {prep:.2f} ms")
        _breakdown(root, found.bwrap or "bwrap", n)
        verdict = "within" if worst <= 15 else "OVER"
        print(f"most added per call: {worst:.2f} ms ({verdict} the 15 ms target)")


if __name__ == "__main__":
    main()
