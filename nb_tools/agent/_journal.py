"""What a run changed, and the way back: :attr:`RunResult.changes` and
:meth:`RunResult.restore`.

A tool that can take its change back puts an :class:`Undo` (or a list of them) in its
result's ``metadata["undo"]`` (the built-in file writers do: the file's bytes before the
call, and a digest of what it wrote). Other calls that could change something are listed
as they are, not undoable: code run by ``python`` (its effects are unknown), a shell call,
an MCP or user tool with side effects. Read-only calls change nothing and are left out.

Restoring goes back newest first. A change is only taken back while what it wrote is
still there: a file edited since the run is refused with why, never overwritten.
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from nb_tools.tool import RevertRefused, Undo

__all__ = ["RestoreReport", "RunChange", "changes_of", "restore"]


@dataclass(frozen=True, kw_only=True)
class RunChange:
    """One thing a run changed: by ``tool`` (call ``call_id``) at ``path``. ``undo`` is
    ``None`` when it cannot be taken back (``note`` says why)."""

    call_id: str
    tool: str
    path: str
    kind: str
    undo: Undo | None = None
    note: str = ""

    @property
    def undoable(self) -> bool:
        return self.undo is not None


@dataclass(kw_only=True)
class RestoreReport:
    """What :func:`restore` did: changes taken back, refused (with why), and not undoable."""

    restored: list[RunChange] = field(default_factory=list)
    refused: list[tuple[RunChange, str]] = field(default_factory=list)
    not_undoable: list[RunChange] = field(default_factory=list)

    def __str__(self) -> str:
        lines = [f"restored {c.kind} {c.path}" for c in self.restored]
        lines += [f"not restored: {c.path}: {why}" for c, why in self.refused]
        lines += [f"not undoable: {c.tool} ({c.note})" for c in self.not_undoable]
        return "\n".join(lines) or "nothing to restore: the run changed nothing"


def changes_of(
    call_id: str, tool: str, metadata: Any, *, code: bool, read_only: bool
) -> list[RunChange]:
    """The journal entries of one call that ran: its undos, else one entry saying what it
    may have changed (``code``: it ran code; ``read_only``: nothing)."""
    undo = (metadata or {}).get("undo") if isinstance(metadata, dict) else None
    # (Undo is a runtime-checkable Protocol: checking None against it costs ~20 us a call)
    listed = undo if isinstance(undo, list | tuple) else [] if undo is None else [undo]
    undos = [u for u in listed if isinstance(u, Undo)]
    if undos:
        return [
            RunChange(call_id=call_id, tool=tool, path=u.path, kind=u.kind, undo=u) for u in undos
        ]
    if read_only:
        return []
    said = (metadata or {}).get("undo_note") if isinstance(metadata, dict) else None
    if isinstance(said, str) and said:  # the tool says how its change is taken back
        return [RunChange(call_id=call_id, tool=tool, path="", kind="ran", note=said)]
    if code:
        note = "code run in the kernel: its effects are not tracked, so it cannot be undone"
    else:
        note = "its effects are not tracked, so it cannot be undone"
    return [RunChange(call_id=call_id, tool=tool, path="", kind="ran", note=note)]


async def restore(
    changes: Sequence[RunChange], only: Sequence[RunChange] | None = None
) -> RestoreReport:
    """Take ``changes`` back, newest first (``only``: just these of them)."""
    report = RestoreReport()
    for change in reversed(list(changes)):
        if only is not None and change not in only:
            continue
        if change.undo is None:
            report.not_undoable.append(change)
            continue
        try:
            out = change.undo.revert()
            if inspect.isawaitable(out):
                await out
        except RevertRefused as exc:
            report.refused.append((change, str(exc)))
            continue
        report.restored.append(change)
    return report
