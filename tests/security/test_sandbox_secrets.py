"""Inside the sandbox nothing secret is visible: home credentials (a fake HOME, and the
real /root), the system's password hashes, the workspace's .env files, the Jupyter
runtime folder with a real kernel's connection file, the kernel's API keys, the host's
processes."""

from __future__ import annotations

import os
import subprocess
import uuid
from pathlib import Path

import pytest
from sandbox_helpers import pids_with, require_sandbox, run

pytestmark = pytest.mark.usefixtures("sandbox")

CREDENTIALS = [
    ".ssh/id_rsa",
    ".aws/credentials",
    ".config/gcloud/application_default_credentials.json",
    ".netrc",
    ".gnupg/private-keys-v1.d/key.key",
    ".docker/config.json",
    ".kube/config",
    ".git-credentials",
]


@pytest.fixture
def sandbox() -> None:
    require_sandbox()


def _plant(path: Path) -> str:
    secret = f"SECRET-{uuid.uuid4().hex}"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(secret + "\n")
    return secret


@pytest.mark.parametrize("rel", CREDENTIALS)
@pytest.mark.parametrize("approved", [False, True])
async def test_fake_home_credentials_unreadable(
    rel: str, approved: bool, tmp_path: Path, ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    secret = _plant(home / rel)
    monkeypatch.setenv("HOME", str(home))
    r = await run(ws, f"cat {home / rel}; cat ~/{rel}; ls -la ~ {home}", approved=approved)
    assert secret not in r.content
    assert "No such file" in r.content


@pytest.mark.parametrize("rel", CREDENTIALS)
async def test_credentials_hidden_when_the_workspace_is_the_home(
    rel: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    secret = _plant(home / rel)
    (home / "notes.txt").write_text("visible")
    monkeypatch.setenv("HOME", str(home))
    r = await run(home, f"cat notes.txt; cat {rel}; grep -r SECRET . ", approved=True)
    assert "visible" in r.content  # the workspace itself is there
    assert secret not in r.content
    # and the approved (workspace-write) call cannot replace it either
    await run(home, f"rm -rf {rel}; echo x > {rel}", approved=True)
    assert (home / rel).read_text() == secret + "\n"


@pytest.mark.parametrize("approved", [False, True])
async def test_real_root_home_unreadable(approved: bool, ws: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("planting a file under /root needs root")
    planted = Path("/root") / f".nb-sandbox-test-{uuid.uuid4().hex[:8]}"
    secret = _plant(planted / "id_ed25519")
    try:
        r = await run(ws, f"cat {planted}/id_ed25519", approved=approved)
        assert secret not in r.content and "No such file" in r.content
        listing = await run(ws, "ls -a /root", approved=approved)
        assert planted.name not in listing.content
    finally:
        (planted / "id_ed25519").unlink()
        planted.rmdir()


async def test_shadow_and_host_keys_unreadable(ws: Path) -> None:
    targets = [p for p in ("/etc/shadow", "/etc/gshadow") if os.path.exists(p)]
    targets += [str(p) for p in Path("/etc/ssh").glob("ssh_host_*_key")]
    r = await run(ws, "cd / && cat " + " ".join(t.lstrip("/") for t in targets), approved=True)
    for t in targets:
        try:
            first = Path(t).read_text().strip().splitlines()[0]
        except (OSError, IndexError):
            continue
        assert first not in r.content


@pytest.mark.parametrize("rel", [".env", ".env.local", "sub/.env.production", "a/b/.ssh/id_rsa"])
@pytest.mark.parametrize("approved", [False, True])
async def test_workspace_env_files_hidden(rel: str, approved: bool, ws: Path) -> None:
    secret = _plant(ws / rel)
    r = await run(ws, f"cat {rel}; grep -r SECRET .; tar cf - . | strings", approved=approved)
    assert secret not in r.content
    assert (ws / rel).read_text() == secret + "\n"


async def test_kernel_connection_file_hidden(
    tmp_path: Path, ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A real kernel whose runtime folder lies inside the workspace (the worst case)."""
    from jupyter_client import KernelManager

    runtime = ws / ".runtime"
    runtime.mkdir()
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(runtime))
    km = KernelManager(connection_file=str(runtime / "kernel-test.json"))
    km.start_kernel()
    try:
        key = km.session.key.decode()
        assert key and (runtime / "kernel-test.json").exists()
        r = await run(
            ws,
            f"cat {runtime}/*.json; ls -la {runtime}; grep -r {key[:12]} . /proc/*/environ",
            approved=True,
        )
        assert key not in r.content
        assert "kernel-test.json" not in r.content
    finally:
        km.shutdown_kernel(now=True)


async def test_default_jupyter_runtime_dir_hidden(
    ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from jupyter_core.paths import jupyter_runtime_dir

    monkeypatch.delenv("JUPYTER_RUNTIME_DIR", raising=False)
    runtime = Path(jupyter_runtime_dir())
    runtime.mkdir(parents=True, exist_ok=True)
    secret = _plant(runtime / f"kernel-{uuid.uuid4().hex[:6]}.json")
    try:
        r = await run(ws, f"cat {runtime}/kernel-*.json; ls {runtime}", approved=True)
        assert secret not in r.content
    finally:
        for f in runtime.glob("kernel-*.json"):
            if f.read_text().strip() == secret:
                f.unlink()


SECRET_VARS = [
    "ANTHROPIC_API_KEY",
    "OPENAI_API_KEY",
    "GITHUB_TOKEN",
    "AWS_SECRET_ACCESS_KEY",
    "DATABASE_PASSWORD",
    "JPY_SESSION_NAME",
    "JUPYTER_TOKEN",
    "STRIPE_KEY",
    "MY_SERVICE_SECRET",
]


@pytest.mark.parametrize("name", SECRET_VARS)
async def test_secret_environment_never_reaches_the_command(
    name: str, ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    value = f"sk-{uuid.uuid4().hex}"
    monkeypatch.setenv(name, value)
    r = await run(ws, "printenv; cat /proc/self/environ /proc/1/environ; ps axeww", approved=True)
    assert value not in r.content
    assert name not in r.content


async def test_explicit_env_keeps_its_variables_but_drops_secrets(
    ws: Path,
) -> None:
    env = {"MY_FLAG": "on", "ANTHROPIC_API_KEY": "sk-should-not-pass"}
    r = await run(ws, "printenv MY_FLAG; printenv ANTHROPIC_API_KEY", approved=True, env=env)
    assert "on" in r.content and "sk-should-not-pass" not in r.content


async def test_host_processes_invisible(ws: Path) -> None:
    marker = f"hostproc-{uuid.uuid4().hex[:8]}"
    host = subprocess.Popen(["sh", "-c", f"sleep 30; : {marker}"])
    try:
        assert pids_with(marker)
        r = await run(ws, "ps axeww; cat /proc/*/cmdline | tr '\\0' ' '", approved=False)
        assert marker not in r.content
        assert "python -m pytest" not in r.content and "sleep 30" not in r.content
    finally:
        host.kill()
        host.wait()


async def test_positive_control_workspace_is_readable(ws: Path) -> None:
    (ws / "hello.txt").write_text("hello from the workspace")
    r = await run(ws, "cat hello.txt", approved=False)
    assert "hello from the workspace" in r.content and not r.is_error
