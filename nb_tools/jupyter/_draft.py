"""A tool call's card while the model is still writing it (``ToolArgumentsDelta``).

The card shows what can be read of the arguments so far (:class:`PartialArguments`): for a
writer that streams its input (``Info.eager_input_streaming``) and previews its changes,
the diff of the content written so far, once its path is whole; for any other tool the
arguments so far. What one update sends is bounded (the last lines of the diff, the tail
of a long argument), so a long file costs the same per update as a short one. When the
reply is complete the same card becomes the call's card (approval or result): the widget
stays, only its content changes.
"""

from __future__ import annotations

import json
import time
from typing import Any

from nb_tools.tool import Info, Tool, headline_of, preview_changes
from nb_tools.transcript import PartialArguments, diff_dict, tool_item

DRAFT_STATUS = "writing"
"""The card's badge while the model writes the call."""
DIFF_LINES = 16
"""The lines of a growing diff a draft card shows: those up to the newest added line."""
ARG_TAIL = 600
"""A long argument (the content of a file) shows its last this many characters."""
PREVIEW_SHARE = 10
"""A preview that took t seconds runs again after 10 t at the earliest (a tenth of the
kernel's time at most, however big the file); the card shows the last one meanwhile."""


class Draft:
    """The arguments of one call as they stream, and the card item they make."""

    def __init__(self, call_id: str, name: str, tool: Tool | None) -> None:
        self.reader = PartialArguments()
        self.tool = tool
        info = _info(tool)
        self.headline = headline_of(info)
        self.previews = bool(info is not None and info.eager_input_streaming)
        self._next_preview = 0.0
        self._last_diffs: list[dict[str, Any]] = []
        self.item: dict[str, Any] = {
            **({"headline": self.headline.to_dict()} if self.headline is not None else {}),
            **tool_item(call_id, name, ""),
        }

    def feed(self, piece: str) -> None:
        self.reader.feed(piece)

    def fill(self) -> dict[str, Any]:
        """The card item for the arguments so far."""
        value = self.reader.value()
        if not isinstance(value, dict):
            self.item["arguments"] = _tail(self.reader.text)
            return self.item
        diffs = self._diffs(value)
        self.item["diffs"] = diffs
        if diffs:  # the diff shows the long text (the content): the rest are the options
            value = {k: v for k, v in value.items() if not _long(v)}
        self.item["arguments"] = json.dumps(
            {k: _tail(v) if isinstance(v, str) else v for k, v in value.items()},
            ensure_ascii=False,
        )
        return self.item

    def _diffs(self, value: dict[str, Any]) -> list[dict[str, Any]]:
        """The writer's own preview of the arguments so far (the one the approval card
        shows, computed the same way), cut to the lines around the newest addition."""
        if not self.previews or self.tool is None:
            return []
        head = self.headline
        if head is not None and head.kind == "path" and self.reader.open_key == head.arg:
            return []  # the path is still being written
        now = time.monotonic()
        if now < self._next_preview:  # a costly preview (a big file) runs less often
            return self._last_diffs
        changes = preview_changes(self.tool, json.dumps(value, ensure_ascii=False))
        self._last_diffs = [_window(diff_dict(c)) for c in changes or ()]
        self._next_preview = now + PREVIEW_SHARE * (time.monotonic() - now)
        return self._last_diffs


def _info(tool: Tool | None) -> Info | None:
    try:
        return tool.info() if tool is not None else None
    except Exception:  # a broken info(): the card shows the arguments only
        return None


def _long(value: object) -> bool:
    return isinstance(value, str) and (len(value) > 80 or "\n" in value)


def _tail(text: str) -> str:
    if len(text) <= ARG_TAIL:
        return text
    return f"… ({len(text) - ARG_TAIL:,} characters above) …{text[-ARG_TAIL:]}"


def _window(diff: dict[str, Any]) -> dict[str, Any]:
    """``diff`` cut to the :data:`DIFF_LINES` lines that end at its last added line (where
    the model is writing), after the file header; a hunk line says how many are above."""
    lines = str(diff.get("diff", "")).splitlines()
    head = [line for line in lines[:2] if line.startswith(("---", "+++"))]
    body = lines[len(head) :]
    last = max((i for i, line in enumerate(body) if line.startswith("+")), default=len(body) - 1)
    start = max(0, last + 1 - DIFF_LINES)
    shown = body[start : last + 1]
    above = [f"@@ … {start} line{'s' if start > 1 else ''} above @@"] if start else []
    return {**diff, "diff": "\n".join([*head, *above, *shown]) + "\n"}
