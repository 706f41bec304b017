"""The live view's logic without a kernel: a real Agent on a ScriptedModel, buttons
clicked from code (``Button.click()``)."""

from __future__ import annotations

import asyncio

import pytest

from nb_tools.agent import Agent
from nb_tools.jupyter._view import RunView
from nb_tools.testing import ScriptedModel, call, reply
from nb_tools.tool import Registry, tool
from nb_tools.transcript._recorder import TRANSCRIPT_MIME, TranscriptRecorder

pytest.importorskip("ipywidgets")


def make_tools(ran: list) -> Registry:
    @tool(requires_approval=True)
    def launch(target: str) -> str:
        """Launch something."""
        ran.append(target)
        return f"launched {target}"

    @tool
    async def wait_forever() -> str:
        """Never finishes."""
        await asyncio.sleep(60)
        return "late"

    return Registry(launch, wait_forever)


async def start(script, ran):
    model = ScriptedModel(script)
    agent = Agent(model, tools=make_tools(ran))
    view = RunView(
        TranscriptRecorder("go", model=model.model),
        loop=asyncio.get_running_loop(),
        on_stop=lambda: task.cancel(),
    )
    agent.approver = view.ask
    task = asyncio.ensure_future(agent.run("go", on_event=view.on_event))
    return agent, model, view, task


async def first_card(view: RunView):
    for _ in range(500):
        cards = view.approval_cards()
        if cards:
            return cards[0]
        await asyncio.sleep(0.01)
    raise AssertionError("no approval card appeared")


async def test_approve_click_runs_the_call_and_disables_the_buttons() -> None:
    ran: list = []
    _agent, _model, view, task = await start(
        [reply("", call("launch", target="moon")), reply("Done.")], ran
    )
    card = await first_card(view)
    assert [b.description for b in (card.approve, card.deny, card.always)] == [
        "Approve",
        "Deny",
        "Always allow launch",
    ]
    card.approve.click()
    result = await task
    assert ran == ["moon"]
    assert result.text == "Done."
    assert card.approve.disabled and card.deny.disabled and card.always.disabled
    assert "Approved by you" in card.prompt.value
    # answered: one line, no dead row of greyed buttons
    assert card.widget.children == (card.prompt,)
    tool_item = view.recorder.to_dict()["items"][1]
    assert tool_item["status"] == "ok" and tool_item["approval"]["by"] == "user"
    card.deny.click()  # a second decision is ignored
    assert "Approved by you" in card.prompt.value


async def test_deny_click_sends_the_message_to_the_model() -> None:
    ran: list = []
    _agent, model, view, task = await start(
        [reply("", call("launch", target="mars")), reply("OK.")], ran
    )
    card = await first_card(view)
    card.message.value = "not today"
    card.deny.click()
    await task
    assert ran == []
    answer = model.requests[-1].messages[-1].content[0].result
    assert answer.is_error
    assert answer.content == "The user denied this call. Message from the user: not today"
    assert 'Denied by you: "not today"' in card.prompt.value
    assert card.widget.children == (card.prompt,)
    buttons = card.buttons
    view.finish(view.recorder.to_dict())
    # the row left the view's tree; it is closed with the view all the same
    assert buttons.comm is None and card.approve.comm is None and card.message.comm is None


async def test_always_allow_remembers_the_tool() -> None:
    ran: list = []
    agent, _model, view, task = await start(
        [
            reply("", call("launch", target="a")),
            reply("", call("launch", target="b")),
            reply("Both."),
        ],
        ran,
    )
    card = await first_card(view)
    card.always.click()
    await task
    assert ran == ["a", "b"]
    assert {r.text for r in agent.rules.rules if r.source == "session"} == {"launch"}
    assert len(view.approval_cards()) == 1


async def test_the_stop_row_is_never_re_created_while_the_run_lives() -> None:
    """A box's frontend view keeps the views of the children before the first changed
    one and re-creates the rest: the Stop row is the first child in every children list
    the view sends (text, cards, approval and the Continue prompt all come after it)."""
    from nb_tools.agent._events import TextDelta

    ran: list = []
    _agent, _model, view, task = await start(
        [reply("Some text. " * 200, call("launch", target="x")), reply("Done. " * 300)], ran
    )
    outer: list = []
    row: list = []
    view.box.observe(outer.append, names="children")
    view.stop_buttons.observe(row.append, names="children")
    assert view.box.children[0] is view.stop_buttons
    card = await first_card(view)
    card.approve.click()
    await task
    for _ in range(300):
        view.on_event(TextDelta(text="more words here "))
    asking = asyncio.ensure_future(view.ask_continue("Paused at the turn limit (1 turns)."))
    await asyncio.sleep(0.05)
    view.stop_button.click()
    assert await asking is False
    assert len(outer) > 3 and row == []
    # the Stop row is first in every list sent: its view is never re-created
    assert all(change["new"][0] is view.stop_buttons for change in outer)


async def test_stop_button_cancels_the_run() -> None:
    ran: list = []
    agent, _model, view, task = await start([reply("", call("wait_forever"))], ran)
    while "wait_forever" not in str([i.get("name") for i in view.recorder.items]):
        await asyncio.sleep(0.01)
    view.stop_button.click()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert view.stop_button.disabled and view.stopped_by_button
    assert agent.last_result is not None and agent.last_result.stop_reason == "stopped"
    assert view.recorder.to_dict()["items"][-1]["status"] == "cut_off"


async def test_streamed_text_is_throttled_and_flushed_at_the_end() -> None:
    from nb_tools.agent._agent import RunResult
    from nb_tools.agent._events import RunFinished, TextDelta
    from nb_tools.model import Usage

    view = RunView(TranscriptRecorder("hi"), loop=asyncio.get_running_loop())
    updates: list[str] = []
    view.on_event(TextDelta(text="tok "))
    assert view._text is not None
    view._text.active.widget.observe(lambda ch: updates.append(ch["new"]), names="value")
    for _ in range(499):
        view.on_event(TextDelta(text="tok "))
    view.on_event(
        RunFinished(result=RunResult(text="", messages=(), usage=Usage(), stop_reason="end_turn"))
    )
    assert 1 <= len(updates) <= 10  # 500 deltas, a handful of widget updates
    # One long line is cut after a space once the piece is long: every token shows once.
    assert "".join(w.value for w in view._text.widgets()).count("tok") == 500


def test_finish_replaces_the_view_by_the_transcript_and_closes_widgets(capsys) -> None:
    view = RunView(TranscriptRecorder("hi", model="m"))
    box, footer, stop = view.box, view.footer, view.stop_button
    assert box.comm is not None
    view.finish(view.recorder.to_dict())
    assert box.comm is None and footer.comm is None and stop.comm is None
    assert TRANSCRIPT_MIME in capsys.readouterr().out


def test_stop_after_this_turn_button_asks_once_and_closes_with_the_view(capsys) -> None:
    asked: list[str] = []
    view = RunView(
        TranscriptRecorder("hi"),
        on_stop=lambda: asked.append("now"),
        on_stop_after_turn=lambda: asked.append("after"),
    )
    later = view.stop_after_button
    assert later is not None and later in view.stop_buttons.children
    later.click()
    later.click()  # disabled now: a second click asks nothing
    view.stop_button.click()
    assert asked == ["after", "now"]
    assert later.disabled and later.description == "Stopping after this turn…"
    view.finish(view.recorder.to_dict())
    assert later.comm is None and view.stop_buttons.comm is None
    # Without the callback there is no second button (no widget left unshown and open).
    assert RunView(TranscriptRecorder("x")).stop_after_button is None


async def test_progress_shows_in_the_card_with_a_bar_for_fractions() -> None:
    from nb_tools.tool import progress

    @tool(read_only=True)
    async def job() -> str:
        """A job."""
        progress("half way\n", fraction=0.5)
        await asyncio.sleep(0.4)  # longer than the card's throttle
        return "done"

    model = ScriptedModel([reply("", call("job")), reply("ok")])
    view = RunView(TranscriptRecorder("go"), loop=asyncio.get_running_loop())
    task = asyncio.ensure_future(
        Agent(model, tools=Registry(job)).run("go", on_event=view.on_event)
    )
    for _ in range(300):
        card = next(iter(view._cards.values()), None)
        if card is not None and card.bar is not None and "half way" in card.html.value:
            break
        await asyncio.sleep(0.01)
    else:
        raise AssertionError("no progress shown")
    assert card.bar.value == 50
    assert card.bar in view.box.children
    await task
    assert card.bar.value == 100 and "done" in card.html.value
    assert "half way" in card.html.value  # the progress stays beside the result, as saved


async def test_model_failure_shows_in_the_footer() -> None:
    from nb_tools.testing import Fault

    model = ScriptedModel([Fault(status=400, message="bad request body")])
    view = RunView(TranscriptRecorder("go"), loop=asyncio.get_running_loop())
    result = await Agent(model, tools=Registry()).run("go", on_event=view.on_event)
    assert result.stop_reason == "error"
    assert "Error: " in view.footer.value and "bad request body" in view.footer.value
    assert "bad request body" in view.recorder.to_dict()["error"]


async def test_stop_while_an_approval_waits_closes_the_question() -> None:
    ran: list = []
    agent, _model, view, task = await start([reply("", call("launch", target="x"))], ran)
    card = await first_card(view)
    view.stop_button.click()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert ran == []
    assert card.approve.disabled and "not decided" in card.prompt.value
    assert agent.last_result is not None and agent.last_result.stop_reason == "stopped"
    item = view.recorder.to_dict()["items"][-1]
    assert (item["status"], item["approval"]) == ("stopped", None)


async def test_budget_pauses_the_run_and_continue_goes_on() -> None:
    from nb_tools.model import Usage

    ran: list = []
    priced = Usage(input_tokens=1000, output_tokens=100, cost_usd=0.009)
    model = ScriptedModel(
        [
            reply("", call("launch", target="a"), usage=priced),
            reply("Second turn.", usage=priced),
        ],
        model="claude-sonnet-4-5",
    )
    agent = Agent(model, tools=make_tools(ran), approval="auto", budget_usd=0.01)
    first = await agent.run("go")
    # The first turn cost $0.009; the second would pass $0.01: paused before it is sent.
    assert first.stop_reason == "budget"
    assert ran == ["a"] and len(model.requests) == 1
    second = await agent.run("")
    assert second.stop_reason == "end_turn" and second.text == "Second turn."


async def test_continue_prompt_resumes_the_cell_and_adds_up_the_usage() -> None:
    ran: list = []
    model = ScriptedModel(
        [reply("", call("launch", target="a")), reply("", call("launch", target="b")), reply("ok")]
    )
    agent = Agent(model, tools=make_tools(ran), approval="auto", max_turns=1)
    recorder = TranscriptRecorder("go", model=model.model)
    view = RunView(recorder, loop=asyncio.get_running_loop())
    await agent.run("go", on_event=view.on_event)
    assert recorder.stop_reason == "max_turns"
    asking = asyncio.ensure_future(view.ask_continue("Paused at the turn limit (1 turns)."))
    await asyncio.sleep(0.05)
    assert view._continue is not None and view._continue.widget in view.box.children
    view._continue.go_on.click()
    assert await asking is True
    assert view._continue is None
    recorder.resume()
    await agent.run("", on_event=view.on_event)
    d = recorder.to_dict()
    assert ran == ["a", "b"] and d["turns"] == 2 and d["stop_reason"] == "max_turns"
    # The footer adds the two runs up (the second run's own usage is less).
    assert d["usage"]["input_tokens"] > agent.last_result.usage.input_tokens > 0


async def test_stop_after_this_turn_at_the_continue_prompt_stops_there() -> None:
    asked: list[str] = []
    view = RunView(
        TranscriptRecorder("go"),
        on_stop_after_turn=lambda: asked.append("after"),
        loop=asyncio.get_running_loop(),
    )
    asking = asyncio.ensure_future(view.ask_continue("Paused at the turn limit (1 turns)."))
    await asyncio.sleep(0.05)
    assert view.stop_after_button is not None
    view.stop_after_button.click()
    assert await asking is False  # the run is between turns: no Continue
    assert asked == ["after"]


async def test_stop_after_turn_wins_over_the_turn_limit_so_nothing_asks_to_continue() -> None:
    model = ScriptedModel([reply("", call("launch", target="a")), reply("never")])
    ran: list = []
    agent = Agent(model, tools=make_tools(ran), approval="auto", max_turns=1)

    def on_event(event: object) -> None:
        agent.stop(after_turn=True)

    result = await agent.run("go", on_event=on_event)
    assert result.stop_reason == "stopped_after_turn" and ran == ["a"]


async def test_stop_interrupts_a_running_sync_tool(tmp_path) -> None:
    import time

    log = tmp_path / "log.txt"

    @tool(read_only=True)
    def writer() -> str:
        """Writes a line every 50 ms, for a long time."""
        for i in range(400):
            with log.open("a") as f:
                f.write(f"{i}\n")
            time.sleep(0.05)
        return "finished"

    model = ScriptedModel([reply("", call("writer"))])
    view = RunView(TranscriptRecorder("go"), loop=asyncio.get_running_loop())
    task = asyncio.ensure_future(
        Agent(model, tools=Registry(writer)).run("go", on_event=view.on_event)
    )
    view._on_stop = task.cancel
    while not log.exists() or log.read_text().count("\n") < 3:
        await asyncio.sleep(0.02)
    card = next(iter(view._cards.values()))
    assert "running" in card.html.value and "cut off" not in card.html.value
    view.stop_button.click()
    with pytest.raises(asyncio.CancelledError):
        await task
    size = log.stat().st_size
    await asyncio.sleep(0.3)
    assert log.stat().st_size == size  # the thread stopped with the run
    # A read-only call that was stopped is "stopped" (it changed nothing to cut off).
    assert view.recorder.to_dict()["items"][-1]["status"] == "stopped"
    assert "stopped" in card.html.value and "running" not in card.html.value


def test_streamed_markdown_pieces_render_the_whole_text_and_stay_small() -> None:
    import re

    from nb_tools.agent._events import TextDelta
    from nb_tools.jupyter._view import TEXT_CHUNK
    from nb_tools.transcript._markdown import FORCE_FACTOR

    view = RunView(TranscriptRecorder("hi"))  # no loop: every delta renders at once
    paragraphs = [f"Paragraph {i} " + "word " * 30 + "\n\n" for i in range(30)]
    code = "```python\n" + "".join(f"x{i} = {i}\n" for i in range(200)) + "```\n\nThe end."
    text = "".join(paragraphs) + code
    sizes: list[int] = []
    for i in range(0, len(text), 7):
        view.on_event(TextDelta(text=text[i : i + 7]))
        sizes.append(min(i + 7, len(text)) - (view._text.active.start or 0))
    stream = view._text
    pieces = stream.widgets()
    assert 2 <= len(pieces) <= 5  # log-many widgets, not one per piece
    assert all(w in view.box.children for w in pieces)
    # The active piece stays bounded however long the answer grows.
    assert max(sizes) <= FORCE_FACTOR * TEXT_CHUNK + 200
    html = "".join(w.value for w in pieces)
    # Every paragraph and every code line is shown exactly once, code as code.
    for i in range(30):
        assert html.count(f"Paragraph {i} ") == 1
    assert len(re.findall(r'<span class="tn">\d+</span>', html)) == 200
    assert html.count("The end.") == 1 and "```" not in html


def test_markdown_is_rendered_escaped_and_links_are_safe() -> None:
    from nb_tools.transcript._markdown import markdown_html

    html = markdown_html(
        "**bold** <img src=x onerror=alert(1)> [x](javascript:alert(1)) ![i](http://e/x.png)"
        "\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n$x^2$"
    )
    assert "<strong>bold</strong>" in html and "<table>" in html
    assert "<img" not in html and "&lt;img" in html
    assert "javascript:" not in html and 'href="http://e/x.png"' in html
    assert "\\(x^2\\)" in html


async def test_a_long_result_is_trimmed_for_the_model_and_the_card_says_so() -> None:
    from nb_tools.jupyter._trim import trim_for_model

    @tool(read_only=True)
    def dump() -> str:
        """A lot of text."""
        return "".join(f"line {i}\n" for i in range(20_000))

    model = ScriptedModel([reply("", call("dump")), reply("ok")])
    view = RunView(TranscriptRecorder("go"), loop=asyncio.get_running_loop())
    agent = Agent(model, tools=Registry(dump), middlewares=(trim_for_model(1_000),))
    await agent.run("go", on_event=view.on_event)
    sent = model.requests[-1].messages[-1].content[0].result.content
    assert len(sent.encode()) <= 1_000
    assert sent.startswith("line 0\n") and sent.endswith("line 19999\n")
    [item] = [i for i in view.recorder.to_dict()["items"] if i["kind"] == "tool"]
    total = len("".join(f"line {i}\n" for i in range(20_000)))
    assert item["model_saw"] == {"bytes": len(sent.encode()), "of": total}
    assert item["result"].startswith("line 0\nline 1\n") and len(item["result"]) > 10_000
    card = next(iter(view._cards.values()))
    assert f"of {total:,} bytes" in card.html.value


async def test_a_tool_that_raises_shows_its_traceback_collapsed_the_model_the_message() -> None:
    @tool(read_only=True)
    def boom(key: str) -> str:
        """Looks a key up."""
        return {}[key]

    model = ScriptedModel([reply("", call("boom", key="1")), reply("It failed.")])
    view = RunView(TranscriptRecorder("go"), loop=asyncio.get_running_loop())
    await Agent(model, tools=Registry(boom)).run("go", on_event=view.on_event)
    sent = model.requests[-1].messages[-1].content[0].result
    assert sent.is_error and "Traceback" not in sent.content and "KeyError" in sent.content
    [item] = [i for i in view.recorder.to_dict()["items"] if i["kind"] == "tool"]
    assert item["traceback"].startswith("Traceback (most recent call last)")
    assert "return {}[key]" in item["traceback"]
    html = next(iter(view._cards.values())).html.value
    assert '<details class="nbtools-traceback">' in html and "return {}[key]" in html


def test_a_long_line_is_cut_after_a_sentence_never_before_its_last_word() -> None:
    from nb_tools.transcript._markdown import FORCE_FACTOR, safe_split

    text = "".join(f"Sentence number {i} says a few words here. " for i in range(40)) + "unfin"
    split = safe_split(text, 0, 200)
    assert split is not None
    cut, reopen = split
    assert reopen == "" and text[:cut].endswith("here. ") and cut < len(text) - 10
    # no sentence end in reach: after a space, but not before the word being written
    words = "word " * (FORCE_FACTOR * 60) + "unfin"
    cut2, _ = safe_split(words, 0, 200) or (0, "")
    assert 0 < cut2 <= len(words) - len("unfin") and words[cut2 - 1] == " "


def test_a_finished_bash_card_shows_its_command_and_output_once() -> None:
    from nb_tools.transcript._html import tool_item_html

    out = "".join(f"file{i}\n" for i in range(30))
    item = {
        "kind": "tool",
        "name": "bash",
        "headline": {"arg": "command", "kind": "command", "language": "bash"},
        "arguments": '{"command": "ls"}',
        "status": "ok",
        "result": out,
        "progress": out,
        "duration": 0.093,
    }
    html = tool_item_html(item)
    assert html.startswith(
        '<details class="nbtools-card" data-nbt-item="tool" data-status="ok" open'
    )
    assert "<summary" in html and ">Arguments</summary>" not in html  # the command in sight
    assert 'data-nbt="progress"' not in html  # the output once, as the result
    preview = html.split('data-nbt="result"', 1)[1].split("</pre>", 1)[0]
    assert "file9 …" in preview and "file10" not in preview
    job = dict(item, name="job", arguments="{}", result="done", progress="half way\n")
    assert 'data-nbt="progress"' in tool_item_html(job)


def test_the_models_text_cannot_make_an_action_button() -> None:
    """The extension acts on buttons with ``data-nbt-action`` (Copy, Insert as cell,
    Continue): the model's Markdown shows such a button as text, never as a button."""
    from nb_tools.transcript._markdown import markdown_html

    html = markdown_html('<button data-nbt-action="continue">Continue</button>\n\nok')
    assert "<button" not in html and "&lt;button" in html
