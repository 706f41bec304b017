"""Approvals bound to the paths they showed.

A writer's card (its preview) names the resolved target; the person approves that path.
The call itself runs later, after the approval wait, and re-plans from disk. If a symlink
was swapped in meanwhile (``notes.txt`` -> ``.git/hooks/pre-commit``, or a parent folder
replaced by a link), the call would resolve elsewhere. So ``preview`` (and
``is_protected_call``, when no preview was made) *binds* each lexical path of the call to
what it resolved to, and the call refuses to write unless it resolves to exactly that.

Bindings are keyed by the call's canonical arguments and bounded in number (the oldest
go first). A call reads its binding and leaves it in place: two calls of one turn with the
same arguments share one key, and if the first removed the binding the second would run
unbound, writing wherever the path leads by then (a link made in between by another call
of the turn). A newer card replaces the binding. A call that was never previewed binds at
call time (nothing was shown, so there is nothing to hold it to) and the race-free write
(``_atomic``) keeps it there.

A card also binds *what* it showed (``Target.card``, a digest of its ``Change`` list): the
loop makes every card of a turn before any call runs, and a person may approve while the
file changes on disk, so by the time a call runs its file may differ from the one its card
was computed on, and the same arguments may change another place (a patch hunk whose
context now matches earlier, a ``replace_all`` with more hits). When a person approved the
card (``current_grant``; or no grant is known: a direct call), the call re-plans and
refuses unless its change is exactly the card's. Under a policy, a rule or "always allow"
nobody saw a card, and the change is written as planned at call time.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from nb_tools.builtin._common import Args
from nb_tools.tool import Change
from nb_tools.tool._grant import current_grant

__all__ = ["Bindings", "Target", "call_key", "card_digest", "person_saw_card", "verify"]

_LIMIT = 512


@dataclass(frozen=True, kw_only=True)
class Target:
    """One path of a call: as the model wrote it, as it resolved, and whether it is
    protected (as written or as resolved)."""

    raw: str
    path: Path
    protected: bool
    card: str | None = None  # digest of the changes its card showed (``card_digest``)


def card_digest(changes: Iterable[Change]) -> str:
    """A digest of what a card shows: each change's path and kind and its diff's hunks
    (removed, added and context lines) without their line numbers, so an earlier change
    elsewhere in the file, which only moves the hunks, keeps the card's digest, while a
    hunk that now lands in another place (other context) or one more hunk (a
    ``replace_all`` with more hits, a whole-file write that would undo a change made
    since) does not. A binary change, whose card shows no lines, binds its bytes."""
    items = [
        [c.path, c.kind, c.before, c.after] if c.binary else [c.path, c.kind, _hunks(c)]
        for c in changes
    ]
    return hashlib.sha256(json.dumps(items, ensure_ascii=False).encode("utf-8")).hexdigest()


def _hunks(change: Change) -> list[str]:
    return ["@@" if line.startswith("@@") else line for line in change.diff().splitlines()]


def person_saw_card() -> bool:
    """Whether the running call was approved by a person looking at its card, or may have
    been (no grant known: a direct call, fail closed). A policy, a rule or an "always
    allow" rule approved without showing the card."""
    grant = current_grant()
    if grant is None:
        return True
    return grant.kind == "person"


def call_key(args: Args) -> str:
    """The arguments in one canonical spelling (key order and whitespace do not matter)."""
    if isinstance(args, Mapping):
        return json.dumps(args, sort_keys=True, ensure_ascii=False)
    text = args.decode("utf-8", "replace") if isinstance(args, bytes) else args
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return text
    if isinstance(value, dict):
        return json.dumps(value, sort_keys=True, ensure_ascii=False)
    return text


class Bindings:
    """Thread-safe, bounded map from a call's key to the targets its approval saw."""

    def __init__(self, limit: int = _LIMIT) -> None:
        self._items: OrderedDict[str, tuple[Target, ...]] = OrderedDict()
        self._lock = threading.Lock()
        self._limit = limit

    def bind(
        self, key: str, targets: tuple[Target, ...], *, replace: bool = False
    ) -> tuple[Target, ...]:
        """Record ``targets`` and return the binding in force. A preview (the card) binds
        with ``replace``: the newest card is what a person approves. Other looks
        (``is_protected_call``) bind only a key that is not bound yet."""
        with self._lock:
            if key in self._items and not replace:
                self._items.move_to_end(key)
                return self._items[key]
            self._items[key] = targets
            while len(self._items) > self._limit:
                self._items.popitem(last=False)
            return targets

    def peek(self, key: str) -> tuple[Target, ...] | None:
        with self._lock:
            return self._items.get(key)

    def take(self, key: str) -> tuple[Target, ...] | None:
        """The binding a call runs under. It stays: an identical call of the same turn
        (same key) is held to it too."""
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
            return self._items.get(key)

    def __len__(self) -> int:
        with self._lock:
            return len(self._items)


def verify(
    tool: str,
    bound: tuple[Target, ...] | None,
    now: tuple[Target, ...],
    display: Callable[[Path], str],
) -> None:
    """Raise ``ValueError`` unless every target of ``now`` resolves where the binding said
    (and is protected only if it was then) and, where both carry a card digest and a
    person saw the card, makes the change the card showed. ``bound is None``: nothing was
    shown."""
    if bound is None:
        return
    seen = {t.raw: t for t in bound}
    for target in now:
        then = seen.get(target.raw)
        if then is None:
            raise ValueError(
                f"{tool}: {target.raw!r} was not among the paths checked when the call was "
                f"approved; nothing was written. Make the call again"
            )
        if then.path != target.path:
            raise ValueError(
                f"{tool}: {target.raw!r} resolved to {display(then.path)!r} when the call "
                f"was approved but now resolves to {display(target.path)!r} (a symlink was "
                f"swapped in since); nothing was written. Look at the workspace and make the "
                f"call again"
            )
        if (
            then.card is not None
            and target.card is not None
            and then.card != target.card
            and person_saw_card()
        ):
            raise ValueError(
                f"{tool}: the change to {display(target.path)!r} is no longer the one on the "
                f"card that was approved: the file changed after the card was made (an "
                f"earlier call of this turn, or an edit on disk), so the same arguments would "
                f"now change it differently; nothing was written. Read the file again if "
                f"needed and make the call again, so that its card shows the change as it "
                f"would be made now"
            )
        if target.protected and not then.protected:
            raise ValueError(
                f"{tool}: {target.raw!r} is now a protected path, which the approval did not "
                f"know; nothing was written. Make the call again so that it is asked about"
            )
