"""What ``%%agent`` adds to a request: ``@`` mentions, the cell's position, the notebook, and
the project's instructions (a real kernel against the fake Messages API server)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest
from kernel_helpers import TRANSCRIPT, Kernel

from nb_tools.jupyter._prompt_context import mentions, prompt_context, running_cell_id
from nb_tools.testing import reply


@pytest.mark.parametrize(
    ("prompt", "found"),
    [
        ("Plot @df against @cfg.threshold", ["df", "cfg.threshold"]),
        ("fix @cell and @cell:ab12-cd", ["cell", "cell:ab12-cd"]),
        ("mail me at me@example.com", []),
        ("the `@tool` decorator and ```\n@dataclass\n```", []),
        ("@df, then @df again.", ["df"]),
        ("@@df", []),
    ],
)
def test_mentions_outside_code_and_addresses(prompt: str, found: list[str]) -> None:
    assert mentions(prompt) == found


SNAP = {
    "path": "analysis.ipynb",
    "active_cell": "c3",
    "cells": [
        {"id": "c1", "cell_type": "code", "source": "df = load()", "outputs": []},
        {"id": "c2", "cell_type": "code", "source": "df.plot()", "outputs": []},
        {"id": "c3", "cell_type": "markdown", "source": "# Notes", "outputs": []},
        {"id": "c4", "cell_type": "code", "source": "%%agent\nfix @cell", "outputs": []},
    ],
}


def shell(**ns: object) -> SimpleNamespace:
    return SimpleNamespace(user_ns=dict(ns), user_ns_hidden={})


def test_cell_mentions_and_the_position_come_from_the_snapshot() -> None:
    ctx = prompt_context(
        "fix @cell, see @cell:c1 and @cell:zz", shell=shell(), snapshot=SNAP, agent_cell="c4"
    )
    assert "This request is cell 4 of 4 (id c4). The cursor is in cell 3 (id c3)." in ctx.text
    assert '<mention name="@cell">' in ctx.text and "df.plot()" in ctx.text  # the cell above
    assert '<mention name="@cell:c1">' in ctx.text and "df = load()" in ctx.text
    assert ctx.unknown == ("cell:zz",)
    assert ctx.note() == (
        "added to the request: the cell's position, @cell, @cell:c1; "
        "@cell:zz left as written: no such variable or cell"
    )


def test_a_variable_mention_is_describe_s_reading_never_its_code_or_secrets() -> None:
    class Trap:
        def __repr__(self) -> str:
            raise AssertionError("user code ran")

        @property
        def value(self) -> int:
            raise AssertionError("user code ran")

    ctx = prompt_context(
        "look at @trap, @api_key and @missing",
        shell=shell(trap=Trap(), api_key="sk-ant-SECRETVALUE123456"),
    )
    assert "SECRETVALUE" not in ctx.text
    assert '<mention name="@trap">' in ctx.text and "Trap" in ctx.text
    assert "looks like a secret" in ctx.text
    assert ctx.unknown == ("missing",)


def test_without_a_kernel_request_there_is_no_cell_id() -> None:
    assert running_cell_id(SimpleNamespace()) is None
    parent = {"metadata": {"cellId": "c4"}}
    assert (
        running_cell_id(SimpleNamespace(kernel=SimpleNamespace(get_parent=lambda: parent))) == "c4"
    )


pytestmark_kernel = pytest.mark.kernel


@pytest.mark.kernel
def test_agents_md_and_mentions_reach_the_request(kernel: Kernel, server) -> None:
    cwd = Path(kernel.ok("import os; print(os.getcwd())").stdout.strip())
    (cwd / "AGENTS.md").write_text("Always answer in French.")
    kernel.ok(
        "%load_ext nb_tools\n"
        "import pandas as pd\n"
        "users = pd.DataFrame({'name': ['ann'], 'password': ['hunter2-XYZ']})\n"
    )
    server.push(reply("D'accord."))
    n = len(server.requests)
    ex = kernel.ok("%%agent --new --approval deny\nSummarise @users and @nope")
    body = server.requests[n].body
    system = body["system"] if isinstance(body["system"], str) else body["system"][0]["text"]
    assert system.endswith("## AGENTS.md\n\nAlways answer in French.")
    sent = body["messages"][-1]["content"]
    text = sent if isinstance(sent, str) else "".join(b.get("text", "") for b in sent)
    assert '<mention name="@users">' in text and "password" in text
    assert "hunter2" not in text
    assert text.endswith("Summarise @users and @nope")
    transcript = ex.displays[-1]["data"][TRANSCRIPT]
    notices = [i.get("text") for i in transcript["items"] if i.get("kind") == "notice"]
    assert "project instructions read: AGENTS.md" in notices
    assert "added to the request: @users; @nope left as written: no such variable or cell" in (
        notices
    )
    users = [i["text"] for i in transcript["items"] if i["kind"] == "user"]
    assert users == ["Summarise @users and @nope"]  # the prompt as typed, not what was added
    server.push(reply("Sans."))
    n = len(server.requests)
    kernel.ok("%%agent --no-instructions\nAgain")
    body = server.requests[n].body
    assert "Always answer in French" not in str(body.get("system"))
