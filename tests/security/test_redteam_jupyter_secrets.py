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

import numpy as np
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


PEM = (
    "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEApemBody0123456789abcdef\n"
    "QWERTYUIOPasdfghjklZXCV==\n-----END RSA PRIVATE KEY-----\n"
)
SHAPED = {
    "hunter2-ann-pw": "a password column",
    "dsnpass-4242-x": "a URL's password",
    "pemBody0123456789": "a PEM private key",
    "sk-envtext-123456": "a NAME_SECRET_KEY=value line",
    "series-pass-777": "a Series value under a secret label",
    "frame-pass-888": "a row under a secret label",
    "mi-pass-555-x": "a MultiIndex column with a secret part",
    "named-pass-666": "a Series named like a secret",
    "rec-pass-444": "a structured array field",
    "json-key-333-x": "a JSON string",
    "tok-bearer-0123456789": "a Bearer token",
    "dbpass-Env-9876": "DATABASE_URL's password",
    "proxypass-XYZ123": "HTTPS_PROXY's password",
    "pypi-AgEItokenvalue999": "PIP_INDEX_URL's token",
    "S3cr3tValueXYZ": "the end of a secret whose name fell in a repr's cut",
    "cutjson0pass": "a JSON password cut by pandas' column width",
    "cuturl0pass": "a URL password cut before its @ by pandas' column width",
    "cutpem0body": "a PEM key in a DataFrame cell",
    "sk-history-0001": "a key set in an earlier cell's source (In)",
}


@pytest.fixture
def shaped(monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setenv("DATABASE_URL", "postgres://app:dbpass-Env-9876@db.internal:5432/prod")
    monkeypatch.setenv("HTTPS_PROXY", "http://proxyuser:proxypass-XYZ123@proxy:3128")
    monkeypatch.setenv("PIP_INDEX_URL", "https://__token__:pypi-AgEItokenvalue999@pypi.example/s")
    mi = pd.MultiIndex.from_tuples([("db", "port"), ("db", "password")])
    ns = {
        "os": os,
        "users": pd.DataFrame(
            {"user": ["ann", "bob"], "password": ["hunter2-ann-pw", "x"], "n": [1, 2]}
        ),
        "dsn": "postgres://u:dsnpass-4242-x@h/db",
        "pem": PEM,
        "envtext": "APP_NAME=x\nNAME_SECRET_KEY=sk-envtext-123456\nDEBUG=1\n",
        "cfg_series": pd.Series({"user": "ann", "password": "series-pass-777"}),
        "cfg_frame": pd.DataFrame({"value": ["ann", "frame-pass-888"]}, index=["user", "pw"]),
        "mi": pd.DataFrame([[1, "mi-pass-555-x"]], columns=mi),
        "named": pd.Series(["named-pass-666"], name="db_password"),
        "rec": np.array([(1, b"rec-pass-444")], dtype=[("id", "i4"), ("password", "S20")]),
        "jsontext": '{"user": "ann", "api_key": "json-key-333-x"}',
        "header": "Authorization: Bearer tok-bearer-0123456789",
        "env_copy": dict(os.environ),
        "pw_copy": "dbpass-Env-9876",
        "cells": pd.DataFrame(
            {
                "cfg": ['{"password": "cutjson0passcutjson0passcutjson0pass"}'],
                "url": ["postgres://application_user:cuturl0passcuturl0pass@db/x"],
                "pem": ["-----BEGIN PRIVATE KEY-----\ncutpem0body\n-----END PRIVATE KEY-----"],
            }
        ),
        "In": ["", 'os.environ["OPENAI_API_KEY"] = "sk-history-0001"\nx = 1'],
        "long_env": "A=1\n" * 49 + "NAME_SECRET_KEY=" + "S3cr3tValueXYZ" * 30 + "\nC=3" * 10,
    }
    ns["cfg_frame"].index = ["user", "password"]
    return types.SimpleNamespace(user_ns=ns, user_ns_hidden={})


SHAPED_PATHS = [
    "users",
    'users["user"]',
    "users.T",
    "users.values",
    "users.iloc",
    "cfg_series.values",
    "cfg_frame.T",
    'cfg_frame["value"]',
    "named.values",
    "In[1]",
    "pem[40]",
    "os.environ",
]


def test_secrets_found_by_shape_or_label_are_never_returned(shaped: Any) -> None:
    seen = [ListVariablesTool(shaped).call("{}").content]
    for path in [*shaped.user_ns, *SHAPED_PATHS]:
        seen.append(DescribeTool(shaped).call(json.dumps({"name": path})).content)
    for text in seen:
        for secret, what in SHAPED.items():
            assert secret not in text, f"{what} reached the model:\n{text[:600]}"
    users = DescribeTool(shaped).call(json.dumps({"name": "users"})).content
    assert "ann" in users and "<hidden: the name looks like a secret>" in users
    dsn = DescribeTool(shaped).call(json.dumps({"name": "dsn"})).content
    assert "postgres://u:<hidden: looks like a secret>@h/db" in dsn  # the rest is shown


def test_every_token_shape_is_hidden_by_describe_list_and_the_live_read() -> None:
    """The kernel tools use the one search the file tools use: a token of every known
    shape, kept under an ordinary name, in a string, a list and a cell's output."""
    import asyncio

    from nb_tools.jupyter._live_notebook import LiveNotebook, LiveNotebookRead
    from nb_tools.sandbox import TOKEN_SHAPES

    samples = [t.sample for t in TOKEN_SHAPES]
    secrets = [s.rsplit("/", 1)[-1] for s in samples]
    ns = {"notes": "\n".join(samples), "items": samples, "first": samples[0]}
    shell = types.SimpleNamespace(user_ns=ns, user_ns_hidden={})
    seen = [ListVariablesTool(shell).call("{}").content]
    seen += [DescribeTool(shell).call(json.dumps({"name": n})).content for n in ns]
    printed = {"output_type": "stream", "name": "stdout", "text": ns["notes"]}
    cell = {"id": "c1", "cell_type": "code", "source": "print(notes)", "outputs": [printed]}
    snap = {"path": "nb.ipynb", "cells": [cell]}

    class Open(LiveNotebook):
        async def read(self) -> dict[str, Any]:
            self.take_snapshot(snap)
            return snap

    seen.append(asyncio.run(LiveNotebookRead(Open()).call("{}")).content)
    assert "print(notes)" in seen[-1]
    for text in seen:
        assert [s for s in secrets if s in text] == [], text[:600]
