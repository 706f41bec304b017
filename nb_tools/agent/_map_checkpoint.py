"""The checkpoint of :func:`nb_tools.map`: one JSON line per finished row, appended and
flushed as the row finishes, so an interrupt or a kernel restart loses no finished row.

A line: ``{"row": 3, "key": "<hash of its prompt>", "status": "ok", "output": {...},
"error": null, "turns": 2, "cost_usd": 0.0012, "tokens": {"input_tokens": ...},
"messages": [...]}``. A later run with the same checkpoint takes a row whose position and
prompt match a line with status "ok" or "denied" from it and sends no request for it; a
row that ended in "error" is run again (its newer line wins).

With ``backend="batch"`` two more kinds of line record the batches: ``{"batch": "<id>",
"requests": {"<custom_id>": {"row": 3, "key": "...", "hash": "...", "messages": [...],
"cost_usd": 0.001}}}`` when a batch is created (each request's row, a hash of its params,
the conversation it continues and the row's cost so far), and ``{"batch_done": "<id>"}``
once its results are handed out. A batch with no ``batch_done`` line is pending: a later
run polls it instead of sending its requests again (:mod:`nb_tools.agent._map_batch`).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import IO, Any

from nb_tools.agent._map_rows import RowOutcome
from nb_tools.model import Usage

FINAL = frozenset({"ok", "denied"})
"""Statuses a resumed run keeps; other rows run again."""
TOKENS = (
    "input_tokens",
    "output_tokens",
    "cache_creation_input_tokens",
    "cache_read_input_tokens",
)
"""The token counts a row's line keeps (for its conversation's footer when restored)."""
LINE_STARTS = (b'{"row"', b'{"batch"', b'{"batch_done"')
"""How every line a map writes starts (``json.dumps`` of its dict, keys in this order)."""


class Checkpoint:
    """Reads the rows a checkpoint file holds and appends finished ones.

    The file is untrusted input: a line is only data (a row's status, output, turns,
    cost and conversation; a batch's requests), never a setting, and a file that is not a
    map's checkpoint is refused before anything is read from it or written to it."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._file: IO[str] | None = None
        self._check()

    def _check(self) -> None:
        """Refuse a path that is not a map's checkpoint (a data file given by mistake would
        otherwise get lines appended to it)."""
        if self.path.is_dir():
            raise ValueError(
                f"nb_tools.map: checkpoint {self.path} is a folder; give a file path "
                "(e.g. triage.jsonl)"
            )
        if not self.path.exists():
            return
        with self.path.open("rb") as f:
            for n, raw in enumerate(f, 1):
                line = raw.strip()
                if line and not line.startswith(LINE_STARTS):
                    raise ValueError(
                        f"nb_tools.map: checkpoint {self.path} is not a map checkpoint (line "
                        f"{n} is not a line a map writes); nothing was read from it or "
                        "written to it. Give a new path, or the file an earlier map wrote"
                    )

    def read(self) -> dict[tuple[int, str], dict[str, Any]]:
        """The finished rows recorded, by (position, key); the last line of a row wins. A
        line cut short by a crash is ignored."""
        found: dict[tuple[int, str], dict[str, Any]] = {}
        if not self.path.exists():
            return found
        with self.path.open(encoding="utf-8", errors="replace") as f:
            for line in f:
                try:
                    data = json.loads(line)
                    if not isinstance(data, dict) or "row" not in data:
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
        with self.path.open(encoding="utf-8", errors="replace") as f:
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
            cut = self.path.exists() and _ends_unfinished(self.path)
            self._file = self.path.open("a", encoding="utf-8")
            if cut:  # a line cut short by a crash stays one (ignored) line of its own
                self._file.write("\n")
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
            "tokens": {k: getattr(outcome.usage, k) for k in TOKENS} if outcome.usage else None,
            "messages": encode_messages(outcome.messages),
        }
        self._append(line)

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


def _ends_unfinished(path: Path) -> bool:
    with path.open("rb") as f:
        f.seek(0, os.SEEK_END)
        if f.tell() == 0:
            return False
        f.seek(-1, os.SEEK_END)
        return f.read(1) != b"\n"


def unreadable(path: Path, row: int, err: Exception) -> str:
    """The notice for a row whose checkpoint line could not be read (it runs again)."""
    return (
        f"nb_tools.map: checkpoint {path}: the line of row {row} could not be read "
        f"({type(err).__name__}: {err}); the row runs again"
    )


def restore(data: dict[str, Any], parse: Any) -> RowOutcome:
    """A recorded row as an outcome; ``parse`` turns the output's JSON back into the typed
    value (None: keep the JSON)."""
    from nb_tools.agent._persist import decode_messages

    output_json = data.get("output")
    output = output_json
    if parse is not None and output_json is not None:
        output = parse(json.dumps(output_json))  # validated as the run's own answer is
    error = data.get("error")
    if error is not None and not isinstance(error, str):
        raise ValueError("its error is not text")
    cost = float(data.get("cost_usd") or 0.0)
    tokens = data.get("tokens")
    counts = {k: int(tokens.get(k) or 0) for k in TOKENS} if isinstance(tokens, dict) else {}
    return RowOutcome(
        status=str(data["status"]),
        output=output,
        output_json=output_json,
        error=error,
        turns=int(data.get("turns") or 0),
        cost_usd=cost,
        messages=tuple(decode_messages(data.get("messages") or [])),
        restored=True,
        usage=Usage(**counts, cost_usd=cost),
    )
