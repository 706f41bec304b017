"""Path rules read a path as the tools will act on it: a deny rule catches a path that
resolves into what it names (through a symlink), and an allow rule covers a path only
when both its spelling and its resolved target are inside what it names. Driven through
``Agent`` with the real tools; each case checks the disk."""

from __future__ import annotations

import unicodedata
from pathlib import Path
from typing import Any

import pytest
from files_attack import fingerprint, make_world, patch

from nb_tools.agent import Agent, ApprovalRequest
from nb_tools.builtin import builtin_tools
from nb_tools.permissions import PermissionRules
from nb_tools.testing import ScriptedModel, call, reply

FILE_TOOLS = ["read_file", "write_file", "edit_file", "apply_patch"]


@pytest.fixture
def world(tmp_path: Path) -> Path:
    w = make_world(tmp_path)
    root = w / "root"
    for d in ("secrets", "notes", "caf\u00e9"):
        (root / d).mkdir()
    (root / "secrets" / "s.txt").write_text("secret s\n")
    (root / "notes" / "n.txt").write_text("note\n")
    (root / "link").symlink_to(root / "secrets", target_is_directory=True)
    (root / "s_link.txt").symlink_to(root / "secrets" / "s.txt")
    (root / "notes" / "up").symlink_to(root / "secrets", target_is_directory=True)
    (root / "notes" / "git").symlink_to(root / ".git", target_is_directory=True)
    return w


def run(
    root: Path, steps: list[list[Any]], rules: PermissionRules, approval: str = "ask"
) -> tuple[list[ApprovalRequest], ScriptedModel]:
    asked: list[ApprovalRequest] = []

    def approver(request: ApprovalRequest) -> bool:
        asked.append(request)
        return request.call.name == "read_file"  # reads yes, writes no

    model = ScriptedModel([*(reply("", *calls) for calls in steps), reply("done")])
    agent = Agent(
        model,
        tools=builtin_tools(root, include=FILE_TOOLS),
        rules=rules,
        approval=approval,
        approver=approver,
    )
    agent.run_sync("go")
    return asked, model


def rules_for(root: Path, **by_action: list[str]) -> PermissionRules:
    rules = PermissionRules(root=root)
    for action, texts in by_action.items():
        rules.add(action, *texts)  # type: ignore[arg-type]
    return rules


DENY_CASES: dict[str, list[list[Any]]] = {
    "edit_through_dir_link": [
        [call("read_file", file_path="link/s.txt")],
        [call("edit_file", file_path="link/s.txt", old_string="secret", new_string="x")],
    ],
    "edit_through_file_link": [
        [call("read_file", file_path="s_link.txt")],
        [call("edit_file", file_path="s_link.txt", old_string="secret", new_string="x")],
    ],
    "write_new_through_link": [[call("write_file", file_path="link/new.txt", content="x")]],
    "write_via_nested_link": [[call("write_file", file_path="notes/up/new.txt", content="x")]],
    "write_absolute_through_link": [
        [call("write_file", file_path="{ROOT}/link/new.txt", content="x")]
    ],
    "write_dotdot": [[call("write_file", file_path="notes/../secrets/new.txt", content="x")]],
    "patch_update_through_link": [
        [call("apply_patch", **patch("*** Update File: link/s.txt", "@@", "-secret s", "+x"))]
    ],
    "patch_add_through_link": [[call("apply_patch", **patch("*** Add File: link/n", "+x"))]],
    "patch_delete_through_link": [[call("apply_patch", **patch("*** Delete File: s_link.txt"))]],
    "patch_move_into_link": [
        [
            call(
                "apply_patch",
                **patch(
                    "*** Update File: a.txt", "*** Move to: link/a.txt", "@@", "-secret a", "+x"
                ),
            )
        ]
    ],
}


def _fill(steps: list[list[Any]], root: Path) -> list[list[Any]]:
    for calls in steps:
        for c in calls:
            c.arguments.update(
                {k: v.replace("{ROOT}", str(root)) for k, v in c.arguments.items() if k != "input"}
            )
    return steps


@pytest.mark.parametrize("case", list(DENY_CASES))
def test_deny_rules_catch_the_resolved_path_under_auto(world: Path, case: str) -> None:
    root = world / "root"
    rules = rules_for(
        root,
        deny=["edit_file(secrets/**)", "write_file(secrets/**)", "apply_patch(secrets/**)"],
    )
    before = fingerprint(world / "root" / "secrets")
    before_a = (root / "a.txt").read_bytes()
    run(root, _fill(DENY_CASES[case], root), rules, approval="auto")
    assert fingerprint(world / "root" / "secrets") == before
    assert (root / "a.txt").read_bytes() == before_a


ALLOW_MUST_NOT_COVER: dict[str, list[Any]] = {
    "write_through_link_out_of_notes": [
        call("write_file", file_path="notes/up/new.txt", content="x")
    ],
    "write_through_link_to_git": [call("write_file", file_path="notes/git/evil", content="x")],
    "write_dotdot_out_of_notes": [
        call("write_file", file_path="notes/../secrets/new.txt", content="x")
    ],
    "write_link_then_dotdot": [call("write_file", file_path="notes/up/../new.txt", content="x")],
    "patch_add_through_link": [call("apply_patch", **patch("*** Add File: notes/up/p", "+x"))],
    "patch_move_out_of_notes": [
        call(
            "apply_patch",
            **patch(
                "*** Update File: notes/n.txt", "*** Move to: notes/up/m.txt", "@@", "-note", "+x"
            ),
        )
    ],
    "patch_one_path_outside": [
        call(
            "apply_patch",
            **patch("*** Add File: notes/ok.txt", "+x", "*** Add File: secrets/bad.txt", "+x"),
        )
    ],
}


@pytest.mark.parametrize("case", list(ALLOW_MUST_NOT_COVER))
def test_an_allow_rule_does_not_cover_a_path_that_leaves_it(world: Path, case: str) -> None:
    root = world / "root"
    rules = rules_for(root, allow=["write_file(notes/**)", "apply_patch(notes/**)"])
    before = fingerprint(world)
    asked, _ = run(root, [ALLOW_MUST_NOT_COVER[case]], rules)
    assert [r.call.name for r in asked] in (["write_file"], ["apply_patch"])
    assert fingerprint(world) == before


def test_control_an_allow_rule_covers_a_plain_path(world: Path) -> None:
    root = world / "root"
    rules = rules_for(root, allow=["write_file(notes/**)"])
    asked, _ = run(root, [[call("write_file", file_path="notes/fresh.txt", content="x")]], rules)
    assert asked == []
    assert (root / "notes" / "fresh.txt").read_text() == "x"


@pytest.mark.parametrize("form", ["NFC", "NFD"])
def test_a_deny_rule_catches_both_unicode_forms(world: Path, form: str) -> None:
    root = world / "root"
    rules = rules_for(root, deny=["write_file(caf\u00e9/**)"])
    path = unicodedata.normalize(form, "caf\u00e9") + "/x.txt"
    run(root, [[call("write_file", file_path=path, content="x")]], rules, approval="auto")
    assert not (root / unicodedata.normalize(form, "caf\u00e9") / "x.txt").exists()


def test_an_ask_rule_asks_for_the_resolved_path_under_auto(world: Path) -> None:
    root = world / "root"
    rules = rules_for(root, ask=["write_file(secrets/**)"])
    asked, _ = run(
        root, [[call("write_file", file_path="link/new.txt", content="x")]], rules, "auto"
    )
    assert [r.call.name for r in asked] == ["write_file"]
    assert not (root / "secrets" / "new.txt").exists()
