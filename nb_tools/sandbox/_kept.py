"""Answers kept between calls while the files they were read from are unchanged.

An answer is kept with the signature of each file or folder it was read from (device,
inode, size, modification and change times: ``os.stat``, links followed as a read
follows them), and given again only while every signature is the same: one ``stat`` a
path, not the reading again. A file timestamp advances in coarse steps (a few ms), so two
changes in one step leave the same signature: an answer read from a path changed less
than :data:`SETTLED_NS` before is not kept (the next call reads again).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Hashable, Sequence
from typing import TypeVar

__all__ = ["SETTLED_NS", "kept", "signature"]

T = TypeVar("T")

SETTLED_NS = 100_000_000
"""How long ago (ns) a path must have changed for an answer read from it to be kept."""

Signature = tuple[int, int, int, int, int] | None


def signature(path: str) -> Signature:
    """What changes when ``path`` changes (``None``: missing or unreadable)."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def kept(
    cache: dict[Hashable, tuple[tuple[Signature, ...], object]],
    key: Hashable,
    paths: Sequence[str],
    compute: Callable[[], T],
) -> T:
    """``compute()``, or the answer kept under ``key`` when it was computed from ``paths``
    with the same signatures as now."""
    sigs = tuple(signature(p) for p in paths)
    hit = cache.get(key)
    if hit is not None and hit[0] == sigs:
        return hit[1]  # type: ignore[return-value]
    value = compute()
    now = time.time_ns()
    if all(s is None or now - max(s[3], s[4]) > SETTLED_NS for s in sigs):
        if len(cache) > 256:
            cache.clear()
        cache[key] = (sigs, value)
    else:
        cache.pop(key, None)
    return value
