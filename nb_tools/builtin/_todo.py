"""``todo_write``: the model's task list for the current work.

Each call replaces the whole list. The list lives on the tool instance (``.todos``) for the
notebook to render; nothing touches disk, so no approval is needed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from nb_tools.builtin._common import ToolError, parse_args
from nb_tools.tool import Info, Result, Schema

__all__ = ["STATUSES", "Todo", "TodoWriteTool"]

STATUSES = ("pending", "in_progress", "completed")
_MARK = {"pending": "[ ]", "in_progress": "[~]", "completed": "[x]"}

_DESCRIPTION = """\
Create and update a task list for multi-step work, so the user can follow progress. Each \
call replaces the whole list: send every task with its status (pending, in_progress, \
completed). Keep exactly one task in_progress while working, mark a task completed as soon \
as it is done, and add tasks you discover. Skip it for single, trivial tasks."""

PARAMETERS = Schema.object(
    {
        "todos": Schema.array(
            Schema.object(
                {
                    "content": Schema.string("The task, in imperative form."),
                    "status": Schema(
                        type="string", enum=list(STATUSES), description="Where the task stands."
                    ),
                    "id": Schema.string("A stable id for the task (optional)."),
                },
                "content",
                "status",
            ),
            "The complete, updated task list.",
        )
    },
    "todos",
)


@dataclass(frozen=True, kw_only=True)
class Todo:
    id: str
    content: str
    status: str


class TodoWriteTool:
    """The ``todo_write`` tool. ``on_change`` (optional) is called with the new list."""

    def __init__(self, *, on_change: Callable[[list[Todo]], None] | None = None) -> None:
        self.todos: list[Todo] = []
        self.on_change = on_change
        self._info = Info(
            name="todo_write", description=_DESCRIPTION, parameters=PARAMETERS, read_only=True
        )

    def info(self) -> Info:
        return self._info

    def call(self, args: str | bytes) -> Result:
        try:
            items = parse_args("todo_write", PARAMETERS, args)["todos"]
            todos = []
            for i, item in enumerate(items, 1):
                content = item["content"].strip()
                if not content:
                    raise ToolError(f"todo_write: task {i} has empty content; describe the task")
                todos.append(
                    Todo(id=item.get("id") or str(i), content=content, status=item["status"])
                )
        except ToolError as exc:
            return Result.error(str(exc))
        self.todos = todos
        if self.on_change is not None:
            self.on_change(list(todos))
        return Result(content=self.render(), metadata={"todos": [vars(t) for t in todos]})

    def render(self) -> str:
        """The list as a checklist: ``[x]`` completed, ``[~]`` in progress, ``[ ]`` pending."""
        if not self.todos:
            return "Todo list cleared (no tasks)."
        counts = {s: sum(t.status == s for t in self.todos) for s in STATUSES}
        head = (
            f"Todo list updated ({len(self.todos)} task{'s' if len(self.todos) != 1 else ''}: "
            f"{counts['completed']} completed, {counts['in_progress']} in progress, "
            f"{counts['pending']} pending):"
        )
        lines = [head, *(f"{_MARK[t.status]} {t.content}" for t in self.todos)]
        if counts["in_progress"] > 1:
            lines.append(
                f"Note: {counts['in_progress']} tasks are in_progress; keep exactly one in "
                f"progress and mark the others pending or completed."
            )
        return "\n".join(lines)
