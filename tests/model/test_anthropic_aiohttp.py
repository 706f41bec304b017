"""AnthropicProvider.concurrent_requests: inside it, requests go over the SDK's aiohttp
transport, on a client of the event loop's own (an aiohttp session cannot outlive its
loop); streaming, the SDK's retries, cut streams and errors read as over httpx."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Iterator

import anthropic
import pytest

from nb_tools.model import (
    Message,
    ModelError,
    ModelEvent,
    ModelRequest,
    ResponseEvent,
    TextBlock,
    TextDeltaEvent,
    ToolArgumentsDeltaEvent,
)
from nb_tools.model.anthropic import AnthropicProvider
from nb_tools.testing._guard import block_real_models  # noqa: F401  (autouse)
from nb_tools.testing._script import Fault, call, reply
from nb_tools.testing.server import FakeMessagesServer

pytest.importorskip("aiohttp")

MODEL = "claude-sonnet-4-6"
ASK = ModelRequest(
    system="",
    tools=(),
    messages=(Message(role="user", content=(TextBlock(text="Hi"),)),),
    max_tokens=1024,
)


@pytest.fixture
def srv() -> Iterator[FakeMessagesServer]:
    with FakeMessagesServer() as server:
        yield server


def over_aiohttp(client: anthropic.AsyncAnthropic) -> bool:
    # The SDK keeps its HTTP client in ``_client`` (checked against anthropic 2.15).
    return isinstance(client._client, anthropic.DefaultAioHttpClient)


async def collect(provider: AnthropicProvider) -> list[ModelEvent]:
    return [event async for event in provider.stream(ASK)]


async def test_inside_the_scope_requests_go_over_aiohttp_and_read_the_same(
    srv: FakeMessagesServer,
) -> None:
    provider = AnthropicProvider(MODEL, base_url=srv.base_url, max_retries=2)
    default = provider.client
    assert not over_aiohttp(default)
    srv.push(
        reply("Let me look.", call("get_weather", city="Paris")),
        Fault(status=529),
        reply("Back."),
        Fault(cut_after=5),
        Fault(cut_after=4, status=529, message="Overloaded"),
    )
    async with provider.concurrent_requests():
        scoped = provider.client
        assert scoped is not default and over_aiohttp(scoped)
        async with provider.concurrent_requests():  # nested: the same client
            assert provider.client is scoped
        assert not scoped.is_closed()

        events = await collect(provider)
        assert [e for e in events if isinstance(e, TextDeltaEvent)]
        deltas = [e.partial_json for e in events if isinstance(e, ToolArgumentsDeltaEvent)]
        assert "".join(deltas) == '{"city": "Paris"}'
        done = events[-1]
        assert isinstance(done, ResponseEvent) and done.stop_reason == "tool_use"

        events = await collect(provider)  # a 529 first: the SDK retried it
        assert isinstance(events[-1], ResponseEvent)
        assert events[-1].message.text == "Back."
        assert len(srv.requests) == 3

        with pytest.raises(ModelError) as cut:
            await collect(provider)
        assert cut.value.retryable and "cut mid-way" in str(cut.value)

        with pytest.raises(ModelError) as mid:
            await collect(provider)
        assert (mid.value.status, mid.value.retryable) == (529, True)
    assert scoped.is_closed()
    assert provider.client is default and not default.is_closed()


def test_each_event_loop_gets_its_own_client(srv: FakeMessagesServer) -> None:
    """``Agent.run_sync`` runs each call in a new event loop; an aiohttp session made in
    one fails in the next ("Event loop is closed")."""
    provider = AnthropicProvider(MODEL, base_url=srv.base_url, max_retries=0)
    srv.push(reply("one"), reply("two"))
    clients = []

    async def once() -> str:
        async with provider.concurrent_requests():
            clients.append(provider.client)
            event = (await collect(provider))[-1]
            assert isinstance(event, ResponseEvent)
            return event.message.text

    assert [asyncio.run(once()), asyncio.run(once())] == ["one", "two"]
    assert clients[0] is not clients[1]
    assert all(over_aiohttp(c) and c.is_closed() for c in clients)


def test_two_event_loops_at_once_each_use_their_own(srv: FakeMessagesServer) -> None:
    """``map()`` on a helper thread while the kernel's loop runs another map: each loop's
    requests go through the client made in it."""
    import threading

    provider = AnthropicProvider(MODEL, base_url=srv.base_url, max_retries=0)
    srv.push(reply("one"), reply("two"))
    both_inside = threading.Barrier(2, timeout=30)
    clients: dict[str, anthropic.AsyncAnthropic] = {}
    texts: list[str] = []

    async def once(name: str) -> None:
        async with provider.concurrent_requests():
            clients[name] = provider.client
            await asyncio.to_thread(both_inside.wait)
            event = (await collect(provider))[-1]
            assert isinstance(event, ResponseEvent)
            texts.append(event.message.text)

    threads = [threading.Thread(target=asyncio.run, args=(once(n),)) for n in "ab"]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert sorted(texts) == ["one", "two"]
    assert clients["a"] is not clients["b"]


async def test_a_client_of_your_own_is_kept(srv: FakeMessagesServer) -> None:
    mine = anthropic.AsyncAnthropic(base_url=srv.base_url, api_key="mine")
    provider = AnthropicProvider(MODEL, client=mine)
    async with provider.concurrent_requests():
        assert provider.client is mine
    await mine.close()


async def test_an_unreachable_endpoint_reads_as_over_httpx() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    provider = AnthropicProvider(MODEL, base_url=f"http://127.0.0.1:{port}", max_retries=0)
    async with provider.concurrent_requests():
        with pytest.raises(ModelError) as caught:
            await collect(provider)
    assert caught.value.retryable
    assert str(caught.value).startswith(
        f"Could not reach the Anthropic API at http://127.0.0.1:{port} after 0 retries"
    )
