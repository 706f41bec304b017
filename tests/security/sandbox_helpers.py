"""Shared by the sandbox effect tests: a bash tool that runs approved or not, and checks on
the real machine (files, processes by marker, listeners)."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import sys
import time
from pathlib import Path

import pytest
from processes import pids_with

from nb_tools.builtin._bash import BashTool
from nb_tools.builtin._workspace import Workspace
from nb_tools.sandbox import sandbox_available
from nb_tools.tool import Result
from nb_tools.tool._grant import Grant, granted

APPROVED = Grant(approved=True, kind="person", by="user")
NOT_APPROVED = Grant(approved=False)


def require_sandbox() -> None:
    """Skip only off Linux; on Linux a missing sandbox is a failure (CI installs bwrap)."""
    if not sys.platform.startswith("linux"):
        pytest.skip("the OS sandbox (bubblewrap) exists only on Linux")
    found = sandbox_available(refresh=True)
    assert found.ok, f"no sandbox on this Linux machine: {found.reason}"


async def run(
    ws: Path, command: str, *, approved: bool, timeout_ms: int = 20_000, **kw: object
) -> Result:
    tool = BashTool(Workspace(ws), kill_grace=0.3, **kw)  # type: ignore[arg-type]
    with granted(APPROVED if approved else NOT_APPROVED):
        return await tool.call(json.dumps({"command": command, "timeout": timeout_ms}))


async def gone(marker: str, within: float = 3.0) -> bool:
    end = time.monotonic() + within
    while time.monotonic() < end:
        if not pids_with(marker):
            return True
        await asyncio.sleep(0.05)
    return False


class Listener:
    """A TCP listener on 127.0.0.1 that records every connection it accepts (but a ZeroMQ
    peer's: an earlier test's kernel socket reconnecting to a reused port number)."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.sock.setblocking(False)
        self.port = self.sock.getsockname()[1]

    def received(self) -> list[bytes]:
        got = []
        while True:
            try:
                conn, _ = self.sock.accept()
            except BlockingIOError:
                return got
            conn.settimeout(1)
            try:
                data = conn.recv(65536)
            except OSError:
                data = b""
            conn.close()
            if not data.startswith(b"\xff"):  # a ZeroMQ greeting: see approvals_helpers
                got.append(data)

    def close(self) -> None:
        self.sock.close()


class UnixListener:
    """A Unix socket server (a path, or an abstract name starting with NUL)."""

    def __init__(self, address: str) -> None:
        self.address = address
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(address)
        self.sock.listen(8)
        self.sock.setblocking(False)

    def received(self) -> int:
        n = 0
        while True:
            try:
                conn, _ = self.sock.accept()
            except BlockingIOError:
                return n
            n += 1
            conn.close()

    def close(self) -> None:
        self.sock.close()
        if not self.address.startswith("\0"):
            with __import__("contextlib").suppress(OSError):
                os.unlink(self.address)


def start_kernel_in(folder: Path) -> None:
    """Start a real ``python -m ipykernel_launcher`` (``--help``: it exits at once) in
    ``folder``, as Jupyter starts a notebook's kernel in the notebook's folder."""
    import subprocess

    subprocess.run(
        [sys.executable, "-m", "ipykernel_launcher", "--help"],
        cwd=folder,
        capture_output=True,
        timeout=60,
        check=False,
    )
