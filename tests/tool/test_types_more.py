"""Types the issue found broken: positions of a tuple, values of a dict, bytes, and
defaults after a bare ``import pydantic``."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from nb_tools import Schema, ValidationError, tool
from nb_tools.model import ToolCall
from nb_tools.tool import Executor, Registry

ROOT = Path(__file__).resolve().parents[2]


def run(fn: Any, args: dict[str, Any] | str) -> Any:
    raw = args if isinstance(args, str) else json.dumps(args)
    return Executor(Registry(fn)).execute_sync(ToolCall(id="c", name=fn.info().name, arguments=raw))


def test_a_default_after_a_bare_import_pydantic() -> None:
    code = (
        "import pydantic\n"
        "from nb_tools import tool\n"
        "@tool(register=False)\n"
        "def f(a: int = 1) -> int:\n"
        "    return a\n"
        "print(f.info().parameters.json())\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=False
    )
    assert out.stderr == ""
    assert json.loads(out.stdout) == {
        "type": "object",
        "properties": {"a": {"type": "integer", "default": 1}},
        "additionalProperties": False,
    }


def test_tuple_positions_are_checked_and_kept() -> None:
    got: list[Any] = []

    @tool(register=False)
    def pair(p: tuple[int, str]) -> str:
        """Takes a pair."""
        got.append(p)
        return "ok"

    assert pair.info().parameters.to_dict()["properties"]["p"] == {
        "type": "array",
        "prefixItems": [{"type": "integer"}, {"type": "string"}],
        "minItems": 2,
        "maxItems": 2,
    }
    bad = run(pair, {"p": ["x", 1]})
    assert bad.is_error
    assert bad.content == (
        "invalid arguments for pair:\n/p/0: expected integer, got string\n"
        "/p/1: expected string, got integer"
    )
    assert got == []
    assert run(pair, {"p": [1, "x"]}).content == "ok"
    assert got == [(1, "x")]
    # The strict form (providers' strict modes have no prefixItems) says what any
    # position may hold; validation still checks each position.
    strict = json.loads(pair.info().parameters.strict_json())["properties"]["p"]
    assert strict == {
        "type": "array",
        "items": {"anyOf": [{"type": "integer"}, {"type": "string"}]},
        "minItems": 2,
        "maxItems": 2,
    }
    with pytest.raises(ValidationError):
        pair.info().parameters.validate('{"p": ["x", 1]}', strict=True)


def test_dict_values_are_checked() -> None:
    @tool(register=False)
    def scores(s: dict[str, int]) -> int:
        """Sums scores."""
        return sum(s.values())

    assert scores.info().parameters.to_dict()["properties"]["s"] == {
        "type": "object",
        "additionalProperties": {"type": "integer"},
    }
    bad = run(scores, {"s": {"a": 1, "b": "two"}})
    assert bad.is_error
    assert bad.content == "invalid arguments for scores:\n/s/b: expected integer, got string"
    assert run(scores, {"s": {"a": 1, "b": 2.0}}).content == "3"


def test_bytes_travel_as_base64() -> None:
    seen: list[bytes] = []

    @tool(register=False)
    def upload(data: bytes) -> int:
        """Stores bytes."""
        seen.append(data)
        return len(data)

    assert upload.info().parameters.to_dict()["properties"]["data"] == {
        "type": "string",
        "contentEncoding": "base64",
    }
    payload = bytes(range(256))
    ok = run(upload, {"data": base64.b64encode(payload).decode()})
    assert ok.content == "256" and seen == [payload]
    bad = run(upload, {"data": "not base64!"})
    assert bad.is_error and "not valid base64" in bad.content
    assert "contentEncoding" not in upload.info().parameters.strict_json()


@pytest.mark.parametrize(
    ("schema", "data", "valid"),
    [
        # From the JSON Schema Test Suite (draft 2020-12), prefixItems.json and
        # additionalProperties.json, for the forms now in the subset.
        ({"prefixItems": [{"type": "integer"}, {"type": "string"}]}, [1, "foo"], True),
        ({"prefixItems": [{"type": "integer"}, {"type": "string"}]}, ["foo", 1], False),
        ({"prefixItems": [{"type": "integer"}, {"type": "string"}]}, [1], True),
        ({"prefixItems": [{"type": "integer"}, {"type": "string"}]}, [1, "foo", True], True),
        ({"prefixItems": [{"type": "integer"}, {"type": "string"}]}, [], True),
        ({"prefixItems": [{"type": "integer"}, {"type": "string"}]}, {"0": "invalid"}, True),
        ({"prefixItems": [{"type": "integer"}], "items": {"type": "string"}}, [1, "a", "b"], True),
        ({"prefixItems": [{"type": "integer"}], "items": {"type": "string"}}, [1, "a", 2], False),
        ({"prefixItems": [{"type": "integer"}], "items": {"type": "string"}}, ["a"], False),
        (
            {"properties": {"foo": {}, "bar": {}}, "additionalProperties": {"type": "boolean"}},
            {"foo": 1},
            True,
        ),
        (
            {"properties": {"foo": {}, "bar": {}}, "additionalProperties": {"type": "boolean"}},
            {"foo": 1, "bar": 2, "quux": True},
            True,
        ),
        (
            {"properties": {"foo": {}, "bar": {}}, "additionalProperties": {"type": "boolean"}},
            {"foo": 1, "bar": 2, "quux": 12},
            False,
        ),
        ({"additionalProperties": {"type": "boolean"}}, {"foo": True}, True),
        ({"additionalProperties": {"type": "boolean"}}, {"foo": 1}, False),
        ({"additionalProperties": {"type": "boolean"}}, [1], True),
    ],
)
def test_new_keywords_follow_json_schema(schema: dict[str, Any], data: Any, valid: bool) -> None:
    s = Schema.from_dict(schema)
    assert s.to_dict() == schema
    assert s.is_valid(data) is valid
    try:
        s.validate(json.dumps(data))
        explained = True
    except ValidationError:
        explained = False
    assert explained is valid
