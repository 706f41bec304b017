"""No way out: no network (a loopback listener receives nothing), no Unix socket outside
(path or abstract), no writes outside the workspace (or anywhere in read-only), the
protected paths of a writable workspace stay as they were, and a hostile .git/config runs
nothing."""

from __future__ import annotations

import socket
import uuid
from pathlib import Path

import pytest
from sandbox_helpers import Listener, UnixListener, require_sandbox, run


@pytest.fixture(autouse=True)
def sandbox() -> None:
    require_sandbox()


CONNECTS = [
    "printenv </dev/tcp/127.0.0.1/{port} >&0",
    "echo hello > /dev/tcp/127.0.0.1/{port}",
    'python3 -c \'import socket; socket.create_connection(("127.0.0.1", {port}), 2).send(b"x")\'',
    "exec 3<>/dev/tcp/localhost/{port}; echo hi >&3",
]


@pytest.mark.parametrize("command", CONNECTS)
@pytest.mark.parametrize("approved", [False, True])
async def test_loopback_listener_receives_nothing(command: str, approved: bool, ws: Path) -> None:
    listener = Listener()
    try:
        r = await run(ws, command.format(port=listener.port), approved=approved)
        assert r.is_error
        assert listener.received() == []
    finally:
        listener.close()


def test_listener_positive_control() -> None:
    listener = Listener()
    try:
        socket.create_connection(("127.0.0.1", listener.port), 2).sendall(b"x")
        import time

        time.sleep(0.1)
        assert listener.received() == [b"x"]
    finally:
        listener.close()


def _connect_py(path: str) -> str:
    return f"""python3 - <<'PY'
import socket
s = socket.socket(socket.AF_UNIX)
try:
    s.connect({path!r}); s.send(b"x"); print("CON" + "NECTED")
except OSError as exc:
    print("REFUSED", exc)
PY"""


@pytest.mark.parametrize("where", ["workspace", "visible", "tmp"])
@pytest.mark.parametrize("approved", [False, True])
async def test_unix_socket_outside_unreachable(
    where: str, approved: bool, ws: Path, visible_dir: Path, tmp_path: Path
) -> None:
    folder = {"workspace": ws, "visible": visible_dir, "tmp": tmp_path}[where]
    path = str(folder / "k.sock")
    server = UnixListener(path)
    try:
        r = await run(ws, _connect_py(path), approved=approved)
        assert "REFUSED" in r.content and "CONNECTED" not in r.content
        assert server.received() == 0
    finally:
        server.close()


async def test_unix_socket_positive_control_outside_the_sandbox(ws: Path) -> None:
    """The same client, approved to run outside the sandbox, does connect."""
    server = UnixListener(str(ws / "k.sock"))
    try:
        r = await run(ws, _connect_py(str(ws / "k.sock")), approved=True, sandbox="off")
        assert "CONNECTED" in r.content
        assert server.received() == 1
    finally:
        server.close()


async def test_abstract_unix_socket_unreachable(ws: Path) -> None:
    name = f"\0nb-sandbox-{uuid.uuid4().hex[:8]}"
    server = UnixListener(name)
    try:
        r = await run(ws, _connect_py(name), approved=True)
        assert "REFUSED" in r.content and "CONNECTED" not in r.content
        assert server.received() == 0
    finally:
        server.close()


def _targets(ws: Path, visible: Path, tmp: Path) -> list[Path]:
    return [
        visible / "outside.txt",
        tmp / "sibling.txt",
        Path("/etc") / f"nb-sandbox-{uuid.uuid4().hex[:8]}",
        Path("/usr/local") / f"nb-sandbox-{uuid.uuid4().hex[:8]}",
        Path("/root") / f"nb-sandbox-{uuid.uuid4().hex[:8]}",
        Path("/var/tmp") / f"nb-sandbox-{uuid.uuid4().hex[:8]}",
    ]


WRITERS = [
    "echo pwned > {t}",
    "sort -o {t} <<< data",
    "cp /etc/hostname {t}",
    'python3 -c \'open("{t}", "w").write("x")\'',
]


@pytest.mark.parametrize("index", range(6))
@pytest.mark.parametrize("approved", [False, True])
async def test_no_write_outside_the_workspace(
    index: int, approved: bool, ws: Path, visible_dir: Path, tmp_path: Path
) -> None:
    target = _targets(ws, visible_dir, tmp_path)[index]
    script = "; ".join(w.format(t=target) for w in WRITERS)
    await run(ws, script, approved=approved)
    assert not target.exists()


@pytest.mark.parametrize("writer", WRITERS)
async def test_read_only_writes_nothing_in_the_workspace(writer: str, ws: Path) -> None:
    (ws / "keep.txt").write_text("original")
    r = await run(ws, writer.format(t="new.txt") + "; echo changed > keep.txt", approved=False)
    assert r.is_error and "Read-only file system" in r.content
    assert "read-only sandbox" in r.content  # the model is told why
    assert not (ws / "new.txt").exists()
    assert (ws / "keep.txt").read_text() == "original"


async def test_workspace_write_can_write_the_workspace(ws: Path) -> None:
    r = await run(ws, "mkdir -p out && echo made > out/new.txt && cat out/new.txt", approved=True)
    assert not r.is_error and r.metadata["sandbox"] == "workspace-write"
    assert (ws / "out" / "new.txt").read_text() == "made\n"


PROTECTED_ATTACKS = [
    (
        "echo 'touch /tmp/pwned' > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit",
        ".git/hooks/pre-commit",
    ),
    (
        "rm -rf .git/hooks; mkdir .git/hooks; echo x > .git/hooks/post-checkout",
        ".git/hooks/post-checkout",
    ),
    (
        "mv .git/hooks .git/old; mkdir .git/hooks; echo x > .git/hooks/pre-push",
        ".git/hooks/pre-push",
    ),
    (
        'mkdir -p .nb_tools; echo \'{"permissions": {"allow": ["bash"]}}\' > '
        ".nb_tools/settings.json",
        ".nb_tools/settings.json",
    ),
    (
        "rm -rf .nb_tools; mkdir .nb_tools; echo '{}' > .nb_tools/settings.json",
        ".nb_tools/settings.json",
    ),
    (
        "mkdir -p .ipython/profile_default/startup; echo 'import os' > "
        ".ipython/profile_default/startup/00.py",
        ".ipython/profile_default/startup/00.py",
    ),
    ("printf '[core]\\n\\tfsmonitor = touch /tmp/x\\n' >> .git/config", None),
    ("rm -f .git/config; echo '[core]' > .git/config", None),
    (
        "mv .git .git2 && mkdir -p .git/hooks && printf '[core]\\n\\tfsmonitor = x\\n' > "
        ".git/config",
        ".git2",
    ),
    (
        "cp -r .git /tmp/g && rm -rf .git; cp -r /tmp/g .git && echo x > .git/hooks/pre-commit",
        ".git/hooks/pre-commit",
    ),
    ("ln -sfn /tmp .git/hooks || (rm -rf .git/hooks && ln -s .. .git/hooks)", None),
]


@pytest.mark.parametrize(("command", "created"), PROTECTED_ATTACKS)
async def test_protected_paths_stay_read_only(command: str, created: str | None, ws: Path) -> None:
    import subprocess

    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    (ws / ".ipython" / "profile_default" / "startup").mkdir(parents=True)
    config = (ws / ".git" / "config").read_text()
    r = await run(ws, command, approved=True)
    assert r.metadata["sandbox"] == "workspace-write"
    if created is not None:
        assert not (ws / created).exists()
    assert (ws / ".git" / "config").read_text() == config
    assert sorted(p.name for p in (ws / ".git" / "hooks").iterdir()) == sorted(
        p.name for p in (ws / ".git" / "hooks").iterdir() if p.name.endswith(".sample")
    )


async def test_nested_repository_is_protected_too(ws: Path) -> None:
    import subprocess

    sub = ws / "vendor" / "lib"
    sub.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(sub)], check=True)
    config = (sub / ".git" / "config").read_text()
    cmd = (
        "echo x > vendor/lib/.git/hooks/pre-commit; echo '[core]' >> vendor/lib/.git/config; "
        "mv vendor/lib/.git vendor/lib/.g; echo ok > vendor/lib/file.txt"
    )
    r = await run(ws, cmd, approved=True)
    assert (sub / "file.txt").read_text() == "ok\n"  # the rest stays writable
    assert not (sub / ".git" / "hooks" / "pre-commit").exists()
    assert (sub / ".git" / "config").read_text() == config
    assert not (sub / ".g").exists() and r.metadata["sandbox"] == "workspace-write"


async def test_planted_commondir_is_removed(ws: Path) -> None:
    """``.git/commondir`` (absent in a plain repository) would send git to another config
    and hooks; a mount cannot guard a missing name, so it is removed after the call."""
    import subprocess

    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    cmd = (
        "mkdir -p evil/hooks && printf '[core]\\n\\tfsmonitor = touch PWNED\\n' > "
        "evil/config && echo ../evil > .git/commondir"
    )
    r = await run(ws, cmd, approved=True)
    assert not (ws / ".git" / "commondir").exists()
    assert "removed" in r.content and r.is_error
    subprocess.run(["git", "-C", str(ws), "status"], capture_output=True, check=False)
    assert not (ws / "PWNED").exists()


async def test_git_commit_still_works_in_workspace_write(ws: Path) -> None:
    import subprocess

    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    (ws / "a.txt").write_text("a\n")
    cmd = "git add a.txt && git -c user.email=a@b -c user.name=n commit -qm first && git log --oneline"
    r = await run(ws, cmd, approved=True)
    assert "first" in r.content and not r.is_error


HOSTILE = {
    "fsmonitor": ('[core]\n\tfsmonitor = "echo PWNED-fsm; touch {m}; false"\n', "git status"),
    "diff.external": ('[diff]\n\texternal = "echo PWNED-ext; touch {m}; true"\n', "git diff"),
    "textconv": ('[diff "x"]\n\ttextconv = "echo PWNED-tc; touch {m}; cat"\n', "git diff"),
    "filter": ('[filter "x"]\n\tclean = "echo PWNED-f; touch {m}; cat"\n', "git status"),
    "pager": ('[core]\n\tpager = "echo PWNED-pg; touch {m}; cat"\n', "git log -p"),
    "log textconv": ('[diff "x"]\n\ttextconv = "echo PWNED-tc; touch {m}; cat"\n', "git log -p"),
}


@pytest.mark.parametrize("vector", sorted(HOSTILE))
@pytest.mark.parametrize("approved", [False, True])
async def test_hostile_git_config_runs_nothing(vector: str, approved: bool, ws: Path) -> None:
    import subprocess

    git = ["git", "-C", str(ws), "-c", "user.email=a@b", "-c", "user.name=n"]
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    (ws / "a.txt").write_text("one\n")
    (ws / ".gitattributes").write_text("* diff=x filter=x\n")
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "c1"], check=True)
    (ws / "a.txt").write_text("one\ntwo\n")
    subprocess.run([*git, "commit", "-qam", "c2"], check=True)
    (ws / "a.txt").write_text("one\ntwo\nthree\n")
    marker = ws / "PWNED"
    text, command = HOSTILE[vector]
    with (ws / ".git" / "config").open("a") as f:
        f.write(text.format(m=marker))
    r = await run(ws, command, approved=approved)
    assert "PWNED" not in r.content
    assert not marker.exists()
    if command == "git diff":
        assert "+three" in r.content  # git still works, with the harmless replacement
