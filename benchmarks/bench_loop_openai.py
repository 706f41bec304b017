"""The tool loop on an OpenAI-compatible server: our ``Agent`` on ``OpenAIProvider`` (Chat
Completions, streamed) against the OpenAI Agents SDK's ``Runner`` on the same fake server.

    python benchmarks/bench_loop_openai.py [--reps 7]

One conversation of 10 tool rounds (one quick tool call per round, then a final answer),
both sides on the official ``openai`` client talking HTTP to the same ``FakeOpenAIServer``
on loopback. The Agents SDK runs non-streaming (``Runner.run``, its default) and streaming
(``Runner.run_streamed``); its tracing is turned off (it would export to OpenAI). Each
figure is the median of ``--reps`` interleaved runs: wall time and process CPU (client and
the server thread), and the ratio ours / theirs (below 1.0: we are faster).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from nb_tools import tool
from nb_tools.agent import Agent
from nb_tools.model.openai import OpenAIProvider
from nb_tools.testing import call, reply
from nb_tools.testing.openai_server import FakeOpenAIServer

ROUNDS = 10
MODEL = "gpt-4.1-mini"


def rounds_script() -> list[Any]:
    steps: list[Any] = [
        reply(f"Step {i}: looking up k{i}.", call("lookup", key=f"k{i}")) for i in range(ROUNDS)
    ]
    steps.append(reply("All ten values are in. Done."))
    return steps


async def timed(fn: Callable[[], Awaitable[Any]]) -> tuple[float, float]:
    cpu, start = time.process_time(), time.perf_counter()
    await fn()
    return time.perf_counter() - start, time.process_time() - cpu


async def run(reps: int) -> dict[str, tuple[float, float]]:
    from agents import Agent as SDKAgent
    from agents import OpenAIChatCompletionsModel, Runner, function_tool, set_tracing_disabled
    from openai import AsyncOpenAI

    set_tracing_disabled(True)

    @tool(register=False, read_only=True)
    async def lookup(key: str) -> str:
        """Look up a key."""
        return f"value of {key}"

    @function_tool(name_override="lookup")
    async def sdk_lookup(key: str) -> str:
        """Look up a key."""
        return f"value of {key}"

    with FakeOpenAIServer() as srv:
        provider = OpenAIProvider(MODEL, api="chat", base_url=srv.base_url, api_key="test")
        client = AsyncOpenAI(base_url=srv.base_url, api_key="test")
        sdk_agent = SDKAgent(
            name="bench",
            instructions="Look things up.",
            tools=[sdk_lookup],
            model=OpenAIChatCompletionsModel(model=MODEL, openai_client=client),
        )

        async def ours() -> None:
            srv.push(*rounds_script())
            result = await Agent(provider, tools=[lookup], approval="auto").run("go")
            if result.stop_reason != "end_turn":
                raise RuntimeError(f"our run ended with {result.stop_reason}: {result.error}")

        async def theirs() -> None:
            srv.push(*rounds_script())
            result = await Runner.run(sdk_agent, "go", max_turns=ROUNDS + 2)
            if "Done" not in str(result.final_output):
                raise RuntimeError(f"the SDK's run ended with {result.final_output!r}")

        async def theirs_streamed() -> None:
            srv.push(*rounds_script())
            result = Runner.run_streamed(sdk_agent, "go", max_turns=ROUNDS + 2)
            async for _ in result.stream_events():
                pass
            if "Done" not in str(result.final_output):
                raise RuntimeError(f"the SDK's run ended with {result.final_output!r}")

        sides = {
            "ours (streamed)": ours,
            "Agents SDK": theirs,
            "Agents SDK (streamed)": theirs_streamed,
        }
        for fn in sides.values():  # warm up clients and imports
            await fn()
        samples: dict[str, list[tuple[float, float]]] = {k: [] for k in sides}
        for _ in range(reps):
            for name, fn in sides.items():
                samples[name].append(await timed(fn))
        await client.close()
        await provider.client.close()
    return {
        name: (statistics.median(s[0] for s in xs), statistics.median(s[1] for s in xs))
        for name, xs in samples.items()
    }


def report(figures: dict[str, tuple[float, float]]) -> None:
    ours_wall, ours_cpu = figures["ours (streamed)"]
    print(f"10 tool rounds on a fake Chat Completions server (median, ms): {MODEL}")
    print(f"{'side':<24}{'wall':>8}{'cpu':>8}{'ours/them wall':>16}{'ours/them cpu':>15}")
    for name, (wall, cpu) in figures.items():
        print(
            f"{name:<24}{wall * 1e3:>8.1f}{cpu * 1e3:>8.1f}"
            f"{ours_wall / wall:>16.2f}{ours_cpu / cpu:>15.2f}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=7)
    options = parser.parse_args()
    report(asyncio.run(run(options.reps)))


if __name__ == "__main__":
    main()
