"""Attack round 3 through git's configuration: bash under ``auto`` (the workspace-write
sandbox) prepares a repository so that the user's next ``git status``, outside the
sandbox, runs a program (``core.fsmonitor``). Each test then runs that ``git status`` as
the user would and checks that the program did not run (its marker file is absent).
"""

from __future__ import annotations

import shlex
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from approvals_helpers import Approver, call, drive, workspace_tools
from sandbox_helpers import require_sandbox


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, capture_output=True, timeout=60, check=False,
                   env={"PATH": "/usr/bin:/bin", "HOME": str(cwd), "GIT_CONFIG_NOSYSTEM": "1"})  # fmt: skip


def _repo(path: Path) -> None:
    path.mkdir(parents=True, exist_ok=True)
    _git(path, "init", "-q")
    (path / "f.txt").write_text("x\n")
    _git(path, "add", "f.txt")
    _git(path, "-c", "user.email=a@b", "-c", "user.name=a", "commit", "-qm", "one")


def _fsmonitor(mark: Path) -> str:
    return f'[core]\n\tfsmonitor = "touch {mark}; false"\n'


def _put(path: str, mark: Path) -> str:
    """A shell line writing the config that runs ``touch mark`` to ``path``."""
    return f"printf %s {shlex.quote(_fsmonitor(mark))} > {path}"


def _control(setup: Callable[[Path], None], command: str, folder: str, tmp: Path) -> None:
    """The attack without the sandbox (plain bash in a copy of the workspace): the user's
    git does run the program, so the test above it can fail."""
    ws = tmp / "control-ws"
    ws.mkdir()
    mark = tmp / "MARK"
    setup(ws)
    subprocess.run(["bash", "-c", command.replace(str(tmp / "MARK"), str(mark))], cwd=ws,
                   capture_output=True, timeout=60, check=False)  # fmt: skip
    _user_runs_git(ws / folder)
    assert mark.exists(), "the control did not run: the attack is broken"
    mark.unlink()


async def _auto(ws: Path, command: str) -> str:
    out = await drive(
        [call("bash", command=command, timeout=60_000, id="b")],
        tools=workspace_tools(ws, "bash"),
        approval="auto",
        approver=Approver(),
    )
    return out.result("b")[0]


def _user_runs_git(folder: Path) -> None:
    _git(folder, "status")


async def test_g1_a_dot_git_file_pointing_at_a_planted_gitdir(ws: Path, tmp_path: Path) -> None:
    """``sub/.git`` as a file (``gitdir: ../evil``) and ``evil/`` a repository folder whose
    config names a program: a repository the call made, defused after it."""
    require_sandbox()
    mark = tmp_path / "MARK"
    command = (
        "mkdir -p sub evil/objects evil/refs/heads; echo 'ref: refs/heads/main' > evil/HEAD; "
        f"{_put('evil/config', mark)}; echo 'gitdir: ../evil' > sub/.git; echo done"
    )
    _control(_repo, command, "sub", tmp_path)
    _repo(ws)
    await _auto(ws, command)
    _user_runs_git(ws / "sub")
    assert not mark.exists()


async def test_g2_a_new_repository_that_includes_a_workspace_file(ws: Path, tmp_path: Path) -> None:
    require_sandbox()
    mark = tmp_path / "MARK"
    command = (
        f"git init -q new && {_put('team.cfg', mark)} && "
        "git -C new config include.path ../../team.cfg; echo done"
    )
    _control(lambda w: None, command, "new", tmp_path)
    await _auto(ws, command)
    _user_runs_git(ws / "new")
    assert not mark.exists()


@pytest.mark.parametrize("key", ["include.path", "includeIf.gitdir:/.path"])
async def test_g3_an_existing_repository_includes_a_file_bash_rewrites(
    ws: Path, tmp_path: Path, key: str
) -> None:
    """The repository's own config (read-only in the sandbox) includes ``team.gitconfig``
    from the work tree, a shared setting some teams keep: the file it includes runs as
    much as the config itself, so bash cannot change it and ``write_file`` asks."""
    require_sandbox()
    mark = tmp_path / "MARK"

    def setup(w: Path) -> None:
        _repo(w)
        (w / "team.gitconfig").write_text("[user]\n\tname = team\n")
        _git(w, "config", key, "../team.gitconfig")

    command = f"{_put('team.gitconfig', mark)}; echo done"
    _control(setup, command, ".", tmp_path)
    setup(ws)
    await _auto(ws, command)
    _user_runs_git(ws)
    assert not mark.exists()
    approver = Approver()
    await drive(
        [call("write_file", file_path="team.gitconfig", content=_fsmonitor(mark), id="w")],
        tools=workspace_tools(ws, "write_file"),
        approval="auto",
        approver=approver,
    )
    assert approver.asked == ["w"]
    _user_runs_git(ws)
    assert not mark.exists()


async def test_g4_a_linked_worktrees_commondir(ws: Path, tmp_path: Path) -> None:
    require_sandbox()
    mark = tmp_path / "MARK"

    def setup(w: Path) -> None:
        _repo(w / "main")
        _git(w / "main", "worktree", "add", "-q", "../wt")

    command = (
        "mkdir -p evil/objects evil/refs; "
        f"{_put('evil/config', mark)}; "
        "echo ../../../../evil > main/.git/worktrees/wt/commondir; echo done"
    )
    _control(setup, command, "wt", tmp_path)
    setup(ws)
    await _auto(ws, command)
    _user_runs_git(ws / "wt")
    assert not mark.exists()


async def test_g5_a_submodules_config_in_dot_git_modules(ws: Path, tmp_path: Path) -> None:
    require_sandbox()
    mark = tmp_path / "MARK"
    command = (
        "mkdir -p .git/modules/lib/objects .git/modules/lib/refs lib; "
        "echo 'ref: refs/heads/main' > .git/modules/lib/HEAD; "
        f"{_put('.git/modules/lib/config', mark)}; "
        "echo 'gitdir: ../.git/modules/lib' > lib/.git; echo done"
    )
    _control(_repo, command, "lib", tmp_path)
    _repo(ws)
    await _auto(ws, command)
    _user_runs_git(ws / "lib")
    assert not mark.exists()


async def test_g6_an_included_file_that_does_not_exist_yet(ws: Path, tmp_path: Path) -> None:
    """The config includes ``../team.gitconfig``, which nobody has made: no mount can
    guard a missing name, so the file the call made is removed after it."""
    require_sandbox()
    mark = tmp_path / "MARK"

    def setup(w: Path) -> None:
        _repo(w)
        _git(w, "config", "include.path", "../team.gitconfig")

    command = f"{_put('team.gitconfig', mark)}; echo done"
    _control(setup, command, ".", tmp_path)
    setup(ws)
    text = await _auto(ws, command)
    _user_runs_git(ws)
    assert not mark.exists()
    assert "team.gitconfig" in text  # the result names what was removed
