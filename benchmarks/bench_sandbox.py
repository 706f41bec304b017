"""Shell commands inside the sandbox (bubblewrap) vs the same commands run plainly.

    python benchmarks/bench_sandbox.py [--repeat N]

Each case runs ``bash -c CMD`` N times, sandboxed and plain alternating (so load from
elsewhere hits both), and prints the medians, the time the sandbox adds per call and the
ratio. "Sandboxed" includes the per-call Python work (``prepare``: masks, the ``.env``
scan of the workspace, the environment), as the bash tool pays it. Target: at most 15 ms
added per call (median). Cases: ``true``, ``ls`` in the workspace, and ``git status`` on a
2,000-file git repository (the workspace-write sandbox, the mode of approved calls).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from nb_tools.sandbox import SandboxPolicy, prepare, sandbox_available


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


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=40)
    n = ap.parse_args().repeat
    found = sandbox_available()
    if not found.ok:
        raise SystemExit(f"bench_sandbox: {found.reason}")
    print(f"{found.version}; {n} runs per case, medians; {os.cpu_count()} cores")
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
