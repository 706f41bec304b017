"""The same Messages API cases in-process (ScriptedModel), plus how they read in the
transcript (JSON, plain text, HTML) and the ``%%agent`` options that turn them on."""

from __future__ import annotations

import json
from typing import Any

import pytest
from agent_helpers import Recorder
from messages_rules import check_scripted

from nb_tools import tool
from nb_tools.agent import Agent
from nb_tools.model import ThinkingBlock, Usage
from nb_tools.testing import ScriptedModel, call, reply
from nb_tools.transcript._recorder import TranscriptRecorder, transcript_text

ran: list[int] = []


@tool(register=False)
def double(x: int) -> int:
    """Double x."""
    ran.append(x)
    return 2 * x


SEARCH = [
    {
        "type": "server_tool_use",
        "id": "srvtoolu_9",
        "name": "web_search",
        "input": {"query": "nb_tools"},
    },
    {
        "type": "web_search_tool_result",
        "tool_use_id": "srvtoolu_9",
        "content": [
            {"type": "web_search_result", "url": "https://a.example/x", "title": "A <b>"},
            {"type": "web_search_result", "url": "javascript:alert(1)", "title": "bad"},
        ],
    },
    {
        "type": "server_tool_use",
        "id": "srvtoolu_10",
        "name": "code_execution",
        "input": {"code": "print(6*7)"},
    },
    {
        "type": "code_execution_tool_result",
        "tool_use_id": "srvtoolu_10",
        "content": {
            "type": "code_execution_result",
            "stdout": "42\n",
            "stderr": "",
            "return_code": 0,
        },
    },
]
CITED = {
    "type": "text",
    "text": "It is a notebook tool.",
    "citations": [
        {
            "type": "web_search_result_location",
            "url": "https://a.example/x",
            "title": "A <b>",
            "cited_text": "nb_tools is…",
            "encrypted_index": "x",
        }
    ],
}


@pytest.fixture(autouse=True)
def _clear() -> None:
    ran.clear()


async def test_a_run_with_thinking_server_tools_and_citations_in_the_transcript() -> None:
    model = ScriptedModel(
        [
            reply("", call("double", x=4), thinking="Double it."),
            reply(blocks=[*SEARCH, CITED], thinking="Now search.", usage=Usage(output_tokens=9)),
        ],
        model="claude-sonnet-4-5",
    )
    rec = TranscriptRecorder("go", model="claude-sonnet-4-5")
    agent = Agent(model, tools=[double], approval="auto", thinking=2048, on_event=rec)
    result = await agent.run("go")
    assert (result.stop_reason, ran) == ("end_turn", [4])
    # the second request carries the first turn's thinking block, unchanged
    second = model.requests[1]
    assert second.thinking == {"type": "enabled", "budget_tokens": 2048}
    assert isinstance(second.messages[1].content[0], ThinkingBlock)
    assert second.messages[1].content[0].thinking == "Double it."
    d = rec.to_dict()
    kinds = [i["kind"] for i in d["items"]]
    assert kinds == [
        "user",
        "thinking",
        "tool",
        "thinking",
        "server_tool",
        "server_tool",
        "citations",
    ]
    search, code = d["items"][4], d["items"][5]
    assert search["results"][0] == {
        "title": "A <b>",
        "url": "https://a.example/x",
        "page_age": None,
    }
    assert (code["code"], code["stdout"], code["return_code"]) == ("print(6*7)", "42\n", 0)
    assert d["items"][6]["sources"][0]["url"] == "https://a.example/x"
    json.dumps(d)
    text = transcript_text(d)
    assert "[thinking] Double it." in text and "stdout| 42" in text
    assert "- A <b> <https://a.example/x>" in text
    from nb_tools.transcript._html import transcript_html

    html = transcript_html(d)
    assert '<details class="nbtools-thinking"' in html and "Thinking</summary>" in html
    assert '<a href="https://a.example/x"' in html and "A &lt;b&gt;" in html
    assert 'href="javascript' not in html  # shown, not linked:
    assert '<span data-nbt="link">bad</span></li>' in html
    assert "print(6*7)" in html and "42" in html
    check_scripted(model.requests)


async def test_refusal_in_process_runs_nothing_and_leaves_a_valid_conversation() -> None:
    model = ScriptedModel(
        [
            reply("", call("double", x=1), thinking="hmm"),
            reply("I won't", call("double", x=2), stop_reason="refusal"),
            reply("ok"),
        ]
    )
    agent = Agent(model, tools=[double], approval="auto")
    result = await agent.run("go")
    assert (result.stop_reason, ran) == ("refusal", [1])
    # the tool result of the first call stays (it answers a call); the refused turn is gone
    assert [m.role for m in agent.messages] == ["user", "assistant", "user"]
    assert (await agent.run("next")).text == "ok"
    last = model.requests[-1].messages[-1]
    assert [type(b).__name__ for b in last.content] == ["ToolResultBlock", "TextBlock"]
    check_scripted(model.requests)


async def test_cut_call_in_process_retry_and_explanation() -> None:
    model = ScriptedModel(
        [
            reply("", call("double", x=123456), stop_reason="max_tokens", cut_last_call=True),
            reply("", call("double", x=3)),
            reply("done"),
        ],
        model="claude-3-5-haiku-20241022",  # its limit is 8192 output tokens
    )
    rec = Recorder()
    agent = Agent(model, tools=[double], approval="auto", max_tokens=8192, on_event=rec)
    result = await agent.run("go")
    # already at the model's limit: no retry, the run says why and runs nothing
    assert (result.stop_reason, ran) == ("max_tokens", [])
    assert "this model's limit is 8192" in (result.error or "")
    assert len(model.requests) == 1
    check_scripted(model.requests)


def test_agent_magic_options_parse() -> None:
    pytest.importorskip("IPython")
    from nb_tools.jupyter._magics import parse

    args = parse(
        "--thinking adaptive --server-tools web_search,web_fetch --attach a.png --attach b"
    )
    assert (args.thinking, args.server_tools, args.attach) == (
        "adaptive",
        "web_search,web_fetch",
        ["a.png", "b"],
    )


def test_configure_request_changes_later_runs() -> None:
    from nb_tools.agent._turns import configure_request

    agent = Agent("claude-sonnet-4-5", tool_choice="auto", disable_parallel_tool_use=True)
    configure_request(agent, thinking="4096", server_tools=["web_search"])
    opts: Any = agent.request_options
    assert opts.thinking == {"type": "enabled", "budget_tokens": 4096}
    assert opts.server_tools == ("web_search",)
    assert opts.tool_choice == {"type": "auto", "disable_parallel_tool_use": True}
    configure_request(agent, thinking="0", server_tools=[])
    assert (agent.request_options.thinking, agent.request_options.server_tools) == (None, ())
    with pytest.raises(ValueError, match="unknown"):
        configure_request(agent, server_tools=["web_crawl"])
