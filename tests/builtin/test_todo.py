"""todo_write: replaces the list, renders a checklist, warns on several in progress."""

from __future__ import annotations

import json

from nb_tools.builtin._todo import Todo, TodoWriteTool


def call(tool: TodoWriteTool, todos: list[dict[str, str]]) -> str:
    result = tool.call(json.dumps({"todos": todos}))
    assert not result.is_error, result.content
    return result.content


def test_renders_a_checklist_and_keeps_the_list() -> None:
    tool = TodoWriteTool()
    text = call(
        tool,
        [
            {"content": "Read the parser", "status": "completed"},
            {"content": "Fix the bug", "status": "in_progress", "id": "fix"},
            {"content": "Add a test", "status": "pending"},
        ],
    )
    assert text == (
        "Todo list updated (3 tasks: 1 completed, 1 in progress, 1 pending):\n"
        "[x] Read the parser\n"
        "[~] Fix the bug\n"
        "[ ] Add a test"
    )
    assert tool.todos == [
        Todo(id="1", content="Read the parser", status="completed"),
        Todo(id="fix", content="Fix the bug", status="in_progress"),
        Todo(id="3", content="Add a test", status="pending"),
    ]


def test_each_call_replaces_the_list() -> None:
    tool = TodoWriteTool()
    call(tool, [{"content": "a", "status": "pending"}, {"content": "b", "status": "pending"}])
    call(tool, [{"content": "b", "status": "completed"}])
    assert [t.content for t in tool.todos] == ["b"]
    assert call(tool, []) == "Todo list cleared (no tasks)."
    assert tool.todos == []


def test_warns_when_several_are_in_progress() -> None:
    tool = TodoWriteTool()
    text = call(
        tool,
        [{"content": "a", "status": "in_progress"}, {"content": "b", "status": "in_progress"}],
    )
    assert text.endswith(
        "Note: 2 tasks are in_progress; keep exactly one in progress and mark the others "
        "pending or completed."
    )


def test_invalid_input_is_an_error_and_keeps_the_old_list() -> None:
    tool = TodoWriteTool()
    call(tool, [{"content": "keep me", "status": "pending"}])
    bad = tool.call(json.dumps({"todos": [{"content": "x", "status": "done"}]}))
    assert bad.is_error and "status" in bad.content
    empty = tool.call(json.dumps({"todos": [{"content": "  ", "status": "pending"}]}))
    assert empty.is_error and "task 1 has empty content" in empty.content
    assert [t.content for t in tool.todos] == ["keep me"]


def test_on_change_sees_the_new_list() -> None:
    seen: list[list[Todo]] = []
    tool = TodoWriteTool(on_change=seen.append)
    call(tool, [{"content": "a", "status": "pending"}])
    assert seen == [[Todo(id="1", content="a", status="pending")]]


def test_info() -> None:
    info = TodoWriteTool().info()
    assert info.name == "todo_write"
    assert not info.requires_approval
    assert info.parameters is not None
    assert info.parameters.to_dict()["required"] == ["todos"]
