"""Which ``Agent(...)`` settings ``Agent.save`` keeps, and which of them a file may set
only when the caller trusts it (``Agent.load(trust_settings=True)``).

:data:`SETTINGS` has one entry per constructor argument (a test fails when a new argument
has none): "saved" ones come back from any file; "trusted" ones loosen the approval
boundary (the API runs server tools and MCP connector tools without asking; the memory
tool writes in a folder; rules allow; a policy decides without a person), so they come
back only with ``trust_settings=True`` (the policy and the rules are read by
:mod:`nb_tools.agent._persist` itself: never looser than the caller's); "not saved" ones
say why. The request options (thinking, tool choice, ...) are saved as one object and
given back to ``Agent(...)`` as its arguments, so the caller's arguments win over them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from nb_tools.agent._agent import Agent

__all__ = ["SETTINGS", "Kept", "saved_settings", "settings_kwargs"]


@dataclass(frozen=True)
class Kept:
    how: Literal["saved", "trusted", "not saved"]
    why: str = ""
    option: bool = False
    """Saved inside ``request_options`` (a field of the same name), not as its own key."""


_CODE = "code (a callable or tool objects) is not saved: give it again to Agent.load"
_LOOSENS = "loosens the approval boundary: loaded only with trust_settings=True"

SETTINGS: Mapping[str, Kept] = {
    "model": Kept("saved"),
    "tools": Kept("not saved", _CODE),
    "system": Kept("saved"),
    "approval": Kept("trusted", "a file's policy applies only when stricter than the caller's"),
    "approver": Kept("not saved", _CODE),
    "permission": Kept("not saved", _CODE),
    "rules": Kept("trusted", "a file's allow rules would let calls run without a click"),
    "max_turns": Kept("saved"),
    "max_tokens": Kept("saved"),
    "middlewares": Kept("not saved", _CODE),
    "on_event": Kept("not saved", _CODE),
    "messages": Kept("saved", "the conversation itself, with its usage"),
    "thinking": Kept("saved", option=True),
    "effort": Kept("saved", option=True),
    "server_tools": Kept("trusted", "the API runs server tools without asking", option=True),
    "tool_choice": Kept("saved", option=True),
    "disable_parallel_tool_use": Kept("saved", "kept inside tool_choice", option=True),
    "temperature": Kept("saved", option=True),
    "top_p": Kept("saved", option=True),
    "stop_sequences": Kept("saved", option=True),
    "compaction": Kept("saved", option=True),
    "clear_tool_results": Kept("saved", option=True),
    "sandbox": Kept(
        "not saved",
        "where shell calls run is the session's choice (Agent(sandbox=), %nbtools sandbox); "
        "a file never picks it",
    ),
    "budget_usd": Kept("saved"),
    "cache_ttl": Kept("saved", option=True),
    "tool_search": Kept("saved", option=True),
    "memory": Kept("trusted", "the memory tool writes files in the folder named"),
    "mcp_servers": Kept(
        "trusted",
        "the API calls a remote MCP server's tools without asking; authorization tokens are "
        "never written (give mcp_servers again)",
        option=True,
    ),
    "citations": Kept("saved"),
    "upload_attachments": Kept("saved"),
}

# Written by _persist.agent_dict under their own keys (the file format predates this table).
_OWN_KEYS = frozenset({"model", "system", "approval", "rules", "max_turns", "max_tokens"})


def _value(agent: Agent, name: str) -> Any:
    if name == "memory":
        return False if agent.memory is None else str(agent.memory)
    return getattr(agent, name)


def saved_settings(agent: Agent) -> dict[str, Any]:
    """The settings ``Agent.save`` writes under their own keys, beside the ones the file
    format had before (model, system, policy, rules, turns, tokens, request options)."""
    return {
        name: _value(agent, name)
        for name, kept in SETTINGS.items()
        if kept.how != "not saved"
        and not kept.option
        and name not in _OWN_KEYS
        and name != "messages"
    }


def settings_kwargs(data: Mapping[str, Any], *, trust: bool) -> dict[str, Any]:
    """``Agent(...)`` arguments from a saved file: the saved settings, and the trusted
    ones only with ``trust`` (the policy and the rules excepted: the caller reads them)."""
    out: dict[str, Any] = {}
    for name, kept in SETTINGS.items():
        if kept.how == "not saved" or kept.option or name in _OWN_KEYS or name == "messages":
            continue
        if name in data and (kept.how == "saved" or trust):
            value = data[name]
            out[name] = Path(value) if name == "memory" and isinstance(value, str) else value
    options = data.get("request_options")
    if isinstance(options, Mapping):
        out.update(_options_kwargs(options, trust=trust))
    return out


def _options_kwargs(options: Mapping[str, Any], *, trust: bool) -> dict[str, Any]:
    """The saved request options as ``Agent(...)`` arguments (``RequestOptions.make``
    takes back what it made: the API's thinking and tool-choice objects as they are)."""
    from nb_tools.agent._persist import decode
    from nb_tools.agent._turns import RequestOptions

    out: dict[str, Any] = {}
    for f in dataclasses.fields(RequestOptions):
        kept = SETTINGS.get(f.name)
        if f.name not in options or kept is None or not kept.option:
            continue
        if kept.how == "trusted" and not trust:
            continue
        out[f.name] = decode(options[f.name])
    return out
