"""Secrets found by their text, on every channel through which a call without a click
reaches the model (and the live view): ``bash`` output and its progress lines,
``read_file``, ``grep``, the disk ``notebook_read``. The file holding them has a name the
protection table does not know (``notes/deploy.md``), so only the text can give them
away. A person who clicks a call sees its text (private keys aside)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from approvals_helpers import Approver, call, drive
from sandbox_helpers import require_sandbox, run

from nb_tools.agent._events import ToolProgress
from nb_tools.builtin import BashTool, Workspace, builtin_tools
from nb_tools.sandbox import KEY_HIDDEN, TOKEN_SHAPES

PASSWORD = "Rt4-pw-8c1e77"
KEY_LINE = "MIIEvAIBADANBgkqhkiG9w0BAQEFAASCBKYwggSiAgEAAoIBAQC7" + "x9Zq" * 3
SECRETS = [PASSWORD, KEY_LINE, *(t.sample.rsplit("/", 1)[-1] for t in TOKEN_SHAPES)]
NOTES = (
    "# deploy notes\n"
    f"export DB_PASSWORD={PASSWORD}\n"
    + "".join(f"- {t.what}: {t.sample}\n" for t in TOKEN_SHAPES)
    + f"-----BEGIN PRIVATE KEY-----\n{KEY_LINE}\n{KEY_LINE[:30]}==\n-----END PRIVATE KEY-----\n"
    + "the end\n"
)


def _workspace(ws: Path) -> None:
    (ws / "notes").mkdir()
    (ws / "notes" / "deploy.md").write_text(NOTES)
    # no-click grep leaves out a file that holds a private key: this one holds none
    (ws / "notes" / "tokens.md").write_text(NOTES.split("-----BEGIN")[0])
    printed = {"output_type": "stream", "name": "stdout", "text": NOTES}
    cell = {"cell_type": "code", "id": "c1", "source": "print(open('notes/deploy.md').read())"}
    nb = {
        "cells": [{**cell, "metadata": {}, "execution_count": 1, "outputs": [printed]}],
        "metadata": {},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    (ws / "run.ipynb").write_text(json.dumps(nb))


def _leaks(text: str) -> list[str]:
    return [s for s in SECRETS if s in text]


async def test_no_click_channels_show_no_secret(ws: Path) -> None:
    require_sandbox()
    _workspace(ws)
    calls = [
        call("read_file", file_path="notes/deploy.md", id="r"),
        call("grep", pattern="e", output_mode="content", path="notes/tokens.md", id="g"),
        call("notebook_read", notebook_path="run.ipynb", id="n"),
        call("bash", command="cat notes/deploy.md; sleep 0.4; cat notes/deploy.md >&2", id="b"),
    ]
    tools = [
        *builtin_tools(ws, include=("read_file", "grep", "notebook_read")),
        BashTool(Workspace(ws), progress_interval=0.1),
    ]
    out = await drive(calls, tools=tools, approval="read-only", approver=Approver())
    seen = {c.id: out.result(c.id)[0] for c in calls}
    seen["progress"] = "".join(e.progress.text for e in out.events if isinstance(e, ToolProgress))
    assert "the end" in seen["progress"] and "the end" in seen["b"]  # they ran
    for channel, text in seen.items():
        assert "deploy notes" in text, channel  # the rest is shown
        assert _leaks(text) == [], channel
    assert seen["r"].count("\n") >= NOTES.count("\n")  # line for line


async def test_a_persons_click_shows_the_text_but_no_private_key(ws: Path) -> None:
    """Approved by a click, ``cat`` shows the password (the person asked for the file);
    under ``auto`` (no person) it does not; a private key never reaches the model."""
    require_sandbox()
    _workspace(ws)
    command = "cat notes/deploy.md > /tmp/x; cat /tmp/x"  # writes: it asks
    clicked = await drive(
        [call("bash", command=command, id="b")],
        tools=builtin_tools(ws, include=("bash",)),
        approver=Approver(answers=[True]),
    )
    auto = await drive(
        [call("bash", command=command, id="b")],
        tools=builtin_tools(ws, include=("bash",)),
        approval="auto",
    )
    shown, hidden = clicked.result("b")[0], auto.result("b")[0]
    assert PASSWORD in shown and KEY_LINE not in shown and KEY_HIDDEN in shown
    assert _leaks(hidden) == []


async def test_a_secret_in_git_history_does_not_reach_the_model(ws: Path) -> None:
    """``.env`` was committed and then removed: ``git show``, ``git log -p`` and ``git
    grep`` read git's objects, not the hidden file; what they print is redacted."""
    require_sandbox()
    env = {"PATH": "/usr/bin:/bin", "HOME": str(ws), "GIT_CONFIG_NOSYSTEM": "1"}

    def git(*a: str) -> None:
        subprocess.run(["git", "-C", str(ws), *a], check=True, capture_output=True, env=env)

    git("init", "-q")
    (ws / ".env").write_text(f"OPENAI_API_KEY={TOKEN_SHAPES[1].sample}\nDB_PASSWORD={PASSWORD}\n")
    git("add", ".env")
    git("-c", "user.email=a@b", "-c", "user.name=a", "commit", "-qm", "oops")
    command = "git show HEAD:.env; git log -p | head -40; git grep -h PASSWORD HEAD; true"
    shell = str((await run(ws, command, approved=False)).content)
    assert "[exit code 0]" in shell and "DB_PASSWORD=" in shell  # it ran, and read them
    assert _leaks(shell) == []
