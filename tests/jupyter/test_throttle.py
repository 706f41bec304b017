"""The throttle that turns a stream of changes into a few widget updates."""

from __future__ import annotations

import asyncio

from nb_tools.jupyter._throttle import Throttle, stream_interval


def test_stream_interval_stays_at_ten_a_second() -> None:
    assert [stream_interval(a) for a in (0.0, 0.5, 2.0, 5.0, 60.0)] == [0.08] * 5


async def test_pokes_coalesce_and_the_last_change_is_always_shown() -> None:
    flushed: list[int] = []
    state = {"n": 0}
    throttle = Throttle(
        lambda: flushed.append(state["n"]),
        loop=asyncio.get_running_loop(),
        interval=lambda _age: 0.05,
    )
    for n in range(1, 101):
        state["n"] = n
        throttle.poke()
    assert flushed == [1]  # the first change shows at once, the rest wait for the timer
    await asyncio.sleep(0.2)
    assert flushed == [1, 100]  # the timer showed the latest state, once
    throttle.flush()
    assert flushed == [1, 100]  # nothing changed since: no update


def test_without_a_loop_every_poke_flushes() -> None:
    flushed: list[int] = []
    throttle = Throttle(lambda: flushed.append(1), loop=None)
    throttle.poke()
    throttle.poke()
    assert flushed == [1, 1]
