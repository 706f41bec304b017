"""Red team, the sandbox: what a sandboxed command must not change or reach outside the
workspace, checked on the real machine (real bwrap, the host's own files and settings)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from sandbox_helpers import require_sandbox, run


@pytest.fixture(autouse=True)
def sandbox() -> None:
    require_sandbox()


SYSCTL = Path("/proc/sys/kernel/core_pipe_limit")  # harmless to change for a moment


@pytest.mark.parametrize("mode", ["workspace-write", "read-only"])
async def test_kernel_settings_stay_unchanged(mode: str, ws: Path) -> None:
    """Hole: bubblewrap leaves /proc/sys of its new /proc writable (it checks the folder,
    mode 0555, not the files). Running as root, an approved call wrote host-wide kernel
    settings: `core_pattern = |prog` runs prog as root outside the sandbox at the next
    crash. The same write of a harmless setting must now fail and leave the host as it was."""
    if not os.access(SYSCTL, os.W_OK):
        pytest.skip("the host's kernel settings are not writable by this user")
    before = SYSCTL.read_text()
    new = "7" if before.strip() != "7" else "8"
    try:
        r = await run(ws, f"echo {new} > {SYSCTL}; cat {SYSCTL}", approved=True, sandbox=mode)
        assert SYSCTL.read_text() == before, r.content
        assert "Read-only file system" in r.content
    finally:
        SYSCTL.write_text(before)


async def test_sysrq_trigger_is_not_writable(ws: Path) -> None:
    r = await run(ws, "echo x > /proc/sysrq-trigger", approved=True)
    assert r.is_error  # absent or read-only, never a live trigger
