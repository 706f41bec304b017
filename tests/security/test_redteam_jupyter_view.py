"""Red team, the live view: the card a person approves from must show the call that runs.

The transcript keys tool items by call id, and the view took "the last item" for a new
call's card. Call ids come from the provider, and some let the model write them
(Mistral's tool-call format carries a model-written ``id``; an OpenAI-compatible server
passes it on). Two calls of one turn with the SAME id: the second call's card showed the
first call's arguments, so a person who approved ``notes.txt`` ran ``victim.txt``."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

pytest.importorskip("ipywidgets")


async def run_with_a_reading_person(tmp_path: Path, calls: list) -> list[str]:
    """The person approves a card only when what it shows names notes.txt and nothing
    else; returns what each card showed."""
    from nb_tools.agent import Agent
    from nb_tools.jupyter._view import RunView
    from nb_tools.testing import ScriptedModel, reply
    from nb_tools.tool import Registry, tool
    from nb_tools.transcript._recorder import TranscriptRecorder

    @tool(requires_approval=True)
    def touch(path: str) -> str:
        """Create an empty file."""
        (tmp_path / path).touch()
        return "created"

    model = ScriptedModel([reply("", *calls), reply("Done.")])
    agent = Agent(model, tools=Registry(touch))
    view = RunView(TranscriptRecorder("go", model=model.model), loop=asyncio.get_running_loop())
    shown: list[str] = []

    async def person(request):  # what a person does: read the card, then click
        answer = asyncio.ensure_future(view.ask(request))
        await asyncio.sleep(0)
        card = view.approval_cards()[-1]
        seen = view._cards[request.call.id].html.value + card.prompt.value
        shown.append(seen)
        if "notes.txt" in seen and "victim.txt" not in seen:
            card.approve.click()
        else:
            card.deny.click()
        return await answer

    agent.approver = person
    await agent.run("go", on_event=view.on_event)
    return shown


async def test_a_repeated_call_id_cannot_borrow_another_calls_card(tmp_path: Path) -> None:
    from nb_tools.testing import call

    shown = await run_with_a_reading_person(
        tmp_path,
        [
            call("touch", id="toolu_dup", path="notes.txt"),
            call("touch", id="toolu_dup", path="victim.txt"),
        ],
    )
    assert not (tmp_path / "victim.txt").exists(), "a card showing notes.txt approved victim.txt"
    assert len(shown) in (0, 2) and all("victim.txt" in s for s in shown[1:])


async def test_distinct_ids_are_shown_and_run_as_sent(tmp_path: Path) -> None:
    """The detector works: with distinct ids the person approves notes.txt only."""
    from nb_tools.testing import call

    shown = await run_with_a_reading_person(
        tmp_path,
        [
            call("touch", id="toolu_a", path="notes.txt"),
            call("touch", id="toolu_b", path="victim.txt"),
        ],
    )
    assert (tmp_path / "notes.txt").exists() and not (tmp_path / "victim.txt").exists()
    assert len(shown) == 2


async def test_a_request_without_a_started_card_still_shows_its_arguments() -> None:
    from nb_tools.agent._approval import ApprovalRequest
    from nb_tools.jupyter._view import RunView
    from nb_tools.model import ToolCall
    from nb_tools.transcript._recorder import TranscriptRecorder

    view = RunView(TranscriptRecorder("go", model="m"), loop=asyncio.get_running_loop())
    call = ToolCall(id="never-started", name="bash", arguments='{"command": "rm -rf ~/work"}')
    answer = asyncio.ensure_future(view.ask(ApprovalRequest(call=call, info=None, preview=None)))
    await asyncio.sleep(0)
    (card,) = view.approval_cards()
    assert "rm -rf ~/work" in view._cards["never-started"].html.value
    card.deny.click()
    assert not (await answer).approved
