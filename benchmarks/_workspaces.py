"""Generated workspaces for the sandbox benchmarks (no network): a small git repository,
the same with a real-looking ``node_modules`` and ``.venv``, and that with 50,000 more
files in many small folders."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

__all__ = ["add_many_files", "add_packages", "bwrap_alone", "small_repo"]

_JS = "'use strict';\nmodule.exports = function (a, b) { return a + b; };\n"
_PY = "def f(x):\n    return x + 1\n"


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def small_repo(root: Path) -> None:
    """A project of ~60 files under git: sources, tests, docs, a notebook, a README."""
    for i in range(20):
        _write(root / "src" / "proj" / f"mod{i:02d}.py", _PY)
        _write(root / "tests" / f"test_mod{i:02d}.py", "def test():\n    assert True\n")
    for i in range(10):
        _write(root / "docs" / f"page{i}.md", f"# Page {i}\n")
    _write(root / "README.md", "# proj\n")
    _write(root / "pyproject.toml", "[project]\nname = 'proj'\n")
    _write(root / "analysis.ipynb", '{"cells": [], "nbformat": 4, "nbformat_minor": 5}\n')
    _write(root / ".gitignore", "node_modules/\n.venv/\n__pycache__/\ndata/\n")
    git = ["git", "-C", str(root), "-c", "user.email=b@b", "-c", "user.name=b"]
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "init"], check=True)


def add_packages(root: Path, npm: int = 700, pypi: int = 220) -> None:
    """A ``node_modules`` of ``npm`` packages (lib/, dist/, types, a few nested
    node_modules, ``.bin`` links) and a ``.venv`` of ``pypi`` packages (sub-packages,
    ``__pycache__``, dist-info, console scripts): about 4,500 folders and 40,000 entries,
    the shape of a real front-end plus data-science project."""
    nm = root / "node_modules"
    for i in range(npm):
        pkg = nm / (f"@scope{i % 30}/pkg{i}" if i % 5 == 0 else f"pkg{i}")
        _write(pkg / "package.json", f'{{"name": "pkg{i}", "version": "1.0.{i}"}}\n')
        _write(pkg / "README.md", "# pkg\n")
        _write(pkg / "LICENSE", "MIT\n")
        for j in range(8):
            _write(pkg / "lib" / f"f{j}.js", _JS)
        for j in range(4):
            _write(pkg / "dist" / f"f{j}.min.js", _JS)
        _write(pkg / "index.d.ts", "export {};\n")
        if i % 10 == 0:
            for k in range(2):
                _write(pkg / "node_modules" / f"dep{k}" / "index.js", _JS)
                _write(pkg / "node_modules" / f"dep{k}" / "package.json", "{}\n")
    (nm / ".bin").mkdir(parents=True, exist_ok=True)
    for i in range(0, npm, 7):
        link = nm / ".bin" / f"cmd{i}"
        if not link.exists():
            os.symlink(f"../pkg{i}/lib/f0.js", link)
    venv = root / ".venv"
    site = venv / "lib" / "python3.11" / "site-packages"
    _write(venv / "pyvenv.cfg", "home = /usr/bin\n")
    for name in ("activate", "pip", "jupyter", "ipython"):
        _write(venv / "bin" / name, "#!/bin/sh\n")
    for i in range(pypi):
        pkg = site / f"lib{i}"
        for sub in ("", "core", "io", "utils"):
            folder = pkg / sub if sub else pkg
            for j in range(6):
                _write(folder / f"m{j}.py", _PY)
            _write(folder / "__init__.py", "")
            for j in range(3):
                _write(folder / "__pycache__" / f"m{j}.cpython-311.pyc", "x")
        info = site / f"lib{i}-1.0.dist-info"
        for f in ("METADATA", "RECORD", "WHEEL", "INSTALLER", "top_level.txt"):
            _write(info / f, "x\n")


def add_many_files(root: Path, files: int = 50_000, per_folder: int = 50) -> None:
    """``files`` small files, ``per_folder`` to a folder, two levels deep (data/aNN/bNNN)."""
    for i in range(files):
        folder = root / "data" / f"a{i // (per_folder * 20):02d}" / f"b{i // per_folder:04d}"
        if i % per_folder == 0:
            folder.mkdir(parents=True, exist_ok=True)
        (folder / f"f{i:05d}.csv").write_text("1,2\n")


def bwrap_alone(bwrap: str, root: Path) -> list[str]:
    """The minimal sandbox: system read-only, private /tmp, the workspace, no network."""
    return [
        bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp",
        "--ro-bind", str(root), str(root), "--unshare-all", "--die-with-parent",
        "--new-session", "--chdir", str(root), "--", "bash", "-c", "ls",
    ]  # fmt: skip
