"""A conversation stored once across a notebook's transcripts.

Each run's transcript keeps only the messages its run added (``conversation.messages``)
with ``previous``, the id of the run whose conversation it continued, and ``start``, how
many messages came before. Following ``previous`` from any run rebuilds the whole
conversation; a transcript without ``previous`` (one written before chaining, or a run
that did not continue the kernel's last one) holds all of it. The kernel keeps a
:class:`ConversationRef` per run: the id and the message objects the agent holds anyway.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from nb_tools.agent._persist import by_id, full_messages

ID_CHARS = 16


@dataclass(frozen=True, kw_only=True)
class ConversationRef:
    """The conversation as one run left it: its id and the messages (the objects the agent
    holds, so keeping them costs a tuple of references), and the cells that show the runs
    of its chain (front ends name the cell a run is in; unnamed cells are left out)."""

    id: str
    messages: tuple[Any, ...]
    cells: tuple[str, ...] = ()


def conversation_id(previous: str | None, system: str | None, added: Sequence[Any]) -> str:
    """The id of a run's conversation: a hash of the run it continued and what it added."""
    text = json.dumps(
        [previous, system, list(added)], sort_keys=True, separators=(",", ":"), default=str
    )
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:ID_CHARS]


def continues(previous: ConversationRef | None, messages: Sequence[Any]) -> bool:
    """Whether ``messages`` starts with exactly the messages ``previous`` ended with (the
    same objects: a compaction, a rewritten prompt or a new conversation is not)."""
    if previous is None or len(messages) < len(previous.messages):
        return False
    return all(a is b for a, b in zip(previous.messages, messages, strict=False))


def shown_in(ref: ConversationRef | None, cell: str | None) -> bool:
    """Whether a run of ``ref``'s chain is shown in ``cell`` (a run there is about to replace
    that transcript, so a later run must not refer to it)."""
    return ref is not None and cell is not None and cell in ref.cells


def self_contained(
    runs: Sequence[Mapping[str, Any]], pool: Iterable[Mapping[str, Any]] = ()
) -> list[dict[str, Any]]:
    """``runs`` such that each one's conversation can be rebuilt from ``runs`` alone: a run
    whose ``previous`` is not among them gets its whole conversation (from ``runs`` and
    ``pool``, the other transcripts known)."""
    ids = by_id(runs)
    known = by_id([*pool, *runs])
    out: list[dict[str, Any]] = []
    for run in runs:
        conv = run.get("conversation")
        copy = dict(run)
        before = conv.get("previous") if isinstance(conv, Mapping) else None
        if isinstance(conv, Mapping) and isinstance(before, str) and before not in ids:
            system, messages = full_messages(run, known)
            copy["conversation"] = {
                **conv,
                "system": system,
                "previous": None,
                "start": 0,
                "messages": messages,
            }
        out.append(copy)
    return out
