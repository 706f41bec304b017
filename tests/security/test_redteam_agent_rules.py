"""Red team: generic permission rules (``tool(glob)``) read the argument the tool means,
not whatever the model put first. The model controls the order of the keys in its
arguments (and, for an MCP tool whose schema is sent as is, which keys there are), so a
rule that globbed "the first string value" let ``{"note": "SELECT 1", "sql": "DROP ..."}``
through an ``allow query(SELECT *)`` rule and ``{"body": "hi", "to": "x@evil"}`` past a
``deny send(*@evil)`` rule. Effects are checked on a real MCP server process (its log) and
on files an in-process tool writes."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from approvals_helpers import Approver, call, drive

from nb_tools import tool
from nb_tools.mcp import attach
from nb_tools.permissions import PermissionRules
from nb_tools.tool import Registry

SERVER = str(Path(__file__).with_name("redteam_mcp_server.py"))


@pytest.fixture(scope="module")
def mcp_log(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Registry, Path]]:
    """One real MCP server process for the module; ``log`` holds every effect it had."""
    log = tmp_path_factory.mktemp("rt") / "effects.log"
    log.write_text("")
    registry = Registry()
    handle = asyncio.run(
        attach(registry, "rt", command=[sys.executable, SERVER], env={"REDTEAM_LOG": str(log)})
    )
    try:
        yield registry, log
    finally:
        asyncio.run(handle.close())


def _tools(registry: Registry) -> list[object]:
    return [registry.get(n) for n in registry.names()]


async def test_an_allow_glob_is_not_matched_by_an_extra_key_put_first(
    mcp_log: tuple[Registry, Path],
) -> None:
    registry, log = mcp_log
    rules = PermissionRules()
    rules.allow("mcp__rt__query(SELECT *)")
    approver = Approver(answers=[False])
    out = await drive(
        [call("mcp__rt__query", note="SELECT 1", sql="DELETE FROM users", id="q")],
        tools=_tools(registry),
        rules=rules,
        approver=approver,
    )
    assert "DELETE" not in log.read_text()
    assert approver.asked == ["q"]  # the person was asked, and said no
    assert out.status("q") == "denied"


async def test_an_allow_glob_still_matches_its_own_argument(
    mcp_log: tuple[Registry, Path],
) -> None:
    """The regression guard's other side: the rule still allows what it names."""
    registry, log = mcp_log
    rules = PermissionRules()
    rules.allow("mcp__rt__query(SELECT *)")
    approver = Approver(answers=[False])
    await drive(
        [call("mcp__rt__query", note="DELETE", sql="SELECT name FROM users", id="q")],
        tools=_tools(registry),
        rules=rules,
        approver=approver,
    )
    assert "query SELECT name FROM users" in log.read_text()
    assert approver.asked == []


async def test_a_deny_glob_is_not_dodged_by_key_order(mcp_log: tuple[Registry, Path]) -> None:
    registry, log = mcp_log
    rules = PermissionRules()
    rules.deny("mcp__rt__send(*@evil.example)")
    out = await drive(
        [call("mcp__rt__send", body="hi", to="boss@evil.example", id="s")],
        tools=_tools(registry),
        rules=rules,
        approval="auto",
    )
    assert "evil.example" not in log.read_text()
    assert out.status("s") == "denied"


async def test_a_deny_glob_sees_an_undeclared_key_the_server_may_read(
    mcp_log: tuple[Registry, Path],
) -> None:
    """An MCP tool's schema is not enforced here (the server's own), so an undeclared key
    could be what the server acts on: a deny or ask rule matching any string argument
    refuses (fail closed)."""
    registry, log = mcp_log
    rules = PermissionRules()
    rules.deny("mcp__rt__query(DROP *)")
    out = await drive(
        [call("mcp__rt__query", sql="SELECT 1", statement="DROP TABLE users", id="q")],
        tools=_tools(registry),
        rules=rules,
        approval="auto",
    )
    assert out.status("q") == "denied"
    assert "SELECT 1" not in log.read_text()


async def test_a_user_tool_rule_reads_the_declared_first_parameter(tmp_path: Path) -> None:
    sent = tmp_path / "sent"
    sent.mkdir()

    @tool(requires_approval=True)
    def send_email(to: str, body: str) -> str:
        """Send an email."""
        (sent / to).write_text(body)
        return "sent"

    rules = PermissionRules()
    rules.allow("send_email(*@corp.example)")
    approver = Approver(answers=[False])
    await drive(
        [
            call("send_email", body="me@corp.example", to="attacker@evil.example", id="a"),
            call("send_email", to="me@corp.example", body="report", id="b"),
        ],
        tools=[send_email],
        rules=rules,
        approver=approver,
    )
    assert not (sent / "attacker@evil.example").exists()
    assert (sent / "me@corp.example").read_text() == "report"
    assert approver.asked == ["a"]


async def test_a_deny_glob_sees_strings_inside_lists(tmp_path: Path) -> None:
    sent = tmp_path / "sent"
    sent.mkdir()

    @tool(requires_approval=True)
    def send_all(recipients: list[str], body: str) -> str:
        """Send an email to each recipient."""
        for to in recipients:
            (sent / to).write_text(body)
        return "sent"

    rules = PermissionRules()
    rules.deny("send_all(*@evil.example)")
    await drive(
        [call("send_all", recipients=["me@corp.example", "x@evil.example"], body="hi", id="s")],
        tools=[send_all],
        rules=rules,
        approval="auto",
    )
    assert list(sent.iterdir()) == []
