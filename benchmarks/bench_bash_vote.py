"""The bash read-only vote and rule check: what a bash call costs before it runs.

For typical commands: the tree-sitter parse alone, parse + vote (cold: a new command
string), the vote again (the parse is cached), and a rule check with a deny and two allow
rules, next to starting ``bash -c true`` (what every call pays anyway).

Run: ``python benchmarks/bench_bash_vote.py``. Target: parse + vote well under 1 ms, a
small fraction of one bash start.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import time
from collections.abc import Callable

from nb_tools.builtin._bash_readonly import is_read_only
from nb_tools.permissions import PermissionRules, _shell

COMMANDS = [
    "ls -la",
    "git status",
    "git log --oneline -10",
    "grep -rn 'def main' . | head -20",
    "find . -name '*.py' -type f",
    "cat README.md | wc -l",
    "cd src && ls && cat a.txt | sort | uniq -c",
    "for f in a b c; do echo $f; done > /dev/null",
]


def _median_us(fn: Callable[[], object], n: int = 300) -> float:
    times = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1e6


def main() -> None:
    root = os.getcwd()
    rules = PermissionRules()
    rules.deny("bash(rm:*)")
    rules.allow("bash(git log:*)", "bash(head:*)")
    is_read_only("ls", root)  # load the language once
    bash_us = _median_us(lambda: subprocess.run(["bash", "-c", "true"], check=True), 50)
    print(f"{'command':46} {'parse':>8} {'vote cold':>10} {'vote hot':>9} {'rules':>8}  (µs)")
    for c in COMMANDS:

        def cold(c: str = c) -> None:
            _shell.parse_script.cache_clear()
            is_read_only(c, root)

        parse = _median_us(lambda c=c: _shell._parse(c, 0, ""))
        vote_cold = _median_us(cold)
        vote_hot = _median_us(lambda c=c: is_read_only(c, root))
        check = _median_us(lambda c=c: rules.check("bash", {"command": c}))
        print(f"{c!r:46} {parse:8.0f} {vote_cold:10.0f} {vote_hot:9.0f} {check:8.0f}")
    print(f"bash -c true: {bash_us:.0f} µs")


if __name__ == "__main__":
    main()
