"""Can a sandbox start here? Found once per process (and per ``bwrap`` path), then cached."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
from dataclasses import dataclass

__all__ = ["Availability", "sandbox_available"]


@dataclass(frozen=True, kw_only=True)
class Availability:
    """``ok``: a sandbox starts; otherwise ``reason`` says why not and what to do."""

    ok: bool
    reason: str = ""
    bwrap: str | None = None
    version: str = ""

    def __bool__(self) -> bool:
        return self.ok


_lock = threading.Lock()
_cache: dict[str | None, Availability] = {}


def sandbox_available(*, refresh: bool = False) -> Availability:
    """Whether bubblewrap is installed and actually starts a sandbox (user, pid, network
    namespaces), found once and cached; ``refresh=True`` looks again. ``NB_TOOLS_BWRAP``
    names another ``bwrap`` binary (an empty value means "none")."""
    key = os.environ.get("NB_TOOLS_BWRAP")
    with _lock:
        if not refresh and key in _cache:
            return _cache[key]
    found = _probe(key)
    with _lock:
        _cache[key] = found
    return found


def _probe(override: str | None) -> Availability:
    if not sys.platform.startswith("linux"):
        return Availability(
            ok=False,
            reason=f"no OS sandbox on {sys.platform}: nb_tools sandboxes shell commands with "
            "bubblewrap, which needs Linux",
        )
    bwrap = (override or None) if override is not None else shutil.which("bwrap")
    if override == "":
        bwrap = None
    if bwrap is None or not os.access(bwrap, os.X_OK):
        return Availability(
            ok=False,
            reason="bubblewrap (bwrap) is not installed: install it (Debian/Ubuntu: "
            "apt-get install bubblewrap; Fedora: dnf install bubblewrap)",
        )
    cmd = [
        bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp",
        "--unshare-all", "--die-with-parent", "--new-session", "--cap-drop", "ALL",
        "--", "/bin/sh", "-c", "exit 0",
    ]  # fmt: skip
    try:
        run = subprocess.run(cmd, capture_output=True, timeout=10, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return Availability(ok=False, reason=f"bubblewrap ({bwrap}) did not start: {exc}")
    if run.returncode != 0:
        err = run.stderr.decode(errors="replace").strip() or f"exit code {run.returncode}"
        return Availability(
            ok=False,
            bwrap=bwrap,
            reason=f"bubblewrap ({bwrap}) cannot start a sandbox here: {err} (user namespaces "
            "may be disabled: sysctl kernel.unprivileged_userns_clone=1, or "
            "kernel.apparmor_restrict_unprivileged_userns=0; in a container, allow them)",
        )
    try:
        version = subprocess.run(
            [bwrap, "--version"], capture_output=True, timeout=5, text=True
        ).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        version = ""
    return Availability(ok=True, bwrap=bwrap, version=version)
