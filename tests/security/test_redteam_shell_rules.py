"""Red team, ``bash(...)`` deny rules: spellings of a denied command that the parse used to
miss. Each is checked end to end (an ``Agent`` under ``auto`` with ``deny bash(touch:*)``:
the marker must not appear) and shown to be real (plain bash creates the marker)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from approvals_helpers import builtin_tool

from nb_tools.agent import Agent
from nb_tools.builtin._bash import BashTool
from nb_tools.builtin._workspace import Workspace
from nb_tools.permissions import PermissionRules
from nb_tools.testing import ScriptedModel, call, reply

LOADER = next(
    (p for p in ("/lib64/ld-linux-x86-64.so.2", "/usr/bin/ld.so") if Path(p).exists()), None
)

# Holes: each ran `touch` under `deny bash(touch:*)` without a click.
BYPASSES = [
    "env -iS'touch pwned'",  # -S clustered after -i
    "env -vS'touch pwned'",
    "env -iS 'touch pwned'",
    "env --spl='touch pwned'",  # getopt_long abbreviation of --split-string
    "env --split-str 'touch pwned'",
    "env -S'-i touch pwned'",  # options inside the split string
    "env -S'tou${NOPE}ch pwned'",  # env -S expands ${VAR} itself
    "env -S'touch\\_pwned'",  # \_ is a separator for env -S, not for shlex
    "setarch x86_64 touch pwned",
    "linux64 touch pwned",
    *([f"{LOADER} /usr/bin/touch pwned"] if LOADER else []),
    "trap -- 'touch pwned' EXIT",  # `--` before the action
    "script -qc 'touch pwned' /dev/null",  # -c clustered
    "compgen -C 'touch pwned' x",  # runs the command to list completions
    "declare -i n; n='a[$(touch pwned)]'",  # -i: a later assignment is arithmetic
    "typeset -i n; for n in 'a[$(touch pwned)]'; do :; done",
    "declare -i n; read n <<< 'a[$(touch pwned)]'",
    "printf 'touch pwned' > benv; BASH_ENV=benv bash -c true",  # bash runs $BASH_ENV
    "printf 'touch pwned' > benv; env BASH_ENV=benv bash -c true",
]


def _decide(command: str) -> str | None:
    pr = PermissionRules()
    pr.add("deny", "bash(touch:*)")
    pr.add("allow", "bash")
    match = pr.check("bash", json.dumps({"command": command}), builtin_tool("bash"))
    return None if match is None else match.action


@pytest.mark.parametrize("command", BYPASSES)
def test_deny_rule_is_not_bypassed(command: str, tmp_path: Path) -> None:
    assert _decide(command) in ("deny", "ask"), command
    ws = tmp_path / "ws"
    ws.mkdir()
    rules = PermissionRules(root=ws)
    rules.deny("bash(touch:*)")
    asked: list[object] = []

    def approver(request: object) -> bool:
        asked.append(request)
        return False  # nobody clicks

    model = ScriptedModel([reply("", call("bash", command=command)), reply("done")])
    agent = Agent(model, tools=[BashTool(Workspace(ws))], rules=rules, approval="auto",
                  approver=approver)  # fmt: skip
    agent.run_sync("go")
    assert not (ws / "pwned").exists(), command
    # The attack is real: plain bash creates the marker.
    subprocess.run(["bash", "-c", command], cwd=ws, timeout=20, capture_output=True)
    assert (ws / "pwned").exists(), f"the command does not create the marker: {command!r}"


# Unknown programs with the denied name among their operands: unsure, so they ask.
UNSURE = ["mystery-runner touch pwned", "make touch", "tool --exec touch pwned"]
# Known text-only programs stay unaffected.
UNTOUCHED = ["echo touch", "grep touch a.txt", "git log --grep touch", "ls touch", "env ls"]


@pytest.mark.parametrize("command", UNSURE)
def test_unknown_program_naming_the_denied_one_asks(command: str) -> None:
    assert _decide(command) == "ask", command


@pytest.mark.parametrize("command", UNTOUCHED)
def test_text_only_programs_are_left_alone(command: str) -> None:
    assert _decide(command) == "allow", command


GIT_ALIASES = [
    "git -c alias.p=push p origin HEAD:refs/heads/pwned",
    "git -c Alias.P=push p origin HEAD:refs/heads/pwned",
    "P=push git --config-env=alias.p=P p origin HEAD:refs/heads/pwned",
]


@pytest.mark.parametrize("command", GIT_ALIASES)
def test_deny_git_push_is_not_bypassed_by_an_alias(command: str, tmp_path: Path) -> None:
    """Hole: `deny bash(git push:*)` did not see `git -c alias.p=push p`: under auto the
    push ran without a click. The remote is a bare repository in the workspace; its
    branch `pwned` must not appear."""
    ws = tmp_path / "ws"
    ws.mkdir()
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t", "PATH": "/usr/bin:/bin"}  # fmt: skip
    for args in (["init", "-q", "--bare", "remote.git"], ["init", "-q"],
                 ["remote", "add", "origin", "remote.git"],
                 ["commit", "-q", "--allow-empty", "-m", "one"]):  # fmt: skip
        subprocess.run(["git", *args], cwd=ws, env=env, check=True)
    pushed = ws / "remote.git" / "refs" / "heads" / "pwned"
    rules = PermissionRules(root=ws)
    rules.deny("bash(git push:*)")
    model = ScriptedModel([reply("", call("bash", command=command)), reply("done")])
    agent = Agent(model, tools=[BashTool(Workspace(ws))], rules=rules, approval="auto",
                  approver=lambda request: False)  # fmt: skip
    agent.run_sync("go")
    assert not pushed.exists(), command
    # The attack is real: plain bash pushes.
    subprocess.run(["bash", "-c", command], cwd=ws, env=env, timeout=20, capture_output=True)
    assert pushed.exists(), f"the command does not push: {command!r}"


DEEP = [
    "(" * 600 + "touch pwned" + ")" * 600,
    "echo $(" * 400 + "touch pwned" + ")" * 400,
]


@pytest.mark.parametrize("limit", [1000, 20000], ids=["default-limit", "raised-limit"])
@pytest.mark.parametrize("command", DEEP, ids=["subshells", "substitutions"])
def test_deeply_nested_script_is_unsure_not_a_crash(command: str, limit: int) -> None:
    """Guard: a script nested deeper than Python's recursion limit made the parse raise
    (the executor then denied the call, so nothing ran); it now reads as unsure: the vote
    says not read-only and a deny rule asks. Under a raised limit (IPython and other
    libraries raise it) the parse goes to the end and finds ``touch`` itself."""
    import sys

    from nb_tools.builtin._bash_readonly import is_read_only
    from nb_tools.permissions._shell import parse_script

    before = sys.getrecursionlimit()
    sys.setrecursionlimit(limit)
    parse_script.cache_clear()
    try:
        script = parse_script(command)
        found = any(c.words and c.words[0].value == "touch" for c in script.commands)
        assert script.hidden or found
        assert not is_read_only(command)
        assert _decide(command) in ("deny", "ask")
    finally:
        sys.setrecursionlimit(before)
        parse_script.cache_clear()
