"""What a notebook session costs with the 5-minute and the 1-hour prompt-cache TTL.

    python benchmarks/bench_cache_ttl.py [--cells 10] [--pause 360]

A session of ``--cells`` ``%%agent`` cells, each a short tool loop (two ``read_file`` calls
of about 2,000 characters each, then an answer; 5 s between the turns of a cell), with
``--pause`` seconds between cells (default 6 minutes: a person reading the answer and
writing the next cell), and again with 1-minute pauses for contrast. The agent has the
built-in coding tools and a system prompt, and talks to the fake Messages server through
``AnthropicProvider``; the server keeps a prompt cache with a fake clock
(``nb_tools.testing._cache.PromptCache``), so the usage it reports follows the breakpoints
and the TTL the requests carry, and each turn is priced with the project's table
(``nb_tools.model._pricing``: 5-minute writes 1.25x input, 1-hour writes 2x, reads 0.1x).
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
from pathlib import Path

from nb_tools.agent import Agent
from nb_tools.builtin import builtin_tools
from nb_tools.model import Usage
from nb_tools.model.anthropic import AnthropicProvider
from nb_tools.testing import call, reply
from nb_tools.testing._cache import PromptCache
from nb_tools.testing.server import FakeMessagesServer

MODEL = "claude-sonnet-4-5"
SYSTEM = "You are a careful data-science assistant working in the user's Jupyter notebook. " * 30
TURN_SECONDS = 5.0


async def session(ttl: str, cells: int, pause: float, root: Path) -> Usage:
    now = [0.0]
    cache = PromptCache(clock=lambda: now[0])
    with FakeMessagesServer(prompt_cache=cache) as server:
        provider = AnthropicProvider(MODEL, base_url=server.base_url, api_key="bench")
        agent = Agent(
            provider,
            tools=builtin_tools(
                root, include=["read_file", "write_file", "edit_file", "glob", "grep"]
            ),
            system=SYSTEM,
            approval="auto",
            cache_ttl=ttl,
            on_event=lambda event: None,
        )
        total = Usage()
        for cell in range(cells):
            server.push(
                reply("", call("read_file", file_path=f"data{cell % 3}.txt")),
                reply("", call("read_file", file_path=f"notes{cell % 3}.txt")),
                reply(f"Cell {cell}: the data and the notes agree."),
            )

            def tick(event: object) -> None:  # a turn of the loop takes a few seconds
                if type(event).__name__ == "TurnStarted":
                    now[0] += TURN_SECONDS

            result = await agent.run(f"Cell {cell}: compare the data and the notes.", on_event=tick)
            total = total + result.usage
            now[0] += pause
        await provider.client.close()
    return total


def line(name: str, usage: Usage) -> str:
    return (
        f"{name:<24} ${usage.cost_usd:8.4f}   read {usage.cache_read_input_tokens:>8,}   "
        f"written {usage.cache_creation_input_tokens:>7,}   uncached {usage.input_tokens:>6,}"
    )


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cells", type=int, default=10)
    parser.add_argument("--pause", type=float, default=360.0, help="seconds between cells")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for i in range(3):
            (root / f"data{i}.txt").write_text(f"row {i}: " + "1.5, 2.5, 3.5; " * 130)
            (root / f"notes{i}.txt").write_text(f"note {i}: " + "the mean rises slowly. " * 90)
        print(f"{args.cells} cells, {MODEL}, 3 turns a cell, {TURN_SECONDS:g} s between turns")
        for pause in (args.pause, 60.0):
            five = await session("5m", args.cells, pause, root)
            hour = await session("1h", args.cells, pause, root)
            print(f"\npauses of {pause / 60:g} min between cells")
            print(line("cache_ttl='5m'", five))
            print(line("cache_ttl='1h'", hour))
            print(f"{'5m / 1h cost':<24} {five.cost_usd / hour.cost_usd:8.2f}x")


if __name__ == "__main__":
    asyncio.run(main())
