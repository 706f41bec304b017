"""A sandboxed call that may change the workspace cannot leave code for the next kernel
start: ``python -m ipykernel_launcher`` runs in the notebook's folder and imports from it
first, so an ``ipykernel_launcher.py`` (or ``.pyc``, or an ``ipykernel`` package) written
there ran outside the sandbox, as the user, the next time a kernel started. The sandbox
removes such new names after the call, with the shell start-up files it protects. The
effect checked: a real ``python -m ipykernel_launcher`` in that folder runs nothing of
the call's."""

from __future__ import annotations

from pathlib import Path

import pytest
from approvals_helpers import call, drive, workspace_tools
from sandbox_helpers import require_sandbox, start_kernel_in

PLANT = (
    'printf \'open("PWNED", "w").close()\\n\' > ipykernel_launcher.py; '
    "mkdir -p ipykernel && cp ipykernel_launcher.py ipykernel/__init__.py; "
    "cp ipykernel_launcher.py sitecustomize.py; echo 'touch PWNED' > .bashrc; "
    "echo 'print(1)' > notes.py"
)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    require_sandbox()
    return tmp_path


def test_control_a_planted_launcher_runs_at_kernel_start(root: Path) -> None:
    (root / "ipykernel_launcher.py").write_text('open("PWNED", "w").close()\n')
    start_kernel_in(root)
    assert (root / "PWNED").exists()


async def test_an_approved_call_leaves_nothing_for_the_next_kernel_start(root: Path) -> None:
    out = await drive(
        [call("bash", command=PLANT, id="b")],
        tools=workspace_tools(root, "bash"),
        approval="auto",
    )
    text, _ = out.result("b")  # an error result: the model must know its files are gone
    for name in ("ipykernel_launcher.py", "ipykernel", "sitecustomize.py", ".bashrc"):
        assert not (root / name).exists(), name
        assert name in text  # the model is told what was removed
    assert (root / "notes.py").exists()  # the rest of the call's work stays
    start_kernel_in(root)
    assert not (root / "PWNED").exists()


async def test_a_launcher_that_was_there_before_is_left_alone(root: Path) -> None:
    (root / "ipykernel_launcher.py").write_text("# the user's own\n")
    out = await drive(
        [call("bash", command="echo hi > notes.txt", id="b")],
        tools=workspace_tools(root, "bash"),
        approval="auto",
    )
    assert not out.result("b")[1]
    assert (root / "ipykernel_launcher.py").read_text() == "# the user's own\n"
