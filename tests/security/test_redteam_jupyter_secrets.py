"""Red team: ``list_variables`` and ``describe`` run without a click, and hide a value kept
under a secret-looking NAME (``api_key``, ``os.environ["ANTHROPIC_API_KEY"]``). The same
value reached through a user's copy that has no such name (``list(os.environ.values())``,
``f"{k}={v}"`` lines, a connection string, a DataFrame column, a Series indexed by the
variable names) was shown to the model. The value of every secret-named environment
variable must not appear in what these tools return, whatever path leads to it."""

from __future__ import annotations

import json
import os
import types
from typing import Any

import pandas as pd
import pytest

from nb_tools.jupyter._kernel_tools import DescribeTool, ListVariablesTool

KEY = "sk-ant-api03-RedTeam0123456789abcdefXYZ"
TOKEN = "ghp_RedTeamToken0123456789"


@pytest.fixture
def shell(monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
    env = os.environ
    ns = {
        "vals": list(env.values()),
        "items": list(env.items()),
        "lines": [f"{k}={v}" for k, v in env.items()],
        "conn": f"https://user:{KEY}@db.example/x",
        "header": "Bearer " + TOKEN,
        "short": TOKEN,
        "frame": pd.DataFrame({"name": ["a", "b"], "value": [KEY, "plain"]}),
        "series": pd.Series(dict(env)),
        "nested": {"cfg": [("anthropic", {"value": KEY})]},
        "blob": KEY.encode(),
    }
    return types.SimpleNamespace(user_ns=ns, user_ns_hidden={})


PATHS = [
    "vals",
    "items",
    "lines",
    "conn",
    "header",
    "short",
    "frame",
    'frame["value"]',
    "frame.value[0]",
    "series",
    "nested",
    'nested["cfg"][0][1]',
    "blob",
    "vals[0]",
]


def test_the_secret_values_are_never_returned(shell: Any) -> None:
    seen = [ListVariablesTool(shell).call(json.dumps({})).content]
    seen.append(ListVariablesTool(shell).call(json.dumps({"pattern": "s"})).content)
    for path in PATHS + [f"vals[{i}]" for i in range(len(shell.user_ns["vals"]))]:
        seen.append(DescribeTool(shell).call(json.dumps({"name": path})).content)
    for text in seen:
        assert KEY not in text and TOKEN not in text, text[:400]
        assert KEY[10:30] not in text  # not a part of it either


def test_other_values_are_still_shown(shell: Any) -> None:
    text = DescribeTool(shell).call(json.dumps({"name": "frame"})).content
    assert "plain" in text and "$ANTHROPIC_API_KEY" in text  # says what was hidden


async def test_the_live_notebook_read_hides_them_in_cell_outputs(shell: Any) -> None:
    from nb_tools.jupyter._live_notebook import LiveNotebook, LiveNotebookRead

    printed = {"output_type": "stream", "name": "stdout", "text": f"KEY={KEY}\nTOKEN={TOKEN}\n"}
    snap = {"path": "nb.ipynb", "cells": [{"id": "c1", "cell_type": "code", "source": "!env"}]}
    snap["cells"][0]["outputs"] = [printed]

    class Open(LiveNotebook):
        async def read(self) -> dict[str, Any]:
            self.take_snapshot(snap)
            return snap

    result = await LiveNotebookRead(Open()).call("{}")
    assert "!env" in result.content and "$GITHUB_TOKEN" in result.content
    assert KEY not in result.content and TOKEN not in result.content
