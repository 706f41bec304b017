"""A map's checkpoint is untrusted input: a file that is not one is refused before anything
is read from or written to it; a line that cannot be read makes its row run again (said in
``MapInfo.notices``), under the map's own policy; a line cut short by a crash stays a line
of its own. A cancelled map still builds its table (``nb_tools.last_map()``)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

import nb_tools
from nb_tools import tool
from nb_tools.model import ModelRequest
from nb_tools.testing import ScriptedModel, call, reply


@tool(register=False, requires_approval=True)
def refund(customer: str) -> str:
    """Refund a customer (needs approval)."""
    return "refunded"


def refunds(request: ModelRequest) -> Any:
    if len(request.messages) == 1:
        return reply("", call("refund", customer=request.messages[0].text.split()[-1]))
    return reply("answered")


async def test_a_file_that_is_not_a_checkpoint_is_refused_untouched(tmp_path: Path) -> None:
    data = tmp_path / "tickets.csv"
    data.write_bytes(b"ticket,customer\nT1,acme\n")
    m = ScriptedModel([])
    with pytest.raises(ValueError, match=r"tickets.csv is not a map checkpoint \(line 1 is"):
        await nb_tools.amap("{input}", ["a"], model=m, checkpoint=data)
    assert data.read_bytes() == b"ticket,customer\nT1,acme\n"
    with pytest.raises(ValueError, match="is a folder; give a file path"):
        await nb_tools.amap("{input}", ["a"], model=m, checkpoint=tmp_path)
    assert m.requests == []


async def test_an_unreadable_line_runs_its_row_again_under_the_maps_policy(
    tmp_path: Path,
) -> None:
    path = tmp_path / "rows.jsonl"
    first = await nb_tools.amap(
        "Refund {input}",
        ["a", "b"],
        tools=[refund],
        model=ScriptedModel([refunds] * 4),
        approval="auto",
        checkpoint=path,
    )
    assert list(first["status"]) == ["ok", "ok"]
    lines = [json.loads(x) for x in path.read_text().splitlines()]
    row0 = next(x for x in lines if x["row"] == 0)
    # A forged line for row 0: a block type nobody knows, and settings a line never holds.
    forged = dict(row0, messages=[{"$type": "Evil", "x": 1}], approval="auto", rules=["allow *"])
    cut = json.dumps(dict(row0, status="ok"))[:40]  # a crash mid-line, no newline after it
    path.write_text(json.dumps(forged) + "\n" + json.dumps(lines[1]) + "\n" + cut)

    m = ScriptedModel([refunds] * 2)
    second = await nb_tools.amap(
        "Refund {input}",
        ["a", "b"],
        tools=[refund],
        model=m,
        approval="deny",
        checkpoint=path,
    )
    info = second.attrs["nb_tools"]
    assert list(second["status"]) == ["denied", "ok"]  # row 0 ran again, under "deny"
    assert info.restored == 1 and len(m.requests) == 2
    [notice] = info.notices
    assert notice.startswith(f"nb_tools.map: checkpoint {path}: the line of row 0 could not ")
    assert "unknown block type 'Evil'" in notice and notice.endswith("; the row runs again")
    text = path.read_text().splitlines()
    assert text[2] == cut  # the cut line stays alone; the new line is whole after it
    assert json.loads(text[3])["row"] == 0 and json.loads(text[3])["status"] == "denied"


async def test_a_cancelled_map_still_builds_its_table(tmp_path: Path) -> None:
    started = asyncio.Event()

    @tool(register=False, read_only=True)
    async def wait(customer: str) -> str:
        """Waits for long."""
        started.set()
        await asyncio.sleep(60)
        return "late"

    def ask(request: ModelRequest) -> Any:
        customer = request.messages[0].text.split()[-1]
        if len(request.messages) == 1 and customer == "slow":
            return reply("looking", call("wait", customer=customer))
        return reply(f"{customer} done")

    task = asyncio.ensure_future(
        nb_tools.amap(
            "{input}",
            ["fast", "slow", "later"],
            tools=[wait],
            model=ScriptedModel([ask] * 4),
            concurrency=2,
            approval="auto",
        )
    )
    await started.wait()
    await asyncio.sleep(0.05)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    last = nb_tools.last_map()
    assert list(last["status"])[:2] == ["ok", "stopped"]  # the third: ok or skipped
    assert last["error"][1] == "stopped while running (the map was interrupted)"
    assert last["turns"][1] == 1
    conversation = last.attrs["nb_tools"].conversations[1]
    assert conversation.messages[1].content[0].text == "looking"
