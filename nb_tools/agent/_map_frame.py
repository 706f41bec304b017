"""The result of :func:`nb_tools.map` as a pandas DataFrame (pandas imported here only)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from nb_tools.agent._map_rows import RESULT_COLUMNS, RowOutcome, Table
from nb_tools.agent._output import OutputType

_last: list[Any] = [None]


def last_map() -> Any:
    """The table of the last map run in this process: finished, stopped, or cut short by
    an interrupt or a cancellation (rows in flight marked "stopped", the rest "skipped");
    None before any map ended. An interrupted ``await nb_tools.amap(...)`` assigns nothing,
    so its partial table is found here."""
    return _last[0]


def field_names(out: OutputType | None) -> list[str]:
    """The fields of an output type with properties (one column each)."""
    if out is None:
        return []
    props = out.schema.to_dict().get("properties")
    return list(props) if isinstance(props, Mapping) else []


def to_frame(
    table: Table, outcomes: Sequence[RowOutcome], out: OutputType | None, info: Any
) -> Any:
    """The input's columns, ``output``, one column per output field (named as the field,
    or ``output_<field>`` when the input has that column), then status, error, turns,
    cost_usd; ``attrs["nb_tools"]`` is ``info``."""
    import pandas as pd

    data: dict[str, list[Any]] = {c: [row.get(c) for row in table.rows] for c in table.columns}
    data["output"] = [o.output for o in outcomes]
    for name in field_names(out):
        column = name if name not in data and name not in RESULT_COLUMNS else f"output_{name}"
        data[column] = [
            o.output_json.get(name) if isinstance(o.output_json, Mapping) else None
            for o in outcomes
        ]
    data["status"] = [o.status for o in outcomes]
    data["error"] = [o.error for o in outcomes]
    data["turns"] = [o.turns for o in outcomes]
    data["cost_usd"] = [o.cost_usd for o in outcomes]
    frame = pd.DataFrame(data, index=table.index)
    frame.attrs["nb_tools"] = info
    _last[0] = frame
    return frame
