"""Agent.stop: now (calls cut off, "stopped", no exception) and after this turn (the turn's
calls finish and are answered, no further request is sent, "stopped_after_turn"). The
effects are checked: the file a finished call wrote, the file a cut-off call must not have
written, the requests the fake Messages API server received."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

from agent_helpers import Recorder, assistant, results, user, wire

from nb_tools import tool
from nb_tools.agent import (
    CUT_OFF_TEXT,
    Agent,
    RunFinished,
    ToolCallFinished,
    ToolCallStarted,
)
from nb_tools.model.anthropic import AnthropicProvider
from nb_tools.testing import ScriptedModel, call, conversation_problems, reply
from nb_tools.testing.server import FakeMessagesServer


def writer_tools(folder: Path, entered: asyncio.Event, release: asyncio.Event) -> list[Any]:
    @tool(register=False)
    async def write_note(name: str, text: str) -> str:
        """Write a note file after the gate opens."""
        entered.set()
        await release.wait()
        (folder / name).write_text(text)
        return f"wrote {name}"

    return [write_note]


async def test_stop_after_turn_finishes_the_calls_and_sends_no_further_request(
    tmp_path: Path,
) -> None:
    entered, release = asyncio.Event(), asyncio.Event()
    with FakeMessagesServer() as server:
        server.push(
            reply("Writing.", call("write_note", name="a.txt", text="A", id="toolu_a")),
            reply("Next.", call("write_note", name="b.txt", text="B", id="toolu_b")),
            reply("All done."),
        )
        provider = AnthropicProvider("claude-test", base_url=server.base_url, api_key="test")
        rec = Recorder()
        agent = Agent(
            provider, tools=writer_tools(tmp_path, entered, release), approval="auto", on_event=rec
        )
        task = asyncio.ensure_future(agent.run("write the notes"))
        await entered.wait()
        assert agent.stop(after_turn=True) is True
        release.set()
        result = await task

        assert result.stop_reason == "stopped_after_turn"
        assert result.turns == 1
        assert (tmp_path / "a.txt").read_text() == "A"  # the turn's call ran to its end
        assert not (tmp_path / "b.txt").exists()  # the next turn never came
        assert len(server.requests) == 1  # and no request was sent for it
        assert wire(agent.messages) == [
            user("write the notes"),
            assistant("Writing.", ("toolu_a", "write_note", '{"name": "a.txt", "text": "A"}')),
            results(("toolu_a", "wrote a.txt", False)),
        ]
        assert [e.status for e in rec.of(ToolCallFinished)] == ["ok"]
        assert isinstance(rec.events[-1], RunFinished)
        assert agent.last_result == result and not agent.running

        # An empty run continues from there: the model gets the tool results.
        entered.clear()
        again = await agent.run("")
        assert again.stop_reason == "end_turn" and again.text == "All done."
        assert (tmp_path / "b.txt").read_text() == "B"
        sent = wire(server.requests[1].model_request.messages)
        assert sent[-1] == results(("toolu_a", "wrote a.txt", False))
        assert conversation_problems(agent.messages) == []
        await provider.client.close()


async def test_stop_after_turn_on_the_last_turn_ends_as_the_model_ended() -> None:
    model = ScriptedModel([reply("Just text.")])
    agent = Agent(model, tools=[])

    def stop_at_start(event: object) -> None:
        if isinstance(event, RunFinished):
            return
        agent.stop(after_turn=True)

    result = await agent.run("hi", on_event=stop_at_start)
    assert result.stop_reason == "end_turn"  # nothing was left to stop


async def test_stop_now_returns_stopped_and_the_call_in_flight_has_no_effect(
    tmp_path: Path,
) -> None:
    entered, release = asyncio.Event(), asyncio.Event()
    model = ScriptedModel(
        [reply("", call("write_note", name="a.txt", text="A", id="w1")), reply("ok")]
    )
    agent = Agent(model, tools=writer_tools(tmp_path, entered, release), approval="auto")
    task = asyncio.ensure_future(agent.run("write"))
    await entered.wait()
    assert agent.stop() is True
    result = await task  # returns: a stop asked for is not an exception

    assert result.stop_reason == "stopped"
    release.set()
    await asyncio.sleep(0.05)
    assert not (tmp_path / "a.txt").exists()
    assert wire(agent.messages)[-1] == results(("w1", CUT_OFF_TEXT, True))
    assert model.remaining == 1
    assert agent.stop() is False  # nothing is running now


async def test_stop_after_turn_from_another_thread_during_an_approval(tmp_path: Path) -> None:
    """The cell's button click comes from another thread while the run waits for a person."""
    model = ScriptedModel(
        [
            reply("", call("save", text="x", id="s1")),
            reply("", call("save", text="y", id="s2")),
            reply("done"),
        ]
    )
    saved: list[str] = []

    @tool(register=False, requires_approval=True)
    def save(text: str) -> str:
        """Save text (needs approval)."""
        saved.append(text)
        return "saved"

    from nb_tools.agent import Decision

    async def approver(request: Any) -> Decision:
        clicked = threading.Thread(target=agent.stop, kwargs={"after_turn": True})
        clicked.start()
        clicked.join()
        return Decision(approved=True)

    agent = Agent(model, tools=[save], approver=approver)
    started: list[str] = []
    result = await agent.run(
        "save",
        on_event=lambda e: started.append(e.call.id) if isinstance(e, ToolCallStarted) else None,
    )
    assert result.stop_reason == "stopped_after_turn"
    assert saved == ["x"] and started == ["s1"]
    assert model.remaining == 2


async def test_a_stop_while_the_run_finishes_does_not_cancel_the_caller() -> None:
    model = ScriptedModel([reply("Done.")])
    agent = Agent(model, tools=[])

    def on_event(event: object) -> None:
        if isinstance(event, RunFinished):
            agent.stop()  # e.g. a Stop click that comes as the run ends

    result = await agent.run("hi", on_event=on_event)
    assert result.stop_reason == "end_turn"
    await asyncio.sleep(0.01)  # a stray cancel would land on this await
    assert not agent.running
