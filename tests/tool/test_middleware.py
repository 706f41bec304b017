from __future__ import annotations

import dataclasses

import pytest

from nb_tools.model import ToolCall, ToolResult
from nb_tools.tool import (
    Call,
    Executor,
    Info,
    Next,
    Registry,
    Result,
    allow,
    chain,
    truncate_output,
)


class Say:
    def __init__(self, name: str, text: str) -> None:
        self._info = Info(name=name)
        self.text = text

    def info(self) -> Info:
        return self._info

    async def call(self, args: str | bytes) -> Result:
        return Result(content=self.text, metadata={"tool": self._info.name})


def tc(name: str, arguments: str = "{}", id: str = "c1") -> ToolCall:
    return ToolCall(id=id, name=name, arguments=arguments)


def seen(result: ToolResult) -> ToolResult:
    """The result without its timing, to compare whole values."""
    metadata = {k: v for k, v in result.metadata.items() if k != "duration"}
    return dataclasses.replace(result, metadata=metadata)


async def test_chain_runs_the_first_middleware_outermost() -> None:
    log: list[str] = []

    def recorder(label: str):
        async def mw(call: Call, next: Next) -> Result:
            log.append(f"{label} in")
            result = await next(call)
            log.append(f"{label} out")
            return result

        return mw

    async def final(call: Call) -> Result:
        log.append(f"final {call.name}")
        return Result(content="done")

    handler = chain(final, recorder("a"), recorder("b"))
    result = await handler(Call(id="1", name="t", arguments="{}"))
    assert result == Result(content="done")
    assert log == ["a in", "b in", "final t", "b out", "a out"]
    assert chain(final) is final


async def test_middleware_may_answer_or_rewrite_the_call() -> None:
    async def rewrite(call: Call, next: Next) -> Result:
        return await next(dataclasses.replace(call, arguments='{"x": 1}'))

    async def final(call: Call) -> Result:
        return Result(content=call.arguments)

    assert (await chain(final, rewrite)(Call(id="1", name="t", arguments=""))).content == (
        '{"x": 1}'
    )


async def test_allow_rejects_other_tools_with_a_readable_error() -> None:
    ex = Executor(Registry(Say("read", "r"), Say("write", "w")), allow("read", "grep"))
    assert seen(await ex.execute(tc("read"))) == ToolResult(
        tool_use_id="c1", content="r", metadata={"tool": "read"}
    )
    assert seen(await ex.execute(tc("write"))) == ToolResult(
        tool_use_id="c1",
        content="tool 'write' is not allowed here; allowed tools: grep, read",
        is_error=True,
        metadata={"denied_by": "allow"},
    )


async def test_truncate_output_keeps_head_and_tail() -> None:
    long = "".join(f"{i:03d}\n" for i in range(100))
    ex = Executor(Registry(Say("long", long), Say("short", "ok")), truncate_output(60))
    result = seen(await ex.execute(tc("long")))
    assert result == ToolResult(
        tool_use_id="c1",
        content="000\n001\n002\n003\n… [truncated 371 bytes] …\n6\n097\n098\n099\n",
        metadata={"tool": "long", "truncated_from": 400},
    )
    assert seen(await ex.execute(tc("short"))).metadata == {"tool": "short"}


async def test_truncate_output_can_keep_the_whole_text_for_the_view() -> None:
    long = "".join(f"{i:03d}\n" for i in range(100))
    ex = Executor(Registry(Say("long", long)), truncate_output(60, keep_full=True))
    result = seen(await ex.execute(tc("long")))
    assert result.metadata["full_content"] == long
    assert result.metadata["model_saw"] == [len(result.content.encode()), 400]
    assert result.content != long


def test_truncate_output_rejects_a_negative_limit() -> None:
    with pytest.raises(ValueError, match="max_bytes must be >= 0, got -1"):
        truncate_output(-1)


async def test_a_failing_middleware_becomes_an_error_result() -> None:
    async def broken(call: Call, next: Next) -> Result:
        raise RuntimeError("audit log is full")

    result = await Executor(Registry(Say("t", "x")), broken).execute(tc("t"))
    assert result.is_error
    assert result.content == "t raised RuntimeError: audit log is full"
    assert "audit log is full" in result.metadata["traceback"]


async def test_execute_with_wraps_outside_the_executors_middleware() -> None:
    log: list[str] = []

    def recorder(label: str):
        async def mw(call: Call, next: Next) -> Result:
            log.append(label)
            return await next(call)

        return mw

    ex = Executor(Registry(Say("t", "x")), recorder("own"))
    result = await ex.execute_with(tc("t"), recorder("extra1"), recorder("extra2"))
    assert result.content == "x"
    assert log == ["extra1", "extra2", "own"]
