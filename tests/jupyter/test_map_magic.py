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
        if not done and state.get("_model_name") == "ButtonModel":
            if state.get("description") == description:
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
