"""Helpers shared by the agent tests: the conversation as the model sees it, and an
event recorder."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from nb_tools.agent import Event
from nb_tools.model import (
    ImageBlock,
    Message,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
)


def wire(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """``messages`` as the model sees them (result metadata is never sent)."""
    out: list[dict[str, Any]] = []
    for m in messages:
        blocks: list[dict[str, Any]] = []
        for b in m.content:
            if isinstance(b, TextBlock):
                blocks.append({"type": "text", "text": b.text})
            elif isinstance(b, ToolUseBlock):
                blocks.append(
                    {"type": "tool_use", "id": b.id, "name": b.name, "input": b.arguments}
                )
            elif isinstance(b, ToolResultBlock):
                r = b.result
                blocks.append(
                    {
                        "type": "tool_result",
                        "tool_use_id": r.tool_use_id,
                        "content": r.content,
                        "is_error": r.is_error,
                    }
                )
            elif isinstance(b, ImageBlock):
                blocks.append({"type": "image", "media_type": b.part.media_type})
        out.append({"role": m.role, "content": blocks})
    return out


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": text}]}


def assistant(text: str = "", *calls: tuple[str, str, str]) -> dict[str, Any]:
    blocks: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    blocks += [{"type": "tool_use", "id": i, "name": n, "input": a} for i, n, a in calls]
    return {"role": "assistant", "content": blocks}


def results(*items: tuple[str, str, bool]) -> dict[str, Any]:
    return {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": i, "content": c, "is_error": e}
            for i, c, e in items
        ],
    }


class Recorder:
    """Collects events; ``kinds()`` gives their type names in order."""

    def __init__(self) -> None:
        self.events: list[Event] = []

    def __call__(self, event: Event) -> None:
        self.events.append(event)

    def kinds(self) -> list[str]:
        return [type(e).__name__ for e in self.events]

    def of(self, kind: type) -> list[Any]:
        return [e for e in self.events if isinstance(e, kind)]
