"""A no-click ``glob`` never lists the name of a secret: what the protection table calls a
secret (credentials, secret stores) and a home folder's dot-entries are left out, even
when an ignore file brings hidden files back; the answer says how many and why. A
``path`` naming a protected folder asks first. With rg and with the Python walker."""

from __future__ import annotations

from pathlib import Path

import pytest
from approvals_helpers import Approver, call, drive

from nb_tools import Registry
from nb_tools.builtin._glob import GlobTool
from nb_tools.builtin._rg import find_rg
from nb_tools.builtin._workspace import Workspace

SECRET_NAMES = [
    "infra/prod.tfstate",
    "keys/acme-service-account-7f3e.json",
    "deploy/kaggle.json",
    "notes/history.sqlite",
    "cfg/rclone.conf",
    "app/.streamlit/secrets.toml",
    "app/.env.production",
    "profile/cookies.sqlite",
]
HOME_NAMES = ["home/ann/.mozilla/firefox/x/places.sqlite", "home/ann/.unknown-tool/state.json"]
PLAIN = ["infra/main.tf", "keys/README.md", "home/ann/notes.md"]


def _tree(root: Path) -> None:
    for rel in SECRET_NAMES + HOME_NAMES + PLAIN:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("x\n")
    (root / "home/ann/.bashrc").write_text("# a home\n")
    (root / ".ignore").write_text("!.*\n!**/.*\n")  # text a repository controls


@pytest.mark.parametrize("engine", ["rg", "python"])
async def test_no_click_glob_lists_no_secret_name(tmp_path: Path, engine: str) -> None:
    rg = find_rg() if engine == "rg" else None
    if engine == "rg" and rg is None:
        pytest.skip("the ripgrep wheel is not installed")
    _tree(tmp_path)
    tools = Registry(GlobTool(Workspace(tmp_path), rg=rg))
    out = await drive(
        [call("glob", pattern="**/*", id="g1"), call("glob", pattern="*.json", id="g2")],
        tools=tools,
        approval="auto",
        approver=Approver(),
    )
    seen, _ = out.result("g1")
    for rel in PLAIN:
        assert rel in seen
    for rel in SECRET_NAMES + HOME_NAMES + ["home/ann/.bashrc"]:
        assert Path(rel).name not in seen, rel
    assert "11 matching files not shown" in seen
    assert "credentials or secrets" in seen
    only_json, _ = out.result("g2")
    assert "service-account" not in only_json and "kaggle" not in only_json
    assert "matching files not shown" in only_json


async def test_a_glob_of_a_protected_folder_asks(tmp_path: Path) -> None:
    _tree(tmp_path)
    (tmp_path / "cfg/.aws").mkdir()
    (tmp_path / "cfg/.aws/credentials").write_text("x\n")
    tools = Registry(GlobTool(Workspace(tmp_path), rg=find_rg()))
    approver = Approver(answers=[True])
    out = await drive(
        [call("glob", pattern="*", path="cfg/.aws", id="g")],
        tools=tools,
        approval="auto",
        approver=approver,
    )
    assert approver.asked == ["g"]
    assert "credentials" in out.result("g")[0]


async def test_the_text_editors_folder_view_lists_no_secret_name(tmp_path: Path) -> None:
    """``str_replace_based_edit_tool`` ``view`` of a folder lists names two levels deep,
    as glob does: the same names are left out, and counted."""
    from nb_tools.builtin import ReadState, TextEditorTool

    _tree(tmp_path)
    tools = Registry(TextEditorTool(Workspace(tmp_path), ReadState()))
    out = await drive(
        [
            call("str_replace_based_edit_tool", command="view", path=".", id="v1"),
            call("str_replace_based_edit_tool", command="view", path="keys", id="v2"),
            call("str_replace_based_edit_tool", command="view", path="infra", id="v3"),
        ],
        tools=tools,
        approval="auto",
        approver=Approver(),
    )
    seen = out.result("v1")[0] + out.result("v2")[0] + out.result("v3")[0]
    assert "infra/main.tf" in seen and "keys/README.md" in seen
    for name in ("prod.tfstate", "service-account", "kaggle.json", "history.sqlite", "rclone"):
        assert name not in seen, name
    assert "not shown" in seen
