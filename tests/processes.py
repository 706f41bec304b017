"""Processes on this host, read from ``/proc``, for tests that check that what a call
started is gone (``tests/security``, ``tests/sandbox``)."""

from __future__ import annotations

import os
from pathlib import Path


def pids_with(marker: str) -> list[int]:
    """Host pids whose command line holds ``marker`` (zombies excluded)."""
    out = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == os.getpid():
            continue
        try:
            cmdline = Path(f"/proc/{name}/cmdline").read_bytes()
            state = Path(f"/proc/{name}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if marker.encode() in cmdline and state != "Z":
            out.append(int(name))
    return out
