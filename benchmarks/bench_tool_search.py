"""Input tokens per turn with 80 MCP tools, with and without Claude's tool search.

    python benchmarks/bench_tool_search.py [--tools 80] [--turns 5]

An agent with the tools of an MCP-like server (``--tools`` tools, each with a description
and a small argument schema, as a CRM or issue-tracker server offers them) and one tool of
its own runs a conversation of ``--turns`` turns (a tool call each, then an answer) against
the fake Messages server through ``AnthropicProvider``. With ``tool_search=False`` every
definition is in every request; with the default ``"auto"`` the MCP tools are sent with
``defer_loading`` and the tool-search tool is declared, and, as on the API, a deferred
definition is not part of the prompt until a search loads it. The figures are the input
tokens the fake server reports (its rough count: a token per four characters of the
prompt's JSON), without the prompt cache, so every token of the prompt is counted.
"""

from __future__ import annotations

import argparse
import asyncio

from nb_tools import tool
from nb_tools.agent import Agent, UsageUpdated
from nb_tools.model.anthropic import AnthropicProvider
from nb_tools.testing import call, reply
from nb_tools.testing.server import FakeMessagesServer
from nb_tools.tool import Info, Result

MODEL = "claude-sonnet-4-5"
VERBS = ("get", "list", "create", "update", "delete", "search", "archive", "assign")
NOUNS = (
    "contact",
    "deal",
    "company",
    "ticket",
    "note",
    "task",
    "invoice",
    "meeting",
    "user",
    "tag",
)


class McpTool:
    """A tool as an MCP server describes it (``FromMCPServer``: it has ``mcp_server``)."""

    mcp_server = "crm"

    def __init__(self, i: int) -> None:
        verb, noun = VERBS[i % len(VERBS)], NOUNS[(i // len(VERBS)) % len(NOUNS)]
        self.name = f"mcp__crm__{verb}_{noun}_{i}"
        self.verb, self.noun = verb, noun

    def info(self) -> Info:
        return Info(
            name=self.name,
            description=(
                f"{self.verb.capitalize()} a {self.noun} in the CRM. Use it when the user asks "
                f"to {self.verb} {self.noun}s; it returns the {self.noun} record as JSON with "
                "its id, owner, timestamps and custom fields."
            ),
            raw_parameters={
                "type": "object",
                "properties": {
                    "id": {"type": "string", "description": f"The {self.noun}'s id"},
                    "fields": {"type": "object", "description": "Fields to read or set"},
                    "limit": {"type": "integer", "description": "Most records to return"},
                },
                "required": ["id"],
            },
        )

    def call(self, args: str | bytes) -> Result:
        return Result(content='{"id": "1", "owner": "ana"}')


@tool(register=False)
def summarise(text: str) -> str:
    """Summarise a text in one sentence."""
    return text[:80]


async def conversation(count: int, turns: int, search: object) -> list[int]:
    with FakeMessagesServer() as server:
        provider = AnthropicProvider(MODEL, base_url=server.base_url, api_key="bench")
        tools = [summarise, *(McpTool(i) for i in range(count))]
        per_turn: list[int] = []

        def record(event: object) -> None:
            if isinstance(event, UsageUpdated):
                per_turn.append(event.usage.input_tokens)

        agent = Agent(
            provider,
            tools=tools,
            approval="auto",
            tool_search=search,  # type: ignore[arg-type]
            cache_ttl=None,
            on_event=record,
        )
        for n in range(turns - 1):
            server.push(reply("", call("summarise", text=f"record {n} " * 20)))
        server.push(reply("Done."))
        result = await agent.run("Tidy up the CRM records of this week.")
        await provider.client.close()
        assert result.stop_reason == "end_turn", result.error
        return per_turn


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tools", type=int, default=80)
    parser.add_argument("--turns", type=int, default=5)
    args = parser.parse_args()
    plain = await conversation(args.tools, args.turns, False)
    searched = await conversation(args.tools, args.turns, "auto")
    print(f"{args.tools} MCP tools + 1 own tool, {args.turns} turns, {MODEL}")
    print(f"{'turn':<6}{'all tools sent':>16}{'tool search':>14}{'ratio':>8}")
    for i, (a, b) in enumerate(zip(plain, searched, strict=True), 1):
        print(f"{i:<6}{a:>16,}{b:>14,}{a / b:>7.1f}x")
    mean_a, mean_b = sum(plain) / len(plain), sum(searched) / len(searched)
    print(f"{'mean':<6}{mean_a:>16,.0f}{mean_b:>14,.0f}{mean_a / mean_b:>7.1f}x")


if __name__ == "__main__":
    asyncio.run(main())
