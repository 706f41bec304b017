"""Approvals bound to the paths they showed.

A writer's card (its preview) names the resolved target; the person approves that path.
The call itself runs later, after the approval wait, and re-plans from disk. If a symlink
was swapped in meanwhile (``notes.txt`` -> ``.git/hooks/pre-commit``, or a parent folder
replaced by a link), the call would resolve elsewhere. So ``preview`` (and
``is_protected_call``, when no preview was made) *binds* each lexical path of the call to
what it resolved to, and the call refuses to write unless it resolves to exactly that.

Bindings are keyed by the call's canonical arguments, taken (removed) by the call, and
bounded in number; a call that was never previewed binds at call time (nothing was shown,
so there is nothing to hold it to) and the race-free write (``_atomic``) keeps it there.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from nb_tools.builtin._common import Args

__all__ = ["Bindings", "Target", "call_key", "verify"]

_LIMIT = 512


@dataclass(frozen=True, kw_only=True)
class Target:
    """One path of a call: as the model wrote it, as it resolved, and whether it is
    protected (as written or as resolved)."""

    raw: str
    path: Path
    protected: bool


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
        with self._lock:
            return self._items.pop(key, None)

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
    (and is protected only if it was then). ``bound is None``: nothing was shown."""
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
        if target.protected and not then.protected:
            raise ValueError(
                f"{tool}: {target.raw!r} is now a protected path, which the approval did not "
                f"know; nothing was written. Make the call again so that it is asked about"
            )
