"""A run stopped while the reply streams counts what was sent and received, marked as
estimated (the API's own count never came): the budget and the footer rely on it."""

from __future__ import annotations

import asyncio
import math
from typing import Any

from nb_tools.agent import Agent, TextDelta
from nb_tools.model import estimate_tokens
from nb_tools.model._pricing import price_for
from nb_tools.model._tokens import CHARS_PER_TOKEN
from nb_tools.testing import ScriptedModel, reply
from nb_tools.transcript._recorder import TranscriptRecorder, usage_line

MODEL = "claude-sonnet-4-5"
ANSWER = "A long answer that streams slowly, word by word, until someone stops it. " * 5


async def test_a_stop_while_streaming_counts_the_request_and_the_text_received() -> None:
    model = ScriptedModel([reply(ANSWER, chunk_delay=0.01)], model=MODEL)
    received: list[str] = []
    agent: Agent

    def on_event(event: Any) -> None:
        if isinstance(event, TextDelta):
            received.append(event.text)
            if len(received) == 1:
                agent.stop()

    agent = Agent(model, system="Be brief.", on_event=on_event)
    rec = TranscriptRecorder("tell me", model=MODEL)
    result = await agent.run("tell me", on_event=rec)
    await asyncio.sleep(0)
    assert result.stop_reason == "stopped"
    text = "".join(received)
    assert 0 < len(text) < len(ANSWER)
    sent = estimate_tokens(model.requests[0])
    price = price_for(MODEL)
    assert price is not None
    out = math.ceil(len(text) / CHARS_PER_TOKEN)
    assert (result.usage.input_tokens, result.usage.output_tokens) == (sent, out)
    assert result.usage.estimated
    assert result.usage.cost_usd == (sent * price.input + out * price.output) / 1_000_000
    assert agent.usage == result.usage  # the conversation's total counts it too
    usage = rec.to_dict()["usage"]
    assert usage["estimated"] is True and usage["cost_usd"] > 0
    assert usage_line(usage).endswith(f"${usage['cost_usd']:.4f} (estimated)")


async def test_a_finished_reply_is_not_estimated() -> None:
    agent = Agent(ScriptedModel([reply("done")], model=MODEL))
    result = await agent.run("hi")
    assert not result.usage.estimated
    rec = TranscriptRecorder("hi")
    rec.usage = result.usage
    assert "estimated" not in rec.to_dict()["usage"]
