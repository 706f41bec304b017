"""The prompt cache of the fake Messages server: what a request would read from and write
to Claude's cache, so usage (and cost) follow the breakpoints and TTLs a client sends.

As the API documents it: the prefix is tools, then system, then messages, block by block;
a block with ``cache_control`` is a breakpoint; a request reads the longest cached,
unexpired prefix ending at a block boundary up to 20 blocks before one of its breakpoints
(the read refreshes it), and writes the prefix up to each later breakpoint, each with
its own TTL ("5m" unless ``ttl: "1h"``).
Tokens are counted as the server's rough counts are: a token per four characters of JSON.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

TTL_SECONDS = {"5m": 300.0, "1h": 3600.0}
LOOKBACK = 20  # blocks before a breakpoint where the API also looks for a hit


def _blocks(body: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The request's prefix, block by block, in the order the API caches it."""
    tools = body.get("tools") or ()
    out: list[Mapping[str, Any]] = [t for t in tools if not t.get("defer_loading")]
    system = body.get("system")
    if isinstance(system, str):
        out.append({"type": "text", "text": system})
    elif isinstance(system, list):
        out.extend(system)
    for message in body.get("messages") or ():
        content = message.get("content")
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        out.extend({**b, "role": message.get("role")} for b in content or ())
    return out


class PromptCache:
    """Cached prefixes by hash, each with the time it expires. ``clock`` gives seconds
    (a benchmark passes a fake clock to model pauses without waiting)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self._entries: dict[str, tuple[float, float]] = {}  # hash -> (expires, ttl seconds)
        self._lock = threading.Lock()

    def usage(self, body: Mapping[str, Any]) -> dict[str, int]:
        """Input token counts for ``body``: ``input_tokens`` (after the last breakpoint),
        ``cache_read_input_tokens``, ``cache_creation_input_tokens`` and its split by TTL."""
        digest = hashlib.sha256()
        chars = 0
        prefixes: list[tuple[str, int]] = []  # after each block: (prefix hash, tokens)
        breakpoints: list[tuple[int, float]] = []  # (block index, ttl seconds)
        for block in _blocks(body):
            mark = block.get("cache_control")
            plain = {k: v for k, v in block.items() if k != "cache_control"}
            text = json.dumps(plain, sort_keys=True, ensure_ascii=False)
            digest.update(text.encode())
            chars += len(text)
            prefixes.append((digest.hexdigest(), chars // 4))
            if isinstance(mark, Mapping):
                ttl = TTL_SECONDS.get(str(mark.get("ttl", "5m")), TTL_SECONDS["5m"])
                breakpoints.append((len(prefixes) - 1, ttl))
        total = max(1, chars // 4)
        now = self.clock()
        with self._lock:
            # a hit: the longest cached prefix ending at a block boundary at most
            # LOOKBACK blocks before a breakpoint
            hit = -1
            for at, _ in reversed(breakpoints):
                for j in range(at, max(-1, at - LOOKBACK - 1), -1):
                    entry = self._entries.get(prefixes[j][0])
                    if entry is not None and entry[0] > now and j > hit:
                        hit = j
                        break
            read = prefixes[hit][1] if hit >= 0 else 0
            if hit >= 0:  # a read refreshes the entry
                key = prefixes[hit][0]
                ttl = self._entries[key][1]
                self._entries[key] = (now + ttl, ttl)
            written = {"5m": 0, "1h": 0}
            done = read
            for at, ttl in breakpoints:
                if at <= hit:
                    continue
                key, tokens = prefixes[at]
                written["1h" if ttl > TTL_SECONDS["5m"] else "5m"] += tokens - done
                done = tokens
                self._entries[key] = (now + ttl, ttl)
        cached = prefixes[breakpoints[-1][0]][1] if breakpoints else 0
        return {
            "input_tokens": max(0, total - cached),
            "cache_read_input_tokens": read,
            "cache_creation_input_tokens": written["5m"] + written["1h"],
            "ephemeral_5m_input_tokens": written["5m"],
            "ephemeral_1h_input_tokens": written["1h"],
        }
