"""Red team, the sandbox: what a sandboxed command must not change or reach outside the
workspace, checked on the real machine (real bwrap, the host's own files and settings)."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from sandbox_helpers import require_sandbox, run

from nb_tools.builtin._bash_readonly import is_read_only


@pytest.fixture(autouse=True)
def sandbox() -> None:
    require_sandbox()


SYSCTL = Path("/proc/sys/kernel/core_pipe_limit")  # harmless to change for a moment


@pytest.mark.parametrize("mode", ["workspace-write", "read-only"])
async def test_kernel_settings_stay_unchanged(mode: str, ws: Path) -> None:
    """Hole: bubblewrap leaves /proc/sys of its new /proc writable (it checks the folder,
    mode 0555, not the files). Running as root, an approved call wrote host-wide kernel
    settings: `core_pattern = |prog` runs prog as root outside the sandbox at the next
    crash. The same write of a harmless setting must now fail and leave the host as it was."""
    if not os.access(SYSCTL, os.W_OK):
        pytest.skip("the host's kernel settings are not writable by this user")
    before = SYSCTL.read_text()
    new = "7" if before.strip() != "7" else "8"
    try:
        r = await run(ws, f"echo {new} > {SYSCTL}; cat {SYSCTL}", approved=True, sandbox=mode)
        assert SYSCTL.read_text() == before, r.content
        assert "Read-only file system" in r.content
    finally:
        SYSCTL.write_text(before)


async def test_sysrq_trigger_is_not_writable(ws: Path) -> None:
    r = await run(ws, "echo x > /proc/sysrq-trigger", approved=True)
    assert r.is_error  # absent or read-only, never a live trigger


@pytest.fixture
def outside() -> Iterator[Path]:
    """A folder outside the workspace and outside every folder the sandbox always masks
    (``/tmp``, ``/var/tmp``, homes): in ``/srv`` or ``/opt`` (the checkout may itself be
    under ``/tmp``), else next to the repository checkout."""
    bases = [Path("/srv"), Path("/opt"), Path(__file__).resolve().parents[2]]
    base = next(b for b in bases if b.is_dir() and os.access(b, os.W_OK))
    d = Path(tempfile.mkdtemp(prefix=".rt-outside-", dir=base))
    try:
        (d / "notes.txt").write_text("OUTSIDE-MARKER-4711\n")
        yield d
    finally:
        shutil.rmtree(d, ignore_errors=True)


LINK_READS = [
    "cat link/notes.txt",
    "cat dirlink/notes.txt",
    "grep -r MARKER dirlink/",
    "cd dirlink && cat notes.txt",
    "cat */notes.txt",
    "diff -rN dirlink .",
    "head -n 5 link/notes.txt dirlink/notes.txt",
]


@pytest.mark.parametrize("command", LINK_READS)
async def test_unapproved_call_reads_nothing_outside_through_a_link(
    command: str, ws: Path, outside: Path
) -> None:
    """Hole: links in the workspace (checked out from a hostile repository, or made by an
    earlier approved call) led a call that ran without a click to any file of the machine
    that is not a known secret (other projects, /srv, /var/lib, /opt...). The read_file
    tool refuses such links; bash read through them. The vote passes these commands (it
    reads words); the sandbox of an unapproved call now shows only the system folders and
    the workspace."""
    (ws / "link").symlink_to(outside)
    (ws / "dirlink").symlink_to(outside)
    assert is_read_only(command, ws), command
    # Positive control: where the folder is visible to an approved sandboxed call at all.
    seen = await run(ws, "cat link/notes.txt", approved=True)
    if "OUTSIDE-MARKER" not in seen.content:
        pytest.skip(f"{outside} is masked for every call on this machine")
    r = await run(ws, command, approved=False)
    assert r.metadata["sandbox"] == "read-only"
    assert "OUTSIDE-MARKER" not in r.content, r.content


async def test_unapproved_call_still_works(ws: Path) -> None:
    """The narrower view keeps what read-only commands need: programs, git, the files."""
    (ws / "a.txt").write_text("hello\n")
    r = await run(
        ws, "cat a.txt && ls && rg -c hello . && git --version && jq -n 1", approved=False
    )
    assert not r.is_error, r.content
    assert "hello" in r.content


SECRET_PLACES = [
    "node_modules/pkg/.env",  # the secret scan skipped package folders...
    ".venv/lib/.env",
    "a/b/c/d/e/f/g/h/i/j/.env",  # ...and folders deeper than 8 levels
    "node_modules/x/.ssh/id_rsa",
    ".npmrc",  # the vote protects it by name; the sandbox did not hide it
    "sub/.pypirc",
]


@pytest.mark.parametrize("place", SECRET_PLACES)
@pytest.mark.parametrize("command", ["grep -r TOKEN-4711 .", "rg -uuu TOKEN-4711"])
async def test_unapproved_recursive_read_finds_no_secret(
    place: str, command: str, ws: Path
) -> None:
    """Hole: the secret scan (what the sandbox hides) skipped node_modules, .venv... and
    stopped at 8 levels, and left out names the vote protects (.npmrc, .pypirc): a
    recursive reader that ran without a click printed them."""
    f = ws / place
    f.parent.mkdir(parents=True, exist_ok=True)
    f.write_text("TOKEN-4711=very-secret\n")
    assert is_read_only(command, ws)
    r = await run(ws, command, approved=False)
    assert "very-secret" not in r.content, r.content


def test_secret_scan_over_the_cap_hides_the_rest(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Past the scan's entry cap, what was not scanned is masked for an unapproved call
    (fail closed), so a secret there is never shown."""
    from nb_tools.sandbox import SandboxPolicy, _scan, prepare

    monkeypatch.setattr(_scan, "MAX_SCAN_ENTRIES", 20)
    _scan._scan_cache.clear()
    for i in range(30):
        (ws / f"d{i:02d}").mkdir()
        (ws / f"d{i:02d}" / "f.txt").write_text("x")
    (ws / "d00" / ".env").write_text("TOKEN-4711=very-secret\n")
    launch = prepare(["true"], SandboxPolicy(mode="read-only", workspace=ws).unapproved())
    argv = launch.argv
    root = str(ws.resolve())
    start = next(i for i, a in enumerate(argv) if a == "--ro-bind" and argv[i + 1] == root)
    hidden = {argv[i + 1] for i, a in enumerate(argv) if i > start and a == "--tmpfs"}
    hidden |= {argv[i + 2] for i, a in enumerate(argv) if i > start and a == "--ro-bind"}
    env = str(ws.resolve() / "d00" / ".env")
    assert env in hidden or any(env.startswith(h + "/") for h in hidden)
    _scan._scan_cache.clear()


async def test_too_many_unread_folders_makes_every_call_ask(
    ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """When more folders are left unread than can be masked, no call runs without a click."""
    import json

    from nb_tools.builtin._bash import BashTool
    from nb_tools.builtin._workspace import Workspace
    from nb_tools.sandbox import _scan

    monkeypatch.setattr(_scan, "MAX_SCAN_ENTRIES", 5)
    monkeypatch.setattr(_scan, "MAX_UNSCANNED_MASKS", 3)
    _scan._scan_cache.clear()
    for i in range(10):
        (ws / f"d{i}").mkdir()
    (ws / "d9" / ".env").write_text("TOKEN-4711=very-secret\n")
    tool = BashTool(Workspace(ws))
    assert not tool.read_only_call(json.dumps({"command": "grep -r TOKEN ."}))
    r = await run(ws, "grep -r TOKEN .", approved=False)
    assert r.is_error and "very-secret" not in r.content and "did not run" in r.content
    _scan._scan_cache.clear()


def test_a_big_package_folder_is_masked_whole(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A node_modules too big to read is one mask for an unapproved call, not one per
    folder left unread (which would make every call ask in a JavaScript project)."""
    from nb_tools.sandbox import _scan

    monkeypatch.setattr(_scan, "MAX_SCAN_ENTRIES", 30)
    _scan._scan_cache.clear()
    (ws / "src").mkdir()
    (ws / "src" / "a.py").write_text("x")
    for i in range(100):
        (ws / "node_modules" / f"p{i:03d}").mkdir(parents=True)
    found = _scan.scan_all(ws.resolve())
    assert found.unscanned == (ws.resolve() / "node_modules",)
    assert _scan.unapproved_problem(ws) is None
    _scan._scan_cache.clear()


CONFIG_SECRETS = [
    '[remote "origin"]\n\turl = https://user:TOKEN-4711@example.com/x/y\n',
    '[remote "origin"]\n\turl = https://TOKEN-4711@example.com/x/y\n',
    # what actions/checkout leaves behind
    '[http "https://github.com/"]\n\textraheader = AUTHORIZATION: basic TOKEN-4711\n',
]


@pytest.mark.parametrize("config", CONFIG_SECRETS)
@pytest.mark.parametrize("command", ["git remote -v", "grep -r TOKEN-4711 .", "rg -uuu TOKEN"])
async def test_unapproved_call_sees_no_credentials_in_git_config(
    config: str, command: str, ws: Path
) -> None:
    """Hole: a token in the repository's config (a remote URL with a password, the
    extraheader that CI checkouts leave) was printed by `git remote -v` or `grep -r` without
    a click; the vote protects .git/config by name, the sandbox did not hide it."""
    import subprocess

    subprocess.run(["git", "init", "-q"], cwd=ws, check=True)
    with (ws / ".git" / "config").open("a") as f:
        f.write(config)
    (ws / "a.txt").write_text("x\n")
    assert is_read_only(command, ws)
    r = await run(ws, command, approved=False)
    assert "TOKEN-4711" not in r.content, r.content
    status = await run(ws, "git status --short", approved=False)  # git still reads the repo
    assert "a.txt" in status.content, status.content


PLANT_GITDIR = (
    "git init -q --bare evil && git --git-dir=evil config core.bare false && "
    "git --git-dir=evil config core.fsmonitor 'touch {marker}; false' && "
    'echo "gitdir: $PWD/evil" > .git'
)


async def test_linked_worktree_pointer_cannot_be_redirected(tmp_path: Path) -> None:
    """Hole: in a linked worktree (`git worktree add`) the workspace's `.git` is a file
    naming the git folder; it stayed writable, so an approved sandboxed call pointed it at
    a planted git folder whose core.fsmonitor then ran OUTSIDE the sandbox at the user's
    next `git status` (or the JupyterLab git panel's poll)."""
    import subprocess

    main, wt = tmp_path / "main", tmp_path / "wt"
    marker = tmp_path / "PWNED"
    subprocess.run(["git", "init", "-q", str(main)], check=True)
    subprocess.run(["git", "-C", str(main), "-c", "user.name=t", "-c", "user.email=t@t",
                    "commit", "-q", "--allow-empty", "-m", "one"], check=True)  # fmt: skip
    subprocess.run(["git", "-C", str(main), "worktree", "add", "-q", str(wt)], check=True)
    before = (wt / ".git").read_text()
    await run(wt, PLANT_GITDIR.format(marker=marker), approved=True)
    assert (wt / ".git").read_text() == before
    subprocess.run(["git", "status"], cwd=wt, capture_output=True, check=False)
    assert not marker.exists()


async def test_planted_git_file_in_a_plain_folder_is_removed(ws: Path, tmp_path: Path) -> None:
    """The same plant where the workspace is no repository yet: a `.git` file that appears
    during the call is removed after it (`git init` makes a folder, never a file)."""
    import subprocess

    marker = tmp_path / "PWNED"
    r = await run(ws, PLANT_GITDIR.format(marker=marker), approved=True)
    assert not (ws / ".git").is_file(), r.content
    subprocess.run(["git", "status"], cwd=ws, capture_output=True, check=False)
    assert not marker.exists()


NEW_REPO_PLANTS = [
    "git init -q{sub} && git{c} config core.fsmonitor 'touch {marker}; false'",
    "git init -q{sub} && git{c} config alias.status '!touch {marker}'",
    "git init -q{sub} && printf '#!/bin/sh\\ntouch {marker}\\n' > {dot}/hooks/pre-commit"
    " && chmod +x {dot}/hooks/pre-commit",
]


@pytest.mark.parametrize("plant", NEW_REPO_PLANTS)
@pytest.mark.parametrize("sub", ["", "sub"])
async def test_new_repository_made_by_the_call_runs_nothing_later(
    plant: str, sub: str, ws: Path, tmp_path: Path
) -> None:
    """Hole: a repository the call creates itself (no .git when it starts, so no mount
    protects it) could carry a config or hooks that run a program at the user's next git
    command, outside the sandbox. After the call they are switched off, and the result
    says so."""
    import subprocess

    marker = tmp_path / "PWNED"
    cmd = plant.format(
        sub=f" {sub}" if sub else "", c=f" -C {sub}" if sub else "", marker=marker,
        dot=f"{sub}/.git" if sub else ".git",
    )  # fmt: skip
    r = await run(ws, cmd, approved=True)
    repo = ws / sub if sub else ws
    assert (repo / ".git").is_dir(), r.content  # the call itself ran
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}  # fmt: skip
    for args in (["status"], ["commit", "-q", "--allow-empty", "-m", "x"]):
        subprocess.run(["git", *args], cwd=repo, env=env, capture_output=True, check=False)
    assert not marker.exists(), r.content
    assert "switched off" in r.content


async def test_plain_git_init_is_left_alone(ws: Path) -> None:
    r = await run(ws, "git init -q && git config user.name someone", approved=True)
    assert (ws / ".git" / "config").is_file() and not r.is_error, r.content


async def test_unapproved_call_has_no_network_even_if_the_policy_allows_it(ws: Path) -> None:
    """A tool made with a networked policy still gives a call without a click no network:
    a loopback listener on the host receives nothing."""
    from sandbox_helpers import Listener

    from nb_tools.sandbox import SandboxPolicy

    listener = Listener()
    try:
        policy = SandboxPolicy(mode="workspace-write", network=True)
        cmd = f"echo hi > /dev/tcp/127.0.0.1/{listener.port}"
        await run(ws, cmd, approved=False, sandbox=policy)
        assert listener.received() == []
        # Positive control: the same approved call reaches the listener.
        await run(ws, cmd, approved=True, sandbox=policy)
        assert listener.received() != []
    finally:
        listener.close()


async def test_planted_submodule_git_folder_is_defused(ws: Path, tmp_path: Path) -> None:
    """A new `x/.git` file naming a git folder the call made under `.git/modules` (absent
    before, so not protected): the folder it names is defused like a new repository."""
    import subprocess

    marker = tmp_path / "PWNED"
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    cmd = (
        "mkdir -p x && git init -q --bare .git/modules/x && "
        "git --git-dir=.git/modules/x config core.bare false && "
        f"git --git-dir=.git/modules/x config core.fsmonitor 'touch {marker}; false' && "
        'echo "gitdir: ../.git/modules/x" > x/.git'
    )
    r = await run(ws, cmd, approved=True)
    subprocess.run(["git", "status"], cwd=ws / "x", capture_output=True, check=False)
    assert not marker.exists(), r.content


async def test_worktree_added_by_the_call_keeps_its_commondir(ws: Path) -> None:
    import subprocess

    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    subprocess.run(["git", "-C", str(ws), "-c", "user.name=t", "-c", "user.email=t@t",
                    "commit", "-q", "--allow-empty", "-m", "one"], check=True)  # fmt: skip
    r = await run(ws, "git worktree add -q wt2", approved=True)
    if r.is_error and "Read-only" in r.content:
        pytest.skip("the sandbox keeps .git/worktrees read-only here")
    assert subprocess.run(["git", "status"], cwd=ws / "wt2", capture_output=True).returncode == 0


async def test_unapproved_git_works_in_a_linked_worktree_and_a_subfolder(tmp_path: Path) -> None:
    """The system-only view brings back what git needs outside the workspace: a linked
    worktree's git folders (not scanned: objects), a parent work tree (scanned for secrets)."""
    import subprocess

    main, wt = tmp_path / "main", tmp_path / "wt"
    subprocess.run(["git", "init", "-q", str(main)], check=True)
    subprocess.run(["git", "-C", str(main), "-c", "user.name=t", "-c", "user.email=t@t",
                    "commit", "-q", "--allow-empty", "-m", "first-commit"], check=True)  # fmt: skip
    subprocess.run(["git", "-C", str(main), "worktree", "add", "-q", str(wt)], check=True)
    (wt / "sub").mkdir()
    (wt / ".env").write_text("TOKEN-4711=very-secret\n")
    for ws in (wt, wt / "sub"):
        r = await run(ws, "git log --oneline -1 && git status --short", approved=False)
        assert "first-commit" in r.content and not r.is_error, r.content
    r = await run(wt / "sub", "grep -r TOKEN-4711 .. || true", approved=False)
    assert "very-secret" not in r.content
