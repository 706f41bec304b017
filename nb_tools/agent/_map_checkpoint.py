"""The checkpoint of :func:`nb_tools.map`: one JSON line per finished row, appended and
flushed as the row finishes, so an interrupt or a kernel restart loses no finished row.

A line: ``{"row": 3, "key": "<hash of its prompt>", "status": "ok", "output": {...},
"error": null, "turns": 2, "cost_usd": 0.0012, "messages": [...]}``. A later run with the
same checkpoint takes a row whose position and prompt match a line with status "ok" or
"denied" from it and sends no request for it; a row that ended in "error" is run again
(its newer line wins).

With ``backend="batch"`` two more kinds of line record the batches: ``{"batch": "<id>",
"requests": {"<custom_id>": {"row": 3, "key": "...", "hash": "...", "messages": [...]}}}``
when a batch is created (each request's row, a hash of its params and the conversation it
continues), and ``{"batch_done": "<id>"}`` once its results are handed out. A batch with no
``batch_done`` line is pending: a later run polls it instead of sending its requests again
(:mod:`nb_tools.agent._map_batch`).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import IO, Any

from nb_tools.agent._map_rows import RowOutcome

FINAL = frozenset({"ok", "denied"})
"""Statuses a resumed run keeps; other rows run again."""


class Checkpoint:
    """Reads the rows a checkpoint file holds and appends finished ones."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._file: IO[str] | None = None

    def read(self) -> dict[tuple[int, str], dict[str, Any]]:
        """The finished rows recorded, by (position, key); the last line of a row wins. A
        line cut short by a crash is ignored."""
        found: dict[tuple[int, str], dict[str, Any]] = {}
        if not self.path.exists():
            return found
        with self.path.open(encoding="utf-8") as f:
            for line in f:
                try:
                    data = json.loads(line)
                    if "row" not in data:
                        continue  # a batch line
                    key = (int(data["row"]), str(data["key"]))
                except (ValueError, KeyError, TypeError):
                    continue
                found[key] = data
        return {k: v for k, v in found.items() if v.get("status") in FINAL}

    def pending_batches(self) -> dict[str, dict[str, dict[str, Any]]]:
        """The batches recorded without a ``batch_done`` line: id -> custom_id -> record."""
        pending: dict[str, dict[str, dict[str, Any]]] = {}
        if not self.path.exists():
            return pending
        with self.path.open(encoding="utf-8") as f:
            for line in f:
                try:
                    data = json.loads(line)
                except ValueError:
                    continue
                if not isinstance(data, dict):
                    continue
                if isinstance(data.get("batch"), str) and isinstance(data.get("requests"), dict):
                    pending[data["batch"]] = data["requests"]
                elif isinstance(data.get("batch_done"), str):
                    pending.pop(data["batch_done"], None)
        return pending

    def write_batch(self, batch_id: str, requests: dict[str, dict[str, Any]]) -> None:
        """Record a batch just created (see the module docstring)."""
        self._append({"batch": batch_id, "requests": requests})

    def batch_done(self, batch_id: str) -> None:
        self._append({"batch_done": batch_id})

    def _append(self, line: dict[str, Any]) -> None:
        if self._file is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._file = self.path.open("a", encoding="utf-8")
        self._file.write(json.dumps(line, default=str) + "\n")
        self._file.flush()

    def write(self, row: int, key: str, outcome: RowOutcome) -> None:
        from nb_tools.agent._persist import encode_messages

        line = {
            "row": row,
            "key": key,
            "status": outcome.status,
            "output": outcome.output_json,
            "error": outcome.error,
            "turns": outcome.turns,
            "cost_usd": outcome.cost_usd,
            "messages": encode_messages(outcome.messages),
        }
        self._append(line)

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


def restore(data: dict[str, Any], parse: Any) -> RowOutcome:
    """A recorded row as an outcome; ``parse`` turns the output's JSON back into the typed
    value (None: keep the JSON)."""
    from nb_tools.agent._persist import decode_messages

    output_json = data.get("output")
    output = output_json
    if parse is not None and output_json is not None:
        output = parse(json.dumps(output_json))
    return RowOutcome(
        status=str(data["status"]),
        output=output,
        output_json=output_json,
        error=data.get("error"),
        turns=int(data.get("turns") or 0),
        cost_usd=float(data.get("cost_usd") or 0.0),
        messages=tuple(decode_messages(data.get("messages") or [])),
        restored=True,
    )
