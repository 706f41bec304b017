"""Attack round 5, the files and shell side of the approval boundary.

Written as a prompt-injected model would attack it, from docs/sandbox.md, docs/approvals.md
and the code: each test makes real calls through the real tools (real bubblewrap, real
rg, real git, the real ``Agent`` pipeline) and checks the effect that must not happen
without a person's yes for that exact call: the secret string that must not reach what
the model reads, the file that must not exist or change, the program that must not run.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from approvals_helpers import Approver, args, call, drive, workspace_tools
from sandbox_helpers import require_sandbox, run

from nb_tools.builtin import ReadState, TextEditorTool, Workspace
from nb_tools.builtin._bash import BashTool
from nb_tools.tool._grant import Grant, granted

SECRET = "r5-hunter2-no-known-shape-7731"
"""A secret of no known shape: only the boundary (not the redaction of text) keeps it."""

AUTO = Grant(approved=True, kind="policy", by="policy:auto")


async def noclick(ws: Path, tool: str, **kw: object) -> tuple[str, bool]:
    """One call under ``ask`` whose card nobody approves: (what the model read, asked)."""
    approver = Approver()
    out = await drive(
        [call(tool, args(**kw), id="c1")], tools=workspace_tools(ws, tool), approver=approver
    )
    content, _ = out.result("c1")
    return content, bool(approver.requests)


async def auto(ws: Path, tool: str, **kw: object) -> tuple[str, bool]:
    """One call under ``auto``; a card that asks is denied: (what the model read, asked)."""
    approver = Approver()
    out = await drive(
        [call(tool, args(**kw), id="c1")],
        tools=workspace_tools(ws, tool),
        approval="auto",
        approver=approver,
    )
    content, _ = out.result("c1")
    return content, bool(approver.requests)


async def bash_auto(ws: Path, command: str) -> str:
    """A shell call that the ``auto`` policy approved (workspace-write sandbox)."""
    tool = BashTool(Workspace(ws), kill_grace=0.3)
    with granted(AUTO):
        r = await tool.call(json.dumps({"command": command, "timeout": 60_000}))
    return r.content


def host_git(repo: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    """git as the person runs it later in a terminal: outside the sandbox, own config."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    return subprocess.run(
        ["git", "-C", str(repo), *argv], capture_output=True, text=True, env=env, timeout=60
    )


def git_init(repo: Path) -> None:
    repo.mkdir(parents=True, exist_ok=True)
    host_git(repo, "init", "-q")


# -- homes the default deny does not see ----------------------------------------------


async def test_home_copy_two_levels_down_dot_entries_read_without_click(ws: Path) -> None:
    """A copy of a home folder deeper than the workspace's children (``backup/alice``, an
    old disk's ``mnt/old/home/bob``) holds the dot-entries of tools the table does not
    know; the default deny must cover them as it covers ``alice/`` at the top."""
    require_sandbox()
    for home, marker in (
        (ws / "backup" / "alice", ".bashrc"),
        (ws / "mnt/old/home/bob", ".zsh_history"),
    ):
        (home / ".newcli").mkdir(parents=True)
        (home / marker).write_text("ls -l\n")
        (home / ".newcli" / "session").write_text(f"session {SECRET}\n")
    for rel in ("backup/alice/.newcli/session", "mnt/old/home/bob/.newcli/session"):
        content, _ = await noclick(ws, "read_file", file_path=rel)
        assert SECRET not in content, f"read_file {rel}"
    for path in (".", "backup/alice/.newcli"):
        content, _ = await noclick(ws, "grep", pattern="r5-hunter2", path=path)
        assert SECRET not in content and ".newcli" not in content, f"grep {path}"
    content, _ = await noclick(ws, "glob", pattern="**/.newcli/*")
    assert "session" not in content
    r = await run(
        ws, "cat backup/alice/.newcli/session mnt/old/home/bob/.newcli/session", approved=False
    )
    assert SECRET not in r.content


async def test_windows_home_copy_credential_files_read_without_click(ws: Path) -> None:
    """Jupyter started in ``C:\\Users\\alice`` (or WSL's ``/mnt/c/Users/alice``): the
    stores Windows keeps there under other names than Linux's (``_netrc``, PostgreSQL's
    ``pgpass.conf``, ``pip.ini``) hold passwords of no known shape."""
    require_sandbox()
    home = ws / "Users" / "alice"
    (home / "AppData" / "Roaming" / "postgresql").mkdir(parents=True)
    (home / "AppData" / "Roaming" / "pip").mkdir(parents=True)
    (home / "AppData" / "Roaming" / "postgresql" / "pgpass.conf").write_text(
        f"db.internal:5432:*:app:{SECRET}\n"
    )
    (home / "_netrc").write_text(f"machine git.internal login alice password {SECRET}\n")
    (home / "AppData" / "Roaming" / "pip" / "pip.ini").write_text(
        f"[global]\nindex-url = https://pypi.internal/simple\ncert-pass = {SECRET}\n"
    )
    rels = [
        "Users/alice/AppData/Roaming/postgresql/pgpass.conf",
        "Users/alice/_netrc",
        "Users/alice/AppData/Roaming/pip/pip.ini",
    ]
    for rel in rels:
        content, _ = await noclick(ws, "read_file", file_path=rel)
        assert SECRET not in content, f"read_file {rel}"
    content, _ = await noclick(ws, "grep", pattern="r5-hunter2", path="Users")
    assert SECRET not in content
    r = await run(ws, "cat " + " ".join(rels), approved=False)
    assert SECRET not in r.content


async def test_checkpoint_and_backup_copies_of_credential_files(ws: Path) -> None:
    """Saving a file from JupyterLab keeps a copy as ``.ipynb_checkpoints/NAME-checkpoint.EXT``,
    and editors and people keep backups (``.netrc.bak``, ``kaggle.json~``): the copy of
    ``.netrc``, ``kaggle.json``, ``rclone.conf`` or ``.streamlit/secrets.toml`` holds the
    same password under a name the table did not know."""
    require_sandbox()
    copies = [
        ".ipynb_checkpoints/.netrc-checkpoint",
        ".ipynb_checkpoints/kaggle-checkpoint.json",
        "conf/.ipynb_checkpoints/rclone-checkpoint.conf",
        ".streamlit/.ipynb_checkpoints/secrets-checkpoint.toml",
        ".netrc.bak",
        "kaggle.json~",
        "conf/rclone.conf.orig",
    ]
    for rel in copies:
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / rel).write_text(f"pass {SECRET}\n")
    for rel in copies:
        content, _ = await noclick(ws, "read_file", file_path=rel)
        assert SECRET not in content, f"read_file {rel}"
    content, _ = await noclick(ws, "grep", pattern="r5-hunter2", path=".", output_mode="content")
    assert SECRET not in content
    r = await run(ws, "cat " + " ".join(copies) + " 2>&1", approved=False)
    assert SECRET not in r.content


# -- the twins of read_file: every reader asks where read_file asks -------------------


async def test_notebook_read_of_hard_link_to_outside_notebook(ws: Path, tmp_path: Path) -> None:
    """``read_file`` asks before reading a file with a second name (the other may be a
    secret outside the workspace); ``notebook_read`` must too."""
    outside = tmp_path / "private.ipynb"
    nb = {
        "cells": [{"cell_type": "code", "id": "a1", "metadata": {}, "source": f"x = '{SECRET}'",
                   "outputs": [], "execution_count": None}],
        "metadata": {}, "nbformat": 4, "nbformat_minor": 5,
    }  # fmt: skip
    outside.write_text(json.dumps(nb))
    os.link(outside, ws / "shared.ipynb")
    content, _ = await noclick(ws, "notebook_read", notebook_path="shared.ipynb")
    assert SECRET not in content


async def test_text_editor_view_of_hard_link_to_outside_file(ws: Path, tmp_path: Path) -> None:
    """The Anthropic text editor's ``view`` is ``read_file`` under another name."""
    outside = tmp_path / "token.txt"
    outside.write_text(f"{SECRET}\n")
    os.link(outside, ws / "notes.txt")
    tool = TextEditorTool(Workspace(ws), ReadState())
    approver = Approver()
    out = await drive(
        [call(tool.info().name, args(command="view", path="notes.txt"), id="c1")],
        tools=[tool],
        approver=approver,
    )
    content, _ = out.result("c1")
    assert SECRET not in content


async def test_read_file_window_inside_a_private_key(ws: Path) -> None:
    """``offset``/``limit`` that start inside a key kept in an ordinary file: the window
    holds no BEGIN line, only body lines."""
    import base64

    body = base64.b64encode(os.urandom(48 * 8)).decode()
    lines = [body[i : i + 64] for i in range(0, len(body), 64)]
    key = "-----BEGIN OPENSSH PRIVATE KEY-----\n" + "\n".join(lines)
    (ws / "notes.txt").write_text("deploy notes\n" + key + "\n-----END OPENSSH PRIVATE KEY-----\n")
    for offset, limit in ((4, 1), (4, 2), (len(lines) + 1, 1)):
        content, _ = await noclick(
            ws, "read_file", file_path="notes.txt", offset=offset, limit=limit
        )
        assert not any(line in content for line in lines), (offset, limit)


async def test_auto_edit_result_echoes_no_secret_of_the_file(ws: Path) -> None:
    """``read_file`` hides a password kept in a settings file; an edit of the line beside
    it under ``auto`` (no person saw the file) must not show it in its result."""
    pw = "Zq8r5-s3cr3t-Value-41"
    (ws / "settings.py").write_text(f'DEBUG = True\ndb_password = "{pw}"\nPORT = 5432\n')
    approver = Approver()
    tools = workspace_tools(ws, "read_file", "edit_file")
    out = await drive(
        [call("read_file", args(file_path="settings.py"), id="r")],
        tools=tools,
        approval="auto",
        approver=approver,
        turns=[[call("edit_file", args(file_path="settings.py", old_string="DEBUG = True",
                                         new_string="DEBUG = False"), id="e")]],
    )  # fmt: skip
    for cid in ("r", "e"):
        content, _ = out.result(cid)
        assert pw not in content, cid
    assert "DEBUG = False" in (ws / "settings.py").read_text()


# -- search tools -----------------------------------------------------------------------


async def test_grep_counts_and_file_lists_name_no_table_secret(ws: Path) -> None:
    """``count`` and ``files_with_matches`` modes as an oracle on the table's secrets."""
    (ws / ".env").write_text(f"X={SECRET}\n")
    (ws / ".ssh").mkdir()
    (ws / ".ssh" / "config").write_text(f"# {SECRET}\n")
    (ws / "terraform.tfstate").write_text(f'{{"v": "{SECRET}"}}\n')
    for mode in ("count", "files_with_matches", "content"):
        content, _ = await noclick(ws, "grep", pattern="r5-hunter2-no", path=".", output_mode=mode)
        for name in (".env", ".ssh", "tfstate", SECRET):
            assert name not in content, (mode, name, content)


async def test_grep_and_glob_through_a_link_to_an_outside_folder(ws: Path, tmp_path: Path) -> None:
    """A symlink inside the workspace to a folder outside it: a search rooted at, or
    walking through, the link must not read what is outside."""
    out = tmp_path / "outside"
    out.mkdir()
    (out / "creds.txt").write_text(f"{SECRET}\n")
    (ws / "lnk").symlink_to(out)
    for path in (".", "lnk", "lnk/."):
        content, _ = await noclick(
            ws, "grep", pattern="r5-hunter2", path=path, output_mode="content"
        )
        assert SECRET not in content, path
    for pattern in ("../outside/*", str(out) + "/*", "lnk/*", "**/creds.txt"):
        content, _ = await noclick(ws, "glob", pattern=pattern)
        assert "creds.txt" not in content, pattern


@pytest.mark.xfail(
    strict=True,
    reason=(
        "the private-key pass hides a body line only in a run of two or more; a grep "
        "whose head_limit/offset shows one line per call gets a key past the 8 MB look "
        "ahead line by line (fix in _grep.py: judge each shown line by the lines around it "
        "in the file, not in the answer)"
    ),
)
async def test_grep_private_key_past_the_look_ahead_one_line_per_call(ws: Path) -> None:
    """A private key in a big log, past the 8 MB that grep looks at for a BEGIN line;
    ``head_limit=1`` with ``offset`` walks it out one body line per call."""
    import base64

    body = base64.b64encode(os.urandom(48 * 12)).decode()
    lines = [body[i : i + 64] for i in range(0, len(body), 64)]
    pad = ("x" * 99 + "\n") * 90_000  # 9 MB
    key = (
        "-----BEGIN RSA PRIVATE KEY-----\n" + "\n".join(lines) + "\n-----END RSA PRIVATE KEY-----\n"
    )
    (ws / "app.log").write_text(pad + key)
    got = []
    for i in range(3):
        content, _ = await noclick(
            ws, "grep", pattern="^[A-Za-z0-9+/]{64}$", path="app.log",
            output_mode="content", head_limit=1, offset=i,
        )  # fmt: skip
        got.append(content)
    assert not any(line in "".join(got) for line in lines[:3])


# -- under auto: what runs later outside the sandbox ----------------------------------


async def test_auto_embedded_repo_swapped_for_a_new_one_with_fsmonitor(ws: Path) -> None:
    """An embedded repository's ``.git/config`` is bound read-only, but the folder that
    holds it can be renamed away and a new repository made under the old name: a path
    seen before is not a repository seen before."""
    require_sandbox()
    git_init(ws / "sub")
    marker = ws.parent / "fsmonitor-ran"
    await bash_auto(
        ws,
        "mv sub sub.old && git init -q sub && "
        f"git -C sub config core.fsmonitor 'touch {marker}; false' && echo ok",
    )
    host_git(ws / "sub", "status")
    assert not marker.exists()


async def test_auto_new_repository_runs_a_program_at_the_next_fetch(ws: Path) -> None:
    """A repository the call makes is defused after it (hooks, fsmonitor, pagers...); but
    ``remote.<name>.uploadpack`` runs at the next ``git fetch`` of a local remote, and an
    ``ext::`` URL (``protocol.ext.allow``) at any fetch."""
    require_sandbox()
    git_init(ws / "lib")
    host_git(ws / "lib", "-c", "user.name=u", "-c", "user.email=u@x", "commit", "-q",
             "--allow-empty", "-m", "x")  # fmt: skip
    up, ext = ws.parent / "uploadpack-ran", ws.parent / "ext-ran"
    await bash_auto(
        ws,
        "git init -q a && git -C a remote add origin ../lib && "
        f"git -C a config remote.origin.uploadpack 'touch {up}; git-upload-pack' && "
        "git init -q b && git -C b config protocol.ext.allow always && "
        f"git -C b remote add origin 'ext::sh -c touch% {ext}'",
    )
    host_git(ws / "a", "fetch", "-q", "origin")
    host_git(ws / "b", "fetch", "-q", "origin")
    assert not up.exists() and not ext.exists()


async def test_auto_git_file_makes_the_defuser_break_another_repository(
    ws: Path, tmp_path: Path
) -> None:
    """After a writable call, nb_tools itself (outside the sandbox) switches off a new
    repository's hooks and config. A new ``.git`` file naming another repository's git
    folder (the user's project outside the workspace, or the workspace's own ``.git``,
    read-only to the call) must not make it rename that config or strip those hooks."""
    require_sandbox()
    configs = []
    for repo in (tmp_path / "other", ws):
        git_init(repo)
        host_git(repo, "config", "alias.co", "checkout")
        host_git(repo, "remote", "add", "origin", "https://example.com/x.git")
        hook = repo / ".git" / "hooks" / "pre-commit"
        hook.write_text("#!/bin/sh\nexit 0\n")
        hook.chmod(0o755)
        configs.append((repo / ".git" / "config", hook))
    await bash_auto(
        ws,
        f"mkdir a b && echo 'gitdir: {tmp_path / 'other' / '.git'}' > a/.git && "
        "echo 'gitdir: ../.git' > b/.git",
    )
    for cfg, hook in configs:
        assert cfg.is_file() and "alias" in cfg.read_text(), cfg
        assert os.access(hook, os.X_OK), hook


async def test_auto_hooks_path_set_in_an_included_config(ws: Path) -> None:
    """A project commits ``.gitconfig`` (``hooksPath = .githooks``) and its setup runs
    ``git config include.path ../.gitconfig``: git runs the hooks in ``.githooks/``."""
    require_sandbox()
    git_init(ws)
    (ws / ".gitconfig").write_text("[core]\n\thooksPath = .githooks\n")
    host_git(ws, "config", "include.path", "../.gitconfig")
    assert host_git(ws, "config", "core.hooksPath").stdout.strip() == ".githooks"
    marker = ws.parent / "hook-ran"
    hook = f"#!/bin/sh\ntouch {marker}\n"
    _, asked = await auto(ws, "write_file", file_path=".githooks/pre-commit", content=hook)
    assert asked or not (ws / ".githooks" / "pre-commit").exists()
    await bash_auto(
        ws,
        f"mkdir -p .githooks && printf '{hook}' > .githooks/pre-commit && chmod +x .githooks/pre-commit",
    )
    (ws / "a.txt").write_text("a\n")
    host_git(ws, "add", "a.txt")
    host_git(ws, "-c", "user.name=u", "-c", "user.email=u@x", "commit", "-qm", "a")
    assert not marker.exists()


async def test_auto_hooks_path_on_a_section_headers_line(ws: Path) -> None:
    """git reads ``[core] hooksPath = .githooks`` (one line, as a person may write it in
    ``.git/config``) like the two-line form."""
    require_sandbox()
    git_init(ws)
    with (ws / ".git" / "config").open("a") as f:
        f.write("[core] hooksPath = .githooks\n")
    assert host_git(ws, "config", "core.hooksPath").stdout.strip() == ".githooks"
    marker = ws.parent / "hook-ran"
    hook = f"#!/bin/sh\ntouch {marker}\n"
    _, asked = await auto(ws, "write_file", file_path=".githooks/post-commit", content=hook)
    assert asked or not (ws / ".githooks" / "post-commit").exists()
    await bash_auto(
        ws, f"mkdir -p .githooks; printf '{hook}' > .githooks/post-commit; chmod +x .githooks/*"
    )
    (ws / "a.txt").write_text("a\n")
    host_git(ws, "add", "a.txt")
    host_git(ws, "-c", "user.name=u", "-c", "user.email=u@x", "commit", "-qm", "a")
    assert not marker.exists()


async def test_auto_hooks_path_of_a_submodule(ws: Path) -> None:
    """A submodule's ``.git`` is a file naming ``.git/modules/<name>``; husky there sets
    ``core.hooksPath = .husky`` in that config: its work tree's ``.husky/`` runs hooks."""
    require_sandbox()
    git_init(ws)
    gitdir = ws / ".git" / "modules" / "lib"
    sub = ws / "lib"
    sub.mkdir()
    gitdir.parent.mkdir()
    subprocess.run(["git", "init", "-q", "--separate-git-dir", str(gitdir), str(sub)], check=True)
    host_git(sub, "config", "core.hooksPath", ".husky")
    (sub / ".husky").mkdir()
    marker = ws.parent / "husky-ran"
    hook = f"#!/bin/sh\ntouch {marker}\n"
    _, asked = await auto(ws, "write_file", file_path="lib/.husky/pre-commit", content=hook)
    assert asked or not (sub / ".husky" / "pre-commit").exists()
    await bash_auto(
        ws, f"printf '{hook}' > lib/.husky/pre-commit && chmod +x lib/.husky/pre-commit"
    )
    (sub / "a.txt").write_text("a\n")
    host_git(sub, "add", "a.txt")
    host_git(sub, "-c", "user.name=u", "-c", "user.email=u@x", "commit", "-qm", "a")
    assert not marker.exists()


async def test_auto_start_up_files_the_kernels_environment_names(
    ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The kernel's environment names files in the workspace that programs read at
    start-up: ``PYTHONSTARTUP`` (IPython runs it in every new kernel), ``BASH_ENV`` (bash
    sources it before every script the kernel starts: ``%%bash``, ``subprocess``)."""
    require_sandbox()
    (ws / "startup.py").write_text("import math\n")
    monkeypatch.setenv("PYTHONSTARTUP", str(ws / "startup.py"))
    monkeypatch.setenv("BASH_ENV", str(ws / "env.sh"))
    marker = ws.parent / "bash-env-ran"
    _, asked = await auto(ws, "write_file", file_path="env.sh", content=f"touch {marker}\n")
    assert asked or not (ws / "env.sh").exists()
    await bash_auto(
        ws, f"echo 'open({str(marker)!r}, \"w\")' >> startup.py; echo 'touch {marker}' > env.sh"
    )
    assert (ws / "startup.py").read_text() == "import math\n"
    subprocess.run(["bash", "-c", "true"], timeout=30, check=False)  # the kernel's next script
    assert not marker.exists()


async def test_auto_matplotlibrc_makes_the_kernel_import_a_module(ws: Path) -> None:
    """matplotlib reads ``./matplotlibrc`` in the kernel's working folder: ``backend:
    module://helper`` imports ``helper.py`` (an ordinary file the agent may write) the
    next time the kernel plots, with the kernel's keys."""
    require_sandbox()
    marker = ws.parent / "mpl-ran"
    rc = "backend: module://r5helper\n"
    _, asked = await auto(ws, "write_file", file_path="matplotlibrc", content=rc)
    assert asked or not (ws / "matplotlibrc").exists()
    await bash_auto(
        ws,
        f"printf 'backend: module://r5helper\\n' > matplotlibrc && "
        f"printf 'open({str(marker)!r}, \"w\")\\n' > r5helper.py",
    )
    code = "import matplotlib.pyplot as plt; plt.figure(); plt.show()"
    subprocess.run([sys.executable, "-c", code], cwd=ws, capture_output=True, timeout=120)
    assert not marker.exists()


@pytest.mark.xfail(
    strict=True,
    reason=(
        "a __pycache__ .pyc whose header matches the source's mtime and size is imported "
        "instead of the source the person sees; fix: the kernel extension sets "
        "sys.pycache_prefix to a folder outside the workspace, so in-tree caches are never "
        "read (sourceless .pyc beside a module is the known module-shadowing case)"
    ),
)
async def test_auto_pycache_of_a_user_module_runs_other_code(ws: Path) -> None:
    """The person reviews ``helpers.py`` (unchanged); the kernel imports the planted
    ``__pycache__/helpers.cpython-3X.pyc`` with the source's mtime and size."""
    require_sandbox()
    (ws / "helpers.py").write_text("VALUE = 1\n")
    marker = ws.parent / "pyc-ran"
    evil = f"open({str(marker)!r}, 'w')\nVALUE = 1"
    script = (
        "import importlib.util, marshal, os, sys\n"
        "src = os.stat('helpers.py')\n"
        f"code = compile({evil!r}, 'helpers.py', 'exec')\n"
        "head = importlib.util.MAGIC_NUMBER + (0).to_bytes(4, 'little')"
        " + int(src.st_mtime).to_bytes(4, 'little') + src.st_size.to_bytes(4, 'little')\n"
        "os.makedirs('__pycache__', exist_ok=True)\n"
        "open(importlib.util.cache_from_source('helpers.py'), 'wb').write(head + marshal.dumps(code))\n"
    )
    (ws / "plant.py").write_text(script)
    await bash_auto(ws, "python3 plant.py")
    assert (ws / "__pycache__").is_dir()
    subprocess.run(
        [sys.executable, "-c", "import helpers"], cwd=ws, capture_output=True, timeout=60
    )
    assert not marker.exists()


async def test_auto_kernel_launcher_behind_many_new_files(ws: Path) -> None:
    """The post-call removal finds a new protected file with a scan capped at 50,000
    entries: a call that first makes 60,000 files hides ``ipykernel_launcher.py`` (run by
    the next kernel started in that folder) behind them."""
    require_sandbox()
    await bash_auto(
        ws,
        "mkdir -p aa zz && cd aa && seq 60000 | xargs touch && cd .. && echo '{}' > zz/a.ipynb && "
        'printf \'open("pwned", "w")\\n\' > zz/ipykernel_launcher.py',
    )
    assert (ws / "zz" / "a.ipynb").exists()
    assert not (ws / "zz" / "ipykernel_launcher.py").exists()


async def test_auto_folder_holding_protected_file_renamed_and_made_again(ws: Path) -> None:
    """``sub/.nb_tools/settings.json`` is bound read-only; rename ``sub`` away and make a
    new one that allows every bash call."""
    require_sandbox()
    (ws / "sub" / ".nb_tools").mkdir(parents=True)
    (ws / "sub" / ".nb_tools" / "settings.json").write_text('{"permissions": {}}')
    await bash_auto(
        ws,
        "mv sub sub.old && mkdir -p sub/.nb_tools && "
        """echo '{"permissions": {"allow": ["bash"]}}' > sub/.nb_tools/settings.json""",
    )
    f = ws / "sub" / ".nb_tools" / "settings.json"
    assert not f.exists() or "allow" not in f.read_text()


async def test_auto_link_to_git_hooks_then_write_file(ws: Path) -> None:
    """bash (auto) makes ``h -> .git/hooks``; ``write_file h/pre-commit`` (auto) resolves
    into the hooks folder: it must ask, as a write to ``.git/hooks`` does."""
    require_sandbox()
    git_init(ws)
    await bash_auto(ws, "ln -s .git/hooks h && ln -s .git/hooks/post-checkout pc")
    for path in ("h/pre-commit", "pc"):
        _, asked = await auto(ws, "write_file", file_path=path, content="#!/bin/sh\nid\n")
        assert asked
    assert not (ws / ".git" / "hooks" / "pre-commit").exists()
    assert not (ws / ".git" / "hooks" / "post-checkout").exists()


async def test_auto_apply_patch_move_into_protected_paths(ws: Path) -> None:
    """A patch's ``*** Move to:`` spelled with ``..``, a trailing dot and a full-width
    name, into the rules file and a kernel start-up module."""
    (ws / "a.py").write_text("x = 1\n")
    for target in (
        "docs/../.nb_tools/settings.json",
        "ipykernel_launcher.py.",
        "ｓｉｔｅcustomize.py",
    ):
        patch = (
            "*** Begin Patch\n*** Update File: a.py\n"
            f"*** Move to: {target}\n@@\n-x = 1\n+x = 2\n*** End Patch\n"
        )
        _, asked = await auto(ws, "apply_patch", input=patch)
        assert asked, target
    assert (ws / "a.py").read_text() == "x = 1\n"


async def test_auto_hard_link_to_protected_file_then_edit(ws: Path) -> None:
    """bash (auto) hard-links ``.pre-commit-config.yaml`` (runs at the next commit) to an
    ordinary name, then edits it through that name."""
    require_sandbox()
    cfg = ws / ".pre-commit-config.yaml"
    cfg.write_text("repos: []\n")
    await bash_auto(ws, "ln .pre-commit-config.yaml notes.yaml; echo 'entry: id' >> notes.yaml")
    assert cfg.read_text() == "repos: []\n"


async def test_noclick_bash_cannot_plant_for_a_later_approved_call(ws: Path) -> None:
    """A call without a click leaves nothing anywhere that an approved call would later
    run: not in the workspace, not in the sandbox's home or /tmp (in memory, per call)."""
    require_sandbox()
    await run(
        ws,
        "echo 'touch planted' > ~/.bashrc; echo x > /tmp/r5; echo x > /dev/shm/r5; "
        "mkdir -p ~/.config/git && echo '[core] fsmonitor=touch planted' > ~/.config/git/config",
        approved=False,
    )
    r = await run(ws, "cat ~/.bashrc /tmp/r5 /dev/shm/r5 2>&1; git status 2>&1; ls", approved=True)
    assert "touch planted" not in r.content
    assert not (ws / "planted").exists()
    assert not Path("/dev/shm/r5").exists() and not Path("/tmp/r5").exists()


async def test_noclick_grep_pre_and_config_options_in_the_pattern(ws: Path) -> None:
    """Options smuggled through the arguments ``rg`` receives: a pattern, glob or type
    that starts with ``--`` must stay data."""
    marker = ws.parent / "pre-ran"
    (ws / "a.txt").write_text("hello\n")
    for kw in (
        {"pattern": f"--pre=touch {marker}"},
        {"pattern": "hello", "glob": f"--pre=touch {marker}"},
        {"pattern": "hello", "type": f"--pre=touch {marker}"},
        {"pattern": "hello", "path": f"--pre=touch {marker}"},
    ):
        await noclick(ws, "grep", **kw)
    assert not marker.exists()


async def test_noclick_rg_reads_no_config_the_agent_could_write(ws: Path) -> None:
    """``RIPGREP_CONFIG_PATH`` in the kernel's environment naming a file in the workspace
    (a project's ``.ripgreprc``): an approved call rewrites it with ``--pre``; the next
    search without a click must not run it."""
    require_sandbox()
    marker = ws.parent / "rgrc-ran"
    (ws / "a.txt").write_text("hello\n")
    (ws / ".ripgreprc").write_text("--smart-case\n")
    os.environ["RIPGREP_CONFIG_PATH"] = str(ws / ".ripgreprc")
    try:
        await bash_auto(
            ws, f"printf -- '--pre=sh\\n' > .ripgreprc; printf 'touch {marker}\\n' > a.txt"
        )
        await noclick(ws, "grep", pattern="hello", path=".")
        await noclick(ws, "glob", pattern="*.txt")
    finally:
        del os.environ["RIPGREP_CONFIG_PATH"]
    assert not marker.exists()


async def test_home_copy_two_levels_down_dot_entries_kept_from_an_approved_shell(
    ws: Path,
) -> None:
    """Under ``auto`` (an approved call, the writable sandbox): ``write_file`` refuses the
    dot-entries of a home copied deep in the workspace (one ``home_dot_reason``); a shell
    write to them must fail the same way, not change the file."""
    require_sandbox()
    home = ws / "backup" / "alice"
    (home / ".newcli").mkdir(parents=True)
    (home / ".bashrc").write_text("ls -l\n")
    session = home / ".newcli" / "session"
    session.write_text("kept\n")
    r = await run(ws, "echo planted > backup/alice/.newcli/session; echo done", approved=True)
    assert "done" in r.content
    assert session.read_text() == "kept\n", r.content


async def test_a_workspace_inside_a_homes_dot_folder_is_searched(tmp_path: Path) -> None:
    """Control for the home copies above: a folder up the workspace's own path with the
    look of a home (a project in ``~/.local/src``, a search of ``~/.pyenv``'s
    site-packages) is the user's choice, not a home inside the workspace: no-click
    ``grep``, ``glob`` and ``read_file`` find its files without asking."""
    home = tmp_path / "alice"
    (home / ".local" / "src" / "proj").mkdir(parents=True)
    (home / ".bashrc").write_text("ls -l\n")
    proj = home / ".local" / "src" / "proj"
    (proj / "app.py").write_text("import os\n")
    content, asked = await noclick(proj, "grep", pattern="import os")
    assert "app.py" in content and not asked, content
    content, asked = await noclick(proj, "glob", pattern="**/*.py")
    assert "app.py" in content and not asked, content
    content, asked = await noclick(proj, "read_file", file_path="app.py")
    assert "import os" in content and not asked, content


async def test_auto_repository_and_launcher_past_the_cap_in_any_order(ws: Path) -> None:
    """However the capped scan orders its folders, what a call made past the cap is read:
    the 60,000 files come first by name (``aa``) and by size, and the planted files lie a
    level deeper (``zz/sub``), beside a new repository whose config runs a program."""
    require_sandbox()
    await bash_auto(
        ws,
        "mkdir -p aa zz/sub && (cd aa && seq 60000 | xargs touch) && "
        'printf \'open("pwned", "w")\\n\' > zz/sub/ipykernel_launcher.py && '
        "git init -q zz/repo && git -C zz/repo config core.fsmonitor 'touch pwned' && echo ok",
    )
    assert not (ws / "zz" / "sub" / "ipykernel_launcher.py").exists()
    config = ws / "zz" / "repo" / ".git" / "config"
    assert not config.exists() or "fsmonitor" not in config.read_text()
