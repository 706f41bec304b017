"""MCP servers' tools as nb_tools tools, on the official ``mcp`` SDK.

``handle = await attach(registry, "files", command=["python", "server.py"])`` starts a
stdio server (or ``url="http://127.0.0.1:8000/mcp"`` for streamable HTTP) and registers
each of its tools as ``mcp__files__<tool>``; ``await handle.close()`` disconnects and
removes exactly those tools; ``await handle.reconnect()`` starts over.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from nb_tools.mcp._connection import Connection, ConnectionClosed, ServerParams
from nb_tools.mcp._tools import MCPTool, convert_result, server_slug, tool_name
from nb_tools.tool import MCP_NAME_PREFIX, Registry, default_registry

if TYPE_CHECKING:
    from nb_tools.sandbox import SandboxMode, SandboxPolicy

__all__ = [
    "ConnectionClosed",
    "MCPServerHandle",
    "MCPTool",
    "ServerParams",
    "attach",
    "attached",
    "convert_result",
    "detach",
]

_ATTACHED: dict[str, MCPServerHandle] = {}


@dataclass(eq=False)
class MCPServerHandle:
    """A connected MCP server and the tools it added to a registry."""

    name: str
    connection: Connection
    registry: Registry
    tools: list[str] = field(default_factory=list)
    trust_hints: bool = False
    """Whether the server's ``readOnlyHint`` is believed (its tools then run unasked)."""

    @property
    def prefix(self) -> str:
        return f"{MCP_NAME_PREFIX}{self.name}__"

    @property
    def connected(self) -> bool:
        return self.connection.connected

    async def refresh(self) -> list[str]:
        """List the server's tools again and replace this server's tools in the registry."""
        listing = await self.connection.request(lambda client: _list_all(client))
        self.registry.remove_prefix(self.prefix)
        taken: set[str] = set()
        names: list[str] = []
        for remote in listing:
            name = tool_name(self.name, remote.name, taken)
            taken.add(name)
            tool = MCPTool(self.connection, self.name, name, remote, trust_hints=self.trust_hints)
            self.registry.add(tool)
            names.append(name)
        self.tools = names
        return names

    async def reconnect(self) -> list[str]:
        await self.connection.close()
        await self.connection.open()
        return await self.refresh()

    async def close(self) -> int:
        """Disconnect and remove exactly this server's tools; returns how many."""
        removed = self.registry.remove_prefix(self.prefix)
        self.tools = []
        await self.connection.close()
        if _ATTACHED.get(self.name) is self:
            del _ATTACHED[self.name]
        return removed


async def _list_all(client: object) -> list[object]:
    tools: list[object] = []
    cursor = None
    for _ in range(100):
        page = await client.list_tools(cursor=cursor)  # type: ignore[attr-defined]
        tools.extend(page.tools)
        cursor = page.next_cursor
        if cursor is None:
            break
    return tools


async def attach(
    registry: Registry | None,
    name: str,
    *,
    command: Sequence[str] | None = None,
    env: Mapping[str, str] | None = None,
    cwd: str | None = None,
    url: str | None = None,
    timeout: float = 30.0,
    sandbox: SandboxMode | SandboxPolicy | None = None,
    trust_hints: bool = False,
) -> MCPServerHandle:
    """Connect to an MCP server and register its tools as ``mcp__<name>__<tool>``.
    ``sandbox``: run a stdio server inside the OS sandbox ("read-only" or
    "workspace-write" on ``cwd``, no network; ``None``, the default: a plain process).
    ``trust_hints``: believe the server's ``readOnlyHint`` (those tools then run without a
    click); by default every tool of the server asks, as the MCP specification asks of
    clients for servers they do not trust. Rules (``allow mcp__NAME__*``) still apply.

    Attaching a name that is already attached closes the old connection first.
    """
    slug = server_slug(name)
    registry = registry if registry is not None else default_registry()
    old = _ATTACHED.get(slug)
    if old is not None:
        await old.close()
    params = ServerParams(
        name=slug,
        command=tuple(command) if command is not None else None,
        env=env,
        cwd=cwd,
        url=url,
        timeout=timeout,
        sandbox=sandbox,
    )
    connection = Connection(params)
    await connection.open()
    handle = MCPServerHandle(
        name=slug, connection=connection, registry=registry, trust_hints=trust_hints
    )
    try:
        await handle.refresh()
    except BaseException:
        await connection.close()
        raise
    _ATTACHED[slug] = handle
    return handle


def attached() -> dict[str, MCPServerHandle]:
    """The servers attached in this process, by name."""
    return dict(_ATTACHED)


async def detach(name: str) -> int:
    handle = _ATTACHED.get(server_slug(name))
    if handle is None:
        raise KeyError(
            f"no MCP server named {name!r} is attached; attached: {sorted(_ATTACHED) or 'none'}"
        )
    return await handle.close()
