"""Tool names every supported provider accepts, and the MCP namespace.

The rule is the intersection of what the providers document: 1 to 64 characters from
``[a-zA-Z0-9_-]`` (OpenAI-style function names stop at 64; Anthropic allows more).

No supported provider documents a reserved prefix for custom tools (as of 2026-11), so the
only reserved prefix is nb_tools' own: ``mcp__`` is the namespace of tools that come from
MCP servers (``mcp__<server>__<tool>``). A plain function may not take it, so that
``Registry.remove_prefix("mcp__srv__")`` on a server disconnect can never drop a user's
tool; an MCP tool name must be well formed (both parts non-empty).
"""

from __future__ import annotations

import re

MCP_NAME_PREFIX = "mcp__"
"""The namespace of MCP tools: the model-visible name is ``mcp__<server>__<tool>``."""

RESERVED_PREFIXES: tuple[str, ...] = (MCP_NAME_PREFIX,)
"""Prefixes a non-MCP tool may not use."""

_NAME = re.compile(r"[a-zA-Z0-9_-]{1,64}")


def split_mcp_name(name: str) -> tuple[str, str] | None:
    """Split ``"mcp__<server>__<tool>"`` into ``(server, tool)``.

    The server part ends at the first ``__`` after the prefix, so the tool part may itself
    contain ``__``. ``None`` for names outside the MCP namespace and for malformed ones
    (an empty server or tool part).
    """
    if not name.startswith(MCP_NAME_PREFIX):
        return None
    server, sep, tool = name[len(MCP_NAME_PREFIX) :].partition("__")
    if not sep or not server or not tool:
        return None
    return server, tool


def validate_name(name: str, *, mcp: bool = False) -> None:
    """Raise ``ValueError`` unless every supported provider accepts ``name`` as a tool name.

    ``mcp=True`` is for tools that come from an MCP server: their names must be
    ``mcp__<server>__<tool>``; every other tool must stay out of that namespace.
    """
    if not isinstance(name, str):
        raise ValueError(f"tool name must be a string, got {type(name).__name__}")
    if _NAME.fullmatch(name) is None:
        if not name:
            problem = "is empty"
        elif len(name) > 64:
            problem = f"is {len(name)} characters long (the limit is 64)"
        else:
            bad = sorted({c for c in name if _NAME.fullmatch(c) is None})
            problem = "contains " + ", ".join(repr(c) for c in bad)
        raise ValueError(
            f"invalid tool name {name!r}: it {problem}; use 1 to 64 letters, digits, '_' or '-'"
        )
    if mcp:
        if split_mcp_name(name) is None:
            raise ValueError(
                f"invalid MCP tool name {name!r}: expected "
                f"'{MCP_NAME_PREFIX}<server>__<tool>' with both parts non-empty"
            )
        return
    for prefix in RESERVED_PREFIXES:
        if name.startswith(prefix):
            raise ValueError(
                f"invalid tool name {name!r}: the prefix {prefix!r} is reserved for tools "
                "from MCP servers; rename the tool"
            )
