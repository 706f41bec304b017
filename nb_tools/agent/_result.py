"""How a run ended: :class:`RunResult`, the value ``Agent.run`` returns and
``RunFinished`` carries (beside the events, which name it)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from nb_tools.agent._journal import RestoreReport, RunChange
from nb_tools.agent._journal import restore as restore_changes
from nb_tools.agent._replay import ReplayedCall, calls_as_code
from nb_tools.model import Message, Usage
from nb_tools.tool._sync import run_blocking


@dataclass(frozen=True, kw_only=True, repr=False)
class RunResult:
    """How a run ended. ``text`` is the last assistant text of the run, ``messages`` the
    whole conversation after it, ``usage`` this run's tokens. ``stop_reason`` is the
    model's ("end_turn", "max_tokens", "stop_sequence", "refusal", …) or the loop's:
    "max_turns", "budget", "stopped" (:meth:`Agent.stop` or a cancellation),
    "stopped_after_turn" (``Agent.stop(after_turn=True)``: every call answered), "error"
    (see ``error``)."""

    text: str
    messages: tuple[Message, ...]
    usage: Usage
    stop_reason: str
    error: str | None = None
    turns: int = 0
    system: str | None = None  # the system prompt in force (saved with transcripts)
    output: Any = None
    """With ``run(prompt, output=T)``: the validated ``T`` the run ended with (None when it
    ended otherwise: a stop, the turn limit, an API error)."""
    calls: tuple[ReplayedCall, ...] = ()  # the run's finished tool calls, in order
    changes: tuple[RunChange, ...] = ()  # what they changed (:mod:`nb_tools.agent._journal`)

    def __repr__(self) -> str:
        """One line: how the run ended and how much it holds, not every message (a field
        by field repr printed the whole conversation, and ``asyncio.run`` formats the
        finished task's result twice on Python 3.11 as it puts the Ctrl-C handler back,
        so each run paid for a repr that grew with the conversation)."""
        parts = [f"stop_reason={self.stop_reason!r}", f"turns={self.turns}"]
        parts.append(f"text={_short(self.text)}")
        if self.error is not None:
            parts.append(f"error={_short(self.error)}")
        if self.output is not None:
            parts.append(f"output=<{type(self.output).__name__}>")
        parts += [
            f"messages={len(self.messages)}",
            f"calls={len(self.calls)}",
            f"changes={len(self.changes)}",
            f"usage={self.usage!r}",
        ]
        return f"RunResult({', '.join(parts)})"

    def restore(self, only: Sequence[RunChange] | None = None) -> RestoreReport:
        """Put back what this run changed, newest first: files as they were before the run
        (a file the run created is removed), refusing, with why, where a file changed since.
        Code run by ``python`` and calls whose effects are not tracked are listed as not
        undoable. ``only``: just these changes. (In a running event loop: ``arestore``.)"""
        return run_blocking(self.arestore(only), name="nb_tools-restore")

    async def arestore(self, only: Sequence[RunChange] | None = None) -> RestoreReport:
        """:meth:`restore` for async code (cell edits of the open notebook need the loop)."""
        return await restore_changes(self.changes, only)

    def to_code(self) -> str:
        """Python that re-does this run's tool calls in order, without the model: each call
        that ran as ``call_tool("name", arg=...)`` (``python`` calls as their code), failed
        and denied ones as comments (:mod:`nb_tools.agent._replay`)."""
        return calls_as_code(self.calls, header=f"stop reason: {self.stop_reason}")


def _short(text: str, limit: int = 80) -> str:
    """``text``'s repr, cut to about ``limit`` characters with "..." where it was cut."""
    return repr(text) if len(text) <= limit else repr(text[:limit]) + "..."


__all__ = ["RunResult"]
