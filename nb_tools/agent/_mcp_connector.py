"""Claude's MCP connector: remote MCP servers the API itself connects to (``mcp_servers``
in the request, one ``mcp_toolset`` per server in ``tools``), under the rules that govern
local MCP tools, whose names they share (``mcp__SERVER__TOOL``).

The API calls these tools itself, so nobody here can be asked and no rule can read their
arguments. As for server tools, the rules therefore act on the declaration, failing
closed: a deny or ask rule naming one tool (with or without a specifier) disables that tool
(``configs: {TOOL: {"enabled": false}}``); one naming the whole server (``mcp__SERVER``),
or a pattern that could match tools we cannot list (``mcp__SERVER__delete_*``, ``mcp__*``),
keeps the server out of the request; under the "deny" and "read-only" policies a server
is declared only if an allow rule names all of it (``mcp__SERVER`` or ``mcp__SERVER__*``).
Each server left out, and each tool disabled, is reported in a notice.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from nb_tools.agent._notices import RunNotice

if TYPE_CHECKING:
    from nb_tools.permissions import PermissionRules

BETA_MCP_CLIENT = "mcp-client-2025-11-20"
_GLOB = frozenset("*?[")


def check_servers(servers: Sequence[Mapping[str, Any]]) -> tuple[dict[str, Any], ...]:
    """``Agent(mcp_servers=...)`` checked: each a ``{"name", "url"}`` (and optionally
    ``authorization_token``, ``tool_configuration``), names unique."""
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    for server in servers:
        if not isinstance(server, Mapping) or not server.get("name") or not server.get("url"):
            raise ValueError(
                f"Agent: mcp_servers entry {server!r}: give a dict with 'name' and 'url' "
                "(and 'authorization_token' if the server needs one)"
            )
        name = str(server["name"])
        if name in seen:
            raise ValueError(f"Agent: mcp_servers: the name {name!r} is given twice")
        seen.add(name)
        out.append({"type": "url", **dict(server)})
    return tuple(out)


def connector_request(
    servers: Sequence[Mapping[str, Any]], rules: PermissionRules | None, policy: str
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[RunNotice]]:
    """What the request declares: the ``mcp_servers``, their ``mcp_toolset`` tools, and
    notices for what the rules or the policy kept out."""
    declared: list[dict[str, Any]] = []
    toolsets: list[dict[str, Any]] = []
    notices: list[RunNotice] = []
    for server in servers:
        name = str(server["name"])
        whole, disabled = _restrictions(rules, name)
        if whole is not None:
            notices.append(_notice(f"MCP server {name} not declared: the rule {whole}"))
            continue
        if policy in ("deny", "read-only") and not _allowed_whole(rules, name):
            notices.append(
                _notice(
                    f"MCP server {name} not declared: the approval policy is {policy!r} and "
                    f"the API calls its tools without asking; to use it under this policy, "
                    f"allow it with a rule (mcp__{name})"
                )
            )
            continue
        toolset: dict[str, Any] = {"type": "mcp_toolset", "mcp_server_name": name}
        if disabled:
            toolset["configs"] = {tool: {"enabled": False} for tool in disabled}
            for tool, label in disabled.items():
                notices.append(_notice(f"MCP tool mcp__{name}__{tool} disabled: the rule {label}"))
        declared.append(dict(server))
        toolsets.append(toolset)
    return declared, toolsets, notices


def _restrictions(rules: PermissionRules | None, name: str) -> tuple[str | None, dict[str, str]]:
    """(why the whole server is kept out, or None; the tools to disable, with why)."""
    if rules is None:
        return None, {}
    prefix = f"mcp__{name}__".lower()
    disabled: dict[str, str] = {}
    for rule in rules.rules:
        if rule.action not in ("deny", "ask"):
            continue
        pattern = rule.tool.lower()
        label = f"rule:{rule} [{rule.source}]"
        if pattern in (f"mcp__{name}".lower(), prefix + "*"):
            return f"{label} {rule.action}s the whole server", {}
        if not _GLOB & set(pattern):
            if pattern.startswith(prefix):
                tool = rule.tool[len(prefix) :]
                why = "denies it" if rule.action == "deny" else "asks for it"
                if rule.specifier is not None:
                    why = f"{rule.action}s some of its calls"
                disabled[tool] = f"{label} {why}, and the API calls it without asking"
            continue
        head = pattern.split("*", 1)[0].split("?", 1)[0].split("[", 1)[0]
        if head.startswith(prefix) or prefix.startswith(head):
            return (
                f"{label} may {rule.action} some of its tools, which the API calls without "
                "reading rules; name the tools exactly (mcp__"
                f"{name}__TOOL) to disable only those"
            ), {}
    return None, disabled


def _allowed_whole(rules: PermissionRules | None, name: str) -> bool:
    if rules is None:
        return False
    whole = {f"mcp__{name}".lower(), f"mcp__{name}__*".lower()}
    return any(
        r.action == "allow" and r.specifier is None and r.tool.lower() in whole for r in rules.rules
    )


def _notice(message: str) -> RunNotice:
    return RunNotice(kind="server_tool_skipped", message=message)


__all__ = ["BETA_MCP_CLIENT", "check_servers", "connector_request"]
