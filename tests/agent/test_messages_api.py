"""The Messages API as Claude speaks it, in tool loops on the fake server: thinking, every
stop reason, Anthropic-defined and server tools, long conversations, images. Every request
of every test is checked against the API's rules (``messages_rules.problems``)."""

from __future__ import annotations

import base64
import io
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
from agent_helpers import Recorder
from messages_rules import check_all

from nb_tools import tool
from nb_tools.agent import Agent, ModelFailed
from nb_tools.agent._context import SUMMARY_PREFIX
from nb_tools.agent._notices import ContextCompacted, RunNotice, ThinkingDelta
from nb_tools.model import (
    CompactionBlock,
    Part,
    ServerToolResultBlock,
    ServerToolUseBlock,
    TextBlock,
    ThinkingBlock,
    Usage,
)
from nb_tools.model.anthropic import AnthropicProvider
from nb_tools.permissions import PermissionRules
from nb_tools.testing import Fault, call, reply
from nb_tools.testing.server import FakeMessagesServer

ran: list[tuple[int, int]] = []


@tool(register=False)
def add(a: int, b: int) -> int:
    """Add two integers."""
    ran.append((a, b))
    return a + b


_providers: list[AnthropicProvider] = []


@pytest.fixture
async def server() -> AsyncIterator[FakeMessagesServer]:
    ran.clear()
    with FakeMessagesServer() as srv:
        yield srv
        check_all(srv.requests)  # every request of every test keeps the API's rules
        while _providers:
            await _providers.pop().client.close()


def agent_for(
    srv: FakeMessagesServer, *tools: Any, model: str = "claude-sonnet-4-5", **kwargs: Any
) -> tuple[Agent, Recorder]:
    rec = Recorder()
    provider = AnthropicProvider(model, base_url=srv.base_url, api_key="test", max_retries=0)
    _providers.append(provider)
    return Agent(provider, tools=tools or [add], on_event=rec, approval="auto", **kwargs), rec


def body(srv: FakeMessagesServer, i: int) -> dict[str, Any]:
    return [r for r in srv.requests if r.path == "/v1/messages"][i].body


def header(srv: FakeMessagesServer, i: int, name: str) -> str:
    return [r for r in srv.requests if r.path == "/v1/messages"][i].headers.get(name, "")


# ---- thinking ------------------------------------------------------------------------------


async def test_thinking_in_a_tool_loop_is_sent_back_unchanged(server: FakeMessagesServer) -> None:
    server.push(
        reply("\n\n", call("add", a=1, b=2), thinking="I should add  1 and 2.\n"),
        reply("It is 3.", thinking="The tool said 3."),
    )
    agent, rec = agent_for(server, thinking=4000)
    result = await agent.run("1+2?")
    assert (result.stop_reason, result.text, ran) == ("end_turn", "It is 3.", [(1, 2)])
    first, second = body(server, 0), body(server, 1)
    assert first["thinking"] == {"type": "enabled", "budget_tokens": 4000}
    assert "interleaved-thinking-2025-05-14" in header(server, 0, "anthropic-beta")
    # the signed block comes back first, byte for byte; the "\n\n" text block does not
    assert second["messages"][1]["content"] == [
        {
            "type": "thinking",
            "thinking": "I should add  1 and 2.\n",
            "signature": second["messages"][1]["content"][0]["signature"],
        },
        {
            "type": "tool_use",
            "id": second["messages"][1]["content"][1]["id"],
            "name": "add",
            "input": {"a": 1, "b": 2},
        },
    ]
    assert "".join(e.text for e in rec.of(ThinkingDelta)) == (
        "I should add  1 and 2.\nThe tool said 3."
    )
    assert isinstance(agent.messages[-1].content[0], ThinkingBlock)
    server.push(reply("4"))
    assert (await agent.run("and 2+2?")).text == "4"
    third = body(server, 2)["messages"]  # both thinking blocks, unchanged, in order
    assert [b["thinking"] for m in third for b in m["content"] if b["type"] == "thinking"] == [
        "I should add  1 and 2.\n",
        "The tool said 3.",
    ]


def test_the_request_checker_finds_each_broken_rule() -> None:
    from messages_rules import problems

    found = problems(
        {
            "messages": [
                {"role": "user", "content": [{"type": "text", "text": " \n"}]},
                {"role": "user", "content": "x"},
                {
                    "role": "assistant",
                    "content": [
                        {"type": "thinking", "thinking": "a", "signature": "forged"},
                        {"type": "tool_use", "id": "t1", "name": "n", "input": {}},
                    ],
                },
                {
                    "role": "user",
                    "content": [
                        {"type": "text", "text": "x"},
                        {"type": "tool_result", "tool_use_id": "t1"},
                        {"type": "tool_result", "tool_use_id": "t9"},
                    ],
                },
            ]
        }
    )
    assert found == [
        "messages.0.content.0: empty or whitespace-only text",
        "messages.1: roles must alternate (two user messages)",
        "messages.2.content.0: a thinking block was changed",
        "messages.2: tool_use ['t1'] answered by ['t1', 't9']",
        "messages.3: tool_result blocks must come first",
        "messages.3: tool_result t9 answers no call",
    ]


async def test_thinking_turned_on_inside_a_tool_turn_waits_for_the_next_prompt(
    server: FakeMessagesServer,
) -> None:
    server.push(
        reply("", call("add", a=1, b=1)), reply("2", thinking="ok"), reply("x", thinking="y")
    )
    agent, _ = agent_for(server, max_turns=1)
    assert (await agent.run("add")).stop_reason == "max_turns"
    from nb_tools.agent._turns import configure_request

    configure_request(agent, thinking=2000)
    await agent.run("")  # continues the tool turn that began without thinking
    assert "thinking" not in body(server, 1)
    await agent.run("next")
    assert body(server, 2)["thinking"] == {"type": "enabled", "budget_tokens": 2000}


def test_thinking_options_are_checked() -> None:
    with pytest.raises(ValueError, match="below the API's minimum of 1024"):
        Agent("claude-sonnet-4-5", thinking=100)
    with pytest.raises(ValueError, match="tool_choice may only be 'auto' or 'none'"):
        Agent("claude-sonnet-4-5", thinking="adaptive", tool_choice="any")
    with pytest.raises(ValueError, match="temperature"):
        Agent("claude-sonnet-4-5", thinking=2000, temperature=0.2)
    assert Agent("x", thinking="adaptive").request_options.thinking == {"type": "adaptive"}


async def test_sampling_and_tool_choice_are_sent(server: FakeMessagesServer) -> None:
    server.push(reply("ok"))
    agent, _ = agent_for(
        server,
        tool_choice="add",
        disable_parallel_tool_use=True,
        temperature=0.3,
        top_p=0.9,
        stop_sequences=["END"],
    )
    await agent.run("hi")
    sent = body(server, 0)
    assert sent["tool_choice"] == {"type": "tool", "name": "add", "disable_parallel_tool_use": True}
    assert (sent["temperature"], sent["top_p"], sent["stop_sequences"]) == (0.3, 0.9, ["END"])


# ---- stop reasons --------------------------------------------------------------------------


async def test_tool_call_cut_by_max_tokens_is_retried_with_more(
    server: FakeMessagesServer,
) -> None:
    cut = reply(
        "Writing.", call("add", a=11111, b=22222), stop_reason="max_tokens", cut_last_call=True
    )
    server.push(cut, reply("", call("add", a=11111, b=22222)), reply("Done."))
    agent, rec = agent_for(server, max_tokens=1000)
    result = await agent.run("add")
    assert (result.stop_reason, ran) == ("end_turn", [(11111, 22222)])
    assert (body(server, 0)["max_tokens"], body(server, 1)["max_tokens"]) == (1000, 9192)
    # the cut turn never entered the conversation, nothing was answered as invalid JSON
    assert body(server, 1)["messages"] == body(server, 0)["messages"]
    assert "invalid" not in json.dumps(body(server, 2)).lower()
    assert [n.kind for n in rec.of(RunNotice)] == ["retry_max_tokens"]


async def test_tool_call_cut_twice_ends_the_run_saying_why(server: FakeMessagesServer) -> None:
    cut = reply("", call("add", a=1, b=2), stop_reason="max_tokens", cut_last_call=True)
    server.push(cut, cut, reply("fine"))
    agent, _ = agent_for(server, max_tokens=1000)
    result = await agent.run("add")
    assert (result.stop_reason, ran) == ("max_tokens", [])
    assert result.error is not None and "cut at max_tokens=9192" in result.error
    assert "not run" in result.error
    assert [m.role for m in agent.messages] == ["user"]
    assert (await agent.run("smaller steps please")).text == "fine"
    assert len(agent.messages) == 2  # the prompts joined one user message, then the answer


async def test_text_cut_by_max_tokens_continues_with_an_empty_run(
    server: FakeMessagesServer,
) -> None:
    server.push(reply("The first half", stop_reason="max_tokens"), reply("and the rest."))
    agent, _ = agent_for(server)
    first = await agent.run("long story")
    assert first.stop_reason == "max_tokens" and "run('')" in (first.error or "")
    second = await agent.run("")
    assert second.text == "and the rest."
    assert body(server, 1)["messages"][-1] == {
        "role": "user",
        "content": [
            {
                "type": "text",
                "text": "Continue from where you stopped.",
                "cache_control": {"type": "ephemeral", "ttl": "1h"},
            }
        ],
    }


async def test_refusal_runs_no_tool_and_drops_the_refused_turn(
    server: FakeMessagesServer,
) -> None:
    details = {"type": "refusal", "category": "cyber", "explanation": "Policy."}
    server.push(
        reply("", call("add", a=1, b=1), stop_reason="refusal", stop_details=details),
        reply("Hello!"),
    )
    agent, _ = agent_for(server)
    result = await agent.run("do something bad")
    assert (result.stop_reason, ran) == ("refusal", [])
    assert result.error is not None and "category cyber" in result.error
    assert "Policy." in result.error
    assert agent.messages == ()
    await agent.run("hi")
    assert [m["content"][0]["text"] for m in body(server, 1)["messages"]] == ["hi"]


async def test_pause_turn_is_continued_and_server_blocks_are_kept(
    server: FakeMessagesServer,
) -> None:
    search = [
        {
            "type": "server_tool_use",
            "id": "srvtoolu_1",
            "name": "web_search",
            "input": {"query": "q"},
        },
        {
            "type": "web_search_tool_result",
            "tool_use_id": "srvtoolu_1",
            "content": [{"type": "web_search_result", "url": "https://e.example", "title": "E"}],
        },
    ]
    usage = Usage(input_tokens=10, output_tokens=5)
    server.push(
        reply("Searching.", blocks=search, stop_reason="pause_turn", usage=usage), reply("Found.")
    )
    agent, rec = agent_for(server, server_tools=["web_search"])
    result = await agent.run("look it up")
    assert (result.stop_reason, result.text) == ("end_turn", "Found.")
    assert body(server, 0)["tools"][-1] == {
        "type": "web_search_20250305",
        "name": "web_search",
        "cache_control": {"type": "ephemeral", "ttl": "1h"},
    }
    resent = body(server, 1)["messages"][-1]
    assert resent["role"] == "assistant"
    assert [b["type"] for b in resent["content"]] == [
        "server_tool_use",
        "web_search_tool_result",
        "text",
    ]
    kept = agent.messages[1].content
    assert isinstance(kept[0], ServerToolUseBlock) and kept[0].arguments == '{"query": "q"}'
    assert isinstance(kept[1], ServerToolResultBlock)
    assert "pause_turn" in [n.kind for n in rec.of(RunNotice)]


async def test_a_server_tool_a_rule_denies_is_not_declared(server: FakeMessagesServer) -> None:
    server.push(reply("ok"))
    rules = PermissionRules()
    rules.add("deny", "web_search")
    agent, rec = agent_for(server, server_tools=["web_search", "web_fetch"], rules=rules)
    await agent.run("hi")
    assert [t.get("name") for t in body(server, 0)["tools"]] == ["add", "web_fetch"]
    assert "web-fetch-2025-09-10" in header(server, 0, "anthropic-beta")
    notes = [n.message for n in rec.of(RunNotice)]
    assert any("web_search not declared" in n and "denies it" in n for n in notes)


async def test_context_window_exceeded_ends_with_a_way_on(server: FakeMessagesServer) -> None:
    server.push(reply("Partial", stop_reason="model_context_window_exceeded"))
    agent, _ = agent_for(server)
    result = await agent.run("hi")
    assert result.stop_reason == "model_context_window_exceeded"
    assert "context window" in (result.error or "") and "--new" in (result.error or "")


# ---- Anthropic-defined tools ---------------------------------------------------------------


async def test_anthropic_defined_tools_are_declared_by_type(server: FakeMessagesServer) -> None:
    @tool(register=False, name="bash")
    def bash(command: str) -> str:
        """Run a command."""
        return "ok"

    bash.ANTHROPIC_TYPE = "bash_20250124"  # type: ignore[attr-defined]
    server.push(reply("ok"), reply("ok"))
    agent, _ = agent_for(server, add, bash)
    await agent.run("hi")
    assert body(server, 0)["tools"][:2] == [
        {
            "name": "add",
            "description": "Add two integers.",
            "input_schema": body(server, 0)["tools"][0]["input_schema"],
        },
        {
            "type": "bash_20250124",
            "name": "bash",
            "cache_control": {"type": "ephemeral", "ttl": "1h"},
        },
    ]
    old, _ = agent_for(server, add, bash, model="claude-3-5-sonnet-20241022")
    await old.run("hi")
    assert body(server, 1)["tools"][1]["type"] == "bash_20241022"


async def test_the_text_editor_is_declared_by_type_and_runs(
    server: FakeMessagesServer, tmp_path: Any
) -> None:
    from nb_tools.builtin import TextEditorTool
    from nb_tools.builtin._readstate import ReadState
    from nb_tools.builtin._workspace import Workspace

    (tmp_path / "a.txt").write_text("hello\n")
    editor = TextEditorTool(Workspace(tmp_path), ReadState())
    server.push(
        reply("", call("str_replace_based_edit_tool", command="view", path="a.txt")),
        reply("It says hello."),
    )
    agent, _ = agent_for(server, editor)
    result = await agent.run("read a.txt")
    assert result.text == "It says hello."
    assert body(server, 0)["tools"] == [
        {
            "type": "text_editor_20250728",
            "name": "str_replace_based_edit_tool",
            "cache_control": {"type": "ephemeral", "ttl": "1h"},
        }
    ]
    answer = body(server, 1)["messages"][-1]["content"][0]
    assert answer["type"] == "tool_result" and "hello" in json.dumps(answer)


# ---- long conversations --------------------------------------------------------------------


async def test_server_compaction_where_the_model_takes_it(server: FakeMessagesServer) -> None:
    compaction = {"type": "compaction", "content": "Earlier: the user asked about X."}
    server.push(reply("Hi.", blocks=[compaction]), reply("Again."))
    agent, rec = agent_for(server, model="claude-opus-4-6")
    await agent.run("hello")
    sent = body(server, 0)
    assert {"type": "compact_20260112"} in sent["context_management"]["edits"]
    assert "compact-2026-01-12" in header(server, 0, "anthropic-beta")
    assert [e.how for e in rec.of(ContextCompacted)] == ["server"]
    assert isinstance(agent.messages[1].content[0], CompactionBlock)
    await agent.run("more")
    assert body(server, 1)["messages"][1]["content"][0] == {
        "type": "compaction",
        "content": "Earlier: the user asked about X.",
    }


async def test_client_summary_near_the_context_window(server: FakeMessagesServer) -> None:
    big = Usage(input_tokens=170_000, output_tokens=10)
    server.push(reply("First answer.", usage=big), reply("SUMMARY OF IT"), reply("Second answer."))
    agent, rec = agent_for(server, model="claude-sonnet-4-5")
    await agent.run("first")
    result = await agent.run("second")
    assert result.text == "Second answer."
    summary_request = body(server, 1)
    assert "Write a summary" in summary_request["messages"][-1]["content"][-1]["text"]
    assert body(server, 2)["messages"][0]["content"][0]["text"] == SUMMARY_PREFIX + "SUMMARY OF IT"
    assert [e.how for e in rec.of(ContextCompacted)] == ["summary"]
    assert isinstance(agent.messages[0].content[0], TextBlock)


async def test_one_long_tool_loop_is_summarised_whole_and_goes_on(
    server: FakeMessagesServer,
) -> None:
    big = Usage(input_tokens=175_000, output_tokens=10)
    server.push(
        reply("", call("add", a=1, b=2), usage=big),
        reply("The user asked to add; add(1, 2) gave 3."),
        reply("", call("add", a=3, b=4)),
        reply("Done: 3 and 7."),
    )
    agent, rec = agent_for(server, model="claude-sonnet-4-5")
    result = await agent.run("add things")
    assert (result.stop_reason, result.text, ran) == (
        "end_turn",
        "Done: 3 and 7.",
        [(1, 2), (3, 4)],
    )
    assert [e.how for e in rec.of(ContextCompacted)] == ["summary"]
    after = body(server, 2)["messages"]
    assert after[0]["content"][0]["text"].startswith(SUMMARY_PREFIX)
    assert "Carry on with the task" in after[0]["content"][1]["text"]
    assert len(after) == 1


async def test_a_long_inherited_conversation_is_counted_by_the_api(
    server: FakeMessagesServer,
) -> None:
    from nb_tools.model import Message

    history = [
        Message(role="user", content=(TextBlock(text="word " * 70_000),)),
        Message(role="assistant", content=(TextBlock(text="noted"),)),
    ]
    server.push(reply("ok"))
    agent, _ = agent_for(server, model="claude-sonnet-4-5", messages=history)
    await agent.run("and?")
    paths = [r.path for r in server.requests]
    assert paths == ["/v1/messages/count_tokens", "/v1/messages"]  # near the line: counted


async def test_token_counting_endpoint_near_the_line(server: FakeMessagesServer) -> None:
    provider = AnthropicProvider("claude-sonnet-4-5", base_url=server.base_url, api_key="t")
    _providers.append(provider)
    from nb_tools.model import Message, ModelRequest

    request = ModelRequest(
        system="s",
        messages=(Message(role="user", content=(TextBlock(text="hi " * 400),)),),
        tools=(),
    )
    assert await provider.count_tokens(request) > 100
    assert server.requests[-1].path == "/v1/messages/count_tokens"
    assert "max_tokens" not in server.requests[-1].body


# ---- images and attachments ----------------------------------------------------------------


def _png(width: int, height: int) -> bytes:
    from PIL import Image

    buf = io.BytesIO()
    Image.new("RGB", (width, height), (200, 10, 10)).save(buf, format="PNG")
    return buf.getvalue()


async def test_attachments_and_oversized_images_are_fitted(
    server: FakeMessagesServer, tmp_path: Any
) -> None:
    path = tmp_path / "wide.png"
    path.write_bytes(_png(9000, 50))
    pdf = b"%PDF-1.4\n%fake\n"
    server.push(reply("Seen."))
    agent, rec = agent_for(server)
    await agent.run("look", attachments=[path, pdf])
    content = body(server, 0)["messages"][0]["content"]
    assert [b["type"] for b in content] == ["image", "document", "text"]
    assert content[1]["source"]["media_type"] == "application/pdf"
    assert "image_resized" in [n.kind for n in rec.of(RunNotice)]
    with pytest.raises(ValueError, match="cannot be sent"):
        await agent.run("x", attachments=[b"\x00\x01 not a known type"])


async def test_more_than_twenty_images_are_held_to_2000_px(server: FakeMessagesServer) -> None:
    server.push(reply("ok"))
    agent, _ = agent_for(server)
    await agent.run("many", attachments=[_png(2500, 10)] * 21)  # the checker holds them to 2000
    from PIL import Image

    content = body(server, 0)["messages"][0]["content"]
    images = [b for b in content if b["type"] == "image"]
    assert len(images) == 21  # all sent, none dropped
    for b in images:
        size = Image.open(io.BytesIO(base64.b64decode(b["source"]["data"]))).size
        assert max(size) <= 2000, size


async def test_an_image_that_cannot_be_fitted_becomes_a_note(server: FakeMessagesServer) -> None:
    from nb_tools.tool import Result

    huge = b"\x89PNG\r\n\x1a\n" + bytes(6 * 1024 * 1024)  # not an image Pillow can read

    @tool(register=False)
    def snapshot() -> Result:
        """Take a picture."""
        return Result(
            content="here it is", parts=[Part(kind="image", media_type="image/png", data=huge)]
        )

    server.push(reply("", call("snapshot")), reply("I see."))
    agent, rec = agent_for(server, snapshot)
    await agent.run("look")
    result = body(server, 1)["messages"][-1]["content"][0]
    assert [c["type"] for c in result["content"]] == ["text"]
    assert "not sent: it is over 5 MB" in result["content"][0]["text"]
    assert [n.kind for n in rec.of(RunNotice)] == ["image_dropped"]
    # the conversation keeps the original; only what is sent is fitted
    kept = agent.messages[2].content[0]
    assert kept.result.parts[0].data == huge


async def test_a_pil_image_attachment(server: FakeMessagesServer) -> None:
    from PIL import Image

    server.push(reply("A red square."))
    agent, _ = agent_for(server)
    await agent.run("what is it?", attachments=[Image.new("RGB", (30, 30), (255, 0, 0))])
    image = body(server, 0)["messages"][0]["content"][0]
    assert (image["type"], image["source"]["media_type"]) == ("image", "image/png")


async def test_adaptive_thinking_on_a_model_without_it(server: FakeMessagesServer) -> None:
    server.push(reply("ok"), reply("ok"))
    agent, _ = agent_for(server, thinking="adaptive", effort="low")
    await agent.run("hi")
    sent = body(server, 0)
    assert sent["thinking"] == {"type": "enabled", "budget_tokens": 8000}
    assert "output_config" not in sent  # Sonnet 4.5 takes no effort
    newer, _ = agent_for(server, model="claude-opus-4-6", thinking="adaptive", effort="low")
    await newer.run("hi")
    sent = body(server, 1)
    assert (sent["thinking"], sent["output_config"]) == ({"type": "adaptive"}, {"effort": "low"})


# ---- errors --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "says", "retryable"),
    [
        (401, "check ANTHROPIC_API_KEY", False),
        (402, "billing", False),
        (403, "permissions", False),
        (404, "check the model name", False),
        (413, "shorten the conversation", False),
        (429, "wait a little", True),
        (500, "run the turn again", True),
        (504, "run the turn again", True),
        (529, "wait a little", True),
    ],
)
async def test_each_error_type_says_what_to_do(
    server: FakeMessagesServer, status: int, says: str, retryable: bool
) -> None:
    server.push(Fault(status=status, message="nope"))
    agent, rec = agent_for(server)
    result = await agent.run("hi")
    failed = rec.of(ModelFailed)[0]
    assert (result.stop_reason, failed.status) == ("error", status)
    assert says in failed.message


async def test_mid_stream_billing_error_does_not_say_run_again(
    server: FakeMessagesServer,
) -> None:
    server.push(Fault(cut_after=3, status=402, message="credit balance too low"), reply("x"))
    agent, rec = agent_for(server)
    await agent.run("hi")
    message = rec.of(ModelFailed)[0].message
    assert "billing_error (402)" in message and "billing" in message
    assert "run the turn again" not in message
