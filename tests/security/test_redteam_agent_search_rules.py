"""Red team: ``grep`` and ``glob`` read everything under their ``path``, but a deny rule
such as ``grep(secrets/**)`` was matched against that path alone: ``path="secrets"``
(or the workspace root, the default) is not itself under ``secrets/``, so the rule never
applied and the read-only search ran without a click, returning the secret lines. A deny
or ask rule now applies to a search whose folder holds what the rule names. The effect
checked: the secret text never reaches the model."""

from __future__ import annotations

from pathlib import Path

import pytest
from approvals_helpers import Approver, call, drive, workspace_tools

from nb_tools.permissions import PermissionRules

# letters only: in no shape the text search hides, so only the defence under test keeps it out
SECRET = "hunterTwoToken"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "secrets").mkdir()
    (tmp_path / "secrets" / "db.txt").write_text(f"TOKEN={SECRET}\n")
    (tmp_path / "src" / "pkg").mkdir(parents=True)
    (tmp_path / "src" / "pkg" / "a.py").write_text("TOKEN = None\n")
    return tmp_path


def _seen(out, ids) -> str:  # type: ignore[no-untyped-def]
    return "\n".join(out.result(i)[0] for i in ids)


GREPS = {
    "folder": {"path": "secrets"},
    "root-default": {},
    "root-dot": {"path": "."},
    "root-absolute": {"path": "{root}"},
    "dot-slash": {"path": "./secrets/"},
    "inside": {"path": "secrets/db.txt"},
}


@pytest.mark.parametrize("where", sorted(GREPS))
@pytest.mark.parametrize("action", ["deny", "ask"])
async def test_a_search_over_a_denied_folder_does_not_read_it(
    root: Path, where: str, action: str
) -> None:
    rules = PermissionRules(root=root)
    rules.add(action, "grep(secrets/**)")  # type: ignore[arg-type]
    extra = {k: v.format(root=root) for k, v in GREPS[where].items()}
    approver = Approver(answers=[False])
    out = await drive(
        [call("grep", pattern="TOKEN", output_mode="content", id="g", **extra)],
        tools=workspace_tools(root, "grep"),
        rules=rules,
        approval="auto",
        approver=approver,
    )
    assert SECRET not in _seen(out, ["g"])
    assert out.status("g") == "denied"


async def test_glob_over_a_denied_folder_lists_nothing(root: Path) -> None:
    rules = PermissionRules(root=root)
    rules.deny("glob(secrets/**)")
    out = await drive(
        [
            call("glob", pattern="secrets/*", id="l"),
            call("glob", pattern="*", path="secrets", id="m"),
        ],
        tools=workspace_tools(root, "glob"),
        rules=rules,
        approval="auto",
    )
    assert "db.txt" not in _seen(out, ["l", "m"])


async def test_an_unanchored_deny_covers_every_folder(root: Path) -> None:
    """``**/*.txt`` may match under any folder: a search anywhere could read one."""
    rules = PermissionRules(root=root)
    rules.deny("grep(**/*.txt)")
    out = await drive(
        [call("grep", pattern="TOKEN", output_mode="content", id="g")],
        tools=workspace_tools(root, "grep"),
        rules=rules,
        approval="auto",
    )
    assert SECRET not in _seen(out, ["g"])


async def test_a_search_beside_the_denied_folder_still_runs(root: Path) -> None:
    """The guard's other side: searching elsewhere is not refused."""
    rules = PermissionRules(root=root)
    rules.deny("grep(secrets/**)")
    out = await drive(
        [
            call("grep", pattern="TOKEN", path="src", output_mode="content", id="g"),
            call("grep", pattern="TOKEN", path="src/pkg/a.py", output_mode="content", id="h"),
        ],
        tools=workspace_tools(root, "grep"),
        rules=rules,
        approval="auto",
    )
    assert "TOKEN = None" in out.result("g")[0]
    assert "TOKEN = None" in out.result("h")[0]


READERS = {
    "grep": {"pattern": "TOKEN", "path": "secrets", "output_mode": "content"},
    "str_replace_based_edit_tool": {"command": "view", "path": "secrets/db.txt"},
}


@pytest.mark.parametrize("reader", sorted(READERS))
async def test_a_read_file_deny_covers_every_tool_that_reads_files(root: Path, reader: str) -> None:
    """``deny read_file(secrets/**)`` says "the model does not read these": a search or
    another file viewer running without a click must not read them either."""
    from nb_tools.builtin._readstate import ReadState
    from nb_tools.builtin._text_editor import TextEditorTool
    from nb_tools.builtin._workspace import Workspace

    editor = TextEditorTool(Workspace(root), ReadState())
    rules = PermissionRules(root=root)
    rules.deny("read_file(secrets/**)")
    out = await drive(
        [call(reader, id="r", **READERS[reader])],
        tools=[*workspace_tools(root, "grep"), editor],
        rules=rules,
        approval="auto",
    )
    assert SECRET not in _seen(out, ["r"])
    assert out.status("r") == "denied"


async def test_a_root_search_runs_when_nothing_denied_is_there(tmp_path: Path) -> None:
    """The guard's other side: a deny rule for a folder that does not exist, or a pattern
    no file matches, leaves searches of the root alone."""
    (tmp_path / "a.py").write_text("TOKEN = 1\n")
    rules = PermissionRules(root=tmp_path)
    rules.deny("read_file(secrets/**)", "grep(**/*.pem)")
    out = await drive(
        [call("grep", pattern="TOKEN", output_mode="content", id="g")],
        tools=workspace_tools(tmp_path, "grep"),
        rules=rules,
        approval="auto",
    )
    assert "TOKEN = 1" in out.result("g")[0]


async def test_a_read_file_deny_keeps_a_read_only_shell_command_out(root: Path) -> None:
    from sandbox_helpers import require_sandbox

    require_sandbox()
    rules = PermissionRules(root=root)
    rules.deny("read_file(secrets/**)")
    out = await drive(
        [call("bash", command="cat secrets/db.txt", id="b")],
        tools=workspace_tools(root, "bash"),
        rules=rules,
        approval="ask",
    )
    assert SECRET not in out.result("b")[0]
