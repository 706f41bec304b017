"""Red team, written as the attacks were found: under ``auto`` a bash call (real bubblewrap,
``workspace-write``) wrote what ``write_file`` is refused, and a repository the scan had
not seen (past its cap, bare, or with a ``core.hooksPath``) was not protected. Each case
checks the effect (the file that must not exist or change) and that ``write_file`` asks.
The paths are listed here by hand, not taken from the table, so that an entry dropped from
the table fails a case.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from approvals_helpers import Approver, call, drive, workspace_tools
from sandbox_helpers import require_sandbox

from nb_tools.sandbox import _scan

NEW = [
    ".nb_tools/settings.json",  # the next session loads `allow bash`
    "sub/.nb_tools/settings.json",
    ".config/nb_tools/settings.json",
    ".local/lib/python3.11/site-packages/evil.pth",  # the user site
    ".venv/lib/python3.11/site-packages/evil.pth",
    ".config/git/config",  # core.fsmonitor
    ".jupyter/jupyter_config.py",
    ".local/share/jupyter/kernels/evil/kernel.json",
    ".bash_aliases",
    "analysis/ipykernel_launcher.py",
    "notebooks/sitecustomize.py",
    "deep/er/usercustomize/__init__.py",
    "ipykernel.py",
    ".ssh/authorized_keys",
]


@pytest.fixture
def root(tmp_path: Path) -> Path:
    require_sandbox()
    (tmp_path / ".venv/lib/python3.11/site-packages").mkdir(parents=True)
    return tmp_path


async def _bash(root: Path, command: str) -> str:
    out = await drive(
        [call("bash", command=command, id="b")],
        tools=workspace_tools(root, "bash"),
        approval="auto",
    )
    return out.result("b")[0]


async def _write_file_asks(root: Path, path: str) -> bool:
    approver = Approver()
    await drive(
        [call("write_file", file_path=path, content="PWNED", id="w")],
        tools=workspace_tools(root, "write_file"),
        approval="auto",
        approver=approver,
    )
    return approver.asked == ["w"]


@pytest.mark.parametrize("path", NEW)
async def test_bash_under_auto_cannot_plant_what_write_file_is_refused(
    root: Path, path: str
) -> None:
    text = await _bash(root, f"mkdir -p \"$(dirname '{path}')\"; echo 'touch PWNED' > '{path}'")
    assert not (root / path).exists(), text
    assert await _write_file_asks(root, path)
    assert not (root / path).exists()


async def test_renaming_a_protected_folder_away_does_not_plant_a_new_one(root: Path) -> None:
    cfg = root / ".config/git/config"
    cfg.parent.mkdir(parents=True)
    cfg.write_text("[user]\n\tname = me\n")
    await _bash(
        root,
        "mv .config .config.bak; mkdir -p .config/git; "
        "printf '[core]\\n\\tfsmonitor = touch PWNED\\n' > .config/git/config",
    )
    assert not (root / ".config/git/config").exists() or cfg.read_text() == "[user]\n\tname = me\n"


def _git(*args: str, cwd: Path) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


async def test_a_core_hooks_path_folder_is_protected(root: Path) -> None:
    _git("init", "-q", cwd=root)
    _git("config", "core.hooksPath", ".husky", cwd=root)
    (root / ".husky").mkdir()
    (root / ".husky/pre-commit").write_text("npm test\n")
    await _bash(
        root, "echo 'touch PWNED' > .husky/pre-commit; echo 'touch PWNED' > .husky/post-checkout"
    )
    assert (root / ".husky/pre-commit").read_text() == "npm test\n"
    assert not (root / ".husky/post-checkout").exists()
    assert await _write_file_asks(root, ".husky/pre-commit")
    assert await _write_file_asks(root, ".husky/post-checkout")
    assert (root / ".husky/pre-commit").read_text() == "npm test\n"


async def test_a_hooks_path_that_does_not_exist_yet_is_protected(root: Path) -> None:
    _git("init", "-q", cwd=root)
    _git("config", "core.hooksPath", "tools/hooks", cwd=root)
    await _bash(root, "mkdir -p tools/hooks; echo 'touch PWNED' > tools/hooks/pre-commit")
    assert not (root / "tools/hooks/pre-commit").exists()
    assert await _write_file_asks(root, "tools/hooks/pre-commit")


async def test_a_bare_repository_keeps_its_hooks_and_config(root: Path) -> None:
    bare = root / "vendor/mirror.git"
    bare.mkdir(parents=True)
    _git("init", "-q", "--bare", cwd=bare)
    before = (bare / "config").read_text()
    await _bash(
        root,
        "echo 'touch PWNED' > vendor/mirror.git/hooks/post-update; "
        "chmod +x vendor/mirror.git/hooks/post-update; "
        "printf '[core]\\n\\tfsmonitor = touch PWNED\\n' >> vendor/mirror.git/config",
    )
    assert not (bare / "hooks/post-update").exists()
    assert (bare / "config").read_text() == before
    assert await _write_file_asks(root, "vendor/mirror.git/hooks/post-update")
    assert await _write_file_asks(root, "vendor/mirror.git/config")


async def test_an_embedded_repository_keeps_its_config(root: Path) -> None:
    inner = root / "vendor/lib"
    inner.mkdir(parents=True)
    _git("init", "-q", cwd=inner)
    before = (inner / ".git/config").read_text()
    await _bash(root, "printf '[core]\\n\\tfsmonitor = touch PWNED\\n' >> vendor/lib/.git/config")
    assert (inner / ".git/config").read_text() == before


async def test_a_repository_past_the_scan_cap_is_read_only(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_scan, "MAX_SCAN_ENTRIES", 200)
    for i in range(220):
        (root / f"f{i:03d}.txt").write_text("x")
    proj = root / "zz_proj"
    proj.mkdir()
    _git("init", "-q", cwd=proj)
    before = (proj / ".git/config").read_text()
    assert proj in _scan.scan_all(root).unscanned  # the scan did not see it
    text = await _bash(
        root,
        "printf '[core]\\n\\tfsmonitor = touch PWNED\\n' >> zz_proj/.git/config; echo done",
    )
    assert (proj / ".git/config").read_text() == before
    assert "done" in text  # the call ran: the unread folder was read-only
    await _bash(root, "echo made > made.txt")
    assert (root / "made.txt").exists()  # the rest of the workspace stays writable


async def test_too_many_unread_folders_refuse_a_writable_call(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_scan, "MAX_SCAN_ENTRIES", 100)
    for i in range(_scan.MAX_UNSCANNED_MASKS + 110):
        (root / f"d{i:03d}").mkdir()
    text = await _bash(root, "echo made > made.txt")
    assert not (root / "made.txt").exists()
    assert "too many" in text and "did not run" in text
