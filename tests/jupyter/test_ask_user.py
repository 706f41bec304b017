"""``ask_user``: a question to the person in the cell (a real kernel, clicks and typing sent
as JupyterLab sends them); headless runs answer at once and never wait."""

from __future__ import annotations

import time
from typing import Any

import pytest
from kernel_helpers import TRANSCRIPT, WIDGET_VIEW, Execution, Kernel, clicker

from nb_tools.testing import call, reply

pytestmark = pytest.mark.kernel


def sent_result(server, index: int = -1) -> dict:
    [block] = [
        b
        for b in server.requests[index].body["messages"][-1]["content"]
        if b.get("type") == "tool_result"
    ]
    return block


def text_of(block: dict) -> str:
    c = block["content"]
    return c if isinstance(c, str) else "".join(x.get("text", "") for x in c)


def no_widget_left(ex: Execution) -> None:
    assert not ex.errors, ex.errors[0].get("traceback")
    for out in ex.displays:
        assert WIDGET_VIEW not in out["data"], "a widget view was left in the outputs"
    records = [o["data"]["text/plain"] for o in ex.displays if TRANSCRIPT not in o["data"]]
    return records


def test_a_choice_click_is_the_answer(kernel: Kernel, server) -> None:
    kernel.ok("%load_ext nb_tools")
    server.push(
        reply("", call("ask_user", question="Which year?", choices=["2024", "2025"])),
        reply("Using 2025."),
    )
    ex = kernel.run("%%agent --new\nPlot the sales", on_message=clicker("2025"))
    records = no_widget_left(ex)
    assert text_of(sent_result(server)) == "2025"
    assert records == ["The agent asked: Which year? — answered: 2025"]


def test_typed_text_is_the_answer(kernel: Kernel, server) -> None:
    server.push(reply("", call("ask_user", question="Which colour?")), reply("Blue it is."))
    typed: list[str] = []

    def type_answer(k: Kernel, msg: dict[str, Any], ex: Execution) -> None:
        if typed or msg["msg_type"] != "comm_open":
            return
        state = msg["content"]["data"]["state"]
        if state.get("_model_name") == "TextModel":
            typed.append(msg["content"]["comm_id"])
            time.sleep(0.2)
            k.set_state(msg["content"]["comm_id"], {"value": "navy blue"})  # Enter

    ex = kernel.run("%%agent\nPick a colour", on_message=type_answer)
    no_widget_left(ex)
    assert text_of(sent_result(server)) == "navy blue"


def test_a_headless_run_never_waits(kernel: Kernel, server) -> None:
    server.push(
        reply("", call("ask_user", question="Proceed?", choices=["yes", "no"])), reply("ok")
    )
    kernel.ok("import os; os.environ['NB_TOOLS_HEADLESS'] = '1'")
    try:
        start = time.monotonic()
        ex = kernel.ok("%%agent --approval auto\nGo", timeout=30)
        assert time.monotonic() - start < 15
    finally:
        kernel.ok("os.environ['NB_TOOLS_HEADLESS'] = '0'")
    block = sent_result(server)
    assert block.get("is_error") and "headless run" in text_of(block)
    no_widget_left(ex)
