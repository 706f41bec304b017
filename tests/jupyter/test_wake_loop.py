"""One wake loop: while an approval card waits for a click, the approval pipeline's
``wait_waking`` is the only thing waking the event loop (the card, the headless guard and
the pipeline used to run a 0.25 s loop each, nested). Clicks from another thread land, a
cancellation marks the card, and the guard hands an approver's failure on unchanged."""

from __future__ import annotations

import asyncio
import threading

import pytest
from test_widgets import first_card

from nb_tools.agent._approval import ApprovalRequest, Decision, Deny, ask
from nb_tools.agent._events import ToolCallStarted
from nb_tools.model import ToolCall
from nb_tools.tool._tasks import WAKE_SECONDS
from nb_tools.transcript._recorder import TranscriptRecorder

pytest.importorskip("ipywidgets")

REQUEST = ApprovalRequest(
    call=ToolCall(id="toolu_1", name="launch", arguments='{"target": "moon"}'),
    info=None,
    preview=None,
    arguments={"target": "moon"},
)


def guarded_view(monkeypatch: pytest.MonkeyPatch):
    """The approver exactly as the cell runner builds it: the headless guard around the
    live view's ``ask`` (a frontend is there: NB_TOOLS_HEADLESS=0)."""
    from nb_tools.jupyter._headless import FrontendWatch
    from nb_tools.jupyter._view import RunView

    monkeypatch.setenv("NB_TOOLS_HEADLESS", "0")
    view = RunView(TranscriptRecorder("go", model="m"), loop=asyncio.get_running_loop())
    return view, FrontendWatch(view.box).guard(view.ask)


async def test_a_click_from_another_thread_lands_while_one_loop_wakes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    view, approver = guarded_view(monkeypatch)
    view.on_event(ToolCallStarted(call=REQUEST.call, info=None, preview=None, needs_approval=True))
    loop = asyncio.get_running_loop()
    timers: list[float] = []
    call_at = loop.call_at

    def counting(when, callback, *args, **kw):  # every timer the loop is asked for
        timers.append(when)
        return call_at(when, callback, *args, **kw)

    monkeypatch.setattr(loop, "call_at", counting)
    asking = asyncio.ensure_future(ask(approver, REQUEST))
    card = await first_card(view)
    waited = 8 * WAKE_SECONDS
    timers.clear()
    await asyncio.sleep(waited)
    # One wake loop: one timer per WAKE_SECONDS (and this test's own sleep); the nested
    # loops asked for three per period.
    assert len(timers) <= waited / WAKE_SECONDS + 3, len(timers)
    assert not asking.done()
    clicker = threading.Thread(target=card.approve.click)  # as on a kernel's subshell thread
    clicker.start()
    clicker.join()
    assert await asking == Decision(approved=True, by="user")
    assert card.approve.disabled and "Approved by you" in card.prompt.value


async def test_cancelling_the_wait_marks_the_card_not_decided(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    view, approver = guarded_view(monkeypatch)
    view.on_event(ToolCallStarted(call=REQUEST.call, info=None, preview=None, needs_approval=True))
    asking = asyncio.ensure_future(ask(approver, REQUEST))
    card = await first_card(view)
    asking.cancel()  # Stop or Interrupt
    with pytest.raises(asyncio.CancelledError):
        await asking
    for _ in range(100):  # the card's own task takes the cancellation on its next step
        if card.decided:
            break
        await asyncio.sleep(0.01)
    assert card.approve.disabled and "not decided" in card.prompt.value
    assert card.future.cancelled()


async def test_the_headless_guard_hands_an_approver_failure_on_unchanged(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from nb_tools.jupyter._headless import FrontendWatch

    monkeypatch.setenv("NB_TOOLS_HEADLESS", "0")

    async def broken(request: ApprovalRequest) -> Decision:
        raise RuntimeError("the card could not be shown")

    with pytest.warns(RuntimeWarning, match="the approver raised RuntimeError"):
        verdict = await ask(FrontendWatch(None).guard(broken), REQUEST)
    assert isinstance(verdict, Deny)
    assert verdict.message == (
        "the approver failed (RuntimeError: the card could not be shown), so the call was denied"
    )
