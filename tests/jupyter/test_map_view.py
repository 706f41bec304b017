"""The ``%%agent --over`` progress view, driven without a browser (``Button.click()``)."""

from __future__ import annotations

from nb_tools.agent import MapProgress
from nb_tools.jupyter._map_view import MapView, progress_text


def progress(**kw: object) -> MapProgress:
    base: dict = dict(
        rows=40,
        done=12,
        running=8,
        failed=1,
        spent_usd=0.0312,
        budget_usd=2.0,
        elapsed=6.0,
        eta=14.2,
    )
    base.update(kw)
    return MapProgress(**base)


def test_the_line_says_rows_cost_against_budget_and_eta() -> None:
    assert progress_text(progress()) == (
        "12/40 rows done · 8 running · 1 failed · $0.0312 of $2.00 · ETA 14 s"
    )
    assert progress_text(progress(failed=0, budget_usd=None, eta=None)) == (
        "12/40 rows done · 8 running · $0.0312"
    )


def test_stop_sets_the_maps_stop_event_once() -> None:
    view = MapView()
    assert not view.stop.is_set()
    view.button.click()
    assert view.stop.is_set() and view.button.disabled
    view.update(progress(done=40, running=0, eta=0.0))
    assert view.text.value.startswith("40/40 rows done")


def test_rows_show_status_waiting_and_tokens_and_open_a_conversation() -> None:
    """The rows' events (as ``on_row_event`` passes them) make each row's label and its
    transcript; selecting a row shows its prompt and transcript in the view."""
    from nb_tools.agent import ApprovalRequested, TurnStarted, UsageUpdated
    from nb_tools.model import ToolCall, Usage

    view = MapView(["Ticket T1", "Ticket T2", "Ticket T3"], ["T1", "T2", "T3"])
    used = Usage(input_tokens=100, output_tokens=20, cost_usd=0.002)
    view.records(0, TurnStarted(turn=1))
    view.records(0, UsageUpdated(turn=1, usage=used, total=used))
    view.records(1, TurnStarted(turn=2))
    call = ToolCall(id="c1", name="refund", arguments="{}")
    view.records(1, ApprovalRequested(call=call, info=None, preview=None))
    view.update(
        progress(rows=3, done=1, running=2, failed=0, statuses=("ok", "running", "running"))
    )
    view.refresh()
    assert [label for label, _ in view.rows.options] == [
        "row 0 · T1 · ok · 1 turn(s) · $0.0020",
        "row 1 · T2 · waiting for approval",
        "row 2 · T3 · running",
    ]
    assert view.text.value.startswith(
        "1/3 rows done · 2 running · 1 waiting for approval · 120 tokens · $0.0312"
    )
    view.rows.value = 0
    prompt, transcript = view.conversation.outputs
    assert "Ticket T1" in prompt["data"]["text/html"]
    assert "application/vnd.nbtools.transcript+json" in transcript["data"]
    view.rows.value = 2  # not started yet in the records: says so
    assert view.conversation.outputs[1]["data"]["text/plain"] == "row 2 has not started"


def test_a_restored_row_opens_its_recorded_conversation_while_the_map_runs() -> None:
    """A row taken from the checkpoint has no events: the view builds its transcript from
    its conversation (the tool call with its result, the answer) and labels it."""
    from nb_tools.agent import Conversation
    from nb_tools.model import Message, TextBlock, ToolResult, ToolResultBlock, ToolUseBlock, Usage

    messages = (
        Message(role="user", content=(TextBlock(text="Ticket T1 from acme"),)),
        Message(
            role="assistant",
            content=(ToolUseBlock(id="t1", name="plan_of", arguments='{"customer":"acme"}'),),
        ),
        Message(
            role="user",
            content=(ToolResultBlock(result=ToolResult(tool_use_id="t1", content="enterprise")),),
        ),
        Message(role="assistant", content=(TextBlock(text="acme is on enterprise"),)),
    )
    view = MapView(["Ticket T1 from acme", "Ticket T2 from globex"], ["T1", "T2"])
    view.records.restored(0, Conversation(messages, usage=Usage(input_tokens=90, cost_usd=0.002)))
    view.update(progress(rows=2, done=1, running=1, eta=None, statuses=("ok", "running")))
    assert view.rows.options[0][0] == "row 0 · T1 · ok · 2 turn(s) · $0.0020 · from the checkpoint"
    view.rows.value = 0
    prompt, shown = view.conversation.outputs
    assert "Ticket T1 from acme" in prompt["data"]["text/html"]
    transcript = shown["data"]["application/vnd.nbtools.transcript+json"]
    assert [
        (i["kind"], i.get("name"), i.get("status"), i.get("result"), i.get("text"))
        for i in transcript["items"]
    ] == [
        ("tool", "plan_of", "ok", "enterprise", None),
        ("assistant", None, None, None, "acme is on enterprise"),
    ]
    assert transcript["turns"] == 2 and transcript["usage"]["input_tokens"] == 90
    import jsonschema

    from nb_tools.transcript._schema import load_schema

    jsonschema.Draft202012Validator(load_schema()).validate(transcript)  # a valid transcript
