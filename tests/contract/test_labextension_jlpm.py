"""The labextension's own tests (`jlpm test` in labextension/: its renderer under jsdom
against the transcript goldens), run from the one test command."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

LABEXTENSION = Path(__file__).resolve().parents[2] / "labextension"


def test_jlpm_test_passes() -> None:
    if shutil.which("node") is None:
        pytest.skip("no Node.js on this machine (scripts/setup.sh installs it)")
    jlpm = shutil.which("jlpm")
    assert jlpm, "jlpm not found: it comes with jupyterlab (pip install -e '.[dev]')"
    if not (LABEXTENSION / "node_modules" / "jsdom").is_dir():
        pytest.fail(
            "labextension/node_modules lacks jsdom: run `cd labextension && jlpm install` "
            "(scripts/setup.sh does)"
        )
    done = subprocess.run(
        [jlpm, "test"], cwd=LABEXTENSION, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, f"jlpm test failed:\n{done.stdout[-6000:]}\n{done.stderr[-3000:]}"
    assert "# fail 0" in done.stdout, done.stdout[-3000:]
