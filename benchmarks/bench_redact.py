"""``redact_secret_text`` (what every no-click channel calls) on 10 MB of text of three
kinds: Python source (this Python's site-packages), a log of short uniform lines, and
one-character lines (the ``read_file`` worst case), with one secret-named variable in the
environment (its value and its encoded copies are looked for too).

    python benchmarks/bench_redact.py [--repeat N] [--against TREE]

``--against TREE``: the same figures for another checkout of nb_tools (its folder that
holds ``nb_tools/``), each run in a fresh process, alternating with this tree's so that
load from elsewhere hits both; ratios are new/old. Figures are medians of N; CPU time
(this process) is the steadier one on a busy machine. Prints the load average.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

SIZE = 10_000_000
HERE = Path(__file__).resolve().parents[1]


def texts() -> dict[str, str]:
    site = Path(sysconfig.get_paths()["purelib"])
    parts: list[str] = []
    size = 0
    for path in sorted(site.rglob("*.py")):
        try:
            parts.append(path.read_text(errors="replace"))
        except OSError:
            continue
        size += len(parts[-1])
        if size > SIZE:
            break
    log = "".join(
        f"2026-12-02 08:00:{i % 60:02d} INFO worker-{i % 7} request id={i} took {i % 97} ms "
        "path=/api/v1/items\n"
        for i in range(SIZE // 80)
    )
    return {"code": "\n".join(parts)[:SIZE], "log": log[:SIZE], "short lines": "x\n" * (SIZE // 2)}


def measure(repeat: int) -> dict[str, tuple[float, float]]:
    """``{kind: (wall, cpu)}`` medians in seconds, in this process."""
    from nb_tools.sandbox import redact_secret_text

    out = {}
    for kind, text in texts().items():
        walls, cpus = [], []
        for _ in range(repeat):
            w, c = time.perf_counter(), time.process_time()
            redact_secret_text(text)
            walls.append(time.perf_counter() - w)
            cpus.append(time.process_time() - c)
        out[kind] = (statistics.median(walls), statistics.median(cpus))
    return out


def _child(tree: Path, repeat: int) -> dict[str, tuple[float, float]]:
    code = (
        "import json, sys; sys.path.insert(0, sys.argv[1]); sys.path.insert(1, sys.argv[2]);"
        "import bench_redact as b; print(json.dumps(b.measure(int(sys.argv[3]))))"
    )
    env = {**os.environ, "NB_BENCH_API_KEY": "Zz9-bench-secret-value-123"}
    env.pop("PYTHONPATH", None)
    args = [sys.executable, "-c", code, str(tree), str(HERE / "benchmarks"), str(repeat)]
    done = subprocess.run(args, env=env, capture_output=True, text=True, check=True, cwd="/")
    return {k: tuple(v) for k, v in json.loads(done.stdout).items()}  # type: ignore[misc]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--against", type=Path)
    a = ap.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f}")
    trees = [HERE] + ([a.against.resolve()] if a.against else [])
    runs: dict[Path, list[dict[str, tuple[float, float]]]] = {t: [] for t in trees}
    for _ in range(a.rounds):
        for tree in trees:
            runs[tree].append(_child(tree, a.repeat))
    for kind in runs[HERE][0]:
        line = [f"{kind:12}"]
        for tree in trees:
            wall = statistics.median(r[kind][0] for r in runs[tree])
            cpu = statistics.median(r[kind][1] for r in runs[tree])
            label = "this" if tree == HERE else "against"
            line.append(f"{label}: wall {wall:.2f} s, cpu {cpu:.2f} s")
        if a.against:
            new = statistics.median(r[kind][1] for r in runs[HERE])
            old = statistics.median(r[kind][1] for r in runs[trees[1]])
            line.append(f"cpu ratio {new / old:.2f}")
        print("  ".join(line))
    print(f"load average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
