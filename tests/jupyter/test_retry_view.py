"""The cell shows a model retry while it waits ("retrying in 2 s: overloaded")."""

from __future__ import annotations

import asyncio

import pytest

from nb_tools.agent import Agent, ModelRetrying
from nb_tools.agent._retry import retry_text
from nb_tools.model.anthropic import AnthropicProvider
from nb_tools.testing import FakeMessagesServer, Fault, reply
from nb_tools.transcript._recorder import TranscriptRecorder

pytest.importorskip("ipywidgets")


def test_retry_text() -> None:
    assert retry_text(ModelRetrying(attempt=1, wait=2.0, reason="overloaded")) == (
        "retrying in 2 s: overloaded (attempt 1)"
    )
    assert retry_text(ModelRetrying(attempt=3, wait=0.25, reason="rate limited")) == (
        "retrying in 0.25 s: rate limited (attempt 3)"
    )


async def test_the_live_view_shows_each_retry() -> None:
    from nb_tools.jupyter._view import RunView

    with FakeMessagesServer([Fault(status=529, times=1), reply("made it")]) as server:
        provider = AnthropicProvider("claude-test", base_url=server.base_url, api_key="test")
        agent = Agent(provider, tools=[])
        view = RunView(
            TranscriptRecorder("go", model=provider.model),
            loop=asyncio.get_running_loop(),
            on_stop=lambda: None,
        )
        footers: list[str] = []

        def on_event(event: object) -> None:
            view.on_event(event)  # type: ignore[arg-type]
            if isinstance(event, ModelRetrying):
                footers.append(view.footer.value)

        result = await agent.run("go", on_event=on_event)
        await provider.client.close()
    assert result.text == "made it"
    assert len(footers) == 1 and "retrying in 0.01 s: overloaded (attempt 1)" in footers[0]
    assert "retrying" not in view.footer.value  # the next footer update clears it
