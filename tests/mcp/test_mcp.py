"""MCP servers' tools through real server processes (stdio and streamable HTTP)."""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from nb_tools.mcp import attach
from nb_tools.model import ToolCall
from nb_tools.tool import Executor, Registry, progress_sink
from nb_tools.tool._progress import Progress

SERVER = str(Path(__file__).with_name("demo_server.py"))


def call(name: str, **args: object) -> ToolCall:
    return ToolCall(id=f"c-{name}", name=name, arguments=json.dumps(args))


@pytest.fixture
async def demo():
    registry = Registry()
    handle = await attach(registry, "demo", command=[sys.executable, SERVER])
    try:
        yield registry, handle
    finally:
        await handle.close()


async def test_tools_are_named_and_described(demo):
    registry, _ = demo
    names = registry.names()
    assert "mcp__demo__add" in names and "mcp__demo__write_note" in names
    assert all(len(n) <= 64 for n in names)
    long = [n for n in names if "a_tool_with" in n]
    assert len(long) == 1 and len(long[0]) == 64
    add = registry.get("mcp__demo__add").info()
    assert add.description == "Add two integers."
    # readOnlyHint is the server's claim: not believed unless the server is trusted
    assert not add.read_only and add.requires_approval
    assert add.raw_parameters["properties"]["a"]["type"] == "integer"
    assert registry.get("mcp__demo__write_note").info().requires_approval
    spec = {s.name: s for s in registry.specs()}["mcp__demo__add"]
    assert spec.input_schema == add.raw_parameters


async def test_calls_text_image_errors(demo):
    registry, _ = demo
    ex = Executor(registry)
    r = await ex.execute(call("mcp__demo__add", a=2, b=40))
    assert (r.content, r.is_error) == ("42", False)
    pic = await ex.execute(call("mcp__demo__picture"))
    assert pic.content == "a red dot"
    assert [(p.kind, p.media_type, p.data[:4]) for p in pic.parts] == [
        ("image", "image/png", b"\x89PNG")
    ]
    bad = await ex.execute(call("mcp__demo__fail", reason="no"))
    assert bad.is_error
    dup = await ex.execute(
        ToolCall(id="d", name="mcp__demo__add", arguments='{"a": 1, "a": 2, "b": 3}')
    )
    assert dup.is_error and "duplicate key" in dup.content


async def test_progress_notifications_become_progress_chunks(demo):
    registry, _ = demo
    seen: list[tuple[str, Progress]] = []
    with progress_sink(lambda cid, p: seen.append((cid, p))):
        r = await Executor(registry).execute(call("mcp__demo__count", n=3))
    assert r.content == "counted to 3"
    assert [(cid, p.text, p.fraction) for cid, p in seen] == [
        ("c-mcp__demo__count", "step 1", pytest.approx(1 / 3)),
        ("c-mcp__demo__count", "step 2", pytest.approx(2 / 3)),
        ("c-mcp__demo__count", "step 3", 1.0),
    ]


async def test_env_reaches_the_server():
    registry = Registry()
    handle = await attach(
        registry, "envy", command=[sys.executable, SERVER], env={"DEMO_KEY": "sesame"}
    )
    try:
        r = await Executor(registry).execute(call("mcp__envy__env_value", key="DEMO_KEY"))
        assert r.content == "sesame"
    finally:
        await handle.close()


async def test_cancel_reaches_the_server(tmp_path):
    marker = tmp_path / "marker"
    registry = Registry()
    handle = await attach(
        registry, "slow", command=[sys.executable, SERVER], env={"DEMO_MARKER": str(marker)}
    )
    try:
        task = asyncio.create_task(Executor(registry).execute(call("mcp__slow__wait", seconds=1.0)))
        await asyncio.sleep(0.3)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await asyncio.sleep(1.2)
        assert not marker.exists(), "the server finished a call the client cancelled"
        r = await Executor(registry).execute(call("mcp__slow__add", a=1, b=1))
        assert r.content == "2", "the connection survives a cancelled call"
    finally:
        await handle.close()


async def test_server_death_is_an_error_result_then_reconnect():
    registry = Registry()
    handle = await attach(registry, "mortal", command=[sys.executable, SERVER])
    try:
        started = time.monotonic()
        r = await asyncio.wait_for(Executor(registry).execute(call("mcp__mortal__die")), 20)
        assert r.is_error and "mortal" in r.content
        assert time.monotonic() - started < 15
        again = await Executor(registry).execute(call("mcp__mortal__add", a=1, b=2))
        assert again.is_error and "reconnect" in again.content
        await handle.reconnect()
        ok = await Executor(registry).execute(call("mcp__mortal__add", a=1, b=2))
        assert ok.content == "3"
    finally:
        await handle.close()


async def test_close_removes_exactly_that_servers_tools():
    registry = Registry()
    one = await attach(registry, "one", command=[sys.executable, SERVER])
    two = await attach(registry, "two", command=[sys.executable, SERVER])
    try:
        n_two = len(two.tools)
        removed = await one.close()
        assert removed == len(one.tools) or removed > 0
        assert not [n for n in registry.names() if n.startswith("mcp__one__")]
        assert len([n for n in registry.names() if n.startswith("mcp__two__")]) == n_two
    finally:
        await two.close()
        await one.close()


async def test_bad_command_is_a_clear_error_with_the_servers_stderr():
    with pytest.raises(ConnectionError, match=r"(?s)could not connect.*server stderr:.*no such db"):
        await attach(
            Registry(),
            "nope",
            command=[sys.executable, "-c", "import sys; sys.exit('no such db')"],
            timeout=15,
        )


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def test_streamable_http_server():
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, SERVER, "http", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                    break
            except OSError:
                await asyncio.sleep(0.1)
        registry = Registry()
        handle = await attach(registry, "web", url=f"http://127.0.0.1:{port}/mcp")
        try:
            r = await Executor(registry).execute(call("mcp__web__add", a=20, b=22))
            assert r.content == "42"
        finally:
            await handle.close()
    finally:
        proc.terminate()
        proc.wait(10)


async def test_third_party_server_from_pypi():
    pytest.importorskip("mcp_server_time")
    registry = Registry()
    handle = await attach(
        registry,
        "time",
        command=[sys.executable, "-m", "mcp_server_time", "--local-timezone", "UTC"],
    )
    try:
        assert "mcp__time__get_current_time" in registry.names()
        r = await Executor(registry).execute(
            call("mcp__time__get_current_time", timezone="Europe/Paris")
        )
        assert not r.is_error, r.content
        assert json.loads(r.content)["timezone"] == "Europe/Paris"
    finally:
        await handle.close()
