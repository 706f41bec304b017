"""What the fake-server tests share besides fixtures."""

from __future__ import annotations

import httpx

from nb_tools.testing.server import FakeMessagesServer


def post(srv: FakeMessagesServer, payload: object, path: str = "/v1/messages") -> httpx.Response:
    return httpx.post(srv.base_url + path, json=payload, timeout=10)
