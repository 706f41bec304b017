"""Default deny in a home folder: Jupyter started in ``~`` (very common) makes the home
the workspace, and no deny-list of a home's secrets is complete. Every dot-entry of a home
folder inside the workspace is hidden from calls without a click (``read_file``, ``grep``,
bash ``cat``) and protected from writes (``write_file``, bash under ``auto``), but a short
allow-list (``HOME_ALLOW``). Effects checked: the secret string that must not reach the
model, the file that must not change or appear.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from approvals_helpers import Approver, call, drive, workspace_tools
from sandbox_helpers import require_sandbox, run

from nb_tools.sandbox import HOME_ALLOW

SECRET = "SECRET-home-51f0"
UNKNOWN = [  # stores no table names: only the default deny keeps them
    ".unknownapp/token",
    ".config/someclient/auth.json",
    ".local/state/tool/session",
    ".newcloudrc",
]
KNOWN = [  # secret stores the table names (the attacks)
    ".ipython/profile_default/history.sqlite",
    ".cache/huggingface/token",
    ".kaggle/kaggle.json",
    ".databrickscfg",
    ".config/rclone/rclone.conf",
    ".config/pip/pip.conf",
    ".condarc",
    ".mozilla/firefox/x.default/cookies.sqlite",
    ".config/google-chrome/Default/Login Data",
    "snap/firefox/common/.mozilla/firefox/p/logins.json",
]


def _home(folder: Path, *, marker: bool = True) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    if marker:
        (folder / ".bashrc").write_text("# the user's\n")
    for rel in UNKNOWN + KNOWN:
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text(f"{SECRET} {rel}\n")
    (folder / ".gitignore").write_text("ALLOWED-gitignore\n")
    (folder / "notes.txt").write_text("PLAIN-notes\n")
    (folder / ".ignore").write_text("!.*\n!**/.*\n")  # text a repository controls
    return folder


async def _reads(root: Path, prefix: str) -> tuple[str, list[str]]:
    paths = [prefix + p for p in UNKNOWN + KNOWN]
    calls = [call("read_file", file_path=p, id=f"r{i}") for i, p in enumerate(paths)]
    calls += [
        call("read_file", file_path=prefix + ".gitignore", id="allowed"),
        call("grep", pattern="SECRET-|ALLOWED-|PLAIN-", output_mode="content", id="g"),
    ]
    approver = Approver()
    out = await drive(
        calls,
        tools=workspace_tools(root, "read_file", "grep"),
        approval="auto",
        approver=approver,
    )
    cat = "cat " + " ".join(f"'{p}'" for p in paths) + f" '{prefix}.gitignore'; "
    cat += "grep -ra 'SECRET-\\|PLAIN-' . ; ls -a " + (prefix or ".") + "; true"
    shell = await run(root, cat, approved=False, timeout_ms=60_000)
    text = "\n".join([*(out.result(c.id)[0] for c in calls), str(shell.content)])
    return text, approver.asked


@pytest.mark.parametrize("prefix", ["", "home/alice/"])
async def test_no_click_call_sees_no_dot_entry_of_a_home(tmp_path: Path, prefix: str) -> None:
    require_sandbox()
    _home(tmp_path / prefix)
    text, asked = await _reads(tmp_path, prefix)
    assert SECRET not in text, text
    assert "ALLOWED-gitignore" in text and "PLAIN-notes" in text  # the control
    assert "allowed" not in asked and all(f"r{i}" in asked for i in range(len(UNKNOWN + KNOWN)))


async def test_control_without_the_look_of_a_home_an_unknown_store_is_readable(
    tmp_path: Path,
) -> None:
    """Proves the default deny is what keeps the unknown stores above: the same folder
    without a shell start-up file is no home, and only the table's names stay hidden."""
    require_sandbox()
    _home(tmp_path, marker=False)
    text, _ = await _reads(tmp_path, "")
    assert f"{SECRET} .unknownapp/token" in text
    for rel in KNOWN:
        assert f"{SECRET} {rel}" not in text, rel


@pytest.mark.parametrize("prefix", ["", "home/alice/"])
async def test_writes_to_a_home_dot_entry_are_refused_or_removed(
    tmp_path: Path, prefix: str
) -> None:
    require_sandbox()
    home = _home(tmp_path / prefix)
    command = (
        f"cd '{home}'; echo PWNED > .unknownapp/token; echo PWNED > .newtoolrc; "
        "mkdir -p .config/newtool && echo PWNED > .config/newtool/init.sh; "
        "echo 'node_modules/' >> .gitignore"
    )
    await drive([call("bash", command=command, id="b")], tools=workspace_tools(tmp_path, "bash"),
                approval="auto")  # fmt: skip
    assert (home / ".unknownapp/token").read_text() == f"{SECRET} .unknownapp/token\n"
    assert not (home / ".newtoolrc").exists()
    assert not (home / ".config/newtool").exists()
    assert (home / ".gitignore").read_text() == "ALLOWED-gitignore\nnode_modules/\n"
    approver = Approver()
    await drive(
        [
            call("write_file", file_path=prefix + ".newtoolrc", content="PWNED", id="w1"),
            call("write_file", file_path=prefix + ".unknownapp/token", content="PWNED", id="w2"),
            call(
                "write_file", file_path=prefix + ".editorconfig", content="root = true\n", id="ok"
            ),
        ],
        tools=workspace_tools(tmp_path, "write_file"),
        approval="auto",
        approver=approver,
    )
    assert approver.asked == ["w1", "w2"]
    assert not (home / ".newtoolrc").exists()
    assert (home / ".editorconfig").read_text() == "root = true\n"


def test_the_allow_list_is_short_and_says_why() -> None:
    assert len(HOME_ALLOW) <= 8
    assert all(name.startswith(".") and len(why) > 20 for name, why in HOME_ALLOW.items())


async def test_a_call_that_makes_the_workspace_look_like_a_home_removes_nothing_old(
    tmp_path: Path,
) -> None:
    """A `.bashrc` planted at the top makes the workspace look like a home after the call:
    its old dot-entries (the repository!) are not new, only the `.bashrc` is."""
    require_sandbox()
    import subprocess

    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    (tmp_path / ".editorconfig").write_text("root = true\n")
    (tmp_path / ".prettierrc").write_text("{}\n")
    await drive(
        [call("bash", command="echo 'touch PWNED' > .bashrc", id="b")],
        tools=workspace_tools(tmp_path, "bash"),
        approval="auto",
    )
    assert not (tmp_path / ".bashrc").exists()
    assert (tmp_path / ".git" / "HEAD").is_file()
    assert (tmp_path / ".prettierrc").read_text() == "{}\n"


async def test_a_program_in_a_home_runs_but_its_neighbours_stay_hidden(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``~/.local/bin`` on ``PATH`` comes back for a call without a click; the rest of
    ``.local`` (an app's token in ``.local/share``) does not come with it."""
    require_sandbox()
    import os

    home = _home(tmp_path)
    tool = home / ".local/bin/mytool"
    tool.parent.mkdir(parents=True)
    tool.write_text("#!/bin/sh\necho TOOL-RAN-3c1\n")
    tool.chmod(0o755)
    (home / ".local/share/app").mkdir(parents=True)
    (home / ".local/share/app/token").write_text(f"{SECRET} local\n")
    monkeypatch.setenv("PATH", f"{tool.parent}:{os.environ['PATH']}")
    out = await run(home, "mytool; cat .local/share/app/token; true", approved=False)
    assert "TOOL-RAN-3c1" in str(out.content), out.content
    assert SECRET not in str(out.content)
