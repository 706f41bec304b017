"""A run as code: ``RunResult.to_code()`` re-does the run's calls without the model."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from nb_tools import Registry, tool
from nb_tools.agent import Agent, ToolCallFailed, call_tool
from nb_tools.builtin import builtin_tools
from nb_tools.permissions import PermissionRules
from nb_tools.testing import ScriptedModel, call, reply

LEDGER: list[tuple[str, int]] = []


@tool(requires_approval=True, register=False)
def book_table(restaurant: str, people: int, vip: bool = False) -> str:
    """Book a table.

    Args:
        restaurant: Name of the restaurant.
        people: How many guests.
        vip: A VIP table.
    """
    LEDGER.append((restaurant, people))
    return f"Booked {restaurant} for {people}"


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    (tmp_path / "keep.txt").write_text("kept\n")
    return tmp_path


async def run_scripted(workspace: Path) -> tuple[Agent, ScriptedModel]:
    tools = Registry(
        *builtin_tools(root=workspace, include=["write_file", "read_file"]), book_table
    )
    rules = PermissionRules(root=workspace)
    rules.deny("write_file(secret.txt)")
    model = ScriptedModel(
        [
            reply(
                "Writing.",
                call("write_file", file_path="notes.txt", content='a "quoted" line\nnull true\n'),
                call("write_file", file_path="secret.txt", content="no"),
                call("book_table", restaurant="Chez O'Neil", people=4, vip=True),
                call("book_table", restaurant="Nowhere", people="many"),
            ),
            reply("Done."),
        ]
    )
    agent = Agent(model, tools=tools, approval="auto", rules=rules)
    await agent.run("write and book")
    return agent, model


async def test_the_code_redoes_what_ran_and_comments_the_rest(workspace: Path) -> None:
    agent, model = await run_scripted(workspace)
    result = agent.last_result
    assert [(c.name, c.status) for c in result.calls] == [
        ("write_file", "ok"),
        ("write_file", "denied"),
        ("book_table", "ok"),
        ("book_table", "error"),
    ]
    code = result.to_code()
    ast.parse(code)
    lines = code.splitlines()
    assert "from nb_tools import call_tool" in lines
    assert "call_tool('book_table', restaurant=\"Chez O'Neil\", people=4, vip=True)" in lines
    assert "# 2. write_file: denied, not re-done" in lines
    assert "# call_tool('write_file', file_path='secret.txt', content='no')" in lines
    assert "# 4. book_table: failed, not re-done" in lines

    # Undo the run's effects, then run the code in a fresh namespace: the same effects, no
    # model request.
    (workspace / "notes.txt").unlink()
    LEDGER.clear()
    requests = len(model.requests)
    exec(compile(code, "<to_code>", "exec"), {})
    assert (workspace / "notes.txt").read_text() == 'a "quoted" line\nnull true\n'
    assert not (workspace / "secret.txt").exists()
    assert LEDGER == [("Chez O'Neil", 4)]
    assert len(model.requests) == requests


async def test_call_tool_takes_the_tools_and_raises_the_tool_s_error(workspace: Path) -> None:
    tools = Registry(book_table)
    assert call_tool("book_table", tools, restaurant="A", people=2) == "Booked A for 2"
    with pytest.raises(ToolCallFailed, match=r"(?s)book_table: .*people"):
        call_tool("book_table", tools, restaurant="A", people="two")
    with pytest.raises(KeyError, match="no tool named 'nope'"):
        call_tool("nope", tools)


async def test_a_run_without_calls_says_so() -> None:
    agent = Agent(ScriptedModel([reply("Hi.")]), tools=Registry())
    result = await agent.run("hello")
    assert "# (the run made no tool calls)" in result.to_code()


def test_a_denied_calls_code_stays_commented_whatever_its_line_ends() -> None:
    """Python ends a line at a bare CR too: denied code must not run when the cell runs."""
    from nb_tools.agent._replay import ReplayedCall, calls_as_code

    code = "x = 1\rraise SystemExit('ran')\r\nimport os\x0cos.remove('f')"
    text = calls_as_code(
        [ReplayedCall(id="c", name="python", arguments="{}", status="denied", code=code)]
    )
    exec(compile(text, "<to_code>", "exec"), {})  # nothing runs: every line a comment
