"""Stopping a run (task.cancel, as an interrupt does in a kernel) and resuming it."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from agent_helpers import Recorder, assistant, results, user, wire

from nb_tools import tool
from nb_tools.agent import (
    BACKGROUND_TEXT,
    CUT_OFF_TEXT,
    STOPPED_TEXT,
    Agent,
    ApprovalRequest,
    RunFinished,
    TextDelta,
    ToolCallFinished,
)
from nb_tools.testing import ScriptedModel, call, conversation_problems, reply


class Gate:
    """Lets a test cancel a run exactly while a tool is inside its call."""

    def __init__(self) -> None:
        self.entered = asyncio.Event()
        self.release = asyncio.Event()
        self.runs: list[str] = []


def gated_tools(gate: Gate) -> list[Any]:
    @tool(register=False)
    async def deploy(target: str) -> str:
        """Has side effects; waits for the gate."""
        gate.runs.append(f"deploy {target}")
        gate.entered.set()
        await gate.release.wait()
        return f"deployed {target}"

    @tool(register=False, read_only=True)
    async def inspect(target: str) -> str:
        """Read-only; waits for the gate."""
        gate.runs.append(f"inspect {target}")
        gate.entered.set()
        await gate.release.wait()
        return f"inspected {target}"

    @tool(register=False, read_only=True)
    async def quick(target: str) -> str:
        """Read-only and immediate."""
        gate.runs.append(f"quick {target}")
        return f"quick {target}"

    return [deploy, inspect, quick]


async def start(agent: Agent, prompt: str) -> asyncio.Task[Any]:
    return asyncio.ensure_future(agent.run(prompt))


async def stop(task: asyncio.Task[Any]) -> None:
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


async def test_cancel_during_a_side_effect_call_cuts_it_off_and_resume_does_not_rerun() -> None:
    gate = Gate()
    model = ScriptedModel(
        [
            reply(
                "Deploying.",
                call("deploy", target="prod", id="d1"),
                call("quick", target="x", id="q1"),
            ),
            reply("I was stopped; not retrying."),
        ]
    )
    rec = Recorder()
    agent = Agent(model, tools=gated_tools(gate), approval="auto", on_event=rec)

    task = await start(agent, "deploy it")
    await gate.entered.wait()
    await stop(task)

    result = agent.last_result
    assert result is not None
    assert result.stop_reason == "stopped"
    assert wire(agent.messages) == [
        user("deploy it"),
        assistant(
            "Deploying.", ("d1", "deploy", '{"target": "prod"}'), ("q1", "quick", '{"target": "x"}')
        ),
        results(("d1", CUT_OFF_TEXT, True), ("q1", STOPPED_TEXT, True)),
    ]
    finished = {e.call.id: e.status for e in rec.of(ToolCallFinished)}
    assert finished == {"d1": "cut_off", "q1": "stopped"}
    assert isinstance(rec.events[-1], RunFinished)
    assert rec.events[-1].result == result

    again = await agent.run("what happened?")
    assert again.stop_reason == "end_turn"
    sent = wire(model.requests[-1].messages)
    assert sent[-1] == {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": "d1", "content": CUT_OFF_TEXT, "is_error": True},
            {"type": "tool_result", "tool_use_id": "q1", "content": STOPPED_TEXT, "is_error": True},
            {"type": "text", "text": "what happened?"},
        ],
    }
    assert "cut off" in CUT_OFF_TEXT and "stopped by the user" in STOPPED_TEXT
    assert gate.runs == ["deploy prod"]


async def test_cancel_during_parallel_readers_keeps_finished_results() -> None:
    gate = Gate()
    model = ScriptedModel(
        [
            reply("", call("quick", target="a", id="q"), call("inspect", target="b", id="i")),
            reply("ok"),
        ]
    )
    rec = Recorder()
    agent = Agent(model, tools=gated_tools(gate), on_event=rec)
    task = await start(agent, "look")
    await gate.entered.wait()
    while "q" not in {e.call.id for e in rec.of(ToolCallFinished)}:
        await asyncio.sleep(0)
    await stop(task)

    assert wire(agent.messages)[-1] == results(("q", "quick a", False), ("i", STOPPED_TEXT, True))
    assert [(e.call.id, e.status) for e in rec.of(ToolCallFinished)] == [
        ("q", "ok"),
        ("i", "stopped"),
    ]
    await agent.run("continue")
    assert conversation_problems(model.requests[-1].messages) == []


async def test_cancel_while_streaming_keeps_the_partial_text_and_drops_the_calls() -> None:
    model = ScriptedModel(
        [
            reply(
                "Let me think about this carefully.",
                call("quick", target="never", id="never"),
                chunk_delay=0.01,
            ),
            reply("resumed"),
        ]
    )
    rec = Recorder()
    gate = Gate()
    task: asyncio.Task[Any] | None = None

    def on_event(event: Any) -> None:
        rec(event)
        if isinstance(event, TextDelta) and task is not None:
            task.cancel()  # lands at the run's next await: the wait for the next chunk

    agent = Agent(model, tools=gated_tools(gate), on_event=on_event)
    task = await start(agent, "hi")
    with pytest.raises(asyncio.CancelledError):
        await task

    partial = "".join(e.text for e in rec.of(TextDelta))
    assert partial and partial != "Let me think about this carefully."
    assert wire(agent.messages) == [user("hi"), assistant(partial)]
    assert agent.last_result is not None and agent.last_result.text == partial
    assert gate.runs == []

    again = await agent.run("go on")
    assert again.text == "resumed"
    assert wire(model.requests[-1].messages) == [user("hi"), assistant(partial), user("go on")]


async def test_cancel_while_waiting_for_the_approver() -> None:
    gate = Gate()
    waiting = asyncio.Event()
    approver_cancelled = asyncio.Event()

    async def approver(request: ApprovalRequest) -> bool:
        waiting.set()
        try:
            await asyncio.Future()  # a person who never clicks
        except asyncio.CancelledError:
            approver_cancelled.set()
            raise
        return True

    @tool(register=False, requires_approval=True)
    async def deploy(target: str) -> str:
        """Needs approval."""
        gate.runs.append(f"deploy {target}")
        return "deployed"

    model = ScriptedModel([reply("", call("deploy", target="p", id="d")), reply("ok")])
    agent = Agent(model, tools=[deploy], approver=approver)
    task = await start(agent, "go")
    await waiting.wait()
    await stop(task)

    assert approver_cancelled.is_set()
    assert gate.runs == []
    assert wire(agent.messages)[-1] == results(("d", STOPPED_TEXT, True))
    assert conversation_problems(agent.messages) == []


async def test_a_stopped_run_of_a_writer_cut_off_in_a_sync_tool_is_not_rerun() -> None:
    import threading

    entered = threading.Event()
    release = threading.Event()
    runs: list[str] = []

    @tool(register=False)
    def migrate() -> str:
        """A blocking writer."""
        runs.append("migrate")
        entered.set()
        release.wait(10)
        return "migrated"

    model = ScriptedModel([reply("", call("migrate", id="m")), reply("noted")])
    agent = Agent(model, tools=[migrate])
    task = await start(agent, "go")
    await asyncio.to_thread(entered.wait, 10)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    release.set()
    # Blocked in a C wait, the thread cannot be interrupted: the model is told so.
    assert wire(agent.messages)[-1] == results(("m", BACKGROUND_TEXT, True))
    await agent.run("status?")
    assert runs == ["migrate"]


def test_cancel_through_asyncio_run_stops_cleanly() -> None:
    # asyncio.run cancels its main task on Ctrl-C (Python 3.11's Runner), which takes the
    # same path as this cancel.
    model = ScriptedModel([reply("slow text " * 5, chunk_delay=0.01)])
    agent = Agent(model, tools=[])

    async def main() -> None:
        first = asyncio.Event()
        task = asyncio.ensure_future(agent.run("x", on_event=lambda e: first.set()))
        await first.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    assert agent.last_result is not None
    assert agent.last_result.stop_reason == "stopped"
    assert conversation_problems(agent.messages) == []


def interrupting_agent() -> tuple[Agent, list[str]]:
    import _thread

    runs: list[str] = []

    @tool(register=False)
    async def long_job() -> str:
        """Presses Ctrl-C on the main thread, then waits to be stopped."""
        runs.append("long_job")
        _thread.interrupt_main()
        await asyncio.Event().wait()
        return "never"

    model = ScriptedModel([reply("", call("long_job", id="j")), reply("after")])
    return Agent(model, tools=[long_job]), runs


async def test_keyboard_interrupt_stops_run_sync_inside_a_running_loop() -> None:
    import signal

    agent, runs = interrupting_agent()
    # As in a kernel, Ctrl-C raises KeyboardInterrupt in the main thread (the test's
    # asyncio runner would otherwise turn it into a cancel of the test itself).
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt):
            agent.run_sync("go")
    finally:
        signal.signal(signal.SIGINT, previous)
    assert agent.last_result is not None
    assert agent.last_result.stop_reason == "stopped"
    assert wire(agent.messages)[-1] == results(("j", CUT_OFF_TEXT, True))
    assert (await agent.run("and now?")).text == "after"
    assert runs == ["long_job"]


def test_keyboard_interrupt_stops_run_sync_without_a_loop() -> None:
    agent, _ = interrupting_agent()
    with pytest.raises(KeyboardInterrupt):
        agent.run_sync("go")
    assert agent.last_result is not None
    assert agent.last_result.stop_reason == "stopped"
    assert conversation_problems(agent.messages) == []
