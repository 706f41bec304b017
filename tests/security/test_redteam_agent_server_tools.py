"""Red team: a server tool (the API runs it: ``web_fetch``, ``web_search``) cannot honour
a rule's specifier, so any deny or ask rule naming it keeps it out of the request. Before,
only a rule without a specifier did: ``deny web_fetch(domain:evil.example)`` left the
API's ``web_fetch`` declared, and the API would fetch evil.example without anyone asked.
The effect of a server tool happens at the API, so the test reads what the request
declares, on the fake Messages server (real HTTP on loopback)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from nb_tools import tool
from nb_tools.agent import Agent
from nb_tools.agent._notices import RunNotice
from nb_tools.model.anthropic import AnthropicProvider
from nb_tools.permissions import PermissionRules
from nb_tools.testing import reply
from nb_tools.testing.server import FakeMessagesServer


@tool
def add(a: int, b: int) -> int:
    """Add."""
    return a + b


@pytest.fixture
async def server() -> AsyncIterator[FakeMessagesServer]:
    with FakeMessagesServer() as s:
        yield s


async def declared(server: FakeMessagesServer, rules: PermissionRules) -> tuple[list[Any], list]:
    server.push(reply("ok"))
    notes: list[RunNotice] = []
    provider = AnthropicProvider(
        "claude-sonnet-4-5", base_url=server.base_url, api_key="test", max_retries=0
    )
    try:
        agent = Agent(
            provider,
            tools=[add],
            rules=rules,
            approval="auto",
            server_tools=["web_search", "web_fetch"],
            on_event=lambda e: notes.append(e) if isinstance(e, RunNotice) else None,
        )
        await agent.run("hi")
    finally:
        await provider.client.close()
    (request,) = [r for r in server.requests if r.path == "/v1/messages"]
    return [t.get("name") for t in request.body["tools"]], [n.message for n in notes]


@pytest.mark.parametrize(
    "rule",
    ["web_fetch(domain:evil.example)", "WEB_FETCH(domain:*.evil.example)", "web_f*(x)"],
)
async def test_a_deny_rule_with_a_specifier_keeps_the_server_tool_out(
    server: FakeMessagesServer, rule: str
) -> None:
    rules = PermissionRules()
    rules.deny(rule)
    names, notes = await declared(server, rules)
    assert names == ["add", "web_search"]
    assert any("web_fetch not declared" in n for n in notes)


async def test_an_ask_rule_with_a_specifier_keeps_the_server_tool_out(
    server: FakeMessagesServer,
) -> None:
    rules = PermissionRules()
    rules.ask("web_search(secret*)")
    names, _ = await declared(server, rules)
    assert names == ["add", "web_fetch"]


async def test_an_allow_rule_or_another_tools_rule_changes_nothing(
    server: FakeMessagesServer,
) -> None:
    """The guard's other side: rules that do not restrict the server tools keep them."""
    rules = PermissionRules()
    rules.allow("web_fetch(domain:docs.python.org)")
    rules.deny("bash(rm:*)")
    names, _ = await declared(server, rules)
    assert names == ["add", "web_search", "web_fetch"]


async def declared_under(
    server: FakeMessagesServer, approval: str, rules: PermissionRules | None = None
) -> list[Any]:
    server.push(reply("ok"))
    provider = AnthropicProvider(
        "claude-sonnet-4-5", base_url=server.base_url, api_key="test", max_retries=0
    )
    try:
        agent = Agent(
            provider,
            tools=[add],
            rules=rules,
            approval=approval,  # type: ignore[arg-type]
            server_tools=["web_search", "web_fetch"],
        )
        await agent.run("hi")
    finally:
        await provider.client.close()
    (request,) = [r for r in server.requests if r.path == "/v1/messages"]
    return [t.get("name") for t in request.body["tools"]]


@pytest.mark.parametrize("approval", ["read-only", "deny"])
async def test_plan_mode_and_deny_declare_no_server_tool_unless_a_rule_allows_it(
    server: FakeMessagesServer, approval: str
) -> None:
    """Plan mode refuses a local web_fetch that no rule allows; the API's web_fetch would
    fetch any URL there without anyone asked."""
    assert await declared_under(server, approval) == ["add"]


async def test_an_allow_rule_declares_it_in_plan_mode(server: FakeMessagesServer) -> None:
    rules = PermissionRules()
    rules.allow("web_search")
    assert await declared_under(server, "read-only", rules) == ["add", "web_search"]


async def test_ask_still_declares_the_server_tools(server: FakeMessagesServer) -> None:
    assert await declared_under(server, "ask") == ["add", "web_search", "web_fetch"]
