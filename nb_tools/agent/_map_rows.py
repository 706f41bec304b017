"""The rows of :func:`nb_tools.map`: the inputs read as a table, each row's prompt rendered
(every problem found before any request), and what a finished row holds."""

from __future__ import annotations

import dataclasses
import hashlib
import string
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

RESULT_COLUMNS = ("output", "status", "error", "turns", "cost_usd")
"""The columns :func:`nb_tools.map` adds after the input's (fields of a typed output come
right after ``output``)."""

STATUSES = ("ok", "error", "denied", "budget", "skipped", "stopped")

INPUT_COLUMN = "input"
"""The one column of a list of strings."""

Prompt = str | Callable[[Mapping[str, Any]], "str | None"]


@dataclass(frozen=True, kw_only=True)
class Table:
    """The inputs as rows of named values, in input order; ``index`` is a DataFrame's own
    index (kept for the result), else None."""

    columns: tuple[str, ...]
    rows: tuple[Mapping[str, Any], ...]
    index: Any = None


def is_frame(value: object) -> bool:
    """A pandas DataFrame, told without importing pandas."""
    return type(value).__module__.startswith("pandas") and hasattr(value, "to_dict")


def read_inputs(inputs: Any) -> Table:
    """A DataFrame, a list of dicts or a list of strings as a :class:`Table`."""
    if is_frame(inputs):
        columns = tuple(str(c) for c in inputs.columns)
        if len(set(columns)) != len(columns):
            raise ValueError("nb_tools.map: the DataFrame has duplicate column names")
        records = inputs.to_dict("records")
        rows = tuple({str(k): v for k, v in r.items()} for r in records)
        return Table(columns=columns, rows=rows, index=inputs.index)
    if isinstance(inputs, str | bytes | Mapping) or not isinstance(inputs, Sequence):
        raise TypeError(
            f"nb_tools.map: inputs must be a pandas DataFrame, a list of dicts or a list of "
            f"strings, got {type(inputs).__name__}"
        )
    if all(isinstance(x, str) for x in inputs):
        return Table(columns=(INPUT_COLUMN,), rows=tuple({INPUT_COLUMN: x} for x in inputs))
    columns: dict[str, None] = {}
    for i, item in enumerate(inputs):
        if not isinstance(item, Mapping):
            raise TypeError(
                f"nb_tools.map: inputs[{i}] is a {type(item).__name__}; a list of inputs "
                "holds only dicts or only strings"
            )
        columns.update((str(k), None) for k in item)
    rows = tuple({str(k): v for k, v in item.items()} for item in inputs)
    return Table(columns=tuple(columns), rows=rows)


def template_fields(template: str) -> list[str]:
    """The column names a ``str.format`` template reads (``{a}``, ``{a.b}``, ``{a[0]}``
    all read ``a``)."""
    names: list[str] = []
    for _, field, _, _ in string.Formatter().parse(template):
        if field is None:
            continue
        root = field.split(".", 1)[0].split("[", 1)[0]
        if root == "" or root.isdigit():
            raise ValueError(
                f"nb_tools.map: the prompt template has a positional field {{{field}}}; "
                "name a column ({ticket}), or write {{ and }} for literal braces"
            )
        if root not in names:
            names.append(root)
    return names


def render_prompts(prompt: Prompt, table: Table) -> list[str | None]:
    """Each row's prompt (None: the callable skipped the row). A template naming a column
    the inputs lack fails here, before any request, naming the column."""
    if callable(prompt):
        rendered: list[str | None] = []
        for i, row in enumerate(table.rows):
            text = prompt(row)
            if text is not None and not isinstance(text, str):
                raise TypeError(
                    f"nb_tools.map: the prompt callable returned a {type(text).__name__} "
                    f"for row {i}; return a str (or None to skip the row)"
                )
            rendered.append(text)
        return rendered
    if not isinstance(prompt, str):
        raise TypeError("nb_tools.map: prompt must be a str template or a callable of the row")
    fields = template_fields(prompt)
    missing = [f for f in fields if f not in table.columns]
    if missing:
        raise ValueError(
            f"nb_tools.map: the prompt names {', '.join('{' + m + '}' for m in missing)} but "
            f"the inputs have no such column (columns: {', '.join(table.columns) or 'none'}); "
            "write {{ and }} for literal braces"
        )
    out: list[str | None] = []
    for i, row in enumerate(table.rows):
        absent = [f for f in fields if f not in row]
        if absent:
            raise ValueError(f"nb_tools.map: row {i} has no value for {', '.join(absent)}")
        out.append(prompt.format_map(row))
    return out


def row_key(prompt: str | None) -> str:
    """What identifies a row's work in a checkpoint, with its position: its prompt."""
    return hashlib.sha256((prompt or "").encode()).hexdigest()[:16]


@dataclass(frozen=True, kw_only=True)
class RowOutcome:
    """How one row ended. ``output_json``: the typed output as JSON data (for the
    checkpoint and the field columns); ``messages``: its conversation."""

    status: str
    output: Any = None
    output_json: Any = None
    error: str | None = None
    turns: int = 0
    cost_usd: float = 0.0
    messages: tuple[Any, ...] = ()
    restored: bool = False
    usage: Any = None
    """The row's tokens (a :class:`~nb_tools.model.Usage`), when known."""


def jsonable(value: Any) -> Any:
    """A typed output as JSON data: a pydantic model's ``model_dump(mode="json")``, a
    dataclass's fields, a mapping as a dict."""
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return dump(mode="json")
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    if isinstance(value, Mapping):
        return dict(value)
    return value
