"""nb_tools.map over many rows against a model with a fixed latency: wall time against the
ideal, kernel memory per finished row, and the loop a user would write instead.

    python benchmarks/bench_map.py [--rows 1000] [--tool-rounds 2] [--latency 0.2]
                                   [--concurrency 50]

Each row is a tool loop of ``--tool-rounds`` rounds (a model request that calls ``lookup``,
the call answered), then a final answer: ``tool_rounds + 1`` model requests. The fake
Messages server runs in a child process (so it does not share the benchmark's GIL) and
waits ``--latency`` seconds before each answer. The ideal is
``rows * requests_per_row * latency / concurrency``. The alternatives are what a user writes
without ``map``, at most ``--concurrency`` rows at once (an ``asyncio.Semaphore``):
``asyncio.gather`` over ``Agent.run`` calls, and ``asyncio.gather`` over the anthropic SDK's
own loop, ``client.beta.messages.tool_runner(..., thread=False)`` with the same tool
(``beta_async_tool``), against the same server (it sends unstreamed requests; ``map``
streams), with the SDK's default HTTP client (httpx) and with its aiohttp one
(``DefaultAioHttpClient``, which ``map`` uses when ``anthropic[aiohttp]`` is installed; the
``Agent.run`` loop uses httpx). Memory: the process's resident size after the first full
map run minus before it (after a 20-row warm-up), per row (the result table and every
row's conversation are still held). The fake server's CPU per request is printed too (it
runs in its own process, but shares the machine's cores). CPU: the benchmark process's CPU
time (every thread) per model request, which bounds the wall time once the CPU is the
limit and, unlike the wall time, hardly depends on what else the machine runs. Each figure
is the better of two runs.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import resource
import time
from typing import Any

from nb_tools import tool
from nb_tools.agent import Agent, amap
from nb_tools.model import ModelRequest
from nb_tools.model.anthropic import AnthropicProvider
from nb_tools.testing import call, reply

MODEL = "claude-sonnet-4-5"
SYSTEM = "You classify support tickets. Look the customer up before you answer. " * 10


@tool(register=False, read_only=True)
def lookup(customer: str, step: int) -> str:
    """A customer's record."""
    return f"{customer}: plan=pro, step={step}"


def _responder(tool_rounds: int) -> Any:
    def answer(request: ModelRequest) -> Any:
        done = (len(request.messages) - 1) // 2
        if done < tool_rounds:
            return reply("", call("lookup", customer=f"c{len(request.messages)}", step=done))
        return reply("billing")

    return answer


def _serve(latency: float, tool_rounds: int, port: Any, stop: Any) -> None:
    from nb_tools.testing.server import FakeMessagesServer

    with FakeMessagesServer(fallback=_responder(tool_rounds), latency=latency) as srv:
        port.put(srv.port)
        stop.wait()
        usage = resource.getrusage(resource.RUSAGE_SELF)
        port.put((usage.ru_utime + usage.ru_stime, len(srv.requests)))


def best(a: tuple[float, float], b: tuple[float, float]) -> tuple[float, float]:
    return (min(a[0], b[0]), min(a[1], b[1]))


def rss_mb() -> float:
    with open("/proc/self/statm") as f:
        pages = int(f.read().split()[1])
    return pages * resource.getpagesize() / 2**20


async def with_map(base_url: str, rows: list[dict[str, str]], concurrency: int) -> float:
    provider = AnthropicProvider(MODEL, base_url=base_url, api_key="bench")
    start = time.perf_counter()
    out = await amap(
        "Classify ticket {ticket}",
        rows,
        tools=[lookup],
        model=provider,
        system=SYSTEM,
        concurrency=concurrency,
        approval="auto",
    )
    wall = time.perf_counter() - start
    bad = out[out["status"] != "ok"]
    if len(bad):
        raise SystemExit(f"{len(bad)} rows failed: {bad['error'].iloc[0]}")
    await provider.client.close()
    globals()["_kept"] = out  # keep the table while memory is measured
    return wall


async def with_gather(base_url: str, rows: list[dict[str, str]], concurrency: int) -> float:
    provider = AnthropicProvider(MODEL, base_url=base_url, api_key="bench")
    gate = asyncio.Semaphore(concurrency)

    async def one(row: dict[str, str]) -> Any:
        async with gate:
            agent = Agent(provider, tools=[lookup], system=SYSTEM, approval="auto")
            return await agent.run(f"Classify ticket {row['ticket']}")

    start = time.perf_counter()
    results = await asyncio.gather(*(one(r) for r in rows))
    wall = time.perf_counter() - start
    failed = [r for r in results if r.stop_reason != "end_turn"]
    if failed:
        raise SystemExit(f"gather: {len(failed)} rows failed: {failed[0].error}")
    await provider.client.close()
    return wall


async def with_tool_runner(
    base_url: str, rows: list[dict[str, str]], concurrency: int, aiohttp: bool = False
) -> float:
    from anthropic import AsyncAnthropic, DefaultAioHttpClient, beta_async_tool

    @beta_async_tool(name="lookup")
    async def lookup_sdk(customer: str, step: int) -> str:
        """A customer's record."""
        return f"{customer}: plan=pro, step={step}"

    http = {"http_client": DefaultAioHttpClient()} if aiohttp else {}
    client = AsyncAnthropic(base_url=base_url, api_key="bench", **http)
    gate = asyncio.Semaphore(concurrency)

    async def one(row: dict[str, str]) -> Any:
        async with gate:
            runner = client.beta.messages.tool_runner(
                model=MODEL,
                max_tokens=8192,
                system=SYSTEM,
                tools=[lookup_sdk],
                messages=[{"role": "user", "content": f"Classify ticket {row['ticket']}"}],
                thread=False,
            )
            return await runner.until_done()

    start = time.perf_counter()
    results = await asyncio.gather(*(one(r) for r in rows))
    wall = time.perf_counter() - start
    failed = [r for r in results if r.stop_reason != "end_turn"]
    if failed:
        raise SystemExit(f"tool_runner: {len(failed)} rows failed: {failed[0].stop_reason}")
    await client.close()
    return wall


def timed(coro: Any) -> tuple[float, float]:
    """(wall seconds the coroutine reports, CPU seconds the process spent running it)."""
    cpu = time.process_time()
    wall = asyncio.run(coro)
    return wall, time.process_time() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=1000)
    parser.add_argument("--tool-rounds", type=int, default=2)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--concurrency", type=int, default=50)
    args = parser.parse_args()

    ctx = multiprocessing.get_context("spawn")
    port, stop = ctx.Queue(), ctx.Event()
    server = ctx.Process(target=_serve, args=(args.latency, args.tool_rounds, port, stop))
    server.start()
    try:
        base_url = f"http://127.0.0.1:{port.get(timeout=60)}"
        rows = [{"ticket": f"T{i:05d}"} for i in range(args.rows)]
        requests = args.tool_rounds + 1
        ideal = args.rows * requests * args.latency / args.concurrency
        c = args.concurrency
        asyncio.run(with_map(base_url, rows[:20], c))  # imports, warm server
        before = rss_mb()
        mapped = timed(with_map(base_url, rows, c))
        per_row_kb = (rss_mb() - before) * 1024 / args.rows
        gathered = timed(with_gather(base_url, rows, c))
        asyncio.run(with_tool_runner(base_url, rows[:20], c))  # imports
        runner = timed(with_tool_runner(base_url, rows, c))
        runner_aio = timed(with_tool_runner(base_url, rows, c, aiohttp=True))
        # the machine may be shared: run each again, keep each one's best
        gathered = best(gathered, timed(with_gather(base_url, rows, c)))
        runner = best(runner, timed(with_tool_runner(base_url, rows, c)))
        runner_aio = best(runner_aio, timed(with_tool_runner(base_url, rows, c, aiohttp=True)))
        mapped = best(mapped, timed(with_map(base_url, rows, c)))
    finally:
        stop.set()
        server_cpu, served = port.get(timeout=60)
        server.join(timeout=10)
    print(
        f"{args.rows} rows x {requests} requests, {args.latency * 1000:.0f} ms each, "
        f"concurrency {args.concurrency}"
    )
    n = args.rows * requests
    print(f"ideal                 {ideal:8.2f} s")
    for name, (wall, cpu) in (
        ("nb_tools.map", mapped),
        ("asyncio.gather(run)", gathered),
        ("gather(tool_runner)", runner),
        ("  same, over aiohttp", runner_aio),
    ):
        print(
            f"{name:21} {wall:8.2f} s   {wall / ideal:.2f}x the ideal   "
            f"CPU {cpu * 1000 / n:.2f} ms per request"
        )
    print(
        f"map / gather          {mapped[0] / gathered[0]:.2f}x wall, "
        f"{mapped[1] / gathered[1]:.2f}x CPU"
    )
    for name, (wall, cpu) in (("tool_runner", runner), ("runner, aiohttp", runner_aio)):
        print(f"{'map / ' + name:21} {mapped[0] / wall:.2f}x wall, {mapped[1] / cpu:.2f}x CPU")
    print(
        f"fake server           CPU {server_cpu * 1000 / max(served, 1):.2f} ms per request "
        f"(its own process; {served} requests)"
    )
    print(f"kernel memory         {per_row_kb:.1f} KB per finished row (RSS growth)")


if __name__ == "__main__":
    main()
