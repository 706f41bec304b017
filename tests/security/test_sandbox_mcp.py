"""A stdio MCP server started with sandbox=... runs inside bubblewrap: it works, it gets
the env given for it, and none of the kernel's secrets."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest
from sandbox_helpers import pids_with, require_sandbox

from nb_tools.mcp import attach
from nb_tools.model import ToolCall
from nb_tools.tool import Executor, Registry

DEMO = Path(__file__).resolve().parents[1] / "mcp" / "demo_server.py"


@pytest.mark.parametrize("mode", ["read-only"])
async def test_stdio_server_in_the_sandbox(
    mode: str, ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    require_sandbox()
    # The server's script goes into the workspace: a checkout under /tmp (or a home) is out
    # of the sandbox's sight, as it should be.
    server = str(shutil.copy(DEMO, ws / "demo_server.py"))
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-mcp-secret")
    registry = Registry()
    handle = await attach(
        registry,
        "boxed",
        command=[sys.executable, server],
        env={"SERVER_SETTING": "given"},
        cwd=str(ws),
        sandbox=mode,  # type: ignore[arg-type]
    )
    try:
        ex = Executor(registry)

        async def env_value(key: str) -> str:
            call = ToolCall(
                id="c", name="mcp__boxed__env_value", arguments=json.dumps({"key": key})
            )
            return (await ex.execute(call)).content

        assert "given" in await env_value("SERVER_SETTING")
        assert "sk-ant-mcp-secret" not in await env_value("ANTHROPIC_API_KEY")
        add = ToolCall(id="a", name="mcp__boxed__add", arguments='{"a": 2, "b": 3}')
        assert "5" in (await ex.execute(add)).content
        boxed = [
            p
            for p in pids_with(server)
            if Path(f"/proc/{p}/cmdline").read_bytes().startswith(b"bwrap")
            or b"/bwrap\0" in Path(f"/proc/{p}/cmdline").read_bytes()
        ]
        assert boxed, "the server is not running under bwrap"
    finally:
        await handle.close()
    assert not pids_with(server)
