"""An MCP server for the tests, on the official SDK: ``python demo_server.py [stdio|http PORT]``."""

from __future__ import annotations

import asyncio
import base64
import os
import sys

from mcp.server.mcpserver import Context, MCPServer
from mcp_types import ImageContent, TextContent, ToolAnnotations

server = MCPServer("demo")

PNG_1x1 = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def add(a: int, b: int) -> str:
    """Add two integers."""
    return str(a + b)


@server.tool()
def write_note(text: str) -> str:
    """Pretend to write a note (a tool with side effects)."""
    return f"noted: {text}"


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
async def count(n: int, ctx: Context) -> str:
    """Count to n, reporting progress."""
    for i in range(1, n + 1):
        await ctx.report_progress(i, n, f"step {i}")
        await asyncio.sleep(0.01)
    return f"counted to {n}"


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
async def wait(seconds: float) -> str:
    """Sleep, for cancellation tests; writes a marker file when it finishes."""
    await asyncio.sleep(seconds)
    marker = os.environ.get("DEMO_MARKER")
    if marker:
        with open(marker, "w") as f:
            f.write("finished")
    return "waited"


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def picture() -> list[TextContent | ImageContent]:
    """Return a caption and a 1x1 PNG."""
    return [
        TextContent(type="text", text="a red dot"),
        ImageContent(type="image", data=base64.b64encode(PNG_1x1).decode(), mime_type="image/png"),
    ]


@server.tool()
def fail(reason: str) -> str:
    """Always fails."""
    raise ValueError(f"cannot do it: {reason}")


@server.tool()
def die() -> str:
    """Kill the server process in the middle of the call."""
    os._exit(3)


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def env_value(key: str) -> str:
    """Read an environment variable of the server process."""
    return os.environ.get(key, "<unset>")


@server.tool(name="a_tool_with_a_really_long_name_that_will_not_fit_in_sixty_four_characters")
def long_name() -> str:
    """A tool whose prefixed name is over 64 characters."""
    return "long"


if __name__ == "__main__":
    mode = sys.argv[1] if len(sys.argv) > 1 else "stdio"
    if mode == "http":
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run("stdio")
