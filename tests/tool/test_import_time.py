from __future__ import annotations

import json
import subprocess
import sys

PROBE = """
import json, sys, time
start = time.perf_counter()
import nb_tools
elapsed = time.perf_counter() - start
heavy = ["IPython", "ipywidgets", "anthropic", "matplotlib", "pandas", "PIL", "pydantic"]
print(json.dumps({"seconds": elapsed, "loaded": [m for m in heavy if m in sys.modules]}))
"""


def probe() -> dict[str, object]:
    out = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, check=True, timeout=120
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_import_leaves_heavy_packages_out() -> None:
    found = probe()
    assert found["loaded"] == []


def test_import_time_is_reported() -> None:
    probe()  # warm the file cache
    seconds = min(float(probe()["seconds"]) for _ in range(3))
    print(f"\nimport nb_tools: {seconds * 1000:.1f} ms (best of 3, fresh interpreters)")
    assert seconds > 0  # reported, not gated: timings never gate a unit test
