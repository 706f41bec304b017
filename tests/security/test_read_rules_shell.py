"""A ``read_file`` deny rule keeps the shell out too, through the sandbox rather than by
reading the command: ``cat secrets/db.txt`` is read-only and runs without a click, and no
parse of a script finds every way it can name a file (globs, ``cd``, links, variables). The
``bash`` tool hides what the rules name (``PermissionRules.unreadable``): deny rules from
every call, ask rules from calls that ran without a click. The effect checked: the secret
text never reaches the model, and a copy made by an approved call holds none of it."""

from __future__ import annotations

from pathlib import Path

import pytest
from approvals_helpers import Approver, call, drive, workspace_tools
from sandbox_helpers import require_sandbox

from nb_tools.permissions import PermissionRules

SECRET = "hunter2-token"
KEY = "BEGIN-PRIVATE-pem-body"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    require_sandbox()
    (tmp_path / "secrets").mkdir()
    # not in a shape the text search knows: only the rule keeps it out
    (tmp_path / "secrets" / "db.txt").write_text(f"TOKEN is {SECRET}\n")
    (tmp_path / "keys").mkdir()
    (tmp_path / "keys" / "site.pem").write_text(f"{KEY}\n")
    (tmp_path / "notes.txt").write_text("TOKEN is public\n")
    (tmp_path / "alias").symlink_to("secrets")
    return tmp_path


READS = [
    "cat secrets/db.txt",
    "grep -r TOKEN .",
    "cat s*/db.txt",
    "cd secrets && cat db.txt",
    "cat alias/db.txt",
    "d=secr; cat ${d}ets/db.txt",
    "find . -name '*.txt' -exec cat {} +",
]


@pytest.mark.parametrize("command", READS)
async def test_a_read_file_deny_rule_hides_the_files_from_an_unclicked_command(
    root: Path, command: str
) -> None:
    rules = PermissionRules(root=root)
    rules.deny("read_file(secrets/**)")
    out = await drive(
        [call("bash", command=command, id="b")],
        tools=workspace_tools(root, "bash"),
        rules=rules,
        approval="ask",
    )
    seen = out.result("b")[0]
    assert SECRET not in seen, seen
    if command.startswith("grep"):
        assert "TOKEN is public" in seen  # the rest of the workspace is still there


async def test_without_the_rule_the_same_command_reads_the_file(root: Path) -> None:
    out = await drive(
        [call("bash", command="cat alias/db.txt", id="b")],
        tools=workspace_tools(root, "bash"),
        rules=PermissionRules(root=root),
    )
    assert SECRET in out.result("b")[0]


async def test_an_approved_command_under_a_deny_rule_copies_nothing(root: Path) -> None:
    rules = PermissionRules(root=root)
    rules.deny("read_file(secrets/**)")
    approver = Approver(answers=[True])
    out = await drive(
        [call("bash", command="cp secrets/db.txt copy.txt; cat alias/db.txt >> copy.txt", id="b")],
        tools=workspace_tools(root, "bash"),
        rules=rules,
        approver=approver,
    )
    assert len(approver.requests) == 1  # it asked, and ran as approved
    copy = root / "copy.txt"
    assert copy.exists() and SECRET not in copy.read_text()
    assert SECRET not in out.result("b")[0]


async def test_an_ask_rule_hides_from_unclicked_calls_only(root: Path) -> None:
    rules = PermissionRules(root=root)
    rules.ask("read_file(**/*.pem)")
    approver = Approver(answers=[True])
    out = await drive(
        [
            call("bash", command="cat keys/site.pem", id="quiet"),
            call("bash", command="cat keys/site.pem > seen.txt", id="asked"),
        ],
        tools=workspace_tools(root, "bash"),
        rules=rules,
        approver=approver,
    )
    assert KEY not in out.result("quiet")[0]
    assert [r.call.id for r in approver.requests] == ["asked"]
    assert KEY in (root / "seen.txt").read_text()  # a person said yes to this command


async def test_a_tree_too_large_to_look_through_refuses_the_call(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("nb_tools.permissions._unreadable.WALK_LIMIT", 3)
    rules = PermissionRules(root=root)
    rules.deny("read_file(**/*.key)")
    out = await drive(
        [call("bash", command="cat secrets/db.txt > out.txt", id="b")],
        tools=workspace_tools(root, "bash"),
        rules=rules,
        approver=Approver(answers=[True]),
    )
    text, is_error = out.result("b")
    assert is_error and "cannot find everything the read_file rules name" in text, text
    assert not (root / "out.txt").exists()
