from __future__ import annotations

import asyncio
import dataclasses
import threading
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from nb_tools.model import ToolCall, ToolResult
from nb_tools.tool import (
    Call,
    Executor,
    Info,
    Next,
    Progress,
    Registry,
    Result,
    Schema,
    ToolPanic,
    is_read_only_call,
    needs_approval,
    progress,
    progress_sink,
)

WEATHER = Schema.object(
    {"city": Schema.string("City name"), "days": Schema.integer("How many days")}, "city"
)
OVERLAP_TIMEOUT = 10.0  # only reached when calls that should overlap do not


class AsyncTool:
    """A Tool whose call runs ``body(args)`` on the event loop."""

    def __init__(
        self, name: str, body: Callable[[str | bytes], Awaitable[Any]], **info: Any
    ) -> None:
        self._info = Info(name=name, **info)
        self.body = body

    def info(self) -> Info:
        return self._info

    async def call(self, args: str | bytes) -> Any:
        return await self.body(args)


class SyncTool:
    """A Tool whose call is a plain method (the executor runs it in a worker thread)."""

    def __init__(self, name: str, body: Callable[[str | bytes], Any], **info: Any) -> None:
        self._info = Info(name=name, **info)
        self.body = body

    def info(self) -> Info:
        return self._info

    def call(self, args: str | bytes) -> Any:
        return self.body(args)


def tc(name: str, arguments: str = "{}", id: str = "c1") -> ToolCall:
    return ToolCall(id=id, name=name, arguments=arguments)


def seen(result: ToolResult) -> ToolResult:
    """The result as the model sees it, plus metadata without timing or tracebacks."""
    drop = {"duration", "traceback", "panic"}
    return dataclasses.replace(
        result, metadata={k: v for k, v in result.metadata.items() if k not in drop}
    )


async def echo(args: str | bytes) -> Result:
    return Result(content=f"got {args!s}")


def weather_registry() -> Registry:
    return Registry(
        AsyncTool("get_weather", echo, parameters=WEATHER),
        AsyncTool("ping", echo),
        AsyncTool("secret", echo),
    )


# -- one call ------------------------------------------------------------------------------


async def test_a_valid_call_gets_the_tools_result_and_its_duration() -> None:
    result = await Executor(weather_registry()).execute(
        tc("get_weather", '{"city": "Paris"}', id="toolu_1")
    )
    assert seen(result) == ToolResult(tool_use_id="toolu_1", content='got {"city": "Paris"}')
    assert isinstance(result.metadata["duration"], float) and result.metadata["duration"] >= 0


async def test_unknown_tool_lists_the_visible_tools() -> None:
    reg = weather_registry()
    reg.hide("secret")
    assert seen(await Executor(reg).execute(tc("get_wether"))) == ToolResult(
        tool_use_id="c1",
        content="unknown tool 'get_wether'; available tools: get_weather, ping",
        is_error=True,
    )
    assert (await Executor(Registry()).execute(tc("x"))).content == (
        "unknown tool 'x'; available tools: none"
    )


async def test_invalid_arguments_list_every_problem() -> None:
    ex = Executor(weather_registry())
    assert seen(await ex.execute(tc("get_weather", '{"city": 5}'))) == ToolResult(
        tool_use_id="c1",
        content="invalid arguments for get_weather:\n/city: expected string, got integer",
        is_error=True,
        metadata={"problems": ["/city: expected string, got integer"]},
    )
    many = await ex.execute(tc("get_weather", '{"days": "3"}'))
    assert many.is_error
    lines = many.content.split("\n")
    assert lines[0] == "invalid arguments for get_weather:"
    assert len(lines) == 3 and any(line.startswith("/days:") for line in lines)
    duplicate = await ex.execute(tc("get_weather", '{"city": "Rome", "city": "Oslo"}'))
    assert duplicate.is_error and duplicate.content.startswith(
        "invalid arguments for get_weather:\n/"
    )
    assert "duplicate" in duplicate.content
    broken = await ex.execute(tc("get_weather", '{"city": '))
    assert broken.is_error and broken.content.startswith("invalid arguments for get_weather:\n")


async def test_empty_argument_text_counts_as_an_empty_object() -> None:
    ex = Executor(weather_registry())
    assert (await ex.execute(tc("ping", ""))).content == "got {}"
    missing = await ex.execute(tc("get_weather", "  "))
    assert missing.is_error and missing.content.startswith("invalid arguments for get_weather:\n")
    assert "city" in missing.content


async def test_raw_parameters_are_not_validated() -> None:
    raw = {"type": "object", "properties": {"q": {"type": "string"}}}
    ex = Executor(Registry(AsyncTool("mcp__s__search", echo, raw_parameters=raw)))
    assert (await ex.execute(tc("mcp__s__search", '{"q": 1, "q": 2}'))).content == (
        'got {"q": 1, "q": 2}'
    )


async def test_strict_tools_accept_null_for_optional_properties() -> None:
    ex = Executor(Registry(AsyncTool("get_weather", echo, parameters=WEATHER, strict=True)))
    ok = await ex.execute(tc("get_weather", '{"city": "Oslo", "days": null}'))
    assert not ok.is_error, ok.content
    bad = await ex.execute(tc("get_weather", '{"city": null, "days": 1}'))
    assert bad.is_error


async def test_an_error_result_reaches_the_model_as_is() -> None:
    async def fail(args: str | bytes) -> Result:
        return Result.error("no such city: Atlantis", city="Atlantis")

    result = await Executor(Registry(AsyncTool("t", fail))).execute(tc("t"))
    assert seen(result) == ToolResult(
        tool_use_id="c1",
        content="no such city: Atlantis",
        is_error=True,
        metadata={"city": "Atlantis"},
    )


@pytest.mark.parametrize("kind", ["async", "sync"])
async def test_an_exception_becomes_a_panic_with_the_traceback_in_metadata(kind: str) -> None:
    def boom(args: str | bytes) -> Result:
        raise ValueError("city must not be empty")

    async def aboom(args: str | bytes) -> Result:
        boom(args)
        return Result()

    tool = AsyncTool("get_weather", aboom) if kind == "async" else SyncTool("get_weather", boom)
    result = await Executor(Registry(tool)).execute(tc("get_weather"))
    assert seen(result) == ToolResult(
        tool_use_id="c1",
        content="get_weather raised ValueError: city must not be empty",
        is_error=True,
    )
    panic = result.metadata["panic"]
    assert isinstance(panic, ToolPanic) and isinstance(panic.cause, ValueError)
    assert result.metadata["traceback"] == panic.traceback
    assert "in boom" in panic.traceback
    assert panic.traceback.rstrip().endswith("ValueError: city must not be empty")


async def test_a_raised_tool_panic_keeps_its_message() -> None:
    async def panic(args: str | bytes) -> Result:
        raise ToolPanic("the sandbox died", traceback="tb")

    result = await Executor(Registry(AsyncTool("t", panic))).execute(tc("t"))
    assert (result.content, result.is_error, result.metadata["traceback"]) == (
        "the sandbox died",
        True,
        "tb",
    )


async def test_plain_return_values_are_converted() -> None:
    async def plain(args: str | bytes) -> Any:
        return {"temp": 21}

    result = await Executor(Registry(AsyncTool("t", plain))).execute(tc("t"))
    assert (result.content, result.is_error) == ('{"temp": 21}', False)


async def test_sync_tools_run_in_a_worker_thread_and_async_ones_on_the_loop() -> None:
    threads: dict[str, str] = {}

    def sync_body(args: str | bytes) -> Result:
        threads["sync"] = threading.current_thread().name
        return Result(content="s")

    async def async_body(args: str | bytes) -> Result:
        threads["async"] = threading.current_thread().name
        return Result(content="a")

    ex = Executor(Registry(SyncTool("s", sync_body), AsyncTool("a", async_body)))
    assert (await ex.execute(tc("s"))).content == "s"
    assert (await ex.execute(tc("a"))).content == "a"
    assert threads["sync"].startswith("nb_tools-tool")
    assert threads["async"] == threading.current_thread().name


async def test_a_middleware_may_swap_the_tool() -> None:
    other = AsyncTool("other", echo, parameters=WEATHER)

    async def swap(call: Call, next: Next) -> Result:
        return await next(dataclasses.replace(call, tool=other))

    ex = Executor(weather_registry(), swap)
    result = await ex.execute(tc("ping", '{"city": 1}'))
    assert result.content == "invalid arguments for ping:\n/city: expected string, got integer"


async def test_cancellation_propagates_and_reaches_the_tool() -> None:
    started, cancelled = asyncio.Event(), asyncio.Event()

    async def forever(args: str | bytes) -> Result:
        started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return Result()

    task = asyncio.ensure_future(Executor(Registry(AsyncTool("t", forever))).execute(tc("t")))
    await asyncio.wait_for(started.wait(), OVERLAP_TIMEOUT)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert cancelled.is_set()


async def test_progress_reaches_the_sink_under_the_call_id() -> None:
    def sync_body(args: str | bytes) -> Result:
        progress("half", fraction=0.5)
        return Result(content="s")

    async def async_body(args: str | bytes) -> Result:
        progress("chunk")
        return Result(content="a")

    got: list[tuple[str, Progress]] = []
    ex = Executor(Registry(SyncTool("s", sync_body), AsyncTool("a", async_body)))
    with progress_sink(lambda call_id, p: got.append((call_id, p))):
        await ex.execute(tc("s", id="call-s"))
        await ex.execute(tc("a", id="call-a"))
    await ex.execute(tc("a", id="outside"))  # no sink: a no-op
    assert got == [
        ("call-s", Progress(text="half", fraction=0.5)),
        ("call-a", Progress(text="chunk")),
    ]


# -- approval and read-only votes --------------------------------------------------------


class Shell:
    def __init__(self) -> None:
        self._info = Info(name="shell", requires_approval=True)

    def info(self) -> Info:
        return self._info

    async def call(self, args: str | bytes) -> Result:
        return Result()

    def requires_approval_for(self, args: str | bytes) -> bool:
        if "explode" in str(args):
            raise RuntimeError("cannot parse")
        return "rm" in str(args)

    def read_only_call(self, args: str | bytes) -> bool:
        if "explode" in str(args):
            raise RuntimeError("cannot parse")
        return "git log" in str(args)


def test_needs_approval_asks_the_tool_and_fails_closed() -> None:
    shell = Shell()
    assert needs_approval(shell, '{"cmd": "rm -rf x"}') is True
    assert needs_approval(shell, '{"cmd": "ls"}') is False
    assert needs_approval(shell, '{"cmd": "explode"}') is True
    assert needs_approval(AsyncTool("t", echo, requires_approval=True), "{}") is True
    assert needs_approval(AsyncTool("t", echo), "{}") is False


def test_is_read_only_call_asks_the_tool_and_fails_closed() -> None:
    shell = Shell()
    assert is_read_only_call(shell, '{"cmd": "git log"}') is True
    assert is_read_only_call(shell, '{"cmd": "rm x"}') is False
    assert is_read_only_call(shell, '{"cmd": "explode"}') is False
    assert is_read_only_call(AsyncTool("t", echo, read_only=True), "{}") is True
    assert is_read_only_call(AsyncTool("t", echo), "{}") is False


# -- batches -------------------------------------------------------------------------------


def meeting_point(n: int) -> Callable[[str | bytes], Awaitable[Result]]:
    """An async body that finishes only once ``n`` calls are inside it at the same time."""
    arrived = 0
    everyone = asyncio.Event()

    async def body(args: str | bytes) -> Result:
        nonlocal arrived
        arrived += 1
        if arrived == n:
            everyone.set()
        try:
            await asyncio.wait_for(everyone.wait(), OVERLAP_TIMEOUT)
        except TimeoutError:
            return Result.error("ran alone")
        return Result(content=f"met {args!s}")

    return body


async def test_adjacent_read_only_calls_overlap_and_keep_their_order() -> None:
    ex = Executor(Registry(AsyncTool("read", meeting_point(4), read_only=True)))
    calls = [tc("read", f'"{i}"', id=f"c{i}") for i in range(4)]
    results = await ex.execute_batch(calls)
    assert [(r.tool_use_id, r.content, r.is_error) for r in results] == [
        (f"c{i}", f'met "{i}"', False) for i in range(4)
    ]


async def test_sixteen_blocking_read_only_calls_all_overlap() -> None:
    barrier = threading.Barrier(16, timeout=OVERLAP_TIMEOUT)

    def body(args: str | bytes) -> Result:
        barrier.wait()  # BrokenBarrierError unless all 16 run at once
        return Result(content=str(args))

    ex = Executor(Registry(SyncTool("read", body, read_only=True)))
    results = await ex.execute_batch([tc("read", str(i), id=str(i)) for i in range(16)])
    assert [(r.content, r.is_error) for r in results] == [(str(i), False) for i in range(16)]


async def test_concurrent_tools_overlap_too() -> None:
    ex = Executor(Registry(AsyncTool("agent", meeting_point(2), concurrent=True)))
    results = await ex.execute_batch([tc("agent", "1"), tc("agent", "2")])
    assert [r.content for r in results] == ["met 1", "met 2"]


async def test_a_writer_splits_the_batch_into_ordered_runs() -> None:
    log: list[str] = []

    def recording(label: str) -> Callable[[str | bytes], Awaitable[Result]]:
        async def body(args: str | bytes) -> Result:
            log.append(f"start {label}{args!s}")
            await asyncio.sleep(0)
            await asyncio.sleep(0)
            log.append(f"end {label}{args!s}")
            return Result(content=f"{label}{args!s}")

        return body

    ex = Executor(
        Registry(
            AsyncTool("read", recording("r"), read_only=True),
            AsyncTool("write", recording("w")),
        )
    )
    calls = [tc("read", "1"), tc("read", "2"), tc("write", "3"), tc("nope"), tc("read", "4")]
    results = await ex.execute_batch(calls)
    assert [r.content for r in results] == [
        "r1",
        "r2",
        "w3",
        "unknown tool 'nope'; available tools: read, write",
        "r4",
    ]
    assert log[:4] == ["start r1", "start r2", "end r1", "end r2"]  # overlapped
    assert log[4:] == ["start w3", "end w3", "start r4", "end r4"]  # then in order


async def test_the_per_call_vote_decides_what_runs_in_parallel() -> None:
    class Bash(SyncTool):
        def read_only_call(self, args: str | bytes) -> bool:
            return str(args).startswith("git")

    order: list[str] = []
    barrier = threading.Barrier(2, timeout=OVERLAP_TIMEOUT)

    def body(args: str | bytes) -> Result:
        if str(args).startswith("git"):
            barrier.wait()
        order.append(str(args))
        return Result(content=str(args))

    ex = Executor(Registry(Bash("bash", body)))
    results = await ex.execute_batch(
        [tc("bash", "git log"), tc("bash", "git status"), tc("bash", "rm x")]
    )
    assert [(r.content, r.is_error) for r in results] == [
        ("git log", False),
        ("git status", False),
        ("rm x", False),
    ]
    assert order[-1] == "rm x"


async def test_cancelling_a_batch_cancels_the_calls_in_flight() -> None:
    started: list[str] = []
    cancelled: list[str] = []
    all_started = asyncio.Event()

    async def forever(args: str | bytes) -> Result:
        started.append(str(args))
        if len(started) == 3:
            all_started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.append(str(args))
            raise
        return Result()

    ex = Executor(Registry(AsyncTool("read", forever, read_only=True), AsyncTool("w", echo)))
    calls = [tc("read", str(i)) for i in range(3)] + [tc("w")]
    task = asyncio.ensure_future(ex.execute_batch(calls))
    await asyncio.wait_for(all_started.wait(), OVERLAP_TIMEOUT)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert sorted(cancelled) == ["0", "1", "2"]


async def test_progress_in_a_parallel_batch_keeps_each_call_id() -> None:
    meet = meeting_point(3)

    async def body(args: str | bytes) -> Result:
        progress(f"from {args!s}")
        return await meet(args)

    got: list[tuple[str, str]] = []
    ex = Executor(Registry(AsyncTool("read", body, read_only=True)))
    with progress_sink(lambda call_id, p: got.append((call_id, p.text))):
        await ex.execute_batch([tc("read", str(i), id=f"id{i}") for i in range(3)])
    assert sorted(got) == [("id0", "from 0"), ("id1", "from 1"), ("id2", "from 2")]


# -- from sync code ------------------------------------------------------------------------


def test_execute_sync_without_a_loop() -> None:
    result = Executor(weather_registry()).execute_sync(tc("get_weather", '{"city": "Oslo"}'))
    assert result.content == 'got {"city": "Oslo"}'


async def test_execute_sync_inside_a_running_loop() -> None:
    got: list[str] = []

    async def body(args: str | bytes) -> Result:
        progress("p")
        return Result(content="inside")

    ex = Executor(Registry(AsyncTool("t", body)))
    with progress_sink(lambda call_id, p: got.append(call_id)):
        result = ex.execute_sync(tc("t", id="sync-1"))  # blocks this loop; must not deadlock
    assert (result.content, got) == ("inside", ["sync-1"])


async def test_the_executor_sees_later_registry_changes() -> None:
    reg = Registry()
    ex = Executor(reg)
    assert (await ex.execute(tc("ping"))).is_error
    reg.add(AsyncTool("ping", echo))
    assert (await ex.execute(tc("ping"))).content == "got {}"
    reg.remove("ping")
    assert (await ex.execute(tc("ping"))).content == "unknown tool 'ping'; available tools: none"


async def test_middleware_sees_an_unknown_tool_as_none() -> None:
    seen_tools: list[object] = []

    async def spy(call: Call, next: Next) -> Result:
        seen_tools.append(call.tool)
        return await next(call)

    reg = weather_registry()
    result = await Executor(reg, spy).execute(tc("nope"))
    await Executor(reg, spy).execute(tc("ping"))
    assert result.content == "unknown tool 'nope'; available tools: get_weather, ping, secret"
    assert seen_tools == [None, reg.get("ping")]


def test_parallel_groups_join_only_adjacent_parallel_items() -> None:
    from nb_tools.tool._tasks import parallel_groups

    items = ["r1", "r2", "w1", "r3", "w2", "w3", "r4", "r5", "r6"]
    assert parallel_groups(items, lambda x: x.startswith("r")) == [
        ["r1", "r2"],
        ["w1"],
        ["r3"],
        ["w2"],
        ["w3"],
        ["r4", "r5", "r6"],
    ]
    assert parallel_groups([], lambda x: True) == []
