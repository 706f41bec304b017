"""Agent.save / Agent.load keep every constructor argument that is a setting: each argument
is in the one table (saved, trusted, or not saved with a reason), and a round trip of an
agent with every setting changed from its default gives the same settings back."""

from __future__ import annotations

import inspect
import json
from pathlib import Path
from typing import Any

from nb_tools.agent import Agent
from nb_tools.agent._persist import agent_dict
from nb_tools.agent._saved_settings import SETTINGS
from nb_tools.permissions import PermissionRules
from nb_tools.testing import ScriptedModel

TOKEN = "secret-token-never-saved"


def changed_settings(tmp_path: Path) -> dict[str, Any]:
    """A value other than the default for every setting the file keeps."""
    rules = PermissionRules(root=tmp_path)
    rules.deny("bash(rm:*)")
    return {
        "model": "claude-sonnet-4-5",
        "system": "Be brief.",
        "approval": "read-only",
        "rules": rules,
        "max_turns": 7,
        "max_tokens": 1234,
        "messages": (),
        "thinking": 2048,
        "effort": "low",
        "server_tools": ("web_search",),
        "tool_choice": "auto",
        "disable_parallel_tool_use": True,
        "temperature": 1.0,
        "top_p": 0.5,
        "stop_sequences": ("STOP",),
        "compaction": False,
        "clear_tool_results": False,
        "budget_usd": 0.25,
        "cache_ttl": "5m",
        "tool_search": True,
        "memory": tmp_path / "project",
        "mcp_servers": (
            {"name": "crm", "url": "https://mcp.example.com/sse", "authorization_token": TOKEN},
        ),
        "citations": True,
        "upload_attachments": True,
    }


def test_every_constructor_argument_is_saved_or_excluded_with_a_reason() -> None:
    params = set(inspect.signature(Agent.__init__).parameters) - {"self"}
    assert set(SETTINGS) == params, (
        "a new Agent(...) argument: add it to nb_tools.agent._saved_settings.SETTINGS "
        "(saved, trusted, or not saved with why)"
    )
    assert all(k.why for k in SETTINGS.values() if k.how != "saved")


def test_a_round_trip_keeps_every_setting(tmp_path: Path) -> None:
    values = changed_settings(tmp_path)
    kept = {n for n, k in SETTINGS.items() if k.how != "not saved"}
    assert set(values) == kept  # a new saved setting needs a value here
    defaults = {n: p.default for n, p in inspect.signature(Agent.__init__).parameters.items()}
    for name, value in values.items():
        if name not in ("messages", "approval", "rules"):
            assert value != defaults[name], name
    original = Agent(**values)
    original.save(tmp_path / "chat.json")
    text = (tmp_path / "chat.json").read_text()
    assert TOKEN not in text

    loaded = Agent.load(tmp_path / "chat.json", approval="auto", trust_settings=True)
    before, after = agent_dict(original), agent_dict(loaded)
    before["request_options"]["mcp_servers"][0].pop("authorization_token", None)
    assert after == json.loads(json.dumps(before))
    assert loaded.memory == tmp_path / "project"
    assert loaded.budget_usd == 0.25 and loaded.citations and loaded.upload_attachments
    assert loaded.approval == "read-only"  # stricter than the caller's "auto"
    assert loaded.request_options.server_tools == ("web_search",)
    assert [s["name"] for s in loaded.request_options.mcp_servers] == ["crm"]
    assert loaded.request_options.tool_choice == {
        "type": "auto",
        "disable_parallel_tool_use": True,
    }


def test_untrusted_load_leaves_out_what_loosens_the_boundary(tmp_path: Path) -> None:
    Agent(**changed_settings(tmp_path)).save(tmp_path / "chat.json")
    plain = Agent.load(tmp_path / "chat.json", model=ScriptedModel([]))
    assert plain.memory is None and plain.rules is None and plain.approval == "ask"
    assert plain.request_options.server_tools == ()
    assert plain.request_options.mcp_servers == ()
    # the rest comes back
    assert plain.budget_usd == 0.25 and plain.citations and plain.upload_attachments
    assert plain.request_options.cache_ttl == "5m" and plain.request_options.effort == "low"
    for name, kept in SETTINGS.items():
        if kept.how == "trusted" and name not in ("approval", "rules"):
            default = inspect.signature(Agent.__init__).parameters[name].default
            fresh = Agent(ScriptedModel([]), **{name: default})
            if kept.option:
                assert getattr(plain.request_options, name) == getattr(
                    fresh.request_options, name
                ), name
            else:
                assert getattr(plain, name) == getattr(fresh, name), name


def test_the_callers_arguments_win_over_the_file(tmp_path: Path) -> None:
    Agent(**changed_settings(tmp_path)).save(tmp_path / "chat.json")
    agent = Agent.load(
        tmp_path / "chat.json",
        model=ScriptedModel([]),
        thinking=None,
        cache_ttl="1h",
        budget_usd=None,
    )
    assert agent.request_options.thinking is None
    assert agent.request_options.cache_ttl == "1h"
    assert agent.budget_usd is None
