"""The tool loop against ScriptedModel: turns, events, scheduling, errors, limits."""

from __future__ import annotations

import asyncio
import contextlib
import subprocess
import sys
import threading

import pytest
from agent_helpers import Recorder, assistant, results, user, wire

from nb_tools import Registry, default_registry, progress, tool
from nb_tools.agent import (
    Agent,
    ModelFailed,
    RunFinished,
    TextDelta,
    ToolArgumentsDelta,
    ToolCallFinished,
    ToolCallStarted,
    ToolProgress,
    UsageUpdated,
)
from nb_tools.model import Usage
from nb_tools.testing import Fault, ScriptedModel, call, conversation_problems, reply


@tool(register=False)
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool(register=False)
def boom(reason: str) -> str:
    """Always fails."""
    raise ValueError(reason)


def make(script, *tools, **kwargs) -> tuple[Agent, ScriptedModel, Recorder]:
    model = ScriptedModel(script)
    rec = Recorder()
    agent = Agent(model, tools=tools or [add], on_event=rec, **kwargs)
    return agent, model, rec


async def test_text_only_run_streams_and_keeps_the_conversation() -> None:
    usage = Usage(input_tokens=11, output_tokens=7)
    agent, model, rec = make([reply("Hello there, how are you?", usage=usage)])

    result = await agent.run("hi")

    assert result.text == "Hello there, how are you?"
    assert result.stop_reason == "end_turn"
    assert result.error is None
    assert result.turns == 1
    assert result.usage == usage
    assert agent.usage == usage
    assert wire(result.messages) == [user("hi"), assistant("Hello there, how are you?")]
    assert result.messages == agent.messages
    deltas = rec.of(TextDelta)
    assert len(deltas) > 1
    assert "".join(d.text for d in deltas) == "Hello there, how are you?"
    assert rec.kinds()[0] == "TurnStarted"
    assert rec.kinds()[-2:] == ["UsageUpdated", "RunFinished"]
    assert rec.events[-1] == RunFinished(result=result)
    assert agent.last_result == result
    assert wire(model.requests[0].messages) == [user("hi")]
    assert [s.name for s in model.requests[0].tools] == ["add"]


async def test_tool_round_sends_results_and_continues() -> None:
    agent, model, rec = make([reply("Adding.", call("add", a=1, b=2, id="t1")), reply("It is 3.")])

    result = await agent.run("1+2?")

    assert result.stop_reason == "end_turn"
    assert result.turns == 2
    assert result.text == "It is 3."
    assert wire(model.requests[1].messages) == [
        user("1+2?"),
        assistant("Adding.", ("t1", "add", '{"a": 1, "b": 2}')),
        results(("t1", "3", False)),
    ]
    assert wire(result.messages)[-1] == assistant("It is 3.")
    assert rec.kinds() == [
        "TurnStarted",
        "TextDelta",
        "TextDelta",
        "TextDelta",
        *["ToolArgumentsDelta"] * 4,  # the call begins, then its arguments in 3 pieces
        "UsageUpdated",
        "ToolCallStarted",
        "ToolCallFinished",
        "TurnStarted",
        *["TextDelta"] * 3,
        "UsageUpdated",
        "RunFinished",
    ]
    pieces = rec.of(ToolArgumentsDelta)
    assert {(p.call_id, p.name) for p in pieces} == {("t1", "add")}
    assert pieces[0].partial_json == ""
    assert "".join(p.partial_json for p in pieces) == '{"a": 1, "b": 2}'
    started = rec.of(ToolCallStarted)[0]
    assert (started.call.id, started.info.name, started.needs_approval) == ("t1", "add", False)
    finished = rec.of(ToolCallFinished)[0]
    assert (finished.status, finished.result.content) == ("ok", "3")
    totals = [e.total for e in rec.of(UsageUpdated)]
    assert totals[-1] == result.usage == totals[0] + rec.of(UsageUpdated)[1].usage


async def test_second_run_continues_the_conversation() -> None:
    agent, model, _ = make([reply("first"), reply("second")])
    await agent.run("one")
    result = await agent.run("two")
    assert wire(model.requests[1].messages) == [
        user("one"),
        assistant("first"),
        user("two"),
    ]
    assert result.text == "second"
    agent.reset()
    assert agent.messages == ()
    assert agent.last_result is None


async def test_usage_accumulates_across_runs() -> None:
    u1, u2 = Usage(input_tokens=5, output_tokens=1), Usage(input_tokens=9, output_tokens=2)
    agent, _, _ = make([reply("a", usage=u1), reply("b", usage=u2)])
    r1 = await agent.run("x")
    r2 = await agent.run("y")
    assert (r1.usage, r2.usage, agent.usage) == (u1, u2, u1 + u2)


async def test_adjacent_read_only_calls_run_in_parallel() -> None:
    barrier = asyncio.Barrier(3)

    @tool(register=False, read_only=True)
    async def meet(n: int) -> str:
        """Waits until all three calls have arrived (fails if they run one by one)."""
        await asyncio.wait_for(barrier.wait(), timeout=10)
        return f"met {n}"

    agent, model, _ = make(
        [reply("", *(call("meet", n=i, id=f"m{i}") for i in range(3))), reply("done")], meet
    )
    result = await agent.run("go")
    assert result.stop_reason == "end_turn"
    assert wire(model.requests[1].messages)[-1] == results(
        ("m0", "met 0", False), ("m1", "met 1", False), ("m2", "met 2", False)
    )


async def test_sync_read_only_calls_run_in_parallel_threads() -> None:
    barrier = threading.Barrier(4, timeout=10)

    @tool(register=False, read_only=True)
    def meet_sync(n: int) -> str:
        """Blocks until all four calls have arrived."""
        barrier.wait()
        return f"met {n}"

    agent, model, _ = make(
        [reply("", *(call("meet_sync", n=i, id=f"s{i}") for i in range(4))), reply("ok")],
        meet_sync,
    )
    await agent.run("go")
    assert [r["content"] for r in wire(model.requests[1].messages)[-1]["content"]] == [
        "met 0",
        "met 1",
        "met 2",
        "met 3",
    ]


async def test_writers_run_one_at_a_time_in_call_order() -> None:
    log: list[str] = []

    @tool(register=False)
    async def write(label: str) -> str:
        """A writer that logs its start and end."""
        log.append(f"start {label}")
        await asyncio.sleep(0)
        log.append(f"end {label}")
        return label

    @tool(register=False, read_only=True)
    async def look(label: str) -> str:
        """A reader."""
        log.append(f"look {label}")
        return label

    agent, model, _ = make(
        [
            reply("", call("write", label="a"), call("look", label="b"), call("write", label="c")),
            reply("ok"),
        ],
        write,
        look,
    )
    await agent.run("go")
    assert log == ["start a", "end a", "look b", "start c", "end c"]
    assert [r["content"] for r in wire(model.requests[1].messages)[-1]["content"]] == [
        "a",
        "b",
        "c",
    ]


async def test_duplicate_key_unknown_tool_and_exception_become_error_results() -> None:
    agent, model, rec = make(
        [
            reply(
                "",
                call("add", raw='{"a": 1, "a": 2, "b": 3}', id="dup"),
                call("nope", id="unk"),
                call("boom", reason="disk on fire", id="exc"),
                call("add", raw='{"a": 1, "b": ', id="bad"),
            ),
            reply("recovered"),
        ],
        add,
        boom,
    )
    result = await agent.run("go")
    assert result.stop_reason == "end_turn"
    answers = {r["tool_use_id"]: r for r in wire(model.requests[1].messages)[-1]["content"]}
    assert all(r["is_error"] for r in answers.values())
    assert "duplicate" in answers["dup"]["content"].lower()
    assert "/a" in answers["dup"]["content"]
    assert answers["unk"]["content"] == "unknown tool 'nope'; available tools: add, boom"
    assert "ValueError: disk on fire" in answers["exc"]["content"]
    assert "invalid" in answers["bad"]["content"].lower()
    assert [e.status for e in rec.of(ToolCallFinished)] == ["error"] * 4


async def test_max_turns_executes_the_last_calls_then_stops_and_can_continue() -> None:
    agent, model, _ = make(
        [reply(f"turn {i}", call("add", a=i, b=0, id=f"c{i}")) for i in range(3)]
        + [reply("finally")],
        max_turns=2,
    )
    result = await agent.run("loop")
    assert (result.stop_reason, result.turns, result.text) == ("max_turns", 2, "turn 1")
    assert wire(result.messages)[-1] == results(("c1", "1", False))
    assert conversation_problems(result.messages) == []

    again = await agent.run("go on")
    assert (again.stop_reason, again.turns, again.text) == ("end_turn", 2, "finally")
    last_user = wire(model.requests[2].messages)[-1]
    assert last_user == {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": "c1", "content": "1", "is_error": False},
            {"type": "text", "text": "go on"},
        ],
    }


async def test_empty_prompt_continues_after_tool_results() -> None:
    agent, model, _ = make([reply("", call("add", a=2, b=2, id="x")), reply("four")], max_turns=1)
    assert (await agent.run("q")).stop_reason == "max_turns"
    result = await agent.run("")
    assert result.text == "four"
    assert wire(model.requests[1].messages)[-1] == results(("x", "4", False))
    with pytest.raises(ValueError, match="prompt is empty"):
        await agent.run("  ")


async def test_model_error_ends_the_run_and_the_next_run_works() -> None:
    agent, model, rec = make([Fault(status=500, message="overloaded"), reply("fine now")])
    result = await agent.run("hello")
    assert result.stop_reason == "error"
    assert result.error is not None and "overloaded" in result.error
    assert rec.of(ModelFailed) == [ModelFailed(message=result.error, status=500)]
    assert result.error.endswith("(the prompt was not kept: run the cell again to send it)")
    assert wire(agent.messages) == []  # nothing left to join the next prompt

    second = await agent.run("again")
    assert second.stop_reason == "end_turn"
    assert wire(model.requests[1].messages) == [
        {"role": "user", "content": [{"type": "text", "text": "again"}]},
    ]


async def test_script_exhausted_is_a_clear_error() -> None:
    agent, _, _ = make([reply("", call("add", a=1, b=1))])
    result = await agent.run("go")
    assert result.stop_reason == "error"
    assert result.error is not None
    assert result.error.startswith("ScriptedModel: script exhausted after 1 replies")
    assert conversation_problems(result.messages) == []


async def test_failing_event_handlers_do_not_stop_the_run() -> None:
    seen: list[str] = []

    def bad(event: object) -> None:
        raise RuntimeError("display broke")

    async def good(event: object) -> None:
        await asyncio.sleep(0)
        seen.append(type(event).__name__)

    model = ScriptedModel([reply("", call("add", a=1, b=1)), reply("ok")])
    agent = Agent(model, tools=[add], on_event=bad)
    with pytest.warns(RuntimeWarning, match="display broke"):
        result = await agent.run("go", on_event=good)
    assert result.stop_reason == "end_turn"
    assert seen[-1] == "RunFinished"
    assert "ToolCallFinished" in seen


async def test_progress_is_wanted_only_when_a_handler_listens() -> None:
    """Without an event handler nobody receives progress: the run installs no sink, so a
    tool (bash) skips decoding and redacting it; with one, progress is delivered."""
    from nb_tools.tool._progress import progress_wanted

    wanted: list[bool] = []

    @tool(register=False, read_only=True)
    def step() -> str:
        """Reports progress."""
        wanted.append(progress_wanted())
        progress("half")
        return "done"

    seen: list[object] = []
    for on_event in (None, seen.append):
        agent = Agent(ScriptedModel([reply("", call("step")), reply("ok")]), tools=[step])
        result = await agent.run("go", on_event=on_event)
        assert result.stop_reason == "end_turn"
    assert wanted == [False, True]
    assert [e.progress.text for e in seen if isinstance(e, ToolProgress)] == ["half"]


async def test_an_async_progress_handler_that_fails_is_named_with_its_event() -> None:
    @tool(register=False, read_only=True)
    def step() -> str:
        """Reports progress."""
        progress("half", fraction=0.5)
        return "done"

    async def bad(event: object) -> None:
        if type(event).__name__ == "ToolProgress":
            raise RuntimeError("progress bar broke")

    model = ScriptedModel([reply("", call("step")), reply("ok")])
    agent = Agent(model, tools=[step], on_event=bad)
    with pytest.warns(RuntimeWarning, match="progress bar broke while handling ToolProgress"):
        result = await agent.run("go")
    assert result.stop_reason == "end_turn"


async def test_progress_reaches_events_from_async_and_sync_tools() -> None:
    @tool(register=False, read_only=True)
    async def slow_async() -> str:
        """Reports progress."""
        progress("half", fraction=0.5)
        return "a"

    @tool(register=False, read_only=True)
    def slow_sync() -> str:
        """Reports progress from a worker thread."""
        progress("line 1\n")
        return "s"

    agent, _, rec = make(
        [reply("", call("slow_async", id="pa"), call("slow_sync", id="ps")), reply("ok")],
        slow_async,
        slow_sync,
    )
    await agent.run("go")
    got = {(e.call_id, e.progress.text, e.progress.fraction) for e in rec.of(ToolProgress)}
    assert got == {("pa", "half", 0.5), ("ps", "line 1\n", None)}
    kinds = rec.kinds()
    assert kinds.index("ToolProgress") < kinds.index("RunFinished")


async def test_events_iterator_yields_the_same_events_as_on_event() -> None:
    script = [reply("hi", call("add", a=1, b=2, id="e1")), reply("bye")]
    agent, _, rec = make(list(script))
    await agent.run("go")
    other = Agent(ScriptedModel(list(script)), tools=[add])
    got = [e async for e in other.events("go")]
    assert [type(e).__name__ for e in got] == rec.kinds()
    assert isinstance(got[-1], RunFinished)
    assert got[-1].result.text == "bye"


async def test_leaving_the_events_iterator_early_stops_the_run() -> None:
    @tool(register=False)
    async def wait_forever() -> str:
        """Never returns by itself."""
        await asyncio.Event().wait()
        return "never"

    agent = Agent(
        ScriptedModel([reply("Waiting.", call("wait_forever", id="w"))]), tools=[wait_forever]
    )
    async with contextlib.aclosing(agent.events("go")) as events:
        async for event in events:
            if isinstance(event, ToolCallStarted):
                break
    assert agent.last_result is not None
    assert agent.last_result.stop_reason == "stopped"
    assert wire(agent.messages)[-1]["content"][0]["tool_use_id"] == "w"
    assert conversation_problems(agent.messages) == []


async def test_run_sync_works_inside_a_running_loop() -> None:
    agent, model, rec = make([reply("", call("add", a=2, b=3, id="r")), reply("5")])
    result = agent.run_sync("sum")
    assert result.text == "5"
    assert wire(model.requests[1].messages)[-1] == results(("r", "5", False))
    assert rec.kinds()[-1] == "RunFinished"


def test_run_sync_without_a_loop() -> None:
    agent, _, _ = make([reply("plain")])
    assert agent.run_sync("x").text == "plain"


async def test_tools_none_reads_the_default_registry_at_each_run() -> None:
    model = ScriptedModel([reply("a"), reply("b")])
    agent = Agent(model)
    await agent.run("one")

    @tool
    def late_tool_for_agent_test() -> str:
        """Registered after the agent was made."""
        return "late"

    try:
        await agent.run("two")
    finally:
        default_registry().remove("late_tool_for_agent_test")
    assert "late_tool_for_agent_test" not in [s.name for s in model.requests[0].tools]
    assert "late_tool_for_agent_test" in [s.name for s in model.requests[1].tools]


async def test_a_registry_is_used_as_given() -> None:
    registry = Registry(add)
    agent, model, _ = make([reply("x")])
    agent = Agent(model, tools=registry)
    registry.add(boom)
    await agent.run("go")
    assert [s.name for s in model.requests[0].tools] == ["add", "boom"]


async def test_a_second_concurrent_run_is_refused() -> None:
    agent, _, _ = make([reply("slow", chunk_delay=0.01), reply("x")])
    first = asyncio.ensure_future(agent.run("one"))
    await asyncio.sleep(0)  # the first run starts and waits between streamed chunks
    with pytest.raises(RuntimeError, match="already running"):
        await agent.run("two")
    assert (await first).text == "slow"


async def test_system_prompt_and_max_tokens_reach_the_request() -> None:
    agent, model, _ = make([reply("x")], system="Be brief.", max_tokens=123)
    await agent.run("go")
    assert (model.requests[0].system, model.requests[0].max_tokens) == ("Be brief.", 123)


def test_bad_arguments_to_agent_say_what_to_do() -> None:
    with pytest.raises(ValueError, match="unknown approval policy 'sometimes'"):
        Agent(ScriptedModel([]), approval="sometimes")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="max_turns must be >= 1"):
        Agent(ScriptedModel([]), max_turns=0)


def test_importing_the_agent_does_not_import_anthropic() -> None:
    code = (
        "import sys, nb_tools.agent, nb_tools.testing; "
        "a = nb_tools.agent.Agent('claude-test'); "
        "print('anthropic' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_conversation_problems_names_what_the_api_would_reject() -> None:
    from nb_tools.model import Message, TextBlock, ToolUseBlock

    msgs = (
        Message(role="user", content=(TextBlock(text="q"),)),
        Message(role="assistant", content=(ToolUseBlock(id="u1", name="f", arguments="{}"),)),
        Message(role="user", content=(TextBlock(text="next"),)),
    )
    problems = conversation_problems(msgs)
    assert any("['u1'] have no tool_result" in p for p in problems)
    assert conversation_problems(msgs[:1]) == []
    assert conversation_problems(msgs[1:2]) == [
        "messages.0: the first message must have role 'user'"
    ]


async def test_an_agent_can_continue_another_agents_conversation() -> None:
    first, _, _ = make([reply("one")])
    await first.run("a")
    model = ScriptedModel([reply("two")])
    second = Agent(model, tools=[add], messages=first.messages)
    await second.run("b")
    assert wire(model.requests[0].messages) == [user("a"), assistant("one"), user("b")]
    assert len(first.messages) == 2


def test_run_result_repr_is_one_line_that_does_not_grow_with_the_conversation() -> None:
    """``asyncio.run`` formats the finished task's result (twice, on 3.11, as it puts the
    Ctrl-C handler back): a repr of every message cost each run more as the conversation
    grew."""
    script = [reply("", call("add", a=i, b=1)) for i in range(12)] + [reply("done " * 100)]
    agent, _, _ = make(script)
    result = asyncio.run(agent.run("add some numbers " * 50))
    text = repr(result)
    assert text.startswith("RunResult(stop_reason='end_turn', turns=13, text='done done")
    assert "messages=26, calls=12, changes=12, usage=Usage(" in text
    assert "\n" not in text and len(text) < 500
    assert "add some numbers" not in text  # no message is printed
