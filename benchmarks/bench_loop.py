"""The tool loop against the anthropic SDK's own tool runner, on the same fake server.

    python benchmarks/bench_loop.py [--reps 7]

(a) one conversation of 10 tool rounds (one quick tool call per round, then a final
    answer): our ``Agent`` on ``AnthropicProvider`` (streaming) vs
    ``client.beta.messages.tool_runner(..., thread=False)`` with an equivalent
    ``beta_async_tool``, non-streaming (its default) and streaming.
(b) one turn with 16 parallel read-only calls of a 50 ms tool: the tools' span (first
    start to last end) and the whole run.
(c) one model request of a 5-round conversation (one text + tool-call reply), client CPU:
    ``AnthropicProvider.stream`` vs the SDK's ``messages.create`` (non-streaming and
    streaming), and the floor under any of them: the SDK's own ``client.post`` of the
    same body bytes, its raw response read to the end (no parsing at all).

Both sides talk HTTP to the same ``FakeMessagesServer`` on loopback, with warm clients;
each figure is the median of ``--reps`` interleaved runs. The server runs in this
process (a thread), so its work is in both sides' figures. Besides wall time, (a) and (b)
report the process CPU time of a run (client and server thread), which a busy machine
disturbs far less than wall time, and (a) the CPU time without the server thread's.
The SDK's runner runs a turn's tool calls one after another; ours runs adjacent
read-only calls together. A last row times our loop alone
(``ScriptedModel``, no HTTP) to show what the loop itself costs.

Older fake servers wrote SSE in small pieces with Nagle's algorithm on, so every
streamed request stalled ~40 ms on the client's delayed ACK; the benchmark turns Nagle
off on such a server unless ``--keep-nagle`` is given (today's server has it off).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import time
import warnings
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from nb_tools import tool
from nb_tools.agent import Agent
from nb_tools.model import ModelRequest
from nb_tools.model._anthropic_convert import request_params
from nb_tools.model._defaults import default_model
from nb_tools.model.anthropic import AnthropicProvider
from nb_tools.testing import ScriptedModel, call, reply
from nb_tools.testing.server import FakeMessagesServer

ROUNDS = 10
ONE_REQUESTS = 10  # requests per rep in (c)
PARALLEL = 16
SLOW_SECONDS = 0.05


def rounds_script() -> list[Any]:
    steps: list[Any] = [
        reply(f"Step {i}: looking up k{i}.", call("lookup", key=f"k{i}")) for i in range(ROUNDS)
    ]
    steps.append(reply("All ten values are in. Done."))
    return steps


def parallel_script() -> list[Any]:
    return [
        reply("Checking all sixteen.", *(call("slow_read", n=i) for i in range(PARALLEL))),
        reply("All sixteen checked."),
    ]


class Span:
    """First start and last end of a set of tool calls."""

    def __init__(self) -> None:
        self.starts: list[float] = []
        self.ends: list[float] = []

    def seconds(self) -> float:
        return max(self.ends) - min(self.starts)


async def timed(fn: Callable[[], Awaitable[Any]]) -> tuple[float, float, float]:
    """Wall, process CPU and this thread's CPU seconds of one run (the fake server runs
    in another thread of this process: process minus thread is the server's share)."""
    cpu, thread_cpu, start = time.process_time(), time.thread_time(), time.perf_counter()
    await fn()
    return (
        time.perf_counter() - start,
        time.process_time() - cpu,
        time.thread_time() - thread_cpu,
    )


def one_request_messages(rounds: int) -> list[Any]:
    """Our conversation after ``rounds`` tool rounds, ready for the next request."""
    from nb_tools.model import Message, TextBlock, ToolResult, ToolResultBlock, ToolUseBlock

    messages = [Message(role="user", content=(TextBlock(text="go"),))]
    for i in range(rounds):
        messages.append(
            Message(
                role="assistant",
                content=(
                    TextBlock(text=f"Step {i}: looking up k{i}."),
                    ToolUseBlock(
                        id=f"toolu_{i:04d}", name="lookup", arguments=f'{{"key": "k{i}"}}'
                    ),
                ),
            )
        )
        messages.append(
            Message(
                role="user",
                content=(
                    ToolResultBlock(
                        result=ToolResult(tool_use_id=f"toolu_{i:04d}", content=f"value of k{i}")
                    ),
                ),
            )
        )
    return messages


def no_nagle() -> bool:
    """Turn Nagle off on the fake server's connections; False if it already was."""
    from nb_tools.testing import server

    handler = getattr(server, "_Handler", None)
    if handler is None or handler.disable_nagle_algorithm:
        return False
    handler.disable_nagle_algorithm = True
    return True


async def main(reps: int, keep_nagle: bool) -> None:
    import anthropic
    import httpx2
    from anthropic import beta_async_tool

    from nb_tools.tool import Registry

    model = default_model()
    span = Span()

    @tool(register=False, read_only=True)
    async def lookup(key: str) -> str:
        """Look up a key."""
        return f"value of {key}"

    @tool(register=False, read_only=True)
    async def slow_read(n: int) -> str:
        """A 50 ms read-only call."""
        span.starts.append(time.perf_counter())
        await asyncio.sleep(SLOW_SECONDS)
        span.ends.append(time.perf_counter())
        return f"read {n}"

    @beta_async_tool(name="lookup")
    async def sdk_lookup(key: str) -> str:
        """Look up a key."""
        return f"value of {key}"

    @beta_async_tool(name="slow_read")
    async def sdk_slow_read(n: int) -> str:
        """A 50 ms read-only call."""
        span.starts.append(time.perf_counter())
        await asyncio.sleep(SLOW_SECONDS)
        span.ends.append(time.perf_counter())
        return f"read {n}"

    with FakeMessagesServer() as srv:
        provider = AnthropicProvider(model, base_url=srv.base_url, api_key="test")
        client = anthropic.AsyncAnthropic(base_url=srv.base_url, api_key="test")

        async def ours(tools: list[Any], script: list[Any]) -> None:
            srv.push(*script)
            result = await Agent(provider, tools=tools, approval="auto").run("go")
            if result.stop_reason != "end_turn":
                raise RuntimeError(f"our run ended with {result.stop_reason}: {result.error}")

        async def theirs(tools: list[Any], script: list[Any], stream: bool) -> None:
            srv.push(*script)
            runner = client.beta.messages.tool_runner(
                model=model,
                max_tokens=1024,
                messages=[{"role": "user", "content": "go"}],
                tools=tools,
                thread=False,
                stream=stream,  # type: ignore[call-overload]
            )
            if stream:
                async for message_stream in runner:
                    await message_stream.get_final_message()
            else:
                await runner.until_done()

        async def loop_alone() -> None:
            result = await Agent(
                ScriptedModel(rounds_script()), tools=[lookup], approval="auto"
            ).run("go")
            if result.stop_reason != "end_turn":
                raise RuntimeError(f"scripted run ended with {result.stop_reason}")

        # (c) one request, its parts taken apart
        request = ModelRequest(
            system="",
            messages=one_request_messages(5),
            tools=tuple(Registry(lookup).specs()),
            max_tokens=1024,
        )
        params = request_params(request, model=model, cache=True)
        body = json.dumps({**params, "stream": True}).encode()

        def c_reply() -> None:
            srv.push(reply("Step 5: looking up k5.", call("lookup", key="k5")))

        async def c_ours() -> None:
            c_reply()
            async for _ in provider.stream(request):
                pass

        async def c_create(stream: bool) -> None:
            c_reply()
            if stream:
                async for _ in await client.messages.create(**params, stream=True):
                    pass
            else:
                await client.messages.create(**params)

        async def c_floor() -> None:
            c_reply()
            response = await client.post(
                "/v1/messages", cast_to=httpx2.Response, content=body, stream=True
            )
            async for _ in response.aiter_raw():
                pass
            await response.aclose()

        cases: dict[str, Callable[[], Awaitable[Any]]] = {
            "loop": loop_alone,
            "a/ours": lambda: ours([lookup], rounds_script()),
            "a/sdk": lambda: theirs([sdk_lookup], rounds_script(), False),
            "a/sdk-stream": lambda: theirs([sdk_lookup], rounds_script(), True),
            "b/ours": lambda: ours([slow_read], parallel_script()),
            "b/sdk": lambda: theirs([sdk_slow_read], parallel_script(), False),
        }
        one: dict[str, Callable[[], Awaitable[Any]]] = {
            "c/ours": c_ours,
            "c/create": lambda: c_create(False),
            "c/create-stream": lambda: c_create(True),
            "c/floor": c_floor,
        }
        walls: dict[str, list[float]] = {k: [] for k in [*cases, *one]}
        cpus: dict[str, list[float]] = {k: [] for k in walls}
        client_cpus: dict[str, list[float]] = {k: [] for k in cases}
        spans: dict[str, list[float]] = {k: [] for k in cases if k.startswith("b/")}
        for fn in [*cases.values(), *one.values()]:  # warm-up: imports, connections
            await fn()
        for _ in range(reps):
            for name, fn in cases.items():
                span.starts.clear()
                span.ends.clear()
                wall, cpu, thread_cpu = await timed(fn)
                walls[name].append(wall)
                cpus[name].append(cpu)
                client_cpus[name].append(thread_cpu)
                if name in spans:
                    spans[name].append(span.seconds())
            for name, fn in one.items():
                thread_cpu = time.thread_time()
                for _ in range(ONE_REQUESTS):
                    await fn()
                cpus[name].append((time.thread_time() - thread_cpu) / ONE_REQUESTS)
        await client.close()
        await provider.client.close()

    med = {k: statistics.median(v) * 1000 for k, v in walls.items() if v}
    cpu = {k: statistics.median(v) * 1000 for k, v in cpus.items()}
    client_cpu = {k: statistics.median(v) * 1000 for k, v in client_cpus.items()}
    tool_ms = {k: statistics.median(v) * 1000 for k, v in spans.items()}
    nagle = "Nagle on" if keep_nagle else "Nagle off"
    print(
        f"tool loop benchmark: anthropic {anthropic.__version__}, {reps} reps, medians, "
        f"FakeMessagesServer on loopback ({nagle}), load average {os.getloadavg()[0]:.1f} "
        f"on {os.cpu_count()} CPUs\n"
    )
    print(f"{'case':58} {'ours':>9} {'SDK':>9} {'ratio':>7}")
    rows = [
        (f"(a) {ROUNDS} tool rounds, wall ms (SDK non-streaming)", med["a/ours"], med["a/sdk"]),
        (f"(a) {ROUNDS} tool rounds, wall ms (SDK streaming)", med["a/ours"], med["a/sdk-stream"]),
        (f"(a) {ROUNDS} tool rounds, CPU ms (SDK non-streaming)", cpu["a/ours"], cpu["a/sdk"]),
        (f"(a) {ROUNDS} tool rounds, CPU ms (SDK streaming)", cpu["a/ours"], cpu["a/sdk-stream"]),
        (
            f"(a) {ROUNDS} tool rounds, CPU ms without the server's",
            client_cpu["a/ours"],
            client_cpu["a/sdk"],
        ),
        (
            f"(b) {PARALLEL} x {SLOW_SECONDS * 1000:.0f} ms read-only calls, tool span ms",
            tool_ms["b/ours"],
            tool_ms["b/sdk"],
        ),
        (
            f"(b) {PARALLEL} x {SLOW_SECONDS * 1000:.0f} ms read-only calls, whole run ms",
            med["b/ours"],
            med["b/sdk"],
        ),
        ("(c) one request, client CPU ms (SDK messages.create)", cpu["c/ours"], cpu["c/create"]),
        (
            "(c) one request, client CPU ms (SDK messages.create, stream)",
            cpu["c/ours"],
            cpu["c/create-stream"],
        ),
        (
            "(c) one request, client CPU ms (SDK client.post, raw bytes)",
            cpu["c/ours"],
            cpu["c/floor"],
        ),
    ]
    for label, a, b in rows:
        print(f"{label:58} {a:9.2f} {b:9.2f} {a / b:6.2f}x")
    per_round = med["loop"] / (ROUNDS + 1)
    print(
        f"\nour loop alone (ScriptedModel, no HTTP): {med['loop']:.1f} ms for the "
        f"{ROUNDS}-round conversation, {per_round:.2f} ms per model turn"
    )
    print("targets: (a) ours <= 0.7x the SDK runner; (b) tool span < 100 ms vs ~800 ms")
    print(
        "(c) 'client.post, raw bytes' is the SDK's transport alone: no body encoding, no "
        "event parsing; what any client built on the SDK pays at least"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=7)
    parser.add_argument(
        "--keep-nagle", action="store_true", help="leave the fake server's sockets as they are"
    )
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    if not args.keep_nagle:
        no_nagle()
    asyncio.run(main(args.reps, args.keep_nagle))
