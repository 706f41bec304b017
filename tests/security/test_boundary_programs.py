"""Every program nb_tools starts is inside the boundary: a ``rg`` planted where the agent can
write (the kernel's ``.venv`` inside the workspace) never runs with the kernel's
environment or outside the sandbox, and the kernel's own environment is read-only to an
approved shell call when it lies in the workspace."""

from __future__ import annotations

import json
import sys
import sysconfig
import uuid
from pathlib import Path

import pytest
from sandbox_helpers import NOT_APPROVED, require_sandbox, run

from nb_tools.builtin import _rg
from nb_tools.builtin._glob import GlobTool
from nb_tools.builtin._grep import GrepTool
from nb_tools.builtin._workspace import Workspace
from nb_tools.tool._grant import granted

KEY = f"sk-ant-{uuid.uuid4().hex}"


def _plant(ws: Path, outside: Path) -> Path:
    """A fake ``rg`` in the workspace's ``.venv/bin`` that leaves marker files (with its
    environment) in the workspace and outside it, then behaves like an rg that found
    nothing."""
    bin_dir = ws / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    rg = bin_dir / "rg"
    rg.write_text(
        "#!/bin/sh\n"
        f"env > '{outside}/PLANTED_RAN' 2>/dev/null\n"
        f"env > '{ws}/PLANTED_RAN' 2>/dev/null\n"
        "exit 1\n"
    )
    rg.chmod(0o755)
    return bin_dir


@pytest.fixture
def planted(ws: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """The kernel's scripts folder is the workspace's ``.venv/bin`` (a kernel started from
    an in-workspace virtualenv) and holds a planted rg; the API key is in the kernel's
    environment."""
    outside = tmp_path / "outside"
    outside.mkdir()
    bin_dir = _plant(ws, outside)
    real = sysconfig.get_path

    def get_path(name: str, *a: object, **kw: object) -> str:
        return str(bin_dir) if name == "scripts" else real(name, *a, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(sysconfig, "get_path", get_path)
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    monkeypatch.delenv(_rg.ENV_VAR, raising=False)
    _rg._find.cache_clear()
    _rg._candidates.cache_clear()
    yield ws, outside
    _rg._find.cache_clear()
    _rg._candidates.cache_clear()


def _ran(ws: Path, outside: Path) -> list[str]:
    return [str(p) for p in (ws / "PLANTED_RAN", outside / "PLANTED_RAN") if p.exists()]


@pytest.mark.parametrize("tool", [GrepTool, GlobTool])
async def test_planted_rg_in_the_kernels_venv_never_runs_outside(
    planted: tuple[Path, Path], tool: type[GrepTool] | type[GlobTool]
) -> None:
    require_sandbox()
    ws, outside = planted
    (ws / "a.py").write_text("needle\n")
    t = tool(Workspace(ws))
    assert t.rg is not None and Path(t.rg).is_relative_to(ws)  # what the tool would pick
    with granted(NOT_APPROVED):
        r = await t.call(json.dumps({"pattern": "needle" if tool is GrepTool else "*.py"}))
    assert _ran(ws, outside) == []
    assert KEY not in r.content


async def test_planted_rg_on_path_never_runs_outside(
    ws: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same rg reached through PATH (an activated in-workspace virtualenv), with no rg
    in the scripts folder."""
    require_sandbox()
    outside = tmp_path / "outside"
    outside.mkdir()
    bin_dir = _plant(ws, outside)
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    monkeypatch.setattr(sysconfig, "get_path", lambda name, *a, **k: str(tmp_path / "none"))
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    _rg._find.cache_clear()
    _rg._candidates.cache_clear()
    try:
        (ws / "a.py").write_text("needle\n")
        with granted(NOT_APPROVED):
            r = await GrepTool(Workspace(ws)).call(json.dumps({"pattern": "needle"}))
    finally:
        _rg._find.cache_clear()
        _rg._candidates.cache_clear()
    assert _ran(ws, outside) == []
    assert KEY not in r.content


async def test_the_kernels_venv_in_the_workspace_is_read_only_to_approved_bash(
    ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An approved call (workspace-write) cannot plant a program in the kernel's own
    environment when it lies in the workspace: the next grep would find it there, and the
    next kernel start would import from it."""
    require_sandbox()
    venv = ws / ".venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "lib").mkdir()
    monkeypatch.setattr(sys, "prefix", str(venv))
    monkeypatch.setattr(sys, "exec_prefix", str(venv))
    r = await run(
        ws,
        "echo evil > .venv/bin/rg; echo evil > .venv/lib/sitecustomize.py; echo ok > fine.txt",
        approved=True,
    )
    assert (ws / "fine.txt").exists(), r.content  # the workspace itself stays writable
    assert not (venv / "bin" / "rg").exists()
    assert not (venv / "lib" / "sitecustomize.py").exists()
