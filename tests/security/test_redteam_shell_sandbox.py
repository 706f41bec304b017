"""Red team, the sandbox: what a sandboxed command must not change or reach outside the
workspace, checked on the real machine (real bwrap, the host's own files and settings)."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from sandbox_helpers import require_sandbox, run

from nb_tools.builtin._bash_readonly import is_read_only


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


@pytest.fixture
def outside() -> Iterator[Path]:
    """A folder outside the workspace and outside every folder the sandbox always masks
    (``/tmp``, homes): next to the repository checkout."""
    base = Path(__file__).resolve().parents[2]
    d = Path(tempfile.mkdtemp(prefix=".rt-outside-", dir=base))
    try:
        (d / "notes.txt").write_text("OUTSIDE-MARKER-4711\n")
        yield d
    finally:
        shutil.rmtree(d, ignore_errors=True)


LINK_READS = [
    "cat link/notes.txt",
    "cat dirlink/notes.txt",
    "grep -r MARKER dirlink/",
    "cd dirlink && cat notes.txt",
    "cat */notes.txt",
    "diff -rN dirlink .",
    "head -n 5 link/notes.txt dirlink/notes.txt",
]


@pytest.mark.parametrize("command", LINK_READS)
async def test_unapproved_call_reads_nothing_outside_through_a_link(
    command: str, ws: Path, outside: Path
) -> None:
    """Hole: links in the workspace (checked out from a hostile repository, or made by an
    earlier approved call) led a call that ran without a click to any file of the machine
    that is not a known secret (other projects, /srv, /var/lib, /opt...). The read_file
    tool refuses such links; bash read through them. The vote passes these commands (it
    reads words); the sandbox of an unapproved call now shows only the system folders and
    the workspace."""
    (ws / "link").symlink_to(outside)
    (ws / "dirlink").symlink_to(outside)
    assert is_read_only(command, ws), command
    # Positive control: where the folder is visible to an approved sandboxed call at all.
    seen = await run(ws, "cat link/notes.txt", approved=True)
    if "OUTSIDE-MARKER" not in seen.content:
        pytest.skip(f"{outside} is masked for every call on this machine")
    r = await run(ws, command, approved=False)
    assert r.metadata["sandbox"] == "read-only"
    assert "OUTSIDE-MARKER" not in r.content, r.content


async def test_unapproved_call_still_works(ws: Path) -> None:
    """The narrower view keeps what read-only commands need: programs, git, the files."""
    (ws / "a.txt").write_text("hello\n")
    r = await run(
        ws, "cat a.txt && ls && rg -c hello . && git --version && jq -n 1", approved=False
    )
    assert not r.is_error, r.content
    assert "hello" in r.content
