"""Permission rules as a table of (rule set, call) -> decision, dodges included."""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

import pytest

from nb_tools.permissions import PermissionRules, load_rules, parse_rule


class McpTool:
    def __init__(self, server: str) -> None:
        self.mcp_server = server


@functools.cache
def builtin_tool(name: str) -> Any:
    """The built-in tool called ``name`` (the rules read what it declares)."""
    from nb_tools.builtin import ReadState, TextEditorTool, Workspace, builtin_tools

    tools = {t.info().name: t for t in builtin_tools(".")}
    tools["str_replace_based_edit_tool"] = TextEditorTool(Workspace("."), ReadState())
    return tools.get(name)


def decide(
    rules: list[tuple[str, str]],
    name: str,
    args: dict,
    tool: object = None,
    root: Path = Path("/srv/proj"),
) -> str | None:
    pr = PermissionRules(root=root)
    for action, text in rules:
        pr.add(action, text)  # type: ignore[arg-type]
    match = pr.check(name, json.dumps(args), tool if tool is not None else builtin_tool(name))
    return None if match is None else match.action


GIT_LOG = [("allow", "bash(git log:*)")]
CASES = [
    # bash prefixes
    (GIT_LOG, "bash", {"command": "git log"}, None, "allow"),
    (GIT_LOG, "bash", {"command": "git log --oneline -5"}, None, "allow"),
    (GIT_LOG, "bash", {"command": "git   log  -5"}, None, "allow"),
    (GIT_LOG, "bash", {"command": "git logx"}, None, None),
    (GIT_LOG, "bash", {"command": "git log && rm -rf /"}, None, None),
    (GIT_LOG, "bash", {"command": "git log; rm -rf /"}, None, None),
    (GIT_LOG, "bash", {"command": "git log | sh"}, None, None),
    (GIT_LOG, "bash", {"command": "git log $(rm -rf /)"}, None, None),
    (GIT_LOG, "bash", {"command": "git log `rm -rf /`"}, None, None),
    (GIT_LOG, "bash", {"command": "git log > /etc/passwd"}, None, None),
    (GIT_LOG, "bash", {"command": "git log\nrm -rf /"}, None, None),
    (GIT_LOG, "bash", {"command": "git log & rm x"}, None, None),
    (GIT_LOG, "bash", {"command": "git log 2>&1"}, None, "allow"),
    (GIT_LOG, "Bash", {"command": "git log"}, None, None),  # allow is exact on names
    (
        [("allow", "bash(git log:*)"), ("allow", "bash(wc:*)")],
        "bash",
        {"command": "git log | wc -l"},
        None,
        "allow",
    ),
    ([("allow", "bash(npm test)")], "bash", {"command": "npm test"}, None, "allow"),
    ([("allow", "bash(npm test)")], "bash", {"command": "npm test --watch"}, None, None),
    # deny wins, any part, case-insensitive name
    (
        [("allow", "bash"), ("deny", "bash(rm:*)")],
        "bash",
        {"command": "ls && rm -rf x"},
        None,
        "deny",
    ),
    ([("deny", "BASH(rm:*)")], "bash", {"command": "rm x"}, None, "deny"),
    (
        [("allow", "bash"), ("ask", "bash(git push:*)")],
        "bash",
        {"command": "git push"},
        None,
        "ask",
    ),
    ([("ask", "bash"), ("deny", "bash")], "bash", {"command": "ls"}, None, "deny"),
    # file paths
    (
        [("allow", "edit_file(notebooks/**)")],
        "edit_file",
        {"file_path": "notebooks/a.py"},
        None,
        "allow",
    ),
    (
        [("allow", "edit_file(notebooks/**)")],
        "edit_file",
        {"file_path": "notebooks/sub/b.py"},
        None,
        "allow",
    ),
    ([("allow", "edit_file(notebooks/**)")], "edit_file", {"file_path": "src/a.py"}, None, None),
    (
        [("allow", "edit_file(notebooks/**)")],
        "edit_file",
        {"file_path": "notebooks/../src/a.py"},
        None,
        None,
    ),
    (
        [("allow", "edit_file(notebooks/**)")],
        "edit_file",
        {"file_path": "/srv/proj/notebooks/a.py"},
        None,
        "allow",
    ),
    (
        [("allow", "edit_file(notebooks/**)")],
        "edit_file",
        {"file_path": "/srv/proj/../proj2/notebooks/a.py"},
        None,
        None,
    ),
    (
        [("allow", "edit_file(notebooks/**)")],
        "edit_file",
        {"file_path": "~/notebooks/a.py"},
        None,
        None,
    ),
    (
        [("allow", "edit_file(notebooks/**)")],
        "edit_file",
        {"file_path": "notebooks/a\x00.py"},
        None,
        None,
    ),
    (
        [("allow", "edit_file(notebooks/**)")],
        "edit_file",
        {"file_path": "NOTEBOOKS/a.py"},
        None,
        None,
    ),
    ([("allow", "edit_file(*.md)")], "edit_file", {"file_path": "docs/x.md"}, None, "allow"),
    ([("deny", "read_file(.env*)")], "read_file", {"file_path": "sub/.env.local"}, None, "deny"),
    # apply_patch: allow needs every file, deny any file
    (
        [("allow", "apply_patch(notebooks/**)")],
        "apply_patch",
        {"input": "*** Begin Patch\n*** Update File: notebooks/a.py\n@@\n-x\n+y\n*** End Patch"},
        None,
        "allow",
    ),
    (
        [("allow", "apply_patch(notebooks/**)")],
        "apply_patch",
        {
            "input": "*** Begin Patch\n*** Update File: notebooks/a.py\n@@\n-x\n+y\n"
            "*** Add File: src/evil.py\n+x\n*** End Patch"
        },
        None,
        None,
    ),
    (
        [("allow", "apply_patch(notebooks/**)")],
        "apply_patch",
        {
            "input": "*** Begin Patch\n*** Update File: notebooks/a.py\n*** Move to: src/a.py\n@@\n-x\n+y\n"
            "*** End Patch"
        },
        None,
        None,
    ),
    (
        [("deny", "apply_patch(src/**)")],
        "apply_patch",
        {
            "input": "*** Begin Patch\n*** Add File: notebooks/a.py\n+x\n*** Add File: src/b.py\n+y\n"
            "*** End Patch"
        },
        None,
        "deny",
    ),
    # web_fetch domains
    (
        [("allow", "web_fetch(domain:example.com)")],
        "web_fetch",
        {"url": "https://example.com/a"},
        None,
        "allow",
    ),
    (
        [("allow", "web_fetch(domain:example.com)")],
        "web_fetch",
        {"url": "https://EXAMPLE.com./a"},
        None,
        "allow",
    ),
    (
        [("allow", "web_fetch(domain:example.com)")],
        "web_fetch",
        {"url": "https://example.com.evil.io/"},
        None,
        None,
    ),
    (
        [("allow", "web_fetch(domain:example.com)")],
        "web_fetch",
        {"url": "https://evil.io/?example.com"},
        None,
        None,
    ),
    (
        [("allow", "web_fetch(domain:example.com)")],
        "web_fetch",
        {"url": "https://example.com@evil.io/"},
        None,
        None,
    ),
    (
        [("allow", "web_fetch(domain:*.example.com)")],
        "web_fetch",
        {"url": "http://docs.example.com/"},
        None,
        "allow",
    ),
    (
        [("allow", "web_fetch(domain:*.example.com)")],
        "web_fetch",
        {"url": "http://badexample.com/"},
        None,
        None,
    ),
    # MCP names: real server tools only
    ([("allow", "mcp__github__*")], "mcp__github__list_issues", {}, McpTool("github"), "allow"),
    ([("allow", "mcp__github__*")], "mcp__github__list_issues", {}, object(), None),
    ([("allow", "mcp__github__*")], "mcp__github__list_issues", {}, McpTool("gitlab"), None),
    ([("deny", "mcp__github__*")], "mcp__github__list_issues", {}, object(), "deny"),
    ([("deny", "mcp__github__*")], "MCP__GitHub__delete", {}, McpTool("GitHub"), "deny"),
    # other tools: glob on the first string argument
    ([("allow", "get_weather(Par*)")], "get_weather", {"city": "Paris"}, None, "allow"),
    ([("allow", "get_weather(Par*)")], "get_weather", {"city": "Rome"}, None, None),
    ([("allow", "get_*")], "get_weather", {"city": "Rome"}, None, "allow"),
    ([], "get_weather", {"city": "Rome"}, None, None),
]


@pytest.mark.parametrize(("rules", "name", "args", "tool", "expected"), CASES)
def test_decision_table(rules, name, args, tool, expected):
    assert decide(rules, name, args, tool) == expected


def test_match_names_the_rule_and_its_source():
    pr = PermissionRules(root=Path("/r"))
    pr.deny("bash(rm:*)", source="project")
    match = pr.check("bash", '{"command": "rm -rf x"}', builtin_tool("bash"))
    assert match is not None
    assert match.label == "rule:deny bash(rm:*) [project]"


@pytest.mark.parametrize("text", ["", "bash(", "bash()", "ba sh", "bash(x))("])
def test_bad_rules_say_how_to_write_one(text):
    with pytest.raises(ValueError, match="permission rule"):
        parse_rule(text, "allow")


def test_bad_action_is_refused():
    with pytest.raises(ValueError, match="allow, ask, deny"):
        parse_rule("bash", "maybe")  # type: ignore[arg-type]


def test_settings_files_user_then_project(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    user = tmp_path / "config" / "nb_tools" / "settings.json"
    user.parent.mkdir(parents=True)
    user.write_text(json.dumps({"permissions": {"allow": ["bash(git status)"]}}))
    proj = tmp_path / "proj"
    (proj / ".nb_tools").mkdir(parents=True)
    (proj / ".nb_tools" / "settings.json").write_text(
        json.dumps({"permissions": {"deny": ["web_fetch"], "ask": ["edit_file(secrets/**)"]}})
    )
    rules = load_rules(proj)
    assert [(r.action, r.text, r.source) for r in rules.rules] == [
        ("allow", "bash(git status)", "user"),
        ("deny", "web_fetch", "project"),
        ("ask", "edit_file(secrets/**)", "project"),
    ]
    edit, fetch = builtin_tool("edit_file"), builtin_tool("web_fetch")
    assert rules.check("edit_file", {"file_path": "secrets/k.txt"}, edit).action == "ask"
    assert rules.check("web_fetch", {"url": "https://x.io"}, fetch).action == "deny"


def test_settings_file_errors_name_the_file(tmp_path):
    bad = tmp_path / "settings.json"
    bad.write_text('{"permissions": {"allow": "bash"}}')
    with pytest.raises(ValueError, match="must be a list of strings"):
        PermissionRules(root=tmp_path).load(bad)
    bad.write_text("{nope")
    with pytest.raises(ValueError, match="cannot read"):
        PermissionRules(root=tmp_path).load(bad)


def test_remove_and_duplicates():
    pr = PermissionRules(root=Path("/r"))
    pr.allow("bash(ls)", "bash(ls)")
    assert len(pr.rules) == 1
    assert pr.remove("bash(ls)") == 1
    assert pr.check("bash", {"command": "ls"}, builtin_tool("bash")) is None


SHELL_CASES = [
    ("git log 2>/dev/null", "allow"),
    ("git log > /dev/null 2>&1", "allow"),
    ("git log >out.txt", None),
    ("git log >> out.txt", None),
    ("git log < /etc/shadow", None),
    ("git log 'a;b'", "allow"),
    ('git log "$(whoami)"', None),
    ("git log 'unterminated", None),
    ("git log <(rm x)", None),
    ("git log && git log -1", "allow"),
    ("git log || git status", None),
]


@pytest.mark.parametrize(("command", "expected"), SHELL_CASES)
def test_shell_allow_rules_cover_only_plain_commands(command, expected):
    assert decide(GIT_LOG, "bash", {"command": command}) == expected
