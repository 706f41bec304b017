"""The HTTP clients under :class:`~nb_tools.model.anthropic.AnthropicProvider`'s SDK client.

By default the SDK's own (httpx), with one TLS context per process. For many concurrent
requests in one event loop (``nb_tools.map``'s rows) the SDK's aiohttp transport
(``anthropic.DefaultAioHttpClient``, the ``anthropic[aiohttp]`` extra) costs about half
the client CPU per request; but an aiohttp session belongs to the event loop it was made
in, and a provider outlives loops (``Agent.run_sync`` runs each call in a new one). So
the aiohttp client is made per loop, only inside :class:`LoopClients.scope` (entered and
left in that loop), and closed when its last scope there ends.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import sys
import threading
from collections.abc import AsyncIterator, Callable
from typing import Any

_TLS: list[Any] = []
_TLS_LOCK = threading.Lock()


def tls_context() -> Any:
    """The verified TLS context the SDK's default HTTP client would build, made once per
    process and shared by every client made here: building one reads the CA bundle (about
    30 ms, 250 ms on a busy machine), on the first request's path. ``%load_ext`` makes it
    in its background warm-up. ``None`` if the SDK's HTTP library cannot make one."""
    with _TLS_LOCK:
        if not _TLS:
            _TLS.append(_make_tls_context())
        return _TLS[0]


def _make_tls_context() -> Any:
    try:
        import anthropic

        base = next(
            c
            for c in anthropic.DefaultAsyncHttpxClient.__mro__
            if not c.__module__.startswith("anthropic")
        )
        make = getattr(sys.modules[base.__module__.split(".")[0]], "create_ssl_context", None)
        return make() if callable(make) else None
    except Exception:  # an SDK built otherwise: its clients make their own
        return None


def shared_tls_http_client() -> Any:
    """The SDK's default async HTTP client (its timeouts, limits, keep-alive, proxies from
    the environment) with :func:`tls_context`; ``None``: let the SDK make its own."""
    context = tls_context()
    if context is None:
        return None
    import anthropic

    try:
        return anthropic.DefaultAsyncHttpxClient(verify=context)
    except Exception:
        return None


def has_aiohttp() -> bool:
    """Whether the SDK's aiohttp transport can be used (aiohttp is installed)."""
    return importlib.util.find_spec("aiohttp") is not None


def aiohttp_http_client() -> Any:
    """The SDK's aiohttp HTTP client (its timeouts, limits, proxies from the environment)
    with :func:`tls_context`; ``None`` when aiohttp or the SDK's support for it is
    missing."""
    if not has_aiohttp():
        return None
    import anthropic

    make = getattr(anthropic, "DefaultAioHttpClient", None)
    if make is None:
        return None
    context = tls_context()
    try:
        return make(**({"verify": context} if context is not None else {}))
    except Exception:  # the SDK's stand-in when its aiohttp extra is not there
        return None


class LoopClients:
    """SDK clients over aiohttp, one per event loop that has a :meth:`scope` open.

    ``make(http_client)`` builds an SDK client; :meth:`get` is that loop's client inside a
    scope (made on first use), else ``None`` (the caller uses its default client)."""

    def __init__(self, make: Callable[[Any], Any]) -> None:
        self._make = make
        self._open: dict[asyncio.AbstractEventLoop, list[Any]] = {}  # loop -> [client, depth]

    def get(self) -> Any:
        if not self._open:
            return None
        try:
            held = self._open.get(asyncio.get_running_loop())
        except RuntimeError:  # no running loop
            return None
        if held is None:
            return None
        if held[0] is None:
            http = aiohttp_http_client()
            if http is None:
                return None
            held[0] = self._make(http)
        return held[0]

    @contextlib.asynccontextmanager
    async def scope(self) -> AsyncIterator[None]:
        """While open, requests from this event loop go over aiohttp (when installed)."""
        if not has_aiohttp():
            yield
            return
        loop = asyncio.get_running_loop()
        held = self._open.setdefault(loop, [None, 0])
        held[1] += 1
        try:
            yield
        finally:
            held[1] -= 1
            if held[1] == 0:
                del self._open[loop]
                if held[0] is not None:
                    await held[0].close()
