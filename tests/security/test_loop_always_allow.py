""" "Always allow" is as narrow as the card: it offers the narrowest rule that covers the
call, adds exactly that rule, and the events and the transcript name it."""

from __future__ import annotations

from pathlib import Path

import pytest
from approvals_helpers import Approver, call, drive, workspace_tools

from nb_tools import tool
from nb_tools.agent import Decision
from nb_tools.permissions import PermissionRules
from nb_tools.transcript._recorder import TranscriptRecorder

ALWAYS = Decision(approved=True, remember=True)


async def test_a_file_writer_is_allowed_in_its_folder_only(tmp_path: Path) -> None:
    approver = Approver(answers=[ALWAYS, False])
    out = await drive(
        [call("write_file", file_path="notes/a.txt", content="a", id="a")],
        turns=[
            [call("write_file", file_path="notes/deep/b.txt", content="b", id="b")],
            [call("write_file", file_path="other/c.txt", content="c", id="c")],
            [call("write_file", file_path="notes/../d.txt", content="d", id="d")],
        ],
        tools=workspace_tools(tmp_path, "write_file"),
        approver=approver,
    )
    assert approver.requests[0].always_allow_rule == "write_file(notes/**)"
    assert approver.asked == ["a", "c", "d"]
    assert (tmp_path / "notes" / "deep" / "b.txt").read_text() == "b"
    assert not (tmp_path / "other" / "c.txt").exists()
    assert not (tmp_path / "d.txt").exists()
    assert {r.text for r in out.agent.rules.rules if r.source == "session"} == {
        "write_file(notes/**)"
    }


async def test_a_file_at_the_root_is_allowed_alone(tmp_path: Path) -> None:
    approver = Approver(answers=[ALWAYS, False])
    await drive(
        [call("write_file", file_path="a.txt", content="a", id="a")],
        turns=[
            [call("write_file", file_path="b.txt", content="b", id="b")],
            [call("write_file", file_path="sub/a.txt", content="c", id="c")],
        ],
        tools=workspace_tools(tmp_path, "write_file"),
        approver=approver,
    )
    assert approver.requests[0].always_allow_rule == "write_file(/a.txt)"
    assert approver.asked == ["a", "b", "c"]
    assert not (tmp_path / "b.txt").exists() and not (tmp_path / "sub").exists()


async def test_the_rule_is_per_tool(tmp_path: Path) -> None:
    approver = Approver(answers=[ALWAYS, False])
    patch = "*** Begin Patch\n*** Add File: notes/p.txt\n+x\n*** End Patch\n"
    await drive(
        [call("write_file", file_path="notes/a.txt", content="a", id="a")],
        turns=[[call("apply_patch", input=patch, id="p")]],
        tools=workspace_tools(tmp_path, "write_file", "apply_patch"),
        approver=approver,
    )
    assert approver.asked == ["a", "p"]
    assert not (tmp_path / "notes" / "p.txt").exists()


async def test_a_patch_over_two_folders_offers_their_common_folder(tmp_path: Path) -> None:
    patch = (
        "*** Begin Patch\n*** Add File: src/a/x.py\n+x\n*** Add File: src/b/y.py\n+y\n"
        "*** End Patch\n"
    )
    approver = Approver(answers=[False])
    await drive(
        [call("apply_patch", input=patch, id="p")],
        tools=workspace_tools(tmp_path, "apply_patch"),
        approver=approver,
    )
    assert approver.requests[0].always_allow_rule == "apply_patch(src/**)"


async def test_a_patch_spread_over_the_root_offers_no_rule(tmp_path: Path) -> None:
    patch = "*** Begin Patch\n*** Add File: a.py\n+x\n*** Add File: src/b.py\n+y\n*** End Patch\n"
    approver = Approver(answers=[ALWAYS, False])
    await drive(
        [call("apply_patch", input=patch, id="p")],
        turns=[[call("apply_patch", input=patch.replace("a.py", "c.py"), id="q")]],
        tools=workspace_tools(tmp_path, "apply_patch"),
        approver=approver,
    )
    assert approver.requests[0].always_allow_rule is None
    assert approver.asked == ["p", "q"]  # nothing was remembered
    assert not (tmp_path / "c.py").exists()


@pytest.mark.parametrize(
    "follow_up",
    [
        "touch ok.txt; mkdir pwned",
        "touch ok.txt && mkdir pwned",
        "touch ok.txt || mkdir pwned",
        "touch ok.txt | mkdir pwned",
        "touch ok.txt > pwned",
        "mkdir pwned",
        "touch ok.txt\nmkdir pwned",
        "touch ok.txt $(mkdir pwned)",
        "touch ok.txt `mkdir pwned`",
        "touch ok.txt & mkdir pwned",
        "touch ok.txt #\nmkdir pwned",
    ],
)
async def test_an_allowed_shell_command_covers_nothing_more(tmp_path: Path, follow_up: str) -> None:
    approver = Approver(answers=[ALWAYS, False])
    out = await drive(
        [call("bash", command="touch ok.txt", id="a")],
        turns=[[call("bash", command=follow_up, id="b")]],
        tools=workspace_tools(tmp_path, "bash"),
        approver=approver,
    )
    rule = approver.requests[0].always_allow_rule
    assert rule is not None and rule.startswith("bash(") and rule != "bash"
    assert {r.text for r in out.agent.rules.rules if r.source == "session"} == {rule}
    assert approver.asked == ["a", "b"]
    assert (tmp_path / "ok.txt").exists()
    assert not (tmp_path / "pwned").exists()


@pytest.mark.parametrize("command", ["echo $(id) > out", "x=1; echo $x > out", "{ echo a; } > out"])
async def test_a_shell_script_that_cannot_be_read_offers_no_rule(
    tmp_path: Path, command: str
) -> None:
    approver = Approver(answers=[ALWAYS, False])
    await drive(
        [call("bash", command=command, id="a")],
        turns=[[call("bash", command=command, id="b")]],
        tools=workspace_tools(tmp_path, "bash"),
        approver=approver,
    )
    assert approver.requests[0].always_allow_rule is None
    assert approver.asked == ["a", "b"]


def _deploy(ran: list[str]) -> object:
    @tool(register=False, requires_approval=True)
    def deploy(target: str) -> str:
        """Deploys."""
        ran.append(target)
        return "deployed"

    return deploy


async def test_a_tool_without_a_specifier_is_allowed_by_name() -> None:
    ran: list[str] = []
    approver = Approver(answers=[ALWAYS])
    out = await drive(
        [call("deploy", target="a", id="a")],
        turns=[[call("deploy", target="b", id="b")]],
        tools=[_deploy(ran)],
        approver=approver,
    )
    assert approver.asked == ["a"] and ran == ["a", "b"]
    assert [(d.call_id, d.by, d.rule) for d in out.decided()] == [
        ("a", "user", "deploy"),
        ("b", "rule:allow deploy [session]", "allow deploy"),
    ]


async def test_a_call_an_ask_rule_matched_offers_no_rule_and_asks_again() -> None:
    ran: list[str] = []
    rules = PermissionRules()
    rules.ask("deploy(prod*)")
    approver = Approver(answers=[ALWAYS, False])
    await drive(
        [call("deploy", target="prod-1", id="a")],
        turns=[[call("deploy", target="prod-2", id="b")]],
        tools=[_deploy(ran)],
        approver=approver,
        rules=rules,
        approval="auto",
    )
    assert approver.requests[0].always_allow_rule is None
    assert approver.asked == ["a", "b"] and ran == ["prod-1"]
    assert [str(r) for r in rules.rules] == ["ask deploy(prod*)"]


@pytest.mark.parametrize("with_rules", [False, True])
async def test_always_allow_means_the_same_under_deny_with_or_without_rules(
    with_rules: bool,
) -> None:
    """One home, one meaning: the click adds a session rule, which then allows under the
    ``deny`` policy as any allow rule does, whether or not the agent had rules before."""
    from approvals_helpers import reply

    from nb_tools.agent import Agent
    from nb_tools.testing import ScriptedModel

    ran: list[str] = []
    agent = Agent(
        ScriptedModel(
            [
                reply("", call("deploy", target="x")),
                reply("done"),
                reply("", call("deploy", target="y")),
                reply("done"),
            ]
        ),
        tools=[_deploy(ran)],
        approval="ask",
        approver=lambda r: Decision(approved=True, remember=True),
        rules=PermissionRules() if with_rules else None,
    )
    await agent.run("go")
    agent.approval = "deny"
    agent.approver = None
    await agent.run("again")
    assert ran == ["x", "y"]
    assert agent.rules is not None
    assert [str(r) for r in agent.rules.rules] == ["allow deploy"]


async def test_the_transcript_names_the_rule(tmp_path: Path) -> None:
    recorder = TranscriptRecorder()
    approver = Approver(answers=[ALWAYS])
    out = await drive(
        [call("write_file", file_path="nb/a.txt", content="a", id="a")],
        turns=[[call("write_file", file_path="nb/b.txt", content="b", id="b")]],
        tools=workspace_tools(tmp_path, "write_file"),
        approver=approver,
    )
    for event in out.events:
        recorder(event)
    approvals = [i["approval"] for i in recorder.to_dict()["items"] if i["kind"] == "tool"]
    assert approvals == [
        {
            "approved": True,
            "by": "user",
            "message": None,
            "source": "person",
            "rule": "write_file(nb/**)",
        },
        {
            "approved": True,
            "by": "rule:allow write_file(nb/**) [session]",
            "message": None,
            "source": "rule",
            "rule": "allow write_file(nb/**)",
        },
    ]


async def test_always_allow_adds_exactly_the_rule_to_the_session_rules(tmp_path: Path) -> None:
    rules = PermissionRules(root=tmp_path)
    approver = Approver(answers=[ALWAYS, False])
    await drive(
        [call("write_file", file_path="nb/a.txt", content="a", id="a")],
        turns=[[call("write_file", file_path="x.txt", content="b", id="b")]],
        tools=workspace_tools(tmp_path, "write_file"),
        approver=approver,
        rules=rules,
    )
    assert [str(r) for r in rules.rules] == ["allow write_file(nb/**)"]
    assert approver.asked == ["a", "b"] and not (tmp_path / "x.txt").exists()
