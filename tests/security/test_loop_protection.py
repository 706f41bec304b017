"""Under ``auto`` (and every other policy) a call that touches a protected path asks a
person; no allow rule and no "Always allow" lifts that, and "Always allow" is not offered."""

from __future__ import annotations

from pathlib import Path

import pytest
from approvals_helpers import Approver, call, drive, workspace_tools

from nb_tools.agent import Decision, ProtectionSource
from nb_tools.builtin import Workspace
from nb_tools.permissions import PermissionRules

PROTECTED = [
    ".env",
    ".env.local",
    "sub/.env.production",
    ".git/hooks/pre-commit",
    ".git/config",
    ".bashrc",
    ".nb_tools/settings.json",
    ".ipython/profile_default/startup/00-run.py",
]


def _assert_protected(root: Path, rel: str) -> None:
    assert Workspace(root).is_protected(rel), f"{rel} fell off the workspace's protected list"


@pytest.mark.parametrize("rel", PROTECTED)
async def test_auto_asks_for_a_protected_write_and_a_denial_writes_nothing(
    tmp_path: Path, rel: str
) -> None:
    _assert_protected(tmp_path, rel)
    approver = Approver(answers=[False])
    out = await drive(
        [call("write_file", file_path=rel, content="pwned", id="w")],
        tools=workspace_tools(tmp_path, "write_file"),
        approval="auto",
        approver=approver,
    )
    assert not (tmp_path / rel).exists()
    (request,) = approver.requests
    assert request.protected and request.reason == ProtectionSource()
    assert request.always_allow_rule is None  # "Always allow" is not offered for a protected path
    assert out.result("w") == ("The user denied this call.", True)


@pytest.mark.parametrize("rel", PROTECTED)
async def test_auto_without_an_approver_refuses_a_protected_write(tmp_path: Path, rel: str) -> None:
    _assert_protected(tmp_path, rel)
    out = await drive(
        [call("write_file", file_path=rel, content="pwned", id="w")],
        tools=workspace_tools(tmp_path, "write_file"),
        approval="auto",
    )
    assert not (tmp_path / rel).exists()
    content, _ = out.result("w")
    assert "protected path" in content and "no approver is configured" in content


@pytest.mark.parametrize("rel", [".env", ".git/hooks/pre-commit", ".git/config"])
async def test_an_allow_rule_does_not_lift_protection(tmp_path: Path, rel: str) -> None:
    rules = PermissionRules(root=tmp_path)
    rules.allow("write_file", "write_file(**)")
    approver = Approver(stop=True)  # never clicks
    out = await drive(
        [call("write_file", file_path=rel, content="pwned", id="w")],
        tools=workspace_tools(tmp_path, "write_file"),
        approval="auto",
        approver=approver,
        rules=rules,
    )
    assert out.stopped and approver.asked == ["w"]
    assert not (tmp_path / rel).exists()


@pytest.mark.parametrize("rel", [".env", ".git/hooks/pre-commit"])
async def test_always_allow_does_not_lift_protection(tmp_path: Path, rel: str) -> None:
    approver = Approver(answers=[Decision(approved=True, remember=True), False])
    out = await drive(
        [call("write_file", file_path="notes/a.txt", content="ok", id="a")],
        turns=[[call("write_file", file_path=rel, content="pwned", id="p")]],
        tools=workspace_tools(tmp_path, "write_file"),
        approver=approver,
    )
    assert (tmp_path / "notes" / "a.txt").read_text() == "ok"
    assert {r.text for r in out.agent.rules.rules if r.source == "session"} == {
        "write_file(notes/**)"
    }
    assert approver.asked == ["a", "p"]
    assert not (tmp_path / rel).exists()


async def test_a_protected_patch_asks_under_auto(tmp_path: Path) -> None:
    patch = "*** Begin Patch\n*** Add File: .git/hooks/post-checkout\n+#!/bin/sh\n*** End Patch\n"
    approver = Approver(answers=[False])
    await drive(
        [call("apply_patch", input=patch, id="p")],
        tools=workspace_tools(tmp_path, "apply_patch"),
        approval="auto",
        approver=approver,
    )
    assert approver.asked == ["p"]
    assert not (tmp_path / ".git" / "hooks" / "post-checkout").exists()


@pytest.mark.parametrize("policy", ["auto", "read-only", "ask"])
async def test_reading_a_protected_file_asks_under_every_policy(
    tmp_path: Path, policy: str
) -> None:
    (tmp_path / ".env").write_text("API_KEY=secret\n")
    approver = Approver(answers=[False])
    out = await drive(
        [call("read_file", file_path=".env", id="r")],
        tools=workspace_tools(tmp_path, "read_file"),
        approval=policy,
        approver=approver,
    )
    assert approver.asked == ["r"]
    assert "secret" not in out.result("r")[0]


async def test_plan_mode_refuses_a_protected_write_without_asking(tmp_path: Path) -> None:
    approver = Approver(answers=[True])
    out = await drive(
        [call("write_file", file_path=".env", content="x", id="w")],
        tools=workspace_tools(tmp_path, "write_file"),
        approval="read-only",
        approver=approver,
    )
    assert approver.requests == []
    assert not (tmp_path / ".env").exists()
    assert out.result("w")[0].startswith("plan mode: write_file")


async def test_a_protection_check_that_raises_asks(tmp_path: Path) -> None:
    from nb_tools import Info, Result, Schema

    class Flaky:
        ran = False

        def info(self) -> Info:
            return Info(name="flaky", parameters=Schema.object({"p": Schema.string("p")}))

        def is_protected_call(self, args: str | bytes) -> bool:
            raise OSError("cannot stat")

        def call(self, args: str | bytes) -> Result:
            Flaky.ran = True
            return Result(content="ran")

    approver = Approver(answers=[False])
    await drive([call("flaky", p="x", id="f")], tools=[Flaky()], approval="auto", approver=approver)
    assert approver.asked == ["f"] and not Flaky.ran
