"""Red team, round 3, in a real kernel (jupyter_client): ``list_variables``, ``describe``
and ``@name`` mentions run without a click, so they must run none of the user's code and
show no secret, whatever the object. Written as an outsider would attack them.

One kernel for the module. A setup cell builds the hostile namespace: every hook writes a
marker file named after itself into ``MARKS`` (the code that must not run), and every
secret is a distinct string (the text that must not reach the model). A probe cell then
calls the real tools on ``get_ipython()`` for every path and writes what the model would
read to a JSON file; each test reads its part of it.

Succeeded before the fixes of this round (see the CHANGELOG): a structured dtype whose
field title is an object (NumPy's repr called its ``__repr__``); the labels of an axis
named like a secret (``set_index("password")``, a MultiIndex level ``api_key``, a pivot's
columns named ``token``, and that axis inside a Styler); a nested structured field
``password``; API tokens kept under names that say nothing (``key = "sk-ant-..."``, a JWT,
a GitHub token in a list, a Slack webhook); names written without separators
(``dbpassword``, ``PassWord``, ``SMTP_PASS``); ``access_key = ...`` after an escaped line
break in a repr (``'[db]\\naccess_key = ...'``), ``password: ...`` YAML lines and
``X-Api-Key: ...`` headers; a namedtuple's field ``token`` holding bytes (shown by its
repr, and by ``creds[1]``); an ``@cell`` mention of a cell whose output printed an
environment variable's secret value (``notebook_read`` hid it; the mention did not);
name/value records whose name is a secret (``{"name": "DB_PASSWORD", "value": ...}`` as
in a task definition's environment, an SSM parameter, a DataFrame of them)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "jupyter"))

from kernel_helpers import Kernel

from nb_tools.testing import FakeMessagesServer

pytestmark = pytest.mark.kernel

SETUP = r'''
import collections, datetime, os, types, weakref
from pathlib import Path
from unittest import mock
import numpy as np
import pandas as pd

MARKS = Path(%(marks)r)

def _ran(what):
    (MARKS / what).write_text(what)

class Loud:
    """Every hook pandas, NumPy or a repr could call."""
    def __repr__(self): _ran("loud-repr"); return "LOUD"
    def __str__(self): _ran("loud-str"); return "LOUD"
    def __format__(self, spec): _ran("loud-format"); return "LOUD"
    def __hash__(self): _ran("loud-hash"); return 1
    def __eq__(self, other): _ran("loud-eq"); return False
    def __len__(self): _ran("loud-len"); return 1
    def __sizeof__(self): _ran("loud-sizeof"); return 1
    def __array__(self, *a, **k): _ran("loud-array"); return np.zeros(1)
    def __fspath__(self): _ran("loud-fspath"); return "/x"
    def __getattr__(self, name): _ran("loud-getattr"); return 1

class Cell:
    """An object pandas hashes, sorts and formats in a column or as a category."""
    def __init__(self, i): self.i = i
    def __repr__(self): _ran("cell-repr"); return "C"
    def __str__(self): _ran("cell-str"); return "C"
    def __hash__(self): _ran("cell-hash"); return self.i
    def __eq__(self, o): _ran("cell-eq"); return self is o
    def __lt__(self, o): _ran("cell-lt"); return False
    def __fspath__(self): _ran("cell-fspath"); return "/x"

class Meta(type):
    def __instancecheck__(cls, obj): _ran("meta-instancecheck"); return True
    def __subclasscheck__(cls, sub): _ran("meta-subclasscheck"); return True
    def __repr__(cls): _ran("meta-repr"); return "M"
    def __hash__(cls): _ran("meta-hash"); return 1
    def __eq__(cls, other): _ran("meta-eq"); return cls is other

class WithMeta(metaclass=Meta):
    pass

class Props:
    @property
    def p(self): _ran("property"); return 1
    def __getattr__(self, name): _ran("getattr"); return 1

class LoudStr(str):
    def __repr__(self): _ran("str-sub-repr"); return "S"
    def __str__(self): _ran("str-sub-str"); return "S"
    def __len__(self): _ran("str-sub-len"); return 1
    def __hash__(self): _ran("str-sub-hash"); return 1
    def __eq__(self, o): _ran("str-sub-eq"); return False

class UserIndex(pd.Index):
    pass

def _fmt(v):
    _ran("styler-formatter")
    return "F"

users = pd.DataFrame({
    "user": ["ann", "bob"],
    "password": ["pw-index-aaa111", "pw-index-bbb222"],
    "api_key": ["level-key-ccc333", "level-key-ddd444"],
    "n": [1, 2],
})
by_pw = users.drop(columns="api_key").set_index("password")
by_pair = users.drop(columns="password").set_index(["user", "api_key"])
pivot = users.pivot(index="user", columns="password", values="n").rename_axis(columns="token")
styled = by_pw.style.format(_fmt)

titled = np.zeros(2, dtype=np.dtype([((Loud(), "a"), "i4")]))
meta = np.zeros(2, dtype=np.dtype(float, metadata={"k": Loud()}))
nested_rec = np.array(
    [((1, b"nested-rec-eee555"),)], dtype=[("outer", [("id", "i4"), ("password", "S20")])]
)
wm = WithMeta()
classes = [WithMeta, Loud]
props = Props()
px = weakref.proxy(props)
mk = mock.MagicMock(side_effect=lambda *a, **k: _ran("mock-called"))
loud_str = LoudStr("hello")
keyed = {LoudStr("k"): 1, "plain": Loud()}
user_index = pd.DataFrame({"n": [1, 2]}, index=UserIndex(["a", "b"]))
cats = pd.Series(pd.Categorical([Cell(1), Cell(2)]))
cells = pd.DataFrame({"o": np.array([Cell(3), "x"], dtype=object), "n": [1, 2]})

key = "sk-ant-api03-ShapeOnly0123456789abcdefGHIJ"
refs = ["ghp_ShapeOnlyGitHub0123456789abcdefGHIJ", "plain"]
jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJzaGFwZS1vbmx5In0.SigShapeOnly0123456789abcd"
hub = {"value": "hf_ShapeOnlyHuggingFace0123456789abcdef"}
hook = "https://hooks.slack.com/services/T0SHAPE00/B0SHAPE00/WebhookShapeOnly0123456789"
dbpassword = "joined-name-fff666"
PassWord = "camel-name-ggg777"
SMTP_PASS = "last-word-hhh888"
cfg = {"dbPassWord": "dict-key-iii999", "host": "db"}
ini = "[db]\naccess_key = ini-line-jjj000\nhost = db\n"
yaml_text = "db:\n  password: yaml-line-kkk111\n  host: db\n"
header = "X-Api-Key: header-line-lll222"
nested = {"cfg": [{"password": "nested-mmm333"}], "b": b"password=bytes-nnn444"}
ns_obj = types.SimpleNamespace(password="namespace-ooo555")
chain = collections.ChainMap({"password": "chain-ppp666"}, os.environ)
err = KeyError({"token": "exception-qqq777"})
os.environ["DATABASE_URL"] = "postgres://app:env-url-rrr888@db.internal/prod"
os.environ["OPENAI_API_KEY"] = "cell-output-ttt000-plain"
printed = {"output_type": "stream", "name": "stdout", "text": "KEY=cell-output-ttt000-plain\n"}
snapshot = {"path": "nb.ipynb", "cells": [
    {"id": "c1", "cell_type": "code", "source": "!env | grep KEY", "outputs": [printed]},
]}
env_copy = dict(os.environ)
Creds = collections.namedtuple("Creds", "user token")
creds = Creds("ann", b"namedtuple-sss999")
task_env = [{"name": "DB_PASSWORD", "value": "record-uuu111"}, {"name": "HOST", "value": "db"}]
ssm = {"Parameter": {"Name": "/prod/stripe/api_key", "Value": "record-vvv222"}}
env_frame = pd.DataFrame(task_env)
'''

PROBE = r"""
import json
from nb_tools.jupyter._kernel_tools import DescribeTool, ListVariablesTool
from nb_tools.jupyter._prompt_context import prompt_context
_ip = get_ipython()
_out = {"list": ListVariablesTool(_ip).call("{}").content}
for _p in %(paths)r:
    _out[_p] = DescribeTool(_ip).call(json.dumps({"name": _p})).content
_out["@mentions"] = prompt_context(
    "look at @by_pw and @pivot and @loud_str and @wm", shell=_ip
).text
_out["@cell"] = prompt_context("why did @cell:c1 print that", shell=_ip, snapshot=snapshot).text
Path(%(out)r).write_text(json.dumps(_out))
"""

CODE_PATHS = [
    "titled",
    "titled.dtype",
    "meta",
    "meta.dtype",
    "wm",
    "classes",
    "props",
    "px",
    "px.p",
    "mk",
    "mk.foo",
    "mk.return_value",
    "loud_str",
    "keyed",
    "user_index",
    "cats",
    "cells",
    "styled",
    "styled.data",
]
SECRET_PATHS = [
    "by_pw",
    "by_pw.index",
    "by_pw.index.values",
    "by_pw.index[0]",
    "by_pw.n",
    "by_pw.T",
    "by_pw.axes",
    "by_pair",
    "by_pair.index",
    "by_pair.index.levels",
    "pivot",
    "pivot.columns",
    "nested_rec",
    "key",
    "refs",
    "jwt",
    "hub",
    "hook",
    "dbpassword",
    "PassWord",
    "SMTP_PASS",
    "cfg",
    "ini",
    "yaml_text",
    "header",
    "nested",
    'nested["b"]',
    "ns_obj",
    "chain",
    "err",
    "env_copy",
    "creds",
    "creds[1]",
    "task_env",
    'task_env[0]["value"]',
    "ssm",
    'ssm["Parameter"]["Value"]',
    "env_frame",
    "env_frame.value",
    "env_frame.values",
]

SECRETS = {
    "pw-index-aaa111": "the labels of an index named password",
    "level-key-ccc333": "a MultiIndex level named api_key",
    "nested-rec-eee555": "a nested structured field password",
    "ShapeOnly0123456789": "an Anthropic key under the name key",
    "ShapeOnlyGitHub": "a GitHub token in a list",
    "SigShapeOnly": "a JWT",
    "ShapeOnlyHuggingFace": "a Hugging Face token under 'value'",
    "WebhookShapeOnly": "a Slack webhook's secret path",
    "joined-name-fff666": "a variable dbpassword",
    "camel-name-ggg777": "a variable PassWord",
    "last-word-hhh888": "a variable SMTP_PASS",
    "dict-key-iii999": "a dict key dbPassWord",
    "ini-line-jjj000": "access_key = after an escaped line break",
    "yaml-line-kkk111": "a YAML password: line",
    "header-line-lll222": "an X-Api-Key: header",
    "nested-mmm333": "a password in nested containers",
    "bytes-nnn444": "password= in bytes",
    "namespace-ooo555": "an attribute password",
    "chain-ppp666": "a ChainMap over os.environ",
    "exception-qqq777": "an exception's args",
    "env-url-rrr888": "DATABASE_URL's password, copied",
    "namedtuple-sss999": "a namedtuple's field token (bytes), by name and by position",
    "cell-output-ttt000": "$OPENAI_API_KEY printed in a cell's output, by @cell",
    "record-uuu111": "the value of a Kubernetes/ECS environment entry named DB_PASSWORD",
    "record-vvv222": "the Value of an SSM parameter named /prod/stripe/api_key",
}


@pytest.fixture(scope="module")
def answers(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    base = tmp_path_factory.mktemp("round3")
    marks = base / "marks"
    marks.mkdir()
    out = base / "answers.json"
    with FakeMessagesServer() as server:
        k = Kernel(server, base)
        try:
            k.ok(SETUP % {"marks": str(marks)})
            # the detectors work: plain Python runs the hooks the tools must not
            k.ok("for _m in MARKS.iterdir(): _m.unlink()")  # building the frames hashed cells
            k.ok("repr(titled.dtype); props.p; str(loud_str); mk(); styled.to_html(); str(cells)")
            fired = sorted(p.name for p in marks.iterdir())
            for p in marks.iterdir():
                p.unlink()
            k.ok(PROBE % {"paths": CODE_PATHS + SECRET_PATHS, "out": str(out)})
        finally:
            k.close()
    got = json.loads(out.read_text())
    got["_fired"] = fired
    got["_ran"] = sorted(p.name for p in marks.iterdir())
    return got


def test_the_hooks_fire_when_python_reads_them(answers: dict[str, Any]) -> None:
    for hook in ("loud-repr", "property", "str-sub-str", "mock-called", "styler-formatter"):
        assert hook in answers["_fired"]


def test_no_user_code_ran(answers: dict[str, Any]) -> None:
    assert answers["_ran"] == []


@pytest.mark.parametrize("secret", list(SECRETS), ids=list(SECRETS.values()))
def test_no_secret_reaches_the_model(answers: dict[str, Any], secret: str) -> None:
    for path, text in answers.items():
        if not path.startswith("_"):
            assert secret not in text, f"{SECRETS[secret]} leaked through {path}:\n{text[:600]}"


def test_what_is_shown_instead(answers: dict[str, Any]) -> None:
    by_pw = answers["by_pw"]
    assert "note: the index labels named password are hidden" in by_pw
    assert "<hidden 1>" in by_pw and "ann" in by_pw  # the other values still read
    assert "pivot: DataFrame 2x2 [<hidden 1>:float64, <hidden 2>:float64]" in answers["list"]
    assert answers["by_pw.index.values"].startswith(
        "describe: by_pw.index is an axis named like a secret"
    )
    assert "titled: numpy.ndarray\n" in answers["list"] + "\n"
    assert "whose field titles or metadata are objects" in answers["titled"]
    assert "fields outer, id, password; <hidden" in answers["nested_rec"]
    assert answers["key"].endswith("'<hidden: looks like a secret>'")
    assert "host = db" in answers["ini"] and "host: db" in answers["yaml_text"]
    assert "dbpassword: str <hidden" in answers["list"], answers["list"]
    assert '<mention name="@by_pw">' in answers["@mentions"]
    assert "KEY=<hidden: the value of $OPENAI_API_KEY>" in answers["@cell"]
    assert "{'name': 'HOST', 'value': 'db'}" in answers["task_env"]
