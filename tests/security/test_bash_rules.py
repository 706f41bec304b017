"""``bash(...)`` rules under attack: a deny rule sees every command that runs, through
quoting, paths, wrappers, groups, substitutions and code strings; when it cannot see, the
call asks; an allow rule covers only what it names. Checked through
``PermissionRules.check`` and end to end through an ``Agent`` under ``auto``, where the
marker file must not appear."""

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
from nb_tools.permissions._shell import parse_script
from nb_tools.permissions._shell_rules import bash_rule_for, bash_rules_for
from nb_tools.testing import ScriptedModel, call, reply

NL = "\n"


def decide(command: str, *rules: tuple[str, str]) -> str | None:
    pr = PermissionRules(root=Path("/srv/proj"))
    for action, text in rules:
        pr.add(action, text)  # type: ignore[arg-type]
    match = pr.check("bash", json.dumps({"command": command}), builtin_tool("bash"))
    return None if match is None else match.action


DENY_TOUCH = ("deny", "bash(touch:*)")
ALLOW_ALL = ("allow", "bash")

# deny bash(touch:*) must deny each of these: each would create "pwned".
DENIED = [
    "touch pwned",
    "/bin/touch pwned",
    "/usr/bin/touch pwned",
    "./touch pwned",
    "TOUCH pwned",
    "( touch pwned )",
    "{ touch pwned; }",
    "env touch pwned",
    "env -i A=1 touch pwned",
    "env -u HOME touch pwned",
    "env -S 'touch pwned'",
    "xargs touch <<< pwned",
    "echo pwned | xargs -0 touch",
    "xargs -I{} touch {} <<< pwned",
    "$'touch' pwned",
    "$'\\x74ouch' pwned",
    "$'\\164ouch' pwned",
    "t''ouch pwned",
    't""ouch pwned',
    '"touch" pwned',
    "'touch' pwned",
    "\\touch pwned",
    "\\t\\o\\u\\c\\h pwned",
    "t\\\nouch pwned",
    "FOO=1 touch pwned",
    "A=1 B=2 touch pwned",
    "! touch pwned",
    "nice touch pwned",
    "nice -n 5 touch pwned",
    "timeout 5 touch pwned",
    "timeout -k 1 -s KILL 5 touch pwned",
    "command touch pwned",
    "command -p touch pwned",
    "builtin command touch pwned",
    "exec touch pwned",
    "exec -a name touch pwned",
    "time touch pwned",
    "time -p touch pwned",
    "nohup touch pwned",
    "stdbuf -o0 touch pwned",
    "ionice -c3 touch pwned",
    "sudo touch pwned",
    "sudo -u root touch pwned",
    "setsid touch pwned",
    "coproc touch pwned",
    "find . -maxdepth 0 -exec touch pwned \\;",
    "find . -maxdepth 0 -execdir touch pwned +",
    "ls && touch pwned",
    "ls || touch pwned",
    "ls; touch pwned",
    "ls | touch pwned",
    "ls |& touch pwned",
    "ls & touch pwned",
    "ls" + NL + "touch pwned",
    "git log #'" + NL + "touch pwned #'",
    "if true; then touch pwned; fi",
    "if false; then :; else touch pwned; fi",
    "if false; then :; elif true; then touch pwned; fi",
    "while true; do touch pwned; break; done",
    "until false; do touch pwned; break; done",
    "for i in 1; do touch pwned; done",
    "case x in x) touch pwned;; esac",
    "case x in y) ;; *) touch pwned;; esac",
    "f() { touch pwned; }; f",
    "function f { touch pwned; }; f",
    "echo $(touch pwned)",
    "echo `touch pwned`",
    'echo "$(touch pwned)"',
    "echo $(echo $(touch pwned))",
    "cat <(touch pwned)",
    "echo >(touch pwned)",
    "x=$(touch pwned)",
    "local_var=`touch pwned` ls",
    "ls > $(touch pwned)",
    "cat <<EOF" + NL + "$(touch pwned)" + NL + "EOF",
    "ls ${x:-$(touch pwned)}",
    "sh -c 'touch pwned'",
    "bash -c 'touch pwned'",
    "bash -ec 'touch pwned'",
    "bash -x -c 'touch pwned'",
    "dash -c 'touch pwned'",
    "sh -c 'sh -c \"touch pwned\"'",
    "bash <<< 'touch pwned'",
    "eval touch pwned",
    "eval 'touch pwned'",
    "eval 'ls; touch pwned'",
    "builtin eval 'touch pwned'",
    "trap 'touch pwned' EXIT",
    "xargs sh -c 'touch pwned' <<< x",
    "env bash -c 'touch pwned'",
    "timeout 5 sh -c 'touch pwned'",
    "find . -maxdepth 0 -exec sh -c 'touch pwned' \\;",
    "alias ls='touch pwned'",
    "mapfile -C 'touch pwned' -c 1 <<< x",
    "watch -n 1 touch pwned",
    "su -c 'touch pwned'",
    "ls;touch pwned",
    "ls&&touch pwned",
    "{ ls; { touch pwned; }; }",
    "( ( touch pwned ) )",
    "ls $(ls $(touch pwned))",
    "[ -f x ] || touch pwned",
    "[[ -f x ]] || touch pwned",
    "echo x | while read l; do touch pwned; done",
    "uv run touch pwned",
    "npx touch pwned",
    "cat <<EOF && touch pwned" + NL + "x" + NL + "EOF",
    "ls -{a,l}; touch pwned",
    "echo {a..c}; touch pwned",
    "nice -5 /usr/bin/env touch pwned",
    "command exec touch pwned",
    "ls; (cd sub && touch pwned)",
    "ls > /dev/null; touch pwned 2>&1",
    "touch pwned > /dev/null",
    "touch pwned &",
    "{ touch pwned & }",
    "bash -c 'eval \"touch pwned\"'",
]

# Commands that a deny rule cannot see through: they must ask (fail closed).
ASKED = [
    "$CMD pwned",
    "${CMD} pwned",
    '"$CMD" pwned',
    "$(echo touch) pwned",
    "`echo touch` pwned",
    "to$x pwned",
    "t?uch pwned",
    "/usr/bin/t*ch pwned",
    "{touch,pwned}",
    'eval "$x"',
    "eval $x",
    'sh -c "$x"',
    "bash -c $x",
    "bash script.sh",
    "sh < script.sh",
    "cat script.sh | bash",
    "source script.sh",
    ". ./script.sh",
    "x='a[$(touch pwned)]'; echo $((x))",
    "echo ${x@P}",
    "echo ${!i}",
    'printf -v "$name" x',
    "test -v 'a[$(touch pwned)]'",
    "[ -v 'a[$(touch pwned)]' ]",
    "[[ $x -eq 1 ]]",
    "(( x ))",
    "for ((i=0;i<1;i++)); do :; done",
    "env $CMD pwned",
    "xargs $CMD",
    "timeout 5 $CMD",
    'trap "$x" EXIT',
    "ls\u00a0pwned",
    "ls\rpwned",
    "ls\u2028pwned",
    "ls\u200bpwned",
    "if; then",
    "ls &&",
    "echo 'unterminated",
    "enable -f ./x.so touch",
    'alias ls="$x"',
    "cat <<'EOF'; touch pwned" + NL + "x" + NL + "EOF",
    "r{m,} x",
    "{rm,-f,x}",
    "bash",
    "sh -s < x",
    "busybox sh script",
]

# Neither matched nor unsure: no rule applies.
NOT_DENIED = [
    "ls",
    "echo touch",
    "grep touch a.txt",
    "git log --grep touch",
    "cat touch.txt",
    "echo 'touch pwned'",
    "# touch pwned",
    "ls # touch pwned",
    "cat <<'EOF'" + NL + "touch pwned" + NL + "EOF",
    "touchy x",
    "echo $HOME",
    'grep "$pattern" a.txt',
]


@pytest.mark.parametrize("command", DENIED)
def test_deny_sees_through(command: str) -> None:
    assert decide(command, DENY_TOUCH, ALLOW_ALL) == "deny", command
    assert decide(command, ("ask", "bash(touch:*)"), ALLOW_ALL) == "ask", command


@pytest.mark.parametrize("command", ASKED)
def test_deny_that_cannot_see_asks(command: str) -> None:
    assert decide(command, DENY_TOUCH, ALLOW_ALL) in ("deny", "ask"), command
    assert decide(command, DENY_TOUCH) in ("deny", "ask"), command


@pytest.mark.parametrize("command", NOT_DENIED)
def test_deny_leaves_others_alone(command: str) -> None:
    assert decide(command, DENY_TOUCH, ALLOW_ALL) == "allow", command


def test_unsure_ask_names_the_rule_and_the_reason() -> None:
    pr = PermissionRules(root=Path("/r"))
    pr.deny("bash(rm:*)", source="project")
    match = pr.check("bash", {"command": "$CMD -rf x"}, builtin_tool("bash"))
    assert match is not None and match.action == "ask"
    assert "deny" not in match.label.split()[0]
    assert "bash(rm:*)" in match.label and "cannot tell" in match.label


GIT_LOG = ("allow", "bash(git log:*)")
# (command, allowed by git log:* + wc:* + head:*)
ALLOW_CASES = [
    ("git log", True),
    ("git log --oneline -5", True),
    ("\\git 'log' -1", True),
    ("git log | wc -l", True),
    ("git log | head -5 && git log -1", True),
    ("git log 2>/dev/null", True),
    ("git log >/dev/null 2>&1", True),
    ("git log 2>&1 | head", True),
    ("git log #'" + NL + "rm -f x #'", False),
    ("git logx", False),
    ("git log && rm -rf x", False),
    ("git log; rm x", False),
    ("git log | sh", False),
    ("git log $(rm x)", False),
    ("git log `rm x`", False),
    ("git log <(rm x)", False),
    ("git log > out.txt", False),
    ("git log >> out.txt", False),
    ("git log >& out.txt", False),
    ("git log &> out.txt", False),
    ("git log 3> out.txt", False),
    ("git log <> out.txt", False),
    ("git log < /etc/shadow", False),
    ("git log > /dev/tcp/127.0.0.1/9", False),
    ("PAGER=x git log", False),
    ("GIT_EXTERNAL_DIFF=./x git log -p", False),
    ("PATH=.:$PATH; git log", False),
    ("export PATH=.; git log", False),
    ("for PATH in .; do git log; done", False),
    ("for http_proxy in x; do git log; done", False),
    ("/tmp/evil/git log", False),
    ("./git log", False),
    ("$G log", False),
    ("git $SUB", False),
    ("git l''og", True),
    ("git lo\\\ng", True),
    ("git lo\\\ng; rm x", False),
    ("timeout 5 git log", False),
    ("env git log", False),
    ("xargs git log", False),
    ("git -C /tmp log", False),
    ("git log\rrm x", False),
    ("git log\u00a0x", False),
    ("eval git log", False),
    ("sh -c 'git log'", False),
    ("git() { rm -rf x; }; git log", False),
    ("git log & rm x", False),
    ("git log\nrm x", False),
    ("git log ${x@P}", False),
    ("", False),
    ("   ", False),
]


@pytest.mark.parametrize(("command", "allowed"), ALLOW_CASES)
def test_allow_covers_only_what_it_names(command: str, allowed: bool) -> None:
    got = decide(command, GIT_LOG, ("allow", "bash(wc:*)"), ("allow", "bash(head:*)"))
    assert (got == "allow") is allowed, command


@pytest.mark.parametrize(
    ("command", "allowed"),
    [
        ("npm test", True),
        ("npm  test", True),
        ("npm 'test'", True),
        ("npm test --watch", False),
        ("npm test; npm publish", False),
        ("npm test $x", False),
        ("npm test *", False),
    ],
)
def test_exact_allow(command: str, allowed: bool) -> None:
    assert (decide(command, ("allow", "bash(npm test)")) == "allow") is allowed


@pytest.mark.parametrize(
    ("command", "rule"),
    [
        ("git push origin main", "deny"),
        ("git -C . push", "deny"),
        ("git --no-pager push", "deny"),
        ("git -c a=b push origin", "deny"),
        ("/usr/bin/git push", "deny"),
        ("env GIT_DIR=x git push", "deny"),
        ("git $(echo push)", "ask"),
        ("git $x", "ask"),
        ("git log --grep push", "allow"),
        ("git pushx", "allow"),
        ("echo git push", "allow"),
    ],
)
def test_deny_with_subcommand(command: str, rule: str) -> None:
    assert decide(command, ("deny", "bash(git push:*)"), ALLOW_ALL) == rule, command


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("git log --oneline -5", "bash(git log:*)"),
        ("git status", "bash(git status:*)"),
        ("ls -la src", "bash(ls:*)"),
        ("npm test", "bash(npm test:*)"),
        ("rm -rf build", "bash(rm -rf build)"),
        ("timeout 5 make", "bash(timeout 5 make)"),
        ("git -C x log", "bash(git -C x log)"),
        ("grep -rn 'a b' .", "bash(grep:*)"),
        ("FOO=1 ls", None),
        ("ls > out", None),
        ("$CMD", None),
        ("git log | head -5", None),
        ("sh -c 'ls'", None),
    ],
)
def test_bash_rule_for(command: str, expected: str | None) -> None:
    assert bash_rule_for(command) == expected
    if expected is not None:  # the offered rule allows the call it was offered for
        assert decide(command, ("allow", expected)) == "allow"


def test_bash_rules_for_a_pipeline() -> None:
    rules = bash_rules_for("git log | head -5")
    assert rules == ["bash(git log:*)", "bash(head:*)"]
    assert decide("git log | head -5", *[("allow", r) for r in rules]) == "allow"


def test_parse_script_api() -> None:
    script = parse_script("FOO=1 \\rm -f $'a b' && echo $(ls) # x")
    argvs = [c.argv for c in script.commands]
    assert ("rm", "-f", "a b") in argvs and ("ls",) in argvs and ("echo", None) in argvs
    assert not script.unresolved
    assert parse_script("$CMD x").unresolved


# -- end to end: an Agent under auto with a deny rule never runs the command ------------

E2E = [
    "touch pwned",
    "/usr/bin/touch pwned",
    "( touch pwned )",
    "{ touch pwned; }",
    "env touch pwned",
    "echo pwned | xargs touch",
    "$'touch' pwned",
    "t''ouch pwned",
    "\\touch pwned",
    "FOO=1 touch pwned",
    "! touch pwned",
    "sh -c 'touch pwned'",
    "bash -c 'ls; touch pwned'",
    "eval 'touch pwned'",
    "ls; touch pwned",
    "git log #'" + NL + "touch pwned #'",
    "echo $(touch pwned)",
    "find . -maxdepth 0 -exec touch pwned \\;",
    "timeout 5 touch pwned",
    "nice -n 1 touch pwned",
    "f() { touch pwned; }; f",
    "t\\\nouch pwned",
    "C=touch; $C pwned",
    'eval "$(echo touch pwned)"',
    "cat <<EOF | bash" + NL + "touch pwned" + NL + "EOF",
]


@pytest.mark.parametrize("command", E2E)
def test_agent_under_auto_never_runs_a_denied_command(command: str, tmp_path: Path) -> None:
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
    # Without the rule the same call really creates the file (the attack is real).
    subprocess.run(["bash", "-c", command], cwd=ws, timeout=20, capture_output=True)
    assert (ws / "pwned").exists(), f"the command does not create the marker: {command!r}"


def test_agent_allow_rule_does_not_cover_a_smuggled_command(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    rules = PermissionRules(root=ws)
    rules.allow("bash(git log:*)")
    model = ScriptedModel(
        [reply("", call("bash", command="git log #'\ntouch pwned #'")), reply("done")]
    )
    agent = Agent(model, tools=[BashTool(Workspace(ws))], rules=rules, approval="ask",
                  approver=lambda request: False)  # fmt: skip
    agent.run_sync("go")
    assert not (ws / "pwned").exists()


def test_the_suite_is_big() -> None:
    total = len(DENIED) + len(ASKED) + len(NOT_DENIED) + len(ALLOW_CASES) + len(E2E)
    assert total >= 250
