"""%load_ext nb_tools and %%agent in a real kernel against the fake Messages API server:
clicks sent the way JupyterLab sends them, Interrupt, Stop, transcripts."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
from kernel_helpers import TRANSCRIPT, WIDGET_VIEW, Execution, Kernel, clicker

from nb_tools.testing import call, reply

pytestmark = pytest.mark.kernel

SETUP = '''
%load_ext nb_tools
import asyncio, sys
from nb_tools import tool, progress

ran = []

@tool(requires_approval=True)
def book_table(restaurant: str, people: int) -> str:
    """Book a table.

    Args:
        restaurant: Name of the restaurant.
        people: How many guests.
    """
    ran.append((restaurant, people))
    return f"Booked {restaurant} for {people}"

@tool
async def slow_job(steps: int) -> str:
    """A long job that reports progress."""
    for i in range(steps):
        progress(f"step {i}\\n", fraction=i / steps)
        await asyncio.sleep(0.2)
    ran.append(("slow", steps))
    return "slow done"
'''


@pytest.fixture(scope="module")
def ready(kernel: Kernel) -> Kernel:
    kernel.ok(SETUP)
    return kernel


LIVE_MIME = "application/vnd.nbtools.live+json"


def final_state(ex: Execution, *, interrupted: bool = False) -> dict:
    """The last display output must be the transcript; no widget view may remain."""
    if interrupted:  # the cell ends with a one-line error, so "Run All" stops there
        assert [(e["ename"], len(e["traceback"])) for e in ex.errors] == [("RunInterrupted", 1)]
        assert ex.outputs[-1]["output_type"] == "error"
        assert ex.reply["status"] == "error"
    else:
        assert not ex.errors, ex.errors[0].get("traceback")
        assert ex.reply["status"] == "ok"
    assert ex.displays, "no display output"
    # A run that changed files or cells ends with its review list: a live view (marked, so
    # the extension replaces it once the kernel is gone); no other widget view may remain.
    shown = [o for o in ex.displays if LIVE_MIME not in o["data"]]
    for out in shown:
        assert WIDGET_VIEW not in out["data"], "a widget view was left in the outputs"
    last = shown[-1]["data"]
    assert TRANSCRIPT in last and "text/html" in last and "text/plain" in last
    return last[TRANSCRIPT]


def tool_results(server, index: int = -1) -> list[dict]:
    """The tool_result blocks of the last user message of a recorded request."""
    body = server.requests[index].body
    return [b for b in body["messages"][-1]["content"] if b.get("type") == "tool_result"]


def result_text(block: dict) -> str:
    content = block["content"]
    if isinstance(content, str):
        return content
    return "".join(c.get("text", "") for c in content)


def test_load_ext_is_light_and_registers_magics(kernel: Kernel) -> None:
    ex = kernel.ok(
        "%load_ext nb_tools\n"  # it imports no SDK itself: test_warm.py, test_imports.py
        "ip = get_ipython()\n"
        "print('agent' in ip.magics_manager.magics['cell'], "
        "'agent' in ip.magics_manager.magics['line'], 'tools' in ip.magics_manager.magics['line'])"
    )
    assert ex.stdout.splitlines() == ["True True True"]


def test_approve_runs_the_tool_and_the_model_gets_its_result(ready: Kernel, server) -> None:
    server.push(
        reply("Booking.", call("book_table", restaurant="Chez Panisse", people=4)),
        reply("Your table is booked."),
    )
    n = len(server.requests)
    ex = ready.run(
        "%%agent --new\nBook a table for 4 at Chez Panisse", on_message=clicker("Approve")
    )
    transcript = final_state(ex)
    assert ex.buttons("Approve") and ex.buttons("Deny")
    assert ex.buttons("Always allow book_table")
    assert len(server.requests) == n + 2
    [block] = tool_results(server)
    assert result_text(block) == "Booked Chez Panisse for 4"
    assert not block.get("is_error")
    tool = next(i for i in transcript["items"] if i["kind"] == "tool")
    assert tool["status"] == "ok"
    assert tool["approval"] == {
        "approved": True,
        "by": "user",
        "message": None,
        "source": "person",
        "rule": None,
    }
    assert transcript["stop_reason"] == "end_turn"
    assert transcript["items"][-1] == {"kind": "assistant", "text": "Your table is booked."}
    assert ready.ok("print(ran)").stdout.strip() == "[('Chez Panisse', 4)]"
    # every widget the run opened was closed, but the style and layout models that every
    # run's view shares (made once per kernel)
    opened = {m["content"]["comm_id"] for m in ex.of_type("comm_open")}
    closed = {m["content"]["comm_id"] for m in ex.of_type("comm_close")}
    shared = ready.ok(
        "from nb_tools.jupyter._view import _SHARED\n"
        "print(' '.join(w.model_id for w in _SHARED.values()))"
    ).stdout.split()
    assert opened and opened - set(shared) <= closed and not set(shared) & closed
    assert len(shared) <= 5


def test_deny_with_a_message_does_not_run_the_tool(ready: Kernel, server) -> None:
    ready.ok("ran.clear()")
    server.push(
        reply("Booking.", call("book_table", restaurant="Nopa", people=12)),
        reply("Understood, I did not book."),
    )
    state: dict = {}

    def on_message(k: Kernel, msg: dict, ex: Execution) -> None:
        if msg["msg_type"] != "comm_open" or "sent" in state:
            return
        s = msg["content"]["data"]["state"]
        if s.get("_model_name") == "ButtonModel" and s.get("description") == "Deny":
            state["deny"] = msg["content"]["comm_id"]
        if s.get("_model_name") == "TextModel" and "deny" in state:
            k.set_state(msg["content"]["comm_id"], {"value": "too many people"})
            k.click(state["deny"])
            state["sent"] = True

    ex = ready.run("%%agent\nBook for 12 at Nopa", on_message=on_message)
    transcript = final_state(ex)
    [block] = tool_results(server)
    assert block["is_error"] is True
    assert result_text(block) == (
        "The user denied this call. Message from the user: too many people"
    )
    tool = next(i for i in transcript["items"] if i["kind"] == "tool")
    assert tool["status"] == "denied"
    assert tool["approval"] == {
        "approved": False,
        "by": "user",
        "message": "too many people",
        "source": "person",
        "rule": None,
    }
    assert ready.ok("print(ran)").stdout.strip() == "[]"


def test_always_allow_skips_the_next_approval(ready: Kernel, server) -> None:
    ready.ok("ran.clear()")
    server.push(
        reply("", call("book_table", restaurant="A", people=1)),
        reply("", call("book_table", restaurant="B", people=2)),
        reply("Both booked."),
    )
    ex = ready.run("%%agent\nBook two", on_message=clicker("Always allow book_table"))
    transcript = final_state(ex)
    assert len(ex.buttons("Always allow book_table")) == 1  # asked once only
    approvals = [i["approval"]["by"] for i in transcript["items"] if i["kind"] == "tool"]
    assert approvals == ["user", "rule:allow book_table [session]"]  # the session rule
    assert ready.ok("print(ran)").stdout.strip() == "[('A', 1), ('B', 2)]"


def test_interrupt_during_a_tool_keeps_the_kernel_and_the_conversation(
    ready: Kernel, server
) -> None:
    server.push(reply("Working.", call("slow_job", steps=300)))
    started: dict = {}

    def on_message(k: Kernel, msg: dict, ex: Execution) -> None:
        # the tool card reports progress: the slow tool is running, interrupt now
        if (
            msg["msg_type"] == "comm_msg"
            and "interrupted" not in started
            and "step 1" in json.dumps(msg["content"])
        ):
            started["interrupted"] = time.monotonic()
            k.km.interrupt_kernel()

    ex = ready.run("%%agent\nRun the slow job", on_message=on_message, timeout=30)
    assert "interrupted" in started
    transcript = final_state(ex, interrupted=True)
    assert transcript["stop_reason"] == "stopped"
    tool = next(i for i in transcript["items"] if i["kind"] == "tool")
    assert tool["status"] in ("cut_off", "stopped")
    assert ready.ok("print(1 + 1)").stdout.strip() == "2"
    # the next run continues the conversation; the model sees the cut-off call answered
    server.push(reply("OK, I stopped."))
    ex = ready.ok("%%agent\nWhat happened?")
    final_state(ex)
    messages = server.requests[-1].body["messages"]
    answers = [
        b
        for m in messages
        if m["role"] == "user"
        for b in m["content"]
        if isinstance(b, dict) and b.get("type") == "tool_result"
    ]
    assert "cut off" in result_text(answers[-1]) or "stopped" in result_text(answers[-1])
    assert messages[-1]["content"][-1]["text"] == "What happened?"


def click_at_progress(description: str, state: dict) -> Any:
    """An ``on_message`` that clicks the button ``description`` once the running tool has
    reported its second step (``state["clicked"]`` says it did)."""

    def on_message(k: Kernel, msg: dict, ex: Execution) -> None:
        if msg["msg_type"] == "comm_open":
            s = msg["content"]["data"]["state"]
            if s.get("_model_name") == "ButtonModel" and s.get("description") == description:
                state["button"] = msg["content"]["comm_id"]
        if (
            msg["msg_type"] == "comm_msg"
            and "button" in state
            and "clicked" not in state
            and "step 1" in json.dumps(msg["content"])
        ):
            state["clicked"] = True
            k.click(state["button"])

    return on_message


def test_stop_button_stops_the_run(ready: Kernel, server) -> None:
    server.push(reply("Working.", call("slow_job", steps=300)))
    state: dict = {}
    on_message = click_at_progress("Stop", state)

    ex = ready.run("%%agent\nRun the slow job", on_message=on_message, timeout=30)
    assert state.get("clicked")
    transcript = final_state(ex)
    assert transcript["stop_reason"] == "stopped"
    server.push(reply("Fine."))
    final_state(ready.ok("%%agent\nnever mind"))


def test_stop_after_this_turn_lets_the_call_finish_then_sends_nothing(
    ready: Kernel, server
) -> None:
    server.push(reply("Working.", call("slow_job", steps=6)), reply("Should not be asked."))
    ready.ok("ran.clear()")
    before = len(server.requests)
    state: dict = {}
    on_message = click_at_progress("Stop after this turn", state)

    ex = ready.run("%%agent\nRun the slow job", on_message=on_message, timeout=30)
    assert state.get("clicked")
    transcript = final_state(ex)
    assert transcript["stop_reason"] == "stopped_after_turn"
    assert [i["status"] for i in transcript["items"] if i["kind"] == "tool"] == ["ok"]
    assert len(server.requests) == before + 1  # the turn's request only
    assert ready.ok("print(ran)").stdout.strip() == "[('slow', 6)]"  # the job ran to its end
    # --continue goes on from the answered call: the model gets its result.
    final_state(ready.ok("%%agent --continue"))
    last = server.requests[-1].body["messages"][-1]
    assert last["content"][0]["type"] == "tool_result"
    assert "slow done" in json.dumps(last["content"][0])


def test_line_magic_and_python_api(ready: Kernel, server) -> None:
    server.push(reply("Hello from the line magic."))
    transcript = final_state(ready.ok("%agent --approval deny say hello"))
    assert transcript["items"][0] == {"kind": "user", "text": "say hello"}
    server.push(reply("Hello from Python."))
    ex = ready.ok(
        "import nb_tools\nr = await nb_tools.run_agent('hi', show=False)\n"
        "print(r.text, r.stop_reason)"
    )
    assert ex.stdout.strip() == "Hello from Python. end_turn"


def test_policy_from_the_environment_and_options(ready: Kernel, server) -> None:
    # book_table was "always allowed" above (a session rule, which would decide first)
    ready.ok("%nbtools forget book_table")
    ready.ok("ran.clear()\nimport os\nos.environ['NB_TOOLS_APPROVAL'] = 'auto'")
    server.push(reply("", call("book_table", restaurant="C", people=3)), reply("Done."))
    ex = ready.ok("%%agent --max-turns 5 --system 'Be brief.' --tools book_table\nbook C")
    transcript = final_state(ex)
    assert not ex.buttons("Approve")
    body = server.requests[-1].body
    assert [t["name"] for t in body["tools"]] == ["book_table"]
    assert "Be brief." in json.dumps(body.get("system"))
    assert "'Be brief.'" not in json.dumps(body.get("system"))  # the quotes are shell quotes
    assert [i["approval"]["by"] for i in transcript["items"] if i["kind"] == "tool"] == [
        "policy:auto"
    ]
    ready.ok("del os.environ['NB_TOOLS_APPROVAL']")


def test_bad_options_are_usage_errors(ready: Kernel) -> None:
    ex = ready.run("%%agent --tools nope\nhi")
    stderr = "".join(o.get("text", "") for o in ex.outputs if o.get("name") == "stderr")
    assert stderr.startswith("UsageError: unknown tool 'nope'"), stderr
    assert ex.displays == []


def test_rich_result_shows_in_its_card(ready: Kernel, server) -> None:
    pytest.importorskip("pandas")
    ready.ok(
        "import pandas as pd\n"
        "@tool(read_only=True)\n"
        "def sales() -> object:\n"
        "    '''Monthly sales.'''\n"
        "    return pd.DataFrame({'month': ['jan', 'feb'], 'units': [3, 5]})\n"
    )
    server.push(reply("", call("sales")), reply("Feb sold more."))
    ex = ready.ok("%%agent --approval auto\nsales?")
    final_state(ex)
    # Inside the call's card, live and in the transcript; not an output of its own.
    assert [o for o in ex.displays if TRANSCRIPT not in o["data"]] == []
    [item] = [i for i in ex.displays[-1]["data"][TRANSCRIPT]["items"] if i["kind"] == "tool"]
    assert "<table" in item["display"]["text/html"]
    assert "<table" in ex.displays[-1]["data"]["text/html"]
    [block] = tool_results(server)
    assert "units" in result_text(block) and "feb" in result_text(block)


def test_tools_magic(ready: Kernel) -> None:
    ex = ready.ok("%tools --json")
    specs = json.loads(ex.stdout)
    assert "book_table" in [s["name"] for s in specs]
    book = next(s for s in specs if s["name"] == "book_table")
    assert book["input_schema"]["required"] == ["restaurant", "people"]
    ex = ready.ok("%tools")
    models = [m["content"]["data"]["state"]["_model_name"] for m in ex.of_type("comm_open")]
    assert "CheckboxModel" in models and "DropdownModel" in models
    [shown] = ex.displays
    assert WIDGET_VIEW in shown["data"]
    assert "<b>book_table</b>" in shown["data"]["text/html"]  # for viewers without widgets


def test_builtins_write_shows_its_diff_before_approval(ready: Kernel, server) -> None:
    server.push(
        reply("Writing.", call("write_file", file_path="hello.txt", content="hi there\n")),
        reply("Written."),
    )
    seen: dict = {}

    def on_message(k: Kernel, msg: dict, ex: Execution) -> None:
        text = json.dumps(msg["content"])
        if msg["msg_type"] in ("comm_open", "comm_msg") and "nbtools-diff" in text:
            seen.setdefault("diff_before_click", "clicked" not in seen)
        clicker("Approve", then=lambda *_: seen.setdefault("clicked", True))(k, msg, ex)

    ex = ready.run("%%agent --builtins --approval ask\nwrite hello.txt", on_message=on_message)
    transcript = final_state(ex)
    assert seen == {"diff_before_click": True, "clicked": True}
    tool = next(i for i in transcript["items"] if i["kind"] == "tool")
    assert tool["status"] == "ok"
    assert tool["diffs"] == [
        {
            "path": "hello.txt",
            "kind": "create",
            "diff": "--- /dev/null\n+++ b/hello.txt\n@@ -0,0 +1 @@\n+hi there\n",
        }
    ]
    assert "glob" in [t["name"] for t in server.requests[-1].body["tools"]]
    assert ready.ok("print(open('hello.txt').read(), end='')").stdout == "hi there\n"


def test_reload_and_unload(ready: Kernel, server) -> None:
    ex = ready.ok(
        "%reload_ext nb_tools\nprint('agent' in get_ipython().magics_manager.magics['cell'])"
    )
    assert ex.stdout.strip() == "True"
    ex = ready.ok(
        "%unload_ext nb_tools\nprint('agent' in get_ipython().magics_manager.magics['cell'])"
    )
    assert ex.stdout.strip() == "False"
    ready.ok("%load_ext nb_tools")
    server.push(reply("Back."))
    assert final_state(ready.ok("%%agent\nhello again"))["stop_reason"] == "end_turn"


def test_interrupt_while_waiting_for_approval(ready: Kernel, server) -> None:
    ready.ok(
        "ran.clear()\n"
        "@tool(requires_approval=True)\n"
        "def launch(target: str) -> str:\n"
        "    'Launch something.'\n"
        "    ran.append(target)\n"
        "    return 'launched'\n"
    )
    server.push(reply("", call("launch", target="moon")))
    state: dict = {}

    def on_message(k: Kernel, msg: dict, ex: Execution) -> None:
        if msg["msg_type"] == "comm_open" and "sent" not in state:
            s = msg["content"]["data"]["state"]
            label = str(s.get("description"))
            if s.get("_model_name") == "ButtonModel" and label.startswith("Always allow"):
                state["sent"] = True
                k.km.interrupt_kernel()

    ex = ready.run("%%agent\nlaunch", on_message=on_message, timeout=30)
    assert state.get("sent")
    transcript = final_state(ex, interrupted=True)
    assert transcript["stop_reason"] == "stopped"
    tool = next(i for i in transcript["items"] if i["kind"] == "tool")
    assert (tool["status"], tool["approval"]) == ("stopped", None)
    assert ready.ok("print(ran)").stdout.strip() == "[]"
    server.push(reply("Not booked then."))
    final_state(ready.ok("%%agent\nok?"))
    [answer] = [
        b
        for b in server.requests[-1].body["messages"][-1]["content"]
        if b.get("type") == "tool_result"
    ]
    assert "stopped" in result_text(answer)


def test_signature_error_shows_its_problems_without_our_stack(ready: Kernel) -> None:
    ex = ready.run("@tool\ndef bad(y: complex) -> str:\n    '''Bad.'''\n    return ''\n")
    assert [e["ename"] for e in ex.errors] == ["SignatureError"]
    lines = ex.errors[0]["traceback"]
    assert lines[:2] == [
        "SignatureError: bad cannot be described to the model:",
        "  - parameter 'y': unsupported type complex",
    ]
    assert len(lines) <= 4 and "nb_tools/" not in "\n".join(lines)


def test_a_write_streams_onto_its_card_and_the_card_becomes_the_approval(
    ready: Kernel, server
) -> None:
    """The model writes a file slowly (the fake server paces its argument pieces): the
    call's card appears while it streams, its diff grows with the content, and the same
    widget then turns into the approval card: no second card."""
    content = "".join(f'line {i:02d}: {"é" * (i % 3)} "quoted" \\ 😀\n' for i in range(40))
    server.push(
        reply(
            "Writing.",
            call("write_file", file_path="streamed.txt", content=content),
            chunk_delay=0.01,
        ),
        reply("Written."),
    )
    values: dict[str, list[str]] = {}

    def on_message(k: Kernel, msg: dict, ex: Execution) -> None:
        data = msg["content"].get("data", {})
        value = data.get("state", {}).get("value")
        widget = msg["content"].get("comm_id")
        ours = widget in values or 'data-nbt-item="tool"' in str(value)
        if msg["msg_type"] in ("comm_open", "comm_msg") and isinstance(value, str) and ours:
            values.setdefault(widget, []).append(value)
        clicker("Approve")(k, msg, ex)

    ex = ready.run("%%agent --builtins --approval ask\nwrite streamed.txt", on_message=on_message)
    transcript = final_state(ex)
    # one widget showed the call, from its first piece to its end
    assert len(values) == 1, [v[0][:300] for v in values.values()]
    [card] = values.values()
    drafts = [v for v in card if 'data-status="writing"' in v]
    added = [v.count("#e6ffec") for v in drafts]  # the diff's added lines
    assert len(drafts) >= 3 and added == sorted(added) and len(set(added)) >= 3, added
    assert 0 < max(added) <= 16  # a window on the growing end, not the whole file
    assert "streamed.txt" in drafts[-1] and "nbtools-diff" in drafts[-1]
    after = card[card.index(drafts[-1]) + 1 :]
    assert after and all('data-status="writing"' not in v for v in after)
    assert any('data-status="waiting' in v for v in after)  # the same card asks
    tool = next(i for i in transcript["items"] if i["kind"] == "tool")
    assert tool["status"] == "ok" and json.loads(tool["arguments"])["content"] == content
    assert ready.ok("print(open('streamed.txt').read(), end='')").stdout == content
