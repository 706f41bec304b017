"""Middleware: wrappers around the call of a tool (logging, permissions, limits).

``Middleware = (call, next) -> Result``; ``chain(final, *mws)`` composes them with the first
outermost. A middleware may answer without calling ``next`` (``allow`` does), change the
call it passes on, or change the result it returns.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable
from typing import TypeAlias

from nb_tools.tool._truncate import truncate
from nb_tools.tool._types import Call, Result

Next: TypeAlias = Callable[[Call], Awaitable[Result]]
Middleware: TypeAlias = Callable[[Call, Next], Awaitable[Result]]


class _Link:
    """One middleware bound to what comes after it (a class, not a closure, so a chain
    shows its layers in a debugger)."""

    __slots__ = ("mw", "next")

    def __init__(self, mw: Middleware, next: Next) -> None:
        self.mw = mw
        self.next = next

    def __call__(self, call: Call) -> Awaitable[Result]:
        return self.mw(call, self.next)

    def __repr__(self) -> str:
        return f"<{getattr(self.mw, '__name__', self.mw)!s} -> {self.next!r}>"


def chain(final: Next, *mws: Middleware) -> Next:
    """Compose ``mws`` around ``final``; the first middleware is outermost."""
    handler = final
    for mw in reversed(mws):
        handler = _Link(mw, handler)
    return handler


def allow(*names: str) -> Middleware:
    """Reject calls to tools not in ``names`` with an error result the model can read."""
    allowed = frozenset(names)
    listing = ", ".join(sorted(allowed)) or "none"

    async def allow_middleware(call: Call, next: Next) -> Result:
        if call.name not in allowed:
            return Result.error(
                f"tool {call.name!r} is not allowed here; allowed tools: {listing}",
                denied_by="allow",
            )
        return await next(call)

    return allow_middleware


def truncate_output(max_bytes: int, *, keep_full: bool = False) -> Middleware:
    """Limit result content to ``max_bytes`` UTF-8 bytes, keeping head and tail so the model
    still sees how the output ends. The full length goes into ``metadata["truncated_from"]``;
    with ``keep_full`` the whole text goes into ``metadata["full_content"]`` and
    ``[seen, total]`` bytes into ``metadata["model_saw"]`` (for a view that shows it all)."""
    if max_bytes < 0:
        raise ValueError(f"truncate_output: max_bytes must be >= 0, got {max_bytes}")

    async def truncate_output_middleware(call: Call, next: Next) -> Result:
        result = await next(call)
        content = result.content
        cut = truncate(content, max_bytes)
        if cut is content:
            return result
        metadata = dict(result.metadata)
        total = len(content.encode("utf-8", "surrogatepass"))
        metadata["truncated_from"] = total
        if keep_full:
            metadata["full_content"] = content
            metadata["model_saw"] = [len(cut.encode("utf-8", "surrogatepass")), total]
        return dataclasses.replace(result, content=cut, metadata=metadata)

    return truncate_output_middleware
