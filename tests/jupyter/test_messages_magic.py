"""``%%agent --thinking/--server-tools/--attach`` in a real kernel against the fake server:
the request carries them and the transcript shows thinking and the server tool."""

from __future__ import annotations

import json

import pytest
from kernel_helpers import TRANSCRIPT, Kernel

from nb_tools.testing import FakeMessagesServer, reply

pytestmark = pytest.mark.kernel

SEARCH = [
    {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {"query": "sq"}},
    {
        "type": "web_search_tool_result",
        "tool_use_id": "srvtoolu_1",
        "content": [{"type": "web_search_result", "url": "https://sq.example", "title": "Squares"}],
    },
]


def test_agent_options_reach_the_request_and_the_transcript(
    kernel: Kernel, server: FakeMessagesServer
) -> None:
    kernel.ok("%load_ext nb_tools\nfrom PIL import Image\nimg = Image.new('RGB', (20, 20))")
    server.push(reply("A black square.", thinking="It is dark.", blocks=SEARCH))
    ex = kernel.ok(
        "%%agent --new --thinking 2000 --server-tools web_search --attach img\nWhat is this?"
    )
    assert not ex.errors, ex.errors[0].get("traceback")
    body = server.requests[-1].body
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 2000}
    assert {"type": "web_search_20250305", "name": "web_search"}.items() <= body["tools"][
        -1
    ].items()
    first = body["messages"][0]["content"]
    assert [b["type"] for b in first] == ["image", "text"]
    transcript = ex.displays[-1]["data"][TRANSCRIPT]
    kinds = [i["kind"] for i in transcript["items"]]
    assert kinds == ["user", "thinking", "server_tool", "assistant"]
    assert transcript["items"][2]["results"][0]["url"] == "https://sq.example"
    html = ex.displays[-1]["data"]["text/html"]
    assert '<details class="nbtools-thinking"' in html and 'href="https://sq.example"' in html
    # the options are kept: the next run thinks again, without a new --thinking
    server.push(reply("Still a square."))
    kernel.ok("%%agent\nAnd now?")
    assert server.requests[-1].body["thinking"] == {"type": "enabled", "budget_tokens": 2000}


def test_output_puts_a_validated_value_in_a_variable(
    kernel: Kernel, server: FakeMessagesServer
) -> None:
    kernel.ok(
        "%load_ext nb_tools\nimport pydantic, dataclasses\n"
        "class City(pydantic.BaseModel):\n    name: str\n    population: int\n"
        "@dataclasses.dataclass\nclass Point:\n    x: int\n    y: int\n"
        "where: Point"
    )
    server.push(reply('{"name": "Paris", "population": "many"}'))
    server.push(reply('{"name": "Paris", "population": 2100000}'))
    ex = kernel.ok("%%agent --new --output city:City\nThe biggest French city?")
    assert not ex.errors, ex.errors[0].get("traceback")
    body = server.requests[-2].body
    assert body["output_config"]["format"]["schema"]["required"] == ["name", "population"]
    retry = server.requests[-1].body["messages"][-1]["content"][-1]["text"]
    assert "/population: expected integer, got string" in retry
    shown = kernel.ok("print(type(city).__name__, city.name, city.population)")
    assert shown.stdout.strip() == "City Paris 2100000"
    # the type from the variable's annotation
    server.push(reply('{"x": 3, "y": 4}'))
    kernel.ok("%%agent --output where\nA point?")
    assert kernel.ok("print(where)").stdout.strip() == "Point(x=3, y=4)"
    # an unknown type is a usage error naming the fix
    bad = kernel.run("%%agent --output c:Nope\nA city?")
    stderr = "".join(o.get("text", "") for o in bad.outputs if o.get("name") == "stderr")
    assert stderr.startswith("UsageError: %%agent --output c:Nope: Nope is not defined"), stderr


def test_cache_ttl_reaches_every_breakpoint_and_is_kept(
    kernel: Kernel, server: FakeMessagesServer
) -> None:
    kernel.ok("%load_ext nb_tools")
    server.push(reply("one"), reply("two"))
    kernel.ok("%%agent --new --cache-ttl 5m\nhello")
    text = json.dumps(server.requests[-1].body)
    assert text.count('"cache_control"') == text.count('"ttl": "5m"') >= 2
    kernel.ok("%%agent\nagain")
    text = json.dumps(server.requests[-1].body)
    assert text.count('"cache_control"') == text.count('"ttl": "5m"') >= 2
