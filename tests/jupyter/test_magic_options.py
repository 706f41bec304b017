"""``%%agent`` options: --system quoted or not, and kept when a later cell changes --model."""

from __future__ import annotations

import json
from typing import Any

import pytest
from IPython.core.error import UsageError

from nb_tools.jupyter._magics import parse
from nb_tools.testing import reply


@pytest.mark.parametrize(
    ("line", "system", "model"),
    [
        ('--system "You are terse."', "You are terse.", None),
        ("--system 'Be brief.' --model demo", "Be brief.", "demo"),
        ("--system You are a careful reviewer --model demo", "You are a careful reviewer", "demo"),
        ('--system="a b"', "a b", None),
        ("--model demo", None, "demo"),
    ],
)
def test_system_prompt_forms(line: str, system: str | None, model: str | None) -> None:
    args = parse(line)
    assert (args.system, args.model) == (system, model)


def test_unbalanced_quotes_name_the_fix() -> None:
    with pytest.raises(UsageError, match="close the quotes"):
        parse('--system "oops')


async def test_system_is_kept_when_a_later_cell_changes_the_model() -> None:
    from nb_tools.jupyter import run_agent
    from nb_tools.jupyter._session import reset_session
    from nb_tools.testing import ScriptedModel, reply

    reset_session()
    try:
        first, second = ScriptedModel([reply("one")]), ScriptedModel([reply("two")])
        await run_agent("a", model=first, system="Be brief.", show=False, approval="deny")
        await run_agent("b", model=second, show=False, approval="deny")
        assert first.requests[0].system == "Be brief."
        assert second.requests[0].system == "Be brief."
        assert [m.text for m in second.requests[0].messages] == ["a", "one", "b"]
    finally:
        reset_session()


async def test_claude_feature_options_reach_the_request(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    """--cache-ttl, --tool-search, --mcp-server, --memory, --cite and --upload, from the
    magic's line to the request the fake Messages server receives, and kept for later
    runs."""
    from nb_tools.jupyter._magics import run_magic
    from nb_tools.jupyter._session import get_session, reset_session
    from nb_tools.testing import FakeMessagesServer

    doc = tmp_path / "notes.txt"
    doc.write_text("the notes")
    monkeypatch.chdir(tmp_path)
    with FakeMessagesServer([reply("one"), reply("two")]) as server:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
        monkeypatch.setenv("NB_TOOLS_MODEL", "claude-sonnet-4-5")
        reset_session()
        try:
            line = (
                "--new --cache-ttl 5m --tool-search on --memory --cite --upload "
                f"--mcp-server crm=https://mcp.crm.example --attach {doc}"
            )
            await run_magic(line, "hello")
            await run_magic("", "again")
            agent = get_session().agent
            assert agent is not None
            await agent.provider.client.close()  # type: ignore[attr-defined]
        finally:
            reset_session()
    messages = [r for r in server.requests if r.path.startswith("/v1/messages")]
    assert len(messages) == 2 and len(server.files) == 1
    for request in messages:
        body = request.body
        assert '"ttl": "5m"' in json.dumps(body) and '"ttl": "1h"' not in json.dumps(body)
        assert body["mcp_servers"] == [
            {"type": "url", "name": "crm", "url": "https://mcp.crm.example"}
        ]
        names = [t.get("name") or t.get("type") for t in body["tools"]]
        assert "memory" in names and "mcp_toolset" in names
        document = body["messages"][0]["content"][0]
        assert document["source"]["type"] == "file" and document["citations"] == {"enabled": True}
