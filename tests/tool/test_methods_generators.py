"""@tool on methods and static methods, generator tools, per-tool timeouts, tools_from."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest
import sample_tools_module

from nb_tools import Registry, default_registry, tool, tools_from
from nb_tools.model import ToolCall
from nb_tools.tool import Executor, Progress, progress_sink


def call(fn: Any, args: dict[str, Any] | None = None, call_id: str = "c") -> Any:
    raw = json.dumps(args or {})
    return Executor(Registry(fn)).execute_sync(
        ToolCall(id=call_id, name=fn.info().name, arguments=raw)
    )


class Counter:
    def __init__(self, start: int) -> None:
        self.value = start

    @tool(read_only=True)
    def add(self, n: int) -> int:
        """Adds n to the counter."""
        self.value += n
        return self.value

    @tool
    @staticmethod
    def double(n: int) -> int:
        """Doubles n."""
        return 2 * n

    @tool
    @classmethod
    def kind(cls) -> str:
        """The class name."""
        return cls.__name__

    def reset(self) -> str:
        """Resets the counter."""
        self.value = 0
        return "reset"

    def _private(self) -> None: ...


def test_a_method_tool_is_bound_at_attribute_access() -> None:
    a, b = Counter(10), Counter(100)
    assert a.add is a.add  # kept on the instance
    assert a.add.info().parameters.to_dict() == {
        "type": "object",
        "properties": {"n": {"type": "integer"}},
        "required": ["n"],
        "additionalProperties": False,
    }
    assert call(a.add, {"n": 5}).content == "15"
    assert call(b.add, {"n": 1}).content == "101"
    assert a.value == 15 and b.value == 101
    assert a.add(1) == 16  # still callable as the method
    assert Counter.add(a, 1) == 17
    # unbound, it was not registered (there is no instance to call it on); another test's
    # function may be registered as "add", so look for this method itself
    registry = default_registry()
    qualnames = [getattr(registry.get(n), "__qualname__", "") for n in registry.names()]
    assert "Counter.add" not in qualnames


def test_static_and_class_methods() -> None:
    assert call(Counter.double, {"n": 4}).content == "8"
    assert Counter.double(3) == 6 and Counter(0).double(2) == 4
    assert call(Counter.kind).content == "Counter"
    assert call(Counter(0).kind).content == "Counter"


def test_tools_from_an_object_a_class_and_a_module() -> None:
    c = Counter(1)
    tools = tools_from(c)
    assert [t.info().name for t in tools] == ["add", "double", "kind", "reset"]
    assert call(next(t for t in tools if t.info().name == "reset")).content == "reset"
    assert c.value == 0
    assert [t.info().name for t in tools_from(c, include=["a*", "reset"])] == ["add", "reset"]
    assert [t.info().name for t in tools_from(Counter)] == ["double", "kind"]
    mod = tools_from(sample_tools_module, exclude=["read_*"])
    assert [t.info().name for t in mod] == ["add", "shout"]
    assert mod[1] is sample_tools_module.shout and mod[1].info().read_only
    assert call(mod[0], {"a": 2, "b": 3}).content == "5"
    with pytest.raises(ValueError, match=r"include names nothing in .*: nothing_here"):
        tools_from(sample_tools_module, include=["nothing_here"])


def test_tools_from_names_signatures_it_cannot_describe() -> None:
    class Odd:
        def takes_a_socket(self, s: threading.Thread) -> None: ...

    with pytest.raises(ValueError) as info:
        tools_from(Odd())
    assert "takes_a_socket" in str(info.value) and "exclude=" in str(info.value)
    assert tools_from(Odd(), exclude=["takes_*"]) == []


def test_a_generator_tool_streams_items_and_returns_them_joined() -> None:
    seen: list[str] = []

    @tool(register=False)
    def count(n: int):  # type: ignore[no-untyped-def]
        """Counts."""
        for i in range(n):
            yield f"{i} "

    @tool(register=False)
    def steps(n: int):  # type: ignore[no-untyped-def]
        """Yields numbers: the last one is the result."""
        yield from range(n)

    with progress_sink(lambda cid, p: seen.append(p.text)):
        result = call(count, {"n": 3})
    assert (result.content, result.is_error) == ("0 1 2 ", False)
    assert seen == ["0 ", "1 ", "2 "]
    assert call(steps, {"n": 4}).content == "3"


async def test_an_async_generator_tool_streams_too() -> None:
    seen: list[Progress] = []

    @tool(register=False)
    async def lines(n: int):  # type: ignore[no-untyped-def]
        """Lines."""
        for i in range(n):
            await asyncio.sleep(0)
            yield f"line {i}\n"

    with progress_sink(lambda cid, p: seen.append(p)):
        result = await Executor(Registry(lines)).execute(
            ToolCall(id="g", name="lines", arguments='{"n": 2}')
        )
    assert result.content == "line 0\nline 1\n"
    assert [p.text for p in seen] == ["line 0\n", "line 1\n"]


def test_a_sync_tool_times_out_and_is_interrupted(tmp_path: Path) -> None:
    log = tmp_path / "ticks"

    @tool(register=False, timeout=0.3)
    def forever() -> str:
        """Writes forever."""
        while True:
            with log.open("a") as f:
                f.write("x")
            time.sleep(0.02)

    result = call(forever, call_id="t")
    assert result.is_error
    assert result.content == "forever timed out after 0.3 s and was stopped"
    assert result.metadata["status"] == "timed_out"
    size = log.stat().st_size
    time.sleep(0.3)
    assert log.stat().st_size == size


def test_an_async_tool_times_out() -> None:
    cancelled = threading.Event()

    @tool(register=False, timeout=0.1)
    async def hang() -> str:
        """Waits forever."""
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return "never"

    result = call(hang)
    assert (result.content, result.is_error) == ("hang timed out after 0.1 s and was stopped", True)
    assert cancelled.is_set()
    with pytest.raises(ValueError, match="timeout must be a positive number"):
        tool(register=False, timeout=0)(lambda: None)
