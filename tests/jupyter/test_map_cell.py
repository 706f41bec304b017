"""``await nb_tools.amap(...)`` written in a notebook cell of a real kernel, against the fake
Messages API server: the plan card and the progress view as ``%%agent --over`` has them;
the kernel's interrupt ends the map with its partial table (shown, and in
``nb_tools.last_map()``); rerunning the cell with the checkpoint sends nothing for the
finished rows, whose conversations open from the table; and a batch map whose kernel is
restarted mid-batch resumes that batch by its id."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from kernel_helpers import WIDGET_VIEW, Kernel
from map_rows import rounds_by_row
from test_map_magic import SETUP, answer, model_requests, plan_answer

from nb_tools.model import ModelRequest
from nb_tools.testing import FakeMessagesServer, call, reply

pytestmark = pytest.mark.kernel

SLOW = '''
import asyncio
import nb_tools

@tool(read_only=True)
async def slow(customer: str) -> str:
    """Slow."""
    await asyncio.sleep(60)
    return "late"
'''


def hangs_on_globex(request: ModelRequest) -> Any:
    if len(request.messages) == 1:
        customer = request.messages[0].text.split()[-1]
        name = "slow" if customer == "globex" else "plan_of"
        return reply("", call(name, customer=customer))
    return reply(json.dumps({"plan": request.messages[-1].content[0].result.content}))


def html_of(ex: Any) -> str:
    return "".join(o["data"].get("text/html", "") for o in ex.displays)


def test_awaited_amap_has_the_plan_card_and_an_interrupt_keeps_the_partial_table(
    kernel: Kernel, server: FakeMessagesServer, tmp_path: Path
) -> None:
    kernel.ok(SETUP + SLOW)
    checkpoint = tmp_path / "amap.jsonl"
    cell = (
        f"r = await nb_tools.amap('Ticket {{ticket}} from {{customer}}', tickets, "
        f"tools=[plan_of, slow], output=Triage, approval='auto', checkpoint={str(checkpoint)!r})"
    )
    server.fallback = hangs_on_globex
    approve = plan_answer("Approve")
    interrupted: list[int] = []

    def on_message(k: Kernel, msg: dict[str, Any], ex: Any) -> None:
        approve(k, msg, ex)
        state = msg["content"].get("data", {}).get("state", {})
        if "2/3 rows done" in str(state.get("value", "")) and not interrupted:
            interrupted.append(1)
            k.km.interrupt_kernel()

    before = len(server.requests)
    ex = kernel.run(cell, on_message=on_message)
    assert interrupted  # the progress line was shown, after the plan card was approved
    assert [e["ename"] for e in ex.errors] == ["MapInterrupted"]
    assert "the partial table is above and in nb_tools.last_map()" in "".join(
        ex.errors[0]["traceback"]
    )
    html = html_of(ex)
    assert "Plan of this map" in html and "Approved: the map runs" in html
    assert "Interrupted: the partial table (also in nb_tools.last_map())" in html
    assert not [o for o in ex.displays if WIDGET_VIEW in o["data"]]
    check = kernel.ok(
        "last = nb_tools.last_map()\n"
        "print(list(last['status']), last['plan'][0], last['error'][1], 'r' in dir())"
    )
    assert check.stdout.strip() == (
        "['ok', 'stopped', 'ok'] enterprise stopped while running (the map was stopped) False"
    )
    assert model_requests(server, before) == 5  # two rows of two turns, T2's first

    # Rerun the cell: the finished rows come from the checkpoint (no request), T2 runs
    # again; a click on a restored row opens its conversation.
    server.fallback = answer
    before = len(server.requests)
    ex = kernel.ok(cell, on_message=plan_answer("Approve"))
    sent = [r.body for r in server.requests[before:] if r.path == "/v1/messages"]
    assert len(sent) == 2
    assert {b["messages"][0]["content"][0]["text"] for b in sent} == {"Ticket T2 from globex"}
    check = kernel.ok("print(list(r['status']), list(r['plan']), r.attrs['nb_tools'].restored)")
    assert check.stdout.strip() == "['ok', 'ok', 'ok'] ['enterprise', 'free', 'enterprise'] 2"
    html = html_of(ex)
    assert "(2 of 3 are done: in the checkpoint)" in html
    row0 = html.split('data-row="0"')[1].split('data-row="1"')[0]
    assert "row 0 · T1 · ok · 2 turn(s) · $" in row0 and "· from the checkpoint" in row0
    assert "Ticket T1 from acme" in row0 and "plan_of" in row0 and "enterprise" in row0
    assert "taken from the checkpoint" not in html
    assert " 0 in / 0 out tokens" not in row0  # the line kept the row's tokens too

    # show=False: the engine alone, in a cell too (every row from the checkpoint now)
    ex = kernel.ok(cell.replace("output=Triage,", "output=Triage, show=False,"))
    assert not ex.displays and not ex.of_type("comm_open")
    assert kernel.ok("print(list(r['status']))").stdout.strip() == "['ok', 'ok', 'ok']"


BATCH_SETUP = '''
%load_ext nb_tools
import nb_tools
from nb_tools import tool
looked_up = []

@tool(read_only=True)
def lookup(customer: str) -> str:
    """A customer's plan."""
    looked_up.append(customer)
    return "free"
'''


def _batch_lines(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    lines = [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
    return [x for x in lines if "batch" in x or "batch_done" in x]


def test_a_kernel_restart_mid_batch_resumes_the_batch_by_its_id(
    kernel: Kernel, server: FakeMessagesServer, tmp_path: Path
) -> None:
    """Round 1 (three rows) ends; c0 finishes; round 2 (the two c1 rows) is created, and
    the kernel is restarted while it is pending. Rerunning the cell in the new kernel polls
    that batch: no batch is created again, the finished row sends nothing, no tool runs
    again (the batch held the final answers), and each row counts all its turns."""
    checkpoint = tmp_path / "batch.jsonl"
    cell = (
        "r = await nb_tools.amap('Customer {input}', ['c1', 'c0', 'c1'], tools=[lookup], "
        f"backend='batch', checkpoint={str(checkpoint)!r}, batch_poll_seconds=0.05, "
        "approval='auto')"
    )
    server.fallback = rounds_by_row
    server.batch_delay = 1.0
    try:
        kernel.ok(BATCH_SETUP)
        approve = plan_answer("Approve")
        msg_id = kernel.kc.execute(cell)
        deadline = time.monotonic() + 60
        while sum("batch" in x for x in _batch_lines(checkpoint)) < 2:
            try:  # play the frontend: click Approve on the plan card
                msg = kernel.kc.get_iopub_msg(timeout=0.05)
                if msg["parent_header"].get("msg_id") == msg_id:
                    approve(kernel, msg, None)
            except Exception:
                pass
            assert time.monotonic() < deadline, "the second batch was never created"
        kernel.km.restart_kernel(now=True)
        kernel.kc.wait_for_ready(timeout=60)
        created = list(server.batches.created)
        assert len(created) == 2
        pending = _batch_lines(checkpoint)[-1]
        assert pending["batch"] == created[1]
        assert sorted(r["row"] for r in pending["requests"].values()) == [0, 2]

        kernel.ok(BATCH_SETUP)
        before = len(server.requests)
        kernel.ok(cell, on_message=plan_answer("Approve"), timeout=120)
        sent = server.requests[before:]
        check = kernel.ok(
            "import json\ninfo = r.attrs['nb_tools']\nprint(json.dumps([list(r['status']), "
            "list(r['output']), [int(t) for t in r['turns']], info.batch_ids, "
            "info.resumed_batch_ids, info.restored, looked_up]))"
        )
    finally:
        server.batch_delay = 0.0
    status, output, turns, batch_ids, resumed, restored, looked_up = json.loads(check.stdout)
    assert status == ["ok", "ok", "ok"]
    assert output == ["c1: 1 lookups", "c0: 0 lookups", "c1: 1 lookups"]
    assert turns == [2, 1, 2]  # a resumed row counts the turns before the restart too
    assert restored == 1 and resumed == [created[1]] and batch_ids == []
    assert server.batches.created == created  # no batch created again
    assert looked_up == []  # no tool run again
    posts = [r.path for r in sent if r.method == "POST"]
    assert "/v1/messages" not in posts and "/v1/messages/batches" not in posts
    assert _batch_lines(checkpoint)[-1] == {"batch_done": created[1]}
