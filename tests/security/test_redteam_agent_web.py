"""Red team, ``web_fetch`` (regression guards: these held). Under ``approval="auto"`` only
the address check stands between the model and the kernel's own machine; every spelling
of a loopback address the system resolver understands must reach nothing, and a proxy
named in the environment must not carry the request (it would skip the check)."""

from __future__ import annotations

import json

import pytest
from approvals_helpers import Listener, call, drive

from nb_tools.builtin._web import WebFetchTool

SPELLINGS = [
    "http://2130706433:{port}/",  # decimal
    "http://0x7f000001:{port}/",  # hex
    "http://0x7f.1:{port}/",
    "http://017700000001:{port}/",  # octal
    "http://0177.0.0.1:{port}/",
    "http://127.1:{port}/",
    "http://0:{port}/",  # 0.0.0.0 connects to this machine
    "http://0.0.0.0:{port}/",
    "http://localhost.:{port}/",
    "http://LOCALHOST:{port}/",
    "http://[::ffff:127.0.0.1]:{port}/",
    "http://[::ffff:7f00:1]:{port}/",
    "http://[0:0:0:0:0:ffff:127.0.0.1]:{port}/",
    "http://127.0.0.1%2e:{port}/",
    "http://127。0。0。1:{port}/",
    "http://①②⑦.0.0.1:{port}/",
    "http://127.0.0.1\t:{port}/",
]


@pytest.mark.parametrize("spelling", SPELLINGS)
async def test_loopback_in_any_spelling_reaches_nothing_under_auto(spelling: str) -> None:
    async with Listener() as listener:
        url = spelling.format(port=listener.port)
        out = await drive(
            [call("web_fetch", url=url, id="f")], tools=[WebFetchTool()], approval="auto"
        )
        assert listener.connections == 0, url
        content, is_error = out.result("f")
        assert is_error, content


@pytest.mark.parametrize("variable", ["HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"])
async def test_an_environment_proxy_does_not_carry_the_fetch(
    variable: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with Listener() as proxy:
        monkeypatch.setenv(variable, f"http://127.0.0.1:{proxy.port}")
        monkeypatch.delenv("NO_PROXY", raising=False)
        monkeypatch.delenv("no_proxy", raising=False)

        async def resolve(host: str, port: int) -> list[str]:
            return ["127.0.0.2"]  # nothing listens there

        tool = WebFetchTool(allow_private_network=True, resolver=resolve)
        result = await tool.call(json.dumps({"url": "http://unrouted.example:9/"}))
        assert proxy.connections == 0
        assert result.is_error


URL_SPELLINGS = [
    "http://EVIL.example:{port}/x",
    "http://evil.example.:{port}/x",
    "http://evil。example:{port}/x",
    "HTTP://evil.example:{port}/x",
    "http://evil%2eexample:{port}/x",
    "http://ｅｖｉｌ.example:{port}/x",
]


@pytest.mark.parametrize("spelling", URL_SPELLINGS)
async def test_a_deny_url_glob_catches_every_spelling_of_its_host(spelling: str) -> None:
    """A ``web_fetch`` rule may glob the URL instead of naming a domain; a deny must then
    see the URL as the client connects to it (the host normalised), not only as typed."""
    from approvals_helpers import fetch_tool

    from nb_tools.permissions import PermissionRules

    async with Listener() as listener:
        rules = PermissionRules()
        rules.deny(f"web_fetch(http://evil.example:{listener.port}/*)")
        url = spelling.format(port=listener.port)
        out = await drive(
            [call("web_fetch", url=url, id="f")], tools=[fetch_tool()], rules=rules, approval="auto"
        )
        assert listener.connections == 0, url
        # full-width letters: httpx refuses the URL, so web_fetch does too ("error")
        assert out.status("f") in ("denied", "error")
