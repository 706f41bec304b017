"""The per-call votes, asked in one place (nb_tools.tool._votes)."""

from __future__ import annotations

from typing import Any

from nb_tools.tool import Change, Info, Registry, Result, Tool, tool
from nb_tools.tool._votes import (
    is_protected_call,
    is_read_only_call,
    needs_approval,
    preview_changes,
)


class Voter:
    """A tool with every vote: ``{"x": ...}`` says yes to each, else no."""

    def info(self) -> Info:
        return Info(name="voter", description="votes", read_only=False, requires_approval=False)

    def call(self, args: str | bytes) -> Result:
        return Result(content="ok")

    def requires_approval_for(self, args: str | bytes) -> bool:
        return b"x" in (args if isinstance(args, bytes) else args.encode())

    def read_only_call(self, args: str | bytes) -> bool:
        return self.requires_approval_for(args)

    def is_protected_call(self, args: str | bytes) -> bool:
        return self.requires_approval_for(args)

    def preview(self, args: str | bytes) -> Change:
        return Change(path="a.txt", before="", after=str(args))


class Delegate:
    """A wrapper that hands every attribute on (as a session's approval override does)."""

    def __init__(self, inner: Tool) -> None:
        self._inner = inner

    def info(self) -> Info:
        return self._inner.info()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


class Broken(Voter):
    def requires_approval_for(self, args: str | bytes) -> bool:
        raise RuntimeError("vote failed")

    read_only_call = is_protected_call = requires_approval_for  # type: ignore[assignment]

    def preview(self, args: str | bytes) -> Change:
        raise RuntimeError("preview failed")


def test_votes_decide_per_call() -> None:
    for t in (Voter(), Delegate(Voter())):
        assert needs_approval(t, '{"x": 1}') and not needs_approval(t, "{}")
        assert is_read_only_call(t, '{"x": 1}') and not is_read_only_call(t, "{}")
        assert is_protected_call(t, '{"x": 1}') and not is_protected_call(t, "{}")
        assert preview_changes(t, "{}") == [Change(path="a.txt", before="", after="{}")]


def test_a_vote_that_raises_fails_closed() -> None:
    t = Broken()
    assert needs_approval(t, "{}") is True
    assert is_read_only_call(t, "{}") is False
    assert is_protected_call(t, "{}") is True
    assert preview_changes(t, "{}") is None


def test_without_votes_info_decides() -> None:
    @tool(register=False, read_only=True, requires_approval=True)
    def look() -> str:
        """Looks."""
        return "seen"

    assert needs_approval(look, "{}") is True
    assert is_read_only_call(look, "{}") is True
    assert is_protected_call(look, "{}") is False
    assert preview_changes(look, "{}") is None


def test_registry_entries_is_live() -> None:
    registry = Registry()
    view = registry.entries()
    registry.add(Voter())
    assert list(view) == ["voter"]
    assert view["voter"].tool.info().name == "voter"
    registry.remove("voter")
    assert "voter" not in view


class Concurrent(Voter):
    def info(self) -> Info:
        return Info(name="concurrent", description="runs beside others", concurrent=True)


def test_parallel_is_concurrent_or_read_only_and_one_vote_decides_it() -> None:
    from nb_tools.tool._votes import is_parallel_call

    assert is_parallel_call(Voter(), '{"x": 1}')  # the read-only vote says yes
    assert not is_parallel_call(Voter(), "{}")
    assert not is_parallel_call(Broken(), '{"x": 1}')  # a failing vote: not read-only
    assert is_parallel_call(Concurrent(), "{}")
    # A caller that already asked the read-only vote passes its answer (asked once).
    assert is_parallel_call(Voter(), "{}", read_only=True)
    assert not is_parallel_call(Voter(), '{"x": 1}', read_only=False)
    assert is_parallel_call(Concurrent(), "{}", read_only=False)


def test_the_agent_and_the_executor_group_calls_alike() -> None:
    """The turn's plan and ``Executor.execute_batch`` ask the same vote."""
    from nb_tools.agent._schedule import plan
    from nb_tools.model import ToolCall
    from nb_tools.tool import Executor

    @tool(register=False, read_only=True)
    def look(x: int = 0) -> str:
        """Looks."""
        return "seen"

    @tool(register=False)
    def change(x: int = 0) -> str:
        """Changes."""
        return "changed"

    reg = Registry(Voter(), Concurrent(), look, change)
    ex = Executor(reg)
    calls = [
        ToolCall(id=str(i), name=name, arguments=args)
        for i, (name, args) in enumerate(
            [
                ("voter", '{"x": 1}'),
                ("voter", "{}"),
                ("concurrent", "{}"),
                ("look", "{}"),
                ("change", "{}"),
                ("missing", "{}"),
            ]
        )
    ]
    by_plan = [plan(reg, c).parallel for c in calls]
    by_executor = [ex._parallel(c) for c in calls]
    assert by_plan == by_executor == [True, False, True, True, False, False]
