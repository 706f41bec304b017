"""A run reads a frozen ``AgentSettings`` made when it starts: changing the ``Agent``
while a run is in progress changes the next run, not this one; ``map``'s rows all read one
settings value."""

from __future__ import annotations

import asyncio
import dataclasses

import pytest

from nb_tools import RunResult as TopRunResult
from nb_tools import tool
from nb_tools.agent import Agent, AgentSettings, RunResult, amap
from nb_tools.agent._events import RunFinished
from nb_tools.agent._run import Run
from nb_tools.testing import ScriptedModel, call, reply


@tool(register=False, read_only=True)
def other() -> str:
    """A tool added while the run is in progress."""
    return "other"


async def test_changing_the_agent_mid_run_does_not_change_the_run() -> None:
    release = asyncio.Event()
    entered = asyncio.Event()

    @tool(register=False, requires_approval=True)
    async def hold(n: int) -> str:
        """Wait for the test (needs approval: the policy decides whether it runs)."""
        entered.set()
        await release.wait()
        return f"held {n}"

    model = ScriptedModel(
        [reply("", call("hold", n=1)), reply("", call("hold", n=2)), reply("done")]
    )
    agent = Agent(model, tools=[hold], system="first system", approval="auto", max_turns=5)
    task = asyncio.ensure_future(agent.run("go"))
    await entered.wait()
    # Everything a run reads, changed while the first call is running.
    agent.system = "second system"
    agent.tools.register(other)
    agent.approval = "deny"
    agent.max_turns = 1
    release.set()
    result = await task

    assert result.stop_reason == "end_turn" and result.turns == 3
    assert [r.system for r in model.requests] == ["first system"] * 3
    assert [[t.name for t in r.tools] for r in model.requests] == [["hold"]] * 3
    assert [c.status for c in result.calls] == ["ok", "ok"]  # still "auto": not denied
    assert result.system == "first system"
    # The next run reads the changed agent.
    model2 = ScriptedModel([reply("again")])
    agent2 = Agent(model2, tools=[hold], system="a")
    settings = agent2.settings()
    agent2.system = "b"
    assert settings.system_prompt == "a" and agent2.settings().system_prompt == "b"
    with pytest.raises(dataclasses.FrozenInstanceError):
        settings.system = "c"  # type: ignore[misc]


async def test_map_rows_share_one_settings_value() -> None:
    seen: list[AgentSettings] = []
    original = Run.__init__

    def spy(self: Run, settings: AgentSettings, *args: object, **kwargs: object) -> None:
        seen.append(settings)
        original(self, settings, *args, **kwargs)  # type: ignore[arg-type]

    model = ScriptedModel([reply("ok") for _ in range(6)])
    Run.__init__ = spy  # type: ignore[method-assign]
    try:
        out = await amap("Say {x}", [{"x": str(i)} for i in range(6)], tools=[], model=model)
    finally:
        Run.__init__ = original  # type: ignore[method-assign]
    assert list(out["status"]) == ["ok"] * 6
    assert len(seen) == 6 and all(s is seen[0] for s in seen)
    assert out.attrs["nb_tools"].settings is seen[0]


async def test_run_result_lives_beside_the_events() -> None:
    from nb_tools.agent import _events, _result

    finished: list[RunFinished] = []
    agent = Agent(ScriptedModel([reply("hi")]), tools=[], on_event=finished.append)
    result = await agent.run("hello")
    assert RunResult is TopRunResult is _result.RunResult
    assert isinstance(result, RunResult) and finished[-1].result is result
    assert _events.__name__ == "nb_tools.agent._events"
