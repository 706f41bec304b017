"""The cheaper cold path keeps the boundary as strong: a system secret file gets an empty
file bound over it exactly when the sandboxed process could read what it holds, and the
command's program is resolved to the file the sandbox's own ``PATH`` lookup would run."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from sandbox_helpers import require_sandbox, run

from nb_tools.sandbox import SandboxPolicy, _hide
from nb_tools.sandbox._creds import R_BIT, X_BIT, resolve_program, sandbox_may
from nb_tools.sandbox._launch import prepare


@pytest.fixture(autouse=True)
def sandbox() -> None:
    require_sandbox()


@pytest.fixture
def secret_files(visible_dir: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    """Stand-ins for /etc/shadow & co. in a folder every call sees, as the system's list."""
    files = {
        "readable": ("SECRET-READABLE-6262\n", 0o640, None),
        "no-mode": ("SECRET-NOMODE-6262\n", 0o000, None),
        "empty": ("", 0o644, None),
        "other-owner": ("SECRET-OTHER-6262\n", 0o600, 4321),
    }
    out: dict[str, Path] = {}
    for name, (text, mode, uid) in files.items():
        p = visible_dir / name
        p.write_text(text)
        p.chmod(mode)
        if uid is not None:
            if os.geteuid() != 0:
                continue
            os.chown(p, uid, -1)
        out[name] = p
    monkeypatch.setattr(_hide, "_system_cache", [list(out.values())])
    return out


async def test_system_secrets_bound_only_where_they_would_show(
    ws: Path, secret_files: dict[str, Path]
) -> None:
    policy = SandboxPolicy(mode="read-only", workspace=ws)
    argv = prepare(["true"], policy).argv
    bound = {
        argv[i + 2] for i, a in enumerate(argv) if a == "--ro-bind" and argv[i + 1] == "/dev/null"
    }
    assert str(secret_files["readable"]) in bound
    assert str(secret_files["empty"]) not in bound
    assert str(secret_files["no-mode"]) not in bound
    if "other-owner" in secret_files:
        assert str(secret_files["other-owner"]) not in bound
    # The effect, approved (the folder is visible): nothing secret reaches the output,
    # a file left unbound is refused by its mode inside, even to root.
    paths = " ".join(str(p) for p in secret_files.values())
    r = await run(ws, f'for f in {paths}; do cat $f; echo "rc=$?"; done', approved=True)
    assert "6262" not in r.content, r.content
    assert f"{secret_files['no-mode']}: Permission denied" in r.content, r.content
    if "other-owner" in secret_files:
        assert f"{secret_files['other-owner']}: Permission denied" in r.content, r.content


def test_sandbox_may_ignores_root_privilege(tmp_path: Path) -> None:
    """By the mode bits alone, as a process with no capability: root is refused a file of
    another owner mode 0600, and its own file mode 0000."""
    p = tmp_path / "f"
    p.write_text("x")
    p.chmod(0o000)
    assert not sandbox_may(os.stat(p), R_BIT, str(p))
    p.chmod(0o400)
    assert sandbox_may(os.stat(p), R_BIT, str(p))
    if os.geteuid() == 0:
        os.chown(p, 4321, 4321)
        p.chmod(0o600)
        assert not sandbox_may(os.stat(p), R_BIT, str(p))
        p.chmod(0o604)
        assert sandbox_may(os.stat(p), R_BIT, str(p))


def test_program_resolved_as_the_sandbox_path_finds_it(tmp_path: Path) -> None:
    first, second = tmp_path / "a", tmp_path / "b"
    first.mkdir()
    second.mkdir()
    prog = second / "tool"
    prog.write_text("#!/bin/sh\n")
    prog.chmod(0o755)
    visible = (str(tmp_path) + "/",)
    skipped = first / "tool"  # not executable by anyone: execvp goes on to the next entry
    skipped.write_text("#!/bin/sh\n")
    skipped.chmod(0o644)
    assert resolve_program("tool", f"{first}:{second}", visible) == str(prog)
    assert resolve_program("tool", f"rel:{second}", visible) is None  # depends on cwd
    assert resolve_program("tool", f"{second}", ("/usr/",)) is None  # not a system folder
    link = first / "tool2"
    link.symlink_to(prog)
    assert resolve_program("tool2", f"{first}", visible) is None  # reached through a link
    if os.geteuid() == 0:
        os.chown(skipped, 4321, 4321)
        skipped.chmod(0o700)  # root outside may run it; the sandbox (no capability) not
        assert os.access(skipped, os.X_OK)
        assert resolve_program("tool", f"{first}:{second}", visible) == str(prog)
    assert sandbox_may(os.stat(prog), X_BIT)
    assert stat.S_ISREG(os.stat(prog).st_mode)


async def test_the_shell_runs_by_its_full_path_and_still_works(ws: Path) -> None:
    policy = SandboxPolicy(mode="read-only", workspace=ws)
    argv = prepare(["bash", "-c", "echo $0"], policy).argv
    tail = argv[argv.index("--") + 1 :]
    assert tail[0].startswith("/") and tail[0].endswith("/bash"), tail
    assert tail[0] == resolve_program("bash", os.environ["PATH"], ("/usr/", "/bin/", "/sbin/"))
    r = await run(ws, "echo ok-$((6*7))", approved=False)
    assert "ok-42" in r.content, r.content


@pytest.mark.parametrize("approved", [True, False])
async def test_a_hidden_folder_refuses_writes_even_after_chmod(ws: Path, approved: bool) -> None:
    """A folder hidden by an empty tmpfs must stay read-only: the sandbox's user owns that
    tmpfs, so a mode alone (`--perms 0555 --tmpfs`, tried as a cheaper mask) would let it
    `chmod` and write there; the remount refuses it."""
    (ws / ".ssh").mkdir()
    (ws / ".ssh" / "id_ed25519").write_text("KEY-7373\n")
    mode = "workspace-write" if approved else "read-only"
    r = await run(
        ws,
        "chmod 755 .ssh; touch .ssh/x && echo WROTE; cat .ssh/*",
        approved=approved,
        sandbox=mode,
    )
    assert "WROTE" not in r.content, r.content
    assert "KEY-7373" not in r.content, r.content
    assert not (ws / ".ssh" / "x").exists()
