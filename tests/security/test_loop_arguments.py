"""A call whose arguments are not I-JSON or fail the schema never runs and never skips
approval, raw-parameter tools included; the model reads the precise problem."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from approvals_helpers import Approver, call, drive, workspace_tools

from nb_tools import Info, Result


class RawWriter:
    """A tool with raw parameters (no schema validation) that needs approval and, when it
    runs, leaves a marker file."""

    def __init__(self, root: Path) -> None:
        self.marker = root / "MARKER"

    def info(self) -> Info:
        return Info(
            name="raw_writer",
            description="writes the marker",
            raw_parameters={"type": "object", "properties": {"path": {"type": "string"}}},
            requires_approval=True,
        )

    def call(self, args: str | bytes) -> Result:
        self.marker.write_text(str(args))
        return Result(content="wrote")


BAD_ARGUMENTS = [
    ('{"path": "a", "path": "b"}', "/path: duplicate key"),
    ('{"path": "a"', "invalid JSON"),
    ('{"path": NaN}', "NaN is not a JSON number"),
    ('{"path": Infinity}', "Infinity"),
    ('{"path": "\\ud800"}', "lone surrogate"),
    ('{"path": "a"} {"path": "b"}', "invalid JSON"),
    ("[1, 2]", "expected an object"),
    ('"just a string"', "expected an object"),
    ('{"a": {"b": 1, "b": 2}}', "/a/b: duplicate key"),
]


@pytest.mark.parametrize("policy", ["ask", "auto", "read-only"])
@pytest.mark.parametrize(("raw", "problem"), BAD_ARGUMENTS)
async def test_raw_parameter_tool_never_runs_on_bad_arguments(
    tmp_path: Path, policy: str, raw: str, problem: str
) -> None:
    tool = RawWriter(tmp_path)
    approver = Approver(stop=True)  # would stop the run if it were ever asked
    out = await drive(
        [call("raw_writer", raw=raw, id="c")], tools=[tool], approval=policy, approver=approver
    )
    assert not tool.marker.exists()
    assert approver.requests == [] and not out.stopped
    content, is_error = out.result("c")
    assert is_error and content.startswith("invalid arguments for raw_writer")
    assert problem in content
    assert out.status("c") == "error"
    assert out.decided() == []


@pytest.mark.parametrize("policy", ["ask", "auto"])
@pytest.mark.parametrize(
    "raw",
    [
        '{"file_path": "notes.txt", "content": "x", "file_path": ".git/hooks/pre-commit"}',
        '{"file_path": ".git/hooks/pre-commit", "content": "x", "file_path": "notes.txt"}',
        '{"file_path": "notes.txt", "content": NaN}',
        '{"file_path": "notes.txt", "content": "\\udc00"}',
        '{"file_path": "notes.txt"}',
        '{"file_path": "notes.txt", "content": 5}',
    ],
)
async def test_write_file_with_bad_arguments_writes_nothing(
    tmp_path: Path, policy: str, raw: str
) -> None:
    (tmp_path / ".git" / "hooks").mkdir(parents=True)
    approver = Approver(answers=[True])
    out = await drive(
        [call("write_file", raw=raw, id="w")],
        tools=workspace_tools(tmp_path, "write_file"),
        approval=policy,
        approver=approver,
    )
    assert not (tmp_path / "notes.txt").exists()
    assert not (tmp_path / ".git" / "hooks" / "pre-commit").exists()
    assert approver.requests == []
    content, is_error = out.result("w")
    assert is_error and content.startswith("invalid arguments for write_file")


async def test_a_valid_raw_call_still_asks_and_a_denial_keeps_it_from_running(
    tmp_path: Path,
) -> None:
    tool = RawWriter(tmp_path)
    approver = Approver(answers=[False])
    out = await drive(
        [call("raw_writer", raw='{"path": "a"}', id="c")], tools=[tool], approver=approver
    )
    assert approver.asked == ["c"]
    assert not tool.marker.exists()
    assert out.result("c") == ("The user denied this call.", True)


async def test_an_invalid_call_next_to_a_valid_one_does_not_change_its_approval(
    tmp_path: Path,
) -> None:
    tool = RawWriter(tmp_path)
    approver = Approver(answers=[True])
    out = await drive(
        [
            call("raw_writer", raw='{"path": 1, "path": 2}', id="bad"),
            call("raw_writer", raw='{"path": "ok"}', id="good"),
        ],
        tools=[tool],
        approver=approver,
    )
    assert approver.asked == ["good"]
    assert tool.marker.read_text() == '{"path": "ok"}'
    assert out.result("bad")[1] is True


def _never(*_: Any) -> None:
    raise AssertionError("a permission callable must not be consulted for invalid arguments")


async def test_invalid_arguments_are_refused_before_any_rule_or_permission(
    tmp_path: Path,
) -> None:
    from nb_tools.permissions import PermissionRules

    rules = PermissionRules(root=tmp_path)
    rules.allow("raw_writer")
    tool = RawWriter(tmp_path)
    out = await drive(
        [call("raw_writer", raw='{"path": "a", "path": "b"}', id="c")],
        tools=[tool],
        approval="auto",
        rules=rules,
        permission=_never,
    )
    assert not tool.marker.exists()
    assert out.result("c")[0].startswith("invalid arguments for raw_writer")
