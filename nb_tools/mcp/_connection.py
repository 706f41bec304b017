"""One MCP server connection, owned by a private event loop on a daemon thread.

The ``mcp`` SDK ties a session to the task that entered it (anyio cancel scopes), while a
notebook calls tools from whichever cell or loop runs the agent. So the session lives in a
task of its own loop, and every request is submitted to that loop; cancelling the caller
cancels the request there, and the SDK tells the server. If the connection ends (the
server process died, the HTTP endpoint went away), every pending and later request fails
at once with ``ConnectionClosed`` instead of hanging.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
import tempfile
import threading
from collections.abc import Awaitable, Callable, Coroutine, Mapping
from dataclasses import dataclass
from typing import IO, TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from nb_tools.sandbox import SandboxMode, SandboxPolicy

T = TypeVar("T")

ProgressCallback = Callable[[float, float | None, str | None], Awaitable[None]]


class ConnectionClosed(RuntimeError):
    """The MCP server is not connected (it exited, or the handle was closed)."""


@dataclass(frozen=True)
class ServerParams:
    """How to start or reach one MCP server: a stdio process (``command``, with ``env``,
    ``cwd`` and ``sandbox``) or a streamable HTTP endpoint (``url``); exactly one of
    ``command`` and ``url``. ``timeout``: seconds to connect."""

    name: str
    command: tuple[str, ...] | None = None
    env: Mapping[str, str] | None = None
    cwd: str | None = None
    url: str | None = None
    timeout: float = 30.0
    sandbox: SandboxMode | SandboxPolicy | None = None
    """``None`` or "off": the stdio server runs as a plain process (the default);
    "read-only" / "workspace-write" / a ``SandboxPolicy``: inside the OS sandbox
    (:mod:`nb_tools.sandbox`), with ``cwd`` as its workspace, no network, and the
    allow-listed environment plus ``env``."""

    @property
    def where(self) -> str:
        """``url URL`` or ``command ARGV...``: where the server is, for listings."""
        return f"url {self.url}" if self.url else "command " + " ".join(self.command or ())

    def __post_init__(self) -> None:
        if (self.command is None) == (self.url is None):
            raise ValueError(
                f"MCP server {self.name!r}: give either command=[...] or url=..., not both"
            )
        if self.command is not None and not self.command:
            raise ValueError(f"MCP server {self.name!r}: command is empty")
        if self.command is not None:
            object.__setattr__(self, "command", tuple(self.command))
        if self.env is not None:
            object.__setattr__(self, "env", dict(self.env))


class Connection:
    """A live session with one MCP server: stdio (``command``) or streamable HTTP (``url``)."""

    def __init__(self, params: ServerParams) -> None:
        self.params = params
        self.name = params.name
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._client: Any = None
        self._stop: asyncio.Event | None = None
        self._done: concurrent.futures.Future[None] | None = None
        self._error: BaseException | None = None
        self._stderr: IO[str] | None = None

    @property
    def connected(self) -> bool:
        return self._client is not None and self._done is not None and not self._done.done()

    async def open(self) -> None:
        """Start the server (or reach the URL) and finish the MCP handshake."""
        if self.connected:
            return
        self._error = None
        loop = asyncio.new_event_loop()
        self._loop = loop
        self._thread = threading.Thread(
            target=loop.run_forever, name=f"nb_tools-mcp-{self.name}", daemon=True
        )
        self._thread.start()
        ready: concurrent.futures.Future[None] = concurrent.futures.Future()
        self._done = asyncio.run_coroutine_threadsafe(self._serve(ready), loop)
        try:
            await asyncio.wait_for(asyncio.wrap_future(ready), self.params.timeout)
        except BaseException:
            await self.close()
            raise

    async def _serve(self, ready: concurrent.futures.Future[None]) -> None:
        from mcp import Client, StdioServerParameters

        p = self.params
        if p.command is not None:
            from mcp.client.stdio import get_default_environment, stdio_client

            env = get_default_environment()
            if p.env:
                env.update(p.env)
            argv, cwd = list(p.command), p.cwd
            if p.sandbox is not None and p.sandbox != "off":
                argv, env, cwd = self._sandboxed()
            params = StdioServerParameters(command=argv[0], args=argv[1:], env=env, cwd=cwd)
            # The server's stderr goes to a file of ours: a kernel's sys.stderr may have no
            # file descriptor, and its last lines explain a server that failed to start.
            self._stderr = tempfile.TemporaryFile(  # noqa: SIM115 (closed by close())
                "w+", encoding="utf-8", errors="replace"
            )
            target: Any = stdio_client(params, errlog=self._stderr)
        else:
            target = p.url
        self._stop = asyncio.Event()
        try:
            async with Client(target) as client:
                self._client = client
                ready.set_result(None)
                await self._stop.wait()
        except BaseException as exc:
            self._error = exc
            if not ready.done():
                ready.set_exception(
                    ConnectionError(
                        f"MCP server {self.name!r}: could not connect: {_describe(exc)}"
                        + self.stderr_tail()
                    )
                )
            if not isinstance(exc, Exception):
                raise
        finally:
            self._client = None

    def _sandboxed(self) -> tuple[list[str], dict[str, str], str]:
        """The server's command line, environment and folder inside the sandbox; the
        ``env`` given for the server passes whole (it is the user's explicit choice)."""
        from nb_tools.sandbox import SandboxPolicy, prepare

        p = self.params
        if p.command is None:  # pragma: no cover - only stdio servers get here
            raise ValueError("a sandbox applies only to a stdio MCP server")
        workspace = p.cwd or os.getcwd()
        policy = (
            p.sandbox if isinstance(p.sandbox, SandboxPolicy) else SandboxPolicy(mode=p.sandbox)  # type: ignore[arg-type]
        )
        if policy.workspace is None:
            policy = policy.with_workspace(workspace)
        launch = prepare(p.command, policy, cwd=workspace)
        return launch.argv, {**launch.env, **(p.env or {})}, launch.cwd

    async def request(self, make: Callable[[Any], Coroutine[Any, Any, T]]) -> T:
        """Run ``make(client)`` on the connection's loop; fail fast if the connection ends."""
        loop, done, client = self._loop, self._done, self._client
        stopped = self._stop is not None and self._stop.is_set()
        if loop is None or done is None or client is None or done.done() or stopped:
            raise ConnectionClosed(self._closed_message())
        inner = asyncio.wrap_future(asyncio.run_coroutine_threadsafe(make(client), loop))
        ended = asyncio.wrap_future(done)
        try:
            finished, _ = await asyncio.wait({inner, ended}, return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:
            inner.cancel()
            raise
        if inner in finished:
            try:
                return inner.result()
            except Exception as exc:
                if "connection closed" in str(exc).lower():
                    self._error = exc
                    self._end()
                    raise ConnectionClosed(self._closed_message()) from exc
                raise
        inner.cancel()
        raise ConnectionClosed(self._closed_message())

    def _end(self) -> None:
        """Let the session task finish after the transport broke."""
        loop, stop = self._loop, self._stop
        if loop is not None and stop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(stop.set)

    def stderr_tail(self, lines: int = 10) -> str:
        """The last lines the server wrote to stderr, as a suffix for error messages."""
        err = self._stderr
        if err is None or err.closed:
            return ""
        try:
            err.flush()
            err.seek(0)
            tail = err.read()[-4000:].strip().splitlines()[-lines:]
        except (OSError, ValueError):
            return ""
        return ("\nserver stderr:\n  " + "\n  ".join(tail)) if tail else ""

    def _closed_message(self) -> str:
        why = f": {_describe(self._error)}" if self._error else ""
        return (
            f"MCP server {self.name!r} is not connected{why}; "
            "reconnect it (handle.reconnect() or %mcp add)"
        )

    async def close(self) -> None:
        """Disconnect (stopping a stdio server) and end the thread."""
        loop, thread, done = self._loop, self._thread, self._done
        if loop is None:
            return
        stop = self._stop
        if stop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(stop.set)
        if done is not None:
            try:
                await asyncio.wait_for(asyncio.wrap_future(done), 10)
            except BaseException:
                done.cancel()
        if not loop.is_closed():
            loop.call_soon_threadsafe(loop.stop)
        if thread is not None:
            await asyncio.to_thread(thread.join, 5)
        if not loop.is_running() and not loop.is_closed():
            loop.close()
        self._loop = self._thread = self._done = None
        self._client = None
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None


def _describe(exc: BaseException | None) -> str:
    if exc is None:
        return "unknown error"
    inner = getattr(exc, "exceptions", None)
    if inner:  # an ExceptionGroup from anyio: name the first real cause
        return _describe(inner[0])
    text = str(exc) or type(exc).__name__
    return f"{type(exc).__name__}: {text}" if type(exc).__name__ not in text else text
