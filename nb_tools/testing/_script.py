"""The script format shared by ScriptedModel (in-process) and the fake Messages API server
(real HTTP): what the model "says" turn by turn, with no network and no API key."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeAlias

from nb_tools.model import ModelRequest, Usage


@dataclass(frozen=True, kw_only=True)
class ScriptedCall:
    """A tool call the scripted model makes. ``raw`` (the exact argument text, e.g. with a
    duplicate key) wins over ``arguments``."""

    name: str
    arguments: Mapping[str, Any] = field(default_factory=dict)
    raw: str | None = None
    id: str | None = None

    @property
    def argument_text(self) -> str:
        return self.raw if self.raw is not None else json.dumps(dict(self.arguments))


@dataclass(frozen=True, kw_only=True)
class Reply:
    """One model turn: text, then tool calls. ``stop_reason`` defaults to "tool_use" when
    there are calls, else "end_turn". ``chunk_delay`` (seconds) spaces streamed chunks."""

    text: str = ""
    calls: tuple[ScriptedCall, ...] = ()
    stop_reason: str | None = None
    usage: Usage | None = None
    chunk_delay: float = 0.0
    thinking: str | None = None
    """Extended thinking before the text (signed by the fake server)."""
    redacted_thinking: str | None = None
    blocks: tuple[Mapping[str, Any], ...] = ()
    """API content blocks streamed before the text, as given (server_tool_use,
    web_search_tool_result, compaction, ...)."""
    stop_details: Mapping[str, Any] | None = None
    cut_last_call: bool = False
    """Stream only the first half of the last call's arguments (a call cut by max_tokens)."""
    container: Mapping[str, Any] | None = None
    """The code-execution container the reply says it used (``{"id", "expires_at"}``)."""
    raw_sse: bytes | None = None
    """A recorded stream served byte for byte instead (the fake server only): replays the
    API's own responses (tests/model/fixtures) inside a tool loop."""

    @property
    def effective_stop_reason(self) -> str:
        return self.stop_reason or ("tool_use" if self.calls else "end_turn")


@dataclass(frozen=True, kw_only=True)
class Fault:
    """A failure the fake server injects instead of a reply: an HTTP ``status`` (429, 500,
    529, ...) answered ``times`` times in a row, or, with ``cut_after`` set, a stream that
    is cut after that many SSE events."""

    status: int | None = None
    times: int = 1
    cut_after: int | None = None
    message: str = "injected fault"


Responder: TypeAlias = Callable[[ModelRequest], Reply]
Step: TypeAlias = Reply | Fault | Responder
Script: TypeAlias = Sequence[Step]


def reply(text: str = "", *calls: ScriptedCall, **kwargs: Any) -> Reply:
    """``reply("Let me look.", call("read_file", file_path="a.py"))``."""
    return Reply(text=text, calls=tuple(calls), **kwargs)


def call(
    name: str,
    arguments: Mapping[str, Any] | str | None = None,
    /,
    *,
    raw: str | None = None,
    id: str | None = None,
    **kwargs: Any,
) -> ScriptedCall:
    """``call("get_weather", city="Paris")`` or ``call("f", raw='{"a": 1, "a": 2}')``.

    Keyword arguments are the tool's arguments, except ``raw`` (the exact argument text)
    and ``id`` (the call's id). To script arguments named ``raw`` or ``id``, pass them in a
    mapping: ``call("lookup", {"id": 7, "raw": True}, id="c1")`` (``name`` works either
    way). A string in that place is the raw text."""
    if isinstance(arguments, str):
        if raw is not None:
            raise TypeError("call(): the raw text is given twice (positionally and as raw=)")
        raw, arguments = arguments, None
    merged = dict(arguments or {})
    both = sorted(set(merged) & set(kwargs))
    if both:
        raise TypeError(
            f"call(): argument(s) {', '.join(both)} given in the mapping and as keywords"
        )
    merged.update(kwargs)
    return ScriptedCall(name=name, arguments=merged, raw=raw, id=id)
