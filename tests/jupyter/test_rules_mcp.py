"""Permission rules and MCP servers in the notebook: ``%nbtools``, ``%mcp``, ``%tools``
grouping, transcripts naming the deciding rule; unit checks, then one real kernel (with a
project ``.nb_tools/settings.json`` in its folder) against the fake Messages API server."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from IPython.core.error import UsageError
from kernel_helpers import TRANSCRIPT, Execution, Kernel, clicker

from nb_tools import tool
from nb_tools.agent import Agent
from nb_tools.jupyter._rules_mcp import parse_mcp, split_rules
from nb_tools.jupyter._transform import agent_cell_transformer
from nb_tools.permissions import PermissionRules
from nb_tools.testing import FakeMessagesServer, ScriptedModel, call, reply
from nb_tools.transcript._html import transcript_bundle
from nb_tools.transcript._recorder import TranscriptRecorder

ROOT = Path(__file__).resolve().parents[2]
DEMO_SERVER = ROOT / "tests" / "mcp" / "demo_server.py"
PROJECT_RULES = {
    "permissions": {"allow": ["drop_table(scratch_*)"], "deny": ["mcp__demo__write_note"]}
}

# -- without a kernel ----------------------------------------------------------------------


def test_rules_split_on_spaces_outside_parentheses() -> None:
    assert split_rules("bash(git log:*)  web_fetch 'edit_file(a b/**)'") == [
        "bash(git log:*)",
        "web_fetch",
        "edit_file(a b/**)",
    ]
    assert split_rules("") == []


def test_mcp_lines_parse_and_bad_ones_say_why() -> None:
    args, command = parse_mcp("add fs --env A=1 --env B=x=y -- python -m srv --flag 'a b'")
    assert (args.command, args.name, args.env) == ("add", "fs", ["A=1", "B=x=y"])
    assert command == ["python", "-m", "srv", "--flag", "a b"]
    args, command = parse_mcp("add web --url http://127.0.0.1:9/mcp")
    assert (args.url, command, args.trust_hints) == ("http://127.0.0.1:9/mcp", [], False)
    args, command = parse_mcp("add fs --trust-hints --sandbox read-only -- python s.py")
    assert (args.trust_hints, args.sandbox, command) == (True, "read-only", ["python", "s.py"])
    for line, problem in [
        ("add fs", "either a command after --"),
        ("add fs --url http://x -- python s.py", "not both"),
        ("add -- python s.py", "name the server"),
        ("add fs --env NOEQUALS -- python s.py", "KEY=VALUE"),
        ("add fs --env A=1 --url http://x", "--env is for stdio"),
        ("remove", "name the server"),
        ("list -- python", "are for %mcp add"),
        ("list --trust-hints", "are for %mcp add"),
        ("add web --sandbox read-only --url http://x", "--sandbox is for stdio"),
        ("add fs --sandbox off -- python s.py", "invalid choice"),
        ("frobnicate", "invalid choice"),
    ]:
        with pytest.raises(UsageError, match=problem):
            parse_mcp(line)


def test_transformer_awaits_mcp_lines_and_leaves_the_rest() -> None:
    out = agent_cell_transformer(["x = 1\n", "%mcp add fs -- python s.py\n", "%mcp list\n"])
    assert out[0] == "x = 1\n"
    assert out[1].startswith("await ") and "run_mcp_magic_async('add fs -- python s.py')" in out[1]
    assert "run_mcp_magic_async('list')" in out[2]
    assert agent_cell_transformer(["if x:\n", "    %mcp list\n"]) == ["if x:\n", "    %mcp list\n"]
    assert agent_cell_transformer(["%mcpx\n"]) == ["%mcpx\n"]


@tool(register=False, requires_approval=True)
def drop_table(table: str) -> str:
    """Drop a table."""
    return f"dropped {table}"


def test_the_deciding_rule_reaches_the_transcript_and_its_renderings() -> None:
    rules = PermissionRules()
    rules.deny("drop_table(users*)")
    rules.allow("drop_table(scratch_*)", source="project")
    model = ScriptedModel(
        [
            reply("", call("drop_table", table="users"), call("drop_table", table="scratch_1")),
            reply("done"),
        ]
    )
    recorder = TranscriptRecorder("go")
    Agent(model, tools=[drop_table], rules=rules, on_event=recorder).run_sync("go")
    bundle = transcript_bundle(recorder.to_dict())
    tools = [i for i in bundle[TRANSCRIPT]["items"] if i["kind"] == "tool"]
    assert [(t["status"], t["approval"]["by"]) for t in tools] == [
        ("denied", "rule:deny drop_table(users*) [session]"),
        ("ok", "rule:allow drop_table(scratch_*) [project]"),
    ]
    assert "Denied by rule:deny drop_table(users*) [session]" in bundle["text/html"]
    assert "Approved by rule:allow drop_table(scratch_*) [project]" in bundle["text/html"]
    assert "denied by rule:deny drop_table(users*) [session]" in bundle["text/plain"]
    assert "approved by rule:allow drop_table(scratch_*) [project]" in bundle["text/plain"]


# -- in a real kernel ----------------------------------------------------------------------

SETUP = '''
%load_ext nb_tools
from nb_tools import tool
from nb_tools.tool import default_registry
ran = []

@tool(requires_approval=True)
def drop_table(table: str) -> str:
    """Drop a table."""
    ran.append(table)
    return f"dropped {table}"

@tool(requires_approval=True)
def ping() -> str:
    """Ping (needs approval)."""
    return "pong"
'''


@pytest.fixture(scope="module")
def kernel(
    server: FakeMessagesServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Kernel]:
    """A kernel whose folder has a project settings file, and an empty user config dir."""
    folder = tmp_path_factory.mktemp("project")
    (folder / ".nb_tools").mkdir()
    (folder / ".nb_tools" / "settings.json").write_text(json.dumps(PROJECT_RULES))
    config = tmp_path_factory.mktemp("config")
    # The kernel inherits os.environ, PYTEST_CURRENT_TEST included: ipykernel then leaves
    # fd 2 alone and sys.stderr has no fileno(), as on Windows; %mcp add must cope.
    saved = {k: os.environ.get(k) for k in ("XDG_CONFIG_HOME",)}
    os.environ["XDG_CONFIG_HOME"] = str(config)
    try:
        k = Kernel(server, folder)
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    try:
        k.ok(SETUP)
        yield k
    finally:
        k.close()


def transcript_of(ex: Execution) -> dict:
    assert not ex.errors, ex.errors[0].get("traceback")
    return ex.displays[-1]["data"][TRANSCRIPT]


def tool_results(server: FakeMessagesServer) -> dict[str, dict]:
    body = server.requests[-1].body
    blocks = [b for b in body["messages"][-1]["content"] if b.get("type") == "tool_result"]
    return {b["tool_use_id"]: b for b in blocks}


def text_of(block: dict) -> str:
    content = block["content"]
    return content if isinstance(content, str) else "".join(c.get("text", "") for c in content)


@pytest.mark.kernel
def test_rules_from_the_magic_and_the_project_file_decide_without_a_click(
    kernel: Kernel, server: FakeMessagesServer
) -> None:
    bad = kernel.run("%nbtools deny bash(")
    stderr = "".join(o.get("text", "") for o in bad.outputs if o.get("name") == "stderr")
    assert stderr.startswith("UsageError: %nbtools deny: permission rule 'bash('"), bad.outputs
    assert "expected TOOL or TOOL(SPECIFIER)" in stderr
    assert bad.reply["status"] == "error"
    listed = kernel.ok("%nbtools deny drop_table(users*)\n%nbtools rules").stdout
    assert "deny   drop_table(users*)" in listed and "[session]" in listed
    assert "allow  drop_table(scratch_*)" in listed and "[project]" in listed

    server.push(
        reply(
            "",
            call("drop_table", table="users", id="t_users"),
            call("drop_table", table="scratch_1", id="t_scratch"),
        ),
        reply("done"),
    )
    ex = kernel.run("%%agent --new\nDrop users and scratch_1")
    transcript = transcript_of(ex)
    assert not ex.buttons("Approve")  # the rules decided both calls
    tools = {i["id"]: i for i in transcript["items"] if i["kind"] == "tool"}
    assert tools["t_users"]["approval"]["by"] == "rule:deny drop_table(users*) [session]"
    assert tools["t_users"]["status"] == "denied"
    assert tools["t_scratch"]["approval"]["by"] == "rule:allow drop_table(scratch_*) [project]"
    results = tool_results(server)
    assert results["t_users"]["is_error"] and "drop_table(users*)" in text_of(results["t_users"])
    assert text_of(results["t_scratch"]) == "dropped scratch_1"
    assert kernel.ok("print(ran)").stdout.strip() == "['scratch_1']"
    html = ex.displays[-1]["data"]["text/html"]
    assert "Denied by rule:deny drop_table(users*) [session]" in html

    forgot = kernel.ok("%nbtools forget drop_table(users*)").stdout
    assert "drop_table(users*)" not in forgot.split("\n", 1)[1]


@pytest.mark.kernel
def test_always_allow_writes_a_session_rule(kernel: Kernel, server: FakeMessagesServer) -> None:
    server.push(reply("", call("ping")), reply("", call("ping")), reply("pong twice"))
    ex = kernel.run("%%agent\nPing twice", on_message=clicker("Always allow ping"))
    transcript = transcript_of(ex)
    assert len(ex.buttons("Always allow ping")) == 1
    bys = [i["approval"]["by"] for i in transcript["items"] if i["kind"] == "tool"]
    assert bys == ["user", "rule:allow ping [session]"]
    assert "allow  ping" in kernel.ok("%nbtools rules").stdout


@pytest.mark.kernel
def test_mcp_server_tools_in_a_run_then_removed(kernel: Kernel, server: FakeMessagesServer) -> None:
    ex = kernel.ok(f"%mcp add demo --trust-hints -- {sys.executable} {DEMO_SERVER}", timeout=90)
    assert "MCP server 'demo' connected: 9 tool(s)" in ex.stdout, ex.outputs
    listed = kernel.ok("%mcp list").stdout
    assert listed.startswith("demo: connected, command ") and "  mcp__demo__add" in listed
    inspector = kernel.ok("%tools").displays[-1]["data"]["text/html"]
    assert "MCP server demo</b> · 9 tool(s)" in inspector and "Permission rules" in inspector
    assert inspector.index("<b>drop_table</b>") < inspector.index("MCP server demo")

    server.push(
        reply(
            "",
            call("mcp__demo__add", a=2, b=3, id="t_add"),
            call("mcp__demo__write_note", text="x", id="t_note"),
        ),
        reply("done"),
    )
    ex = kernel.run("%%agent\nAdd 2 and 3, write a note")
    transcript = transcript_of(ex)
    assert not ex.buttons("Approve")
    results = tool_results(server)
    assert text_of(results["t_add"]) == "5" and not results["t_add"].get("is_error")
    assert results["t_note"]["is_error"] and "noted" not in text_of(results["t_note"])
    tools = {i["id"]: i for i in transcript["items"] if i["kind"] == "tool"}
    assert tools["t_note"]["approval"]["by"] == "rule:deny mcp__demo__write_note [project]"

    # the plain magic (not rewritten by the transformer) runs the coroutine on a thread
    removed = kernel.ok('get_ipython().run_line_magic("mcp", "remove demo")').stdout
    assert "MCP server 'demo' removed with its 9 tool(s)" in removed
    left = kernel.ok("print([n for n in default_registry().names() if n.startswith('mcp__')])")
    assert left.stdout.strip() == "[]"
    assert kernel.ok("%mcp list").stdout.startswith("no MCP servers attached")
    assert "drop_table" in kernel.ok("print(default_registry().names())").stdout


def test_reload_rereads_the_settings_files_and_keeps_session_rules(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from nb_tools.jupyter._rules_mcp import nbtools_command
    from nb_tools.jupyter._session import Session

    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.chdir(tmp_path)
    settings = tmp_path / ".nb_tools" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({"permissions": {"deny": ["bash(rm:*)"]}}))
    session = Session()
    rules = session.rules
    nbtools_command("allow read_file", session)
    settings.write_text(json.dumps({"permissions": {"ask": ["web_fetch"]}}))
    text = nbtools_command("reload", session)
    assert session.rules is rules  # agents holding it see the change
    assert [(r.action, r.text, r.source) for r in rules.rules] == [
        ("ask", "web_fetch", "project"),
        ("allow", "read_file", "session"),
    ]
    assert "ask    web_fetch  [project]" in text and "bash(rm:*)" not in text
    settings.write_text("{not json")
    with pytest.raises(UsageError, match=r"settings\.json: cannot read.*%nbtools reload"):
        nbtools_command("reload", session)
    assert nbtools_command("", session) == nbtools_command("rules", session)
    with pytest.raises(UsageError, match="no rule 'nope'"):
        nbtools_command("forget nope", session)
    with pytest.raises(UsageError, match="unknown command 'permit'"):
        nbtools_command("permit bash", session)


async def test_mcp_add_url_that_does_not_answer_is_a_usage_error() -> None:
    import socket

    from nb_tools.jupyter._rules_mcp import mcp_command

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(UsageError, match=r"%mcp add web: MCP server 'web': could not connect"):
        await mcp_command(f"add web --url http://127.0.0.1:{port}/mcp")
    assert "web" not in (await mcp_command("list"))
