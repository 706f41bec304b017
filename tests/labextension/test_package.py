"""The JupyterLab extension as shipped: installed and enabled, built from this source, and
rendering the MIME type the Python side displays. No browser needed."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from jupyter_core.paths import jupyter_path

from nb_tools.jupyter import TRANSCRIPT_MIME

REPO = Path(__file__).resolve().parents[2]
SOURCE = REPO / "labextension"
PACKAGE = json.loads((SOURCE / "package.json").read_text())
NAME = PACKAGE["name"]
HOW_TO_INSTALL = "install nb_tools first: `pip install .` (or `pip install -e .` for development)"


def installed_dir() -> Path:
    for root in jupyter_path("labextensions"):
        candidate = Path(root) / NAME
        if (candidate / "package.json").exists():
            return candidate
    pytest.fail(
        f"{NAME} is not in any labextensions dir ({jupyter_path('labextensions')}); "
        f"{HOW_TO_INSTALL}"
    )


def test_labextension_list_shows_it_enabled_and_ok() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "jupyter", "labextension", "list"],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    text = re.sub(r"\x1b\[[0-9;]*m", "", out.stdout + out.stderr)
    lines = [line.split() for line in text.splitlines() if NAME in line.split()]
    assert lines, f"{NAME} missing from `jupyter labextension list`; {HOW_TO_INSTALL}:\n{text}"
    assert lines[0][:4] == [NAME, f"v{PACKAGE['version']}", "enabled", "OK"], text
    assert "(python, nb_tools)" in " ".join(lines[0]), text


def test_installed_extension_is_a_complete_build_of_this_package() -> None:
    where = installed_dir()
    built = json.loads((where / "package.json").read_text())
    assert built["name"] == NAME
    assert built["version"] == PACKAGE["version"]
    assert built["jupyterlab"]["_build"]["mimeExtension"] == "./mimeExtension"
    assert (where / built["jupyterlab"]["_build"]["load"]).is_file()
    install = json.loads((where / "install.json").read_text())
    assert install["packageManager"] == "python"
    assert install["packageName"] == "nb_tools"


def test_renderer_handles_the_mime_type_python_displays() -> None:
    source = (SOURCE / "src" / "render.ts").read_text()
    declared = re.findall(r"export const MIME_TYPE = '([^']+)';", source)
    assert declared == [TRANSCRIPT_MIME]
    static = installed_dir() / "static"
    assert any(TRANSCRIPT_MIME in p.read_text(errors="replace") for p in static.glob("*.js")), (
        f"no built file in {static} mentions {TRANSCRIPT_MIME}; the installed build is stale: "
        "rebuild with `pip install .`"
    )


def test_nothing_built_is_committed() -> None:
    if shutil.which("git") is None or not (REPO / ".git").exists():
        pytest.skip("not a git checkout")
    files = subprocess.run(
        ["git", "ls-files", "labextension"], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout.split()
    built_dirs = {"node_modules", "lib", "lib-test", "dist", ".yarn"}
    built = [f for f in files if f.split("/")[1] in built_dirs]
    assert built == []
    assert {"labextension/package.json", "labextension/yarn.lock"} <= set(files)


def test_the_live_marker_and_the_lost_run_note_match_the_kernel_side() -> None:
    """``src/cells.ts`` finds a live view by the MIME type ``_view.py`` displays it with,
    and shows the same note the view's ``text/plain`` carries."""
    from nb_tools.jupyter._view import LIVE_MIME, LOST_RUN_TEXT

    source = (SOURCE / "src" / "cells.ts").read_text()
    assert f"export const LIVE_MIME = '{LIVE_MIME}';" in source
    declared = re.search(r"LOST_RUN_TEXT =\s*(.*?);\n", source, re.S)
    assert declared is not None, "src/cells.ts no longer declares LOST_RUN_TEXT"
    assert "".join(re.findall(r"'([^']*)'", declared.group(1))) == LOST_RUN_TEXT
