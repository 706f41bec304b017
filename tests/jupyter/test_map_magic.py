"""``%%agent --over df`` in a real kernel against the fake Messages API server: the cell
body is the template, the result table goes in a variable and is shown."""

from __future__ import annotations

import json
from typing import Any

import pytest
from kernel_helpers import WIDGET_VIEW, Kernel

from nb_tools.model import ModelRequest
from nb_tools.testing import FakeMessagesServer, call, reply

pytestmark = pytest.mark.kernel

SETUP = '''
%load_ext nb_tools
import pandas as pd
from dataclasses import dataclass
from nb_tools import tool

@tool(read_only=True)
def plan_of(customer: str) -> str:
    """A customer's plan."""
    return {"acme": "enterprise"}.get(customer, "free")

@dataclass
class Triage:
    plan: str

tickets = pd.DataFrame({"ticket": ["T1", "T2", "T3"], "customer": ["acme", "globex", "acme"]})
'''


def plan_answer(description: str, seen: list[str] | None = None) -> Any:
    """An ``on_message`` that answers the plan card (the button labelled exactly
    ``description``: "Approve" or "Cancel"); ``seen`` gets the card's HTML."""
    done: list[str] = []

    def on_message(k: Kernel, msg: dict[str, Any], ex: Any) -> None:
        if msg["msg_type"] != "comm_open":
            return
        state = msg["content"]["data"]["state"]
        if seen is not None and "nbtools-map-plan" in str(state.get("value", "")):
            seen.append(state["value"])
        button = state.get("_model_name") == "ButtonModel"
        if not done and button and state.get("description") == description:
            done.append(msg["content"]["comm_id"])
            k.click(msg["content"]["comm_id"])

    return on_message


def answer(request: ModelRequest) -> Any:
    if len(request.messages) == 1:
        return reply("", call("plan_of", customer=request.messages[0].text.split()[-1]))
    plan = request.messages[-1].content[0].result.content
    return reply(json.dumps({"plan": plan}))


def test_over_a_frame_puts_the_table_in_a_variable_and_shows_it(
    kernel: Kernel, server: FakeMessagesServer
) -> None:
    kernel.ok(SETUP)
    server.fallback = answer
    before = len(server.requests)
    ex = kernel.ok(
        "%%agent --over tickets --output triage:Triage --concurrency 2 --model claude-sonnet-4-5 "
        "--tools plan_of\nTicket {ticket} from {customer}",
        on_message=plan_answer("Approve"),
    )
    shown = [o["data"].get("text/html", "") for o in ex.displays]
    assert any("enterprise" in h and "<table" in h for h in shown), shown
    # the progress view was shown, then replaced by the table: no widget view is left
    assert ex.of_type("comm_open")
    assert not [o for o in ex.displays if WIDGET_VIEW in o["data"]]
    check = kernel.ok(
        "print(list(triage['plan']), list(triage['status']), triage.attrs['nb_tools'].requests)"
    )
    assert check.stdout.strip() == "['enterprise', 'free', 'enterprise'] ['ok', 'ok', 'ok'] 6"
    bodies = [r.body for r in server.requests[before:] if r.path == "/v1/messages"]
    assert sorted(
        b["messages"][0]["content"][0]["text"] for b in bodies if len(b["messages"]) == 1
    ) == [
        "Ticket T1 from acme",
        "Ticket T2 from globex",
        "Ticket T3 from acme",
    ]


def test_a_missing_column_is_a_usage_error(kernel: Kernel, server: FakeMessagesServer) -> None:
    kernel.ok(SETUP)
    before = len(server.requests)
    ex = kernel.run("%%agent --over tickets\nTicket {ticket} on {plan}")
    assert "UsageError: nb_tools.map: the prompt names {plan}" in "".join(
        o.get("text", "") for o in ex.outputs
    )
    assert len(server.requests) == before


def test_ask_sends_the_calls_to_one_review_queue(
    kernel: Kernel, server: FakeMessagesServer
) -> None:
    """Three rows each want refund; the queue shows the three calls; Deny all answers them."""
    kernel.ok(
        SETUP
        + "\nrefunded = []\n@tool(requires_approval=True)\ndef refund(customer: str) -> str:"
        + '\n    """Refund."""\n    refunded.append(customer)\n    return "done"\n'
    )

    def wants_refund(request: ModelRequest) -> Any:
        if len(request.messages) == 1:
            return reply("", call("refund", customer=request.messages[0].text.split()[-1]))
        return reply("no refund")

    server.fallback = wants_refund
    ids: dict[str, str] = {}
    clicked: list[int] = []

    approve = plan_answer("Approve")

    def on_message(k: Kernel, msg: dict[str, Any], ex: Any) -> None:
        approve(k, msg, ex)  # the plan card
        content = msg["content"]
        if msg["msg_type"] == "comm_open":
            state = content["data"]["state"]
            if state.get("_model_name") == "SelectMultipleModel":
                ids["table"] = content["comm_id"]
            if state.get("description") == "Deny all":
                ids["deny"] = content["comm_id"]
        elif msg["msg_type"] == "comm_msg" and content["comm_id"] == ids.get("table"):
            labels = content["data"].get("state", {}).get("_options_labels")
            if labels is not None and len(labels) == 3 and not clicked:
                clicked.append(len(labels))
                assert sorted(x.split(" · ")[1] for x in labels) == ["refund"] * 3
                k.click(ids["deny"])

    ex = kernel.ok(
        "%%agent --over tickets --tools refund --approval ask --concurrency 3 "
        "--output refunds\nRefund {customer}",
        on_message=on_message,
    )
    assert clicked == [3]
    check = kernel.ok("print(list(refunds['status']), refunded)")
    assert check.stdout.strip() == "['denied', 'denied', 'denied'] []"
    assert not [o for o in ex.displays if WIDGET_VIEW in o["data"]]


def model_requests(server: FakeMessagesServer, before: int) -> int:
    return sum(r.path == "/v1/messages" for r in server.requests[before:])


def test_the_plan_card_cancel_sends_no_request_approve_runs(
    kernel: Kernel, server: FakeMessagesServer
) -> None:
    kernel.ok(
        SETUP + "\n@tool(requires_approval=True)\ndef refund(customer: str) -> str:"
        '\n    """Refund."""\n    return "done"\n'
    )
    server.fallback = answer
    cell = (
        "%%agent --over tickets --output planned --model claude-sonnet-4-5 --budget 2 "
        "--tools plan_of,refund\nTicket {ticket} from {customer}"
    )
    before = len(server.requests)
    seen: list[str] = []
    ex = kernel.ok(cell, on_message=plan_answer("Cancel", seen))
    assert model_requests(server, before) == 0
    # the plan: rows, each tool and what it does under the policy, the estimate and how
    # it was made (the server's count of rendered rows), the budget
    card = seen[0]
    assert "<b>3</b>, 8 at a time" in card
    assert "<code>claude-sonnet-4-5</code> (anthropic)" in card
    assert "<code>plan_of</code>: runs<br><code>refund</code>: ⏸ asks a person<" in card
    assert "<b>ask</b>" in card
    assert "input tokens a request (the server&#x27;s token count of 3 rendered rows)" in card
    assert "× 3 rows × 2 turn(s)" in card and ">$2.00 for the whole map" in card
    counted = [r for r in server.requests[before:] if r.path == "/v1/messages/count_tokens"]
    assert len(counted) == 3
    # the card is replaced by a static copy saying it was cancelled; nothing is set
    shown = [o["data"].get("text/html", "") for o in ex.displays]
    assert any("Cancelled at the plan: no request was sent." in h for h in shown), shown
    assert not [o for o in ex.displays if WIDGET_VIEW in o["data"]]
    assert kernel.ok("print('planned' in dir())").stdout.strip() == "False"

    ex = kernel.ok(cell, on_message=plan_answer("Approve"))
    assert model_requests(server, before) == 6
    check = kernel.ok("print(list(planned['status']))")
    assert check.stdout.strip() == "['ok', 'ok', 'ok']"
    html = "".join(o["data"].get("text/html", "") for o in ex.displays)
    assert "Approved: the map runs" in html
    # after the run: the table, then each row's conversation behind a click
    assert html.count('<details class="nbtools-map-row"') == 3
    assert "row 1 · T2 · ok · 2 turn(s)" in html and "Ticket T2 from globex" in html


def test_interrupt_ends_the_map_with_a_partial_table(
    kernel: Kernel, server: FakeMessagesServer, tmp_path: Any
) -> None:
    """Row T2's tool hangs; when the other two rows are done, the kernel is interrupted:
    the cell shows the partial table, puts it in its variable, and the checkpoint keeps
    the finished rows."""
    kernel.ok(
        SETUP
        + "\nimport asyncio\n@tool(read_only=True)\nasync def slow(customer: str) -> str:"
        + '\n    """Slow."""\n    await asyncio.sleep(60)\n    return "late"\n'
    )

    def hangs_on_globex(request: ModelRequest) -> Any:
        if len(request.messages) == 1:
            customer = request.messages[0].text.split()[-1]
            name = "slow" if customer == "globex" else "plan_of"
            return reply("", call(name, customer=customer))
        return reply(json.dumps({"plan": request.messages[-1].content[0].result.content}))

    server.fallback = hangs_on_globex
    approve = plan_answer("Approve")
    interrupted: list[float] = []

    def on_message(k: Kernel, msg: dict[str, Any], ex: Any) -> None:
        approve(k, msg, ex)
        state = msg["content"].get("data", {}).get("state", {})
        if "2/3 rows done" in str(state.get("value", "")) and not interrupted:
            interrupted.append(1)
            k.km.interrupt_kernel()

    checkpoint = tmp_path / "over.jsonl"
    ex = kernel.run(
        f"%%agent --over tickets --output partial:Triage --tools plan_of,slow "
        f"--approval auto --checkpoint {checkpoint}\nTicket {{ticket}} from {{customer}}",
        on_message=on_message,
    )
    assert interrupted
    assert [e["ename"] for e in ex.errors] == ["MapInterrupted"]
    assert "the partial table is above and in partial" in "".join(ex.errors[0]["traceback"])
    check = kernel.ok("print(list(partial['status']), partial['error'][1])")
    assert check.stdout.strip() == (
        "['ok', 'stopped', 'ok'] stopped while running (the map was stopped)"
    )
    html = "".join(o["data"].get("text/html", "") for o in ex.displays)
    assert "Interrupted: the partial table (also in partial)" in html and "stopped" in html
    assert not [o for o in ex.displays if WIDGET_VIEW in o["data"]]
    lines = [json.loads(x) for x in checkpoint.read_text().splitlines()]
    assert sorted((x["row"], x["status"]) for x in lines) == [(0, "ok"), (1, "stopped"), (2, "ok")]


def test_always_allow_in_the_review_queue_is_a_session_rule(
    kernel: Kernel, server: FakeMessagesServer
) -> None:
    """Always allow in a map's queue lasts beyond the map: a later %%agent run calls
    refund without a card, and a later map's plan says the rule lets it run."""
    kernel.ok(
        SETUP
        + "\nrefunded = []\n@tool(requires_approval=True)\ndef refund(customer: str) -> str:"
        + '\n    """Refund."""\n    refunded.append(customer)\n    return "done"\n'
    )

    def wants_refund(request: ModelRequest) -> Any:
        last = request.messages[-1]
        if last.role == "user" and last.text:
            customer = "zed" if "single" in last.text else last.text.split()[-1]
            return reply("", call("refund", customer=customer))
        return reply("refunded")

    server.fallback = wants_refund
    ids: dict[str, str] = {}
    approve = plan_answer("Approve")
    clicked: list[int] = []

    def on_message(k: Kernel, msg: dict[str, Any], ex: Any) -> None:
        approve(k, msg, ex)
        content = msg["content"]
        if msg["msg_type"] == "comm_open":
            state = content["data"]["state"]
            if state.get("_model_name") == "SelectMultipleModel":
                ids["table"] = content["comm_id"]
            if str(state.get("description", "")).startswith("Always allow"):
                ids["always"] = content["comm_id"]
        elif msg["msg_type"] == "comm_msg" and content["comm_id"] == ids.get("table"):
            labels = content["data"].get("state", {}).get("_options_labels")
            if labels and not clicked:  # select the first waiting call, then Always allow
                clicked.append(len(labels))
                k.set_state(ids["table"], {"index": [0]})
                k.click(ids["always"])

    kernel.ok(
        "%%agent --over tickets --tools refund --approval ask --concurrency 1 "
        "--output refunds\nRefund {customer}",
        on_message=on_message,
    )
    assert clicked
    check = kernel.ok(
        "from nb_tools.jupyter._session import get_session\n"
        "print(list(refunds['status']), sorted(refunded), "
        "[str(r) for r in get_session().rules.rules if r.source == 'session'])"
    )
    assert check.stdout.strip() == (
        "['ok', 'ok', 'ok'] ['acme', 'acme', 'globex'] ['allow refund']"
    )
    # a later single run: no approval card, the call runs
    ex = kernel.ok("%%agent --tools refund --approval ask\nsingle refund please")
    assert not ex.buttons("Approve")
    assert kernel.ok("print(refunded.count('zed'))").stdout.strip() == "1"
    # a later map: its plan says the rule lets refund run
    seen: list[str] = []
    kernel.ok(
        "%%agent --over tickets --tools refund --approval ask\nRefund {customer}",
        on_message=plan_answer("Cancel", seen),
    )
    assert "runs (rule allow refund)" in seen[0]


def test_unattended_the_plan_is_printed_and_the_map_goes_on(
    kernel: Kernel, server: FakeMessagesServer
) -> None:
    """With NB_TOOLS_APPROVAL set nobody is asked: no card, no wait; the plan is printed."""
    kernel.ok(SETUP + "\nimport os\nos.environ['NB_TOOLS_APPROVAL'] = 'auto'")
    server.fallback = answer
    try:
        ex = kernel.ok(
            "%%agent --over tickets --output quiet --tools plan_of\nTicket {ticket} from {customer}"
        )
    finally:
        kernel.ok("os.environ.pop('NB_TOOLS_APPROVAL', None)")
    assert ex.stdout.startswith("nb_tools.map plan: 3 rows on "), ex.stdout
    assert "  policy: auto\n  tools:\n    plan_of: runs\n" in ex.stdout
    assert not ex.buttons("Approve") and not ex.buttons("Cancel")
    assert kernel.ok("print(list(quiet['status']))").stdout.strip() == "['ok', 'ok', 'ok']"
