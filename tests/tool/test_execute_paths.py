"""One execute path: an executor without middleware (which skips building a ``Call``) and
one with a pass-through middleware answer every kind of call alike, because both end in
the same ``_invoke_entry``."""

from __future__ import annotations

import asyncio
import dataclasses

from nb_tools.model import ToolCall, ToolResult
from nb_tools.tool import Call, Executor, Next, Registry, Result, tool
from nb_tools.tool._progress import call_id_var


@tool(register=False)
async def shout(text: str, times: int = 1) -> str:
    """Repeat loudly (async: the direct call)."""
    return " ".join([text.upper()] * times)


@tool(register=False)
def count(items: list[int]) -> dict[str, int]:
    """Count items (sync, on a thread; returns a non-string)."""
    return {"n": len(items), "call": len(call_id_var.get() or "")}


@tool(register=False)
async def explode(why: str) -> str:
    """Always raises."""
    raise RuntimeError(why)


@tool(register=False, timeout=5)
async def slow_ok() -> str:
    """Has a timeout, so it goes through call_validated."""
    await asyncio.sleep(0)
    return "ok"


async def passthrough(call: Call, next: Next) -> Result:
    return await next(call)


CALLS = [
    ToolCall(id="a", name="shout", arguments='{"text": "hi", "times": 2}'),
    ToolCall(id="b", name="shout", arguments=""),  # missing "text": invalid
    ToolCall(id="c", name="shout", arguments='{"text": 5}'),
    ToolCall(id="d", name="count", arguments='{"items": [1, 2, 3]}'),
    ToolCall(id="e", name="explode", arguments='{"why": "boom"}'),
    ToolCall(id="f", name="nope", arguments="{}"),
    ToolCall(id="g", name="slow_ok", arguments="  "),
    ToolCall(id="h", name="shout", arguments='{"text": "x", "text": "y"}'),  # duplicate key
]


def comparable(r: ToolResult) -> tuple:
    meta = {k: v for k, v in r.metadata.items() if k not in ("duration", "panic", "traceback")}
    return (r.tool_use_id, r.content, r.parts, r.is_error, meta)


async def test_with_and_without_middleware_every_call_comes_back_the_same() -> None:
    reg = Registry(shout, count, explode, slow_ok)
    bare, wrapped = Executor(reg), Executor(reg, passthrough)
    for call in CALLS:
        one, other = await bare.execute(call), await wrapped.execute(call)
        assert comparable(one) == comparable(other), call
        assert isinstance(one.metadata["duration"], float)
        assert isinstance(other.metadata["duration"], float)
    results = {c.id: await bare.execute(c) for c in CALLS}
    assert results["a"].content == "HI HI" and not results["a"].is_error
    assert results["b"].is_error and "invalid arguments for shout" in results["b"].content
    assert results["e"].is_error and "boom" in results["e"].content
    assert results["e"].metadata["traceback"]
    assert results["f"].is_error and "unknown tool 'nope'" in results["f"].content
    assert results["g"].content == "ok"
    assert results["h"].is_error  # I-JSON: a duplicate key never reaches the function


async def test_execute_with_adds_middleware_to_a_bare_executor() -> None:
    seen: list[str] = []

    async def spy(call: Call, next: Next) -> Result:
        seen.append(call.name)
        result = await next(call)
        return dataclasses.replace(result, content=result.content + "!")

    ex = Executor(Registry(shout))
    result = await ex.execute_with(ToolCall(id="x", name="shout", arguments='{"text": "a"}'), spy)
    assert (seen, result.content) == (["shout"], "A!")
