"""grep and glob through nb_tools vs running ripgrep directly, on this Python's
site-packages (a large real tree), plus the pure-Python fallback.

    python benchmarks/bench_search.py [--tree DIR] [--repeat N]

Each figure is the best of N runs after a warm-up, ours and direct rg alternating so
that load from elsewhere hits both. Wall time is what the user waits; CPU time (this
process plus its children) is the work done, steadier on a busy machine.
"Direct rg" runs the binary with the same listing options the tool uses
(--no-require-git --no-ignore-global) and reads its whole output, as the tool must.
The grep tool runs against ``rg -l`` for three patterns, one of them broad.
Targets: grep within 1.3x of direct rg, glob within 1.3x of ``rg --files``. glob sorts
by modification time, so it stats every match; ``rg --files --sortr modified`` is the
direct way to the same answer and is shown too.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import subprocess
import sysconfig
import time
from collections.abc import Awaitable, Callable
from typing import Any

from nb_tools.builtin._glob import GlobTool
from nb_tools.builtin._grep import GrepTool
from nb_tools.builtin._rg import find_rg
from nb_tools.builtin._workspace import Workspace

COMMON = ["--no-config", "--no-require-git", "--no-ignore-global", "--color", "never"]
BROAD = ("class \\w+Error", "import")
"""With ``--pattern``: three patterns for ``grep`` against ``rg -l``, the last one broad
(it matches most Python files: the protection check and the output dominate)."""


def _load() -> str:
    return ", ".join(f"{x:.2f}" for x in os.getloadavg())


def _cpu() -> float:
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def best_pair(
    ours: Callable[[], Any], theirs: Callable[[], Any], repeat: int
) -> tuple[float, float, float, float]:
    """Best wall time and best CPU time (ours + children) of each, measured alternately so
    that a load spike hits both sides."""
    ours(), theirs()  # warm-up
    samples: dict[int, list[tuple[float, float]]] = {0: [], 1: []}
    for _ in range(repeat):
        for side, fn in enumerate((ours, theirs)):
            start, cpu = time.perf_counter(), _cpu()
            fn()
            samples[side].append((time.perf_counter() - start, _cpu() - cpu))
    (w0, c0), (w1, c1) = ((min(w for w, _ in s), min(c for _, c in s)) for s in samples.values())
    return w0, w1, c0, c1


def direct(rg: str, tree: str, *args: str) -> Callable[[], Any]:
    def run() -> bytes:
        return subprocess.run(
            [rg, *COMMON, *args], cwd=tree, capture_output=True, check=False
        ).stdout

    return run


def tool_call(tool: Any, args: dict[str, Any]) -> Callable[[], Any]:
    raw = json.dumps(args)

    def run() -> Any:
        result = asyncio.run(_call(tool.call, raw))
        if result.is_error:
            raise SystemExit(f"{tool.info().name} failed: {result.content}")
        return result

    return run


async def _call(fn: Callable[[str], Awaitable[Any]], raw: str) -> Any:
    return await fn(raw)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", default=sysconfig.get_paths()["purelib"])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--pattern", default="def __init__")
    parser.add_argument("--skip-python", action="store_true", help="skip the slow fallback")
    a = parser.parse_args()
    rg = find_rg()
    if rg is None:
        raise SystemExit("no rg binary: install ripgrep==14.1.0")
    tree, n = a.tree, a.repeat
    ws = Workspace(tree)
    grep_rg, grep_py = GrepTool(ws, rg=rg), GrepTool(ws, rg=None)
    glob_rg, glob_py = GlobTool(ws, rg=rg), GlobTool(ws, rg=None)
    files = direct(rg, tree, "--files")()
    size = subprocess.run(["du", "-sh", tree], capture_output=True, text=True).stdout.split()[0]
    count = files.count(b"\n")
    print(f"tree: {tree}\n      {count} files rg searches, {size} on disk")
    print(f"rg:   {rg}; best of {n} runs; load average (1, 5, 15 min) {_load()}\n")

    rows: list[tuple[str, float, float, float, float, str]] = []

    def row(name: str, ours: Callable[[], Any], theirs: Callable[[], Any], vs: str) -> None:
        w0, w1, c0, c1 = best_pair(ours, theirs, n)
        rows.append((name, w0, w1, c0, c1, vs))
        print(f"  measured {name}: {w0 * 1000:.0f} ms vs {w1 * 1000:.0f} ms", flush=True)

    p = a.pattern
    for pattern in (p, *BROAD):
        row(
            f"grep -l {pattern!r}"[:28],
            tool_call(grep_rg, {"pattern": pattern}),
            direct(rg, tree, "-l", "-e", pattern),
            "rg -l",
        )
    row(
        "grep content (-n)",
        tool_call(grep_rg, {"pattern": p, "output_mode": "content", "head_limit": 0}),
        direct(rg, tree, "-n", "--no-heading", "-e", p),
        "rg -n",
    )
    row(
        "grep count",
        tool_call(grep_rg, {"pattern": p, "output_mode": "count"}),
        direct(rg, tree, "-c", "-e", p),
        "rg -c",
    )
    row(
        "grep glob=*.py",
        tool_call(grep_rg, {"pattern": p, "glob": "*.py"}),
        direct(rg, tree, "-l", "-g", "*.py", "-e", p),
        "rg -l -g",
    )
    row(
        "glob **/*.py (mtime sort)",
        tool_call(glob_rg, {"pattern": "**/*.py", "limit": 100}),
        direct(rg, tree, "--files", "-g", "**/*.py"),
        "rg --files -g",
    )
    row(
        "glob **/*.py (mtime sort)",
        tool_call(glob_rg, {"pattern": "**/*.py", "limit": 100}),
        direct(rg, tree, "--files", "-g", "**/*.py", "--sortr", "modified"),
        "rg --files -g --sortr modified",
    )
    row(
        "glob *.md",
        tool_call(glob_rg, {"pattern": "*.md"}),
        direct(rg, tree, "--files", "-g", "*.md"),
        "rg --files -g",
    )
    if not a.skip_python:
        row(
            "grep, Python fallback",
            tool_call(grep_py, {"pattern": p}),
            direct(rg, tree, "-l", "-e", p),
            "rg -l",
        )
        row(
            "glob, Python walker",
            tool_call(glob_py, {"pattern": "**/*.py"}),
            direct(rg, tree, "--files", "-g", "**/*.py"),
            "rg --files -g",
        )

    print(
        f"\n{'case':<28}{'wall ours':>10}{'direct':>9}{'ratio':>7}"
        f"{'cpu ours':>10}{'direct':>9}{'ratio':>7}  direct is"
    )
    for name, w0, w1, c0, c1, vs in rows:
        print(
            f"{name:<28}{w0 * 1000:>8.0f}ms{w1 * 1000:>7.0f}ms{w0 / w1:>6.2f}x"
            f"{c0 * 1000:>8.0f}ms{c1 * 1000:>7.0f}ms{c0 / c1:>6.2f}x  {vs}"
        )
    print(f"load average (1, 5, 15 min) at the end: {_load()}")


if __name__ == "__main__":
    main()
