"""The review queue of a map's rows, driven without a browser (``Button.click()``)."""

from __future__ import annotations

import asyncio

from nb_tools.agent import ApprovalRequest
from nb_tools.agent._map import current_row
from nb_tools.jupyter._review_queue import ReviewQueue, row_label
from nb_tools.model import ToolCall
from nb_tools.permissions import PermissionRules


def request(i: int, rule: str | None = "refund") -> ApprovalRequest:
    call = ToolCall(id=f"c{i}", name="refund", arguments=f'{{"customer": "c{i}"}}')
    return ApprovalRequest(call=call, info=None, preview=None, always_allow_rule=rule)


async def ask(queue: ReviewQueue, row: int, rule: str | None = "refund") -> object:
    current_row.set(row)
    return await queue(request(row, rule))


async def test_approve_selected_deny_all_and_always_allow(tmp_path) -> None:
    rules = PermissionRules(root=tmp_path)
    queue = ReviewQueue(rules=rules)
    waiting = [asyncio.ensure_future(ask(queue, i, None if i == 2 else "refund")) for i in range(4)]
    await asyncio.sleep(0.01)
    assert [label for label, _ in queue.table.options] == [
        f'row {i} · refund · {{"customer": "c{i}"}}' for i in range(4)
    ]
    assert queue.box.layout.display == ""
    queue.table.value = (queue.table.options[0][1],)
    assert queue.always.description == "Always allow refund" and not queue.always.disabled
    queue.approve.click()
    await asyncio.sleep(0.01)
    assert waiting[0].done() and waiting[0].result().approved
    assert not any(w.done() for w in waiting[1:])
    # "Always allow" is a session rule in the session's one rule set; it covers the
    # waiting calls with that rule (each remembered, as the single run's card does)
    queue.table.value = (queue.table.options[0][1],)
    queue.always.click()
    await asyncio.sleep(0.01)
    assert [(r.action, r.text, r.source) for r in rules.rules] == [("allow", "refund", "session")]
    assert waiting[1].result().approved and waiting[3].result().approved
    assert waiting[1].result().remember and waiting[3].result().remember
    assert not waiting[2].done()  # no rule offered for it
    assert (await ask(queue, 9)).approved
    # forgotten (%nbtools forget removes it from the one rule set): the queue asks again
    rules.remove("refund")
    again = asyncio.ensure_future(ask(queue, 10))
    await asyncio.sleep(0.01)
    assert not again.done() and len(queue.pending) == 2
    queue.deny.click()
    await asyncio.sleep(0.01)
    assert not waiting[2].result().approved and not again.result().approved
    assert queue.pending == {} and queue.box.layout.display == "none"


def test_hidden_characters_are_shown_as_markers() -> None:
    call = ToolCall(id="c", name="refund", arguments='{"customer": "acme\\u202egnp.exe"}')
    label = row_label(3, ApprovalRequest(call=call, info=None, preview=None))
    assert "\u202e" not in label and "⟨U+202E⟩" in label
