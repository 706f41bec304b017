"""``agent.run(prompt, output=T)``: a validated ``T`` back, for a pydantic model, a
dataclass, a TypedDict and a JSON Schema; through Claude's structured outputs on the fake
Messages server, through the strict ``final_result`` tool elsewhere (ScriptedModel, an
older Claude model); an invalid answer is sent back with its problems, a bounded number of
times."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any, TypedDict

import pydantic
import pytest
from messages_rules import check_all

from nb_tools.agent import Agent
from nb_tools.agent._output import FINAL_TOOL, OutputError
from nb_tools.model import ToolResultBlock
from nb_tools.model.anthropic import AnthropicProvider
from nb_tools.testing import ScriptedModel, call, conversation_problems, reply
from nb_tools.testing.server import FakeMessagesServer


class CityModel(pydantic.BaseModel):
    name: str
    population: int
    tags: list[str] = []


@dataclass
class CityData:
    name: str
    population: int
    country: str = "?"


class CityDict(TypedDict):
    name: str
    population: int


CITY_SCHEMA: dict[str, Any] = {
    "title": "City",
    "type": "object",
    "properties": {"name": {"type": "string"}, "population": {"type": "integer"}},
    "required": ["name", "population"],
}

EXPECTED = {
    CityModel: CityModel(name="Paris", population=2_100_000),
    CityData: CityData(name="Paris", population=2_100_000),
    CityDict: {"name": "Paris", "population": 2_100_000},
}
TYPES = [CityModel, CityData, CityDict, "schema"]


def _target(kind: Any) -> Any:
    return CITY_SCHEMA if kind == "schema" else kind


def _expected(kind: Any) -> Any:
    return EXPECTED.get(kind, {"name": "Paris", "population": 2_100_000})


# -- the final_result tool (a provider without structured outputs) ---------------------------


@pytest.mark.parametrize("kind", TYPES, ids=lambda k: k if isinstance(k, str) else k.__name__)
async def test_scripted_model_answers_through_the_final_tool(kind: Any) -> None:
    model = ScriptedModel(
        [reply("Here it is.", call(FINAL_TOOL, name="Paris", population=2_100_000))]
    )
    result = await Agent(model, tools=[]).run("The biggest French city?", output=_target(kind))
    assert result.output == _expected(kind)
    assert type(result.output) is type(_expected(kind))
    assert result.stop_reason == "end_turn"
    [spec] = model.requests[0].tools
    assert spec.name == FINAL_TOOL and spec.strict
    assert spec.input_schema["additionalProperties"] is False
    assert set(spec.input_schema["required"]) >= {"name", "population"}
    assert not model.requests[0].options.get("output_config")
    # one request: the valid answer ends the run, its call answered
    assert len(model.requests) == 1
    assert conversation_problems(result.messages) == []
    last = result.messages[-1].content[0]
    assert isinstance(last, ToolResultBlock) and not last.result.is_error


async def test_an_invalid_answer_is_retried_with_its_problems() -> None:
    model = ScriptedModel(
        [
            reply("", call(FINAL_TOOL, name="Paris", population="lots")),
            reply("", call(FINAL_TOOL, name="Paris", population=2_100_000)),
        ]
    )
    result = await Agent(model, tools=[]).run("?", output=CityData)
    assert result.output == CityData(name="Paris", population=2_100_000)
    retry = model.requests[1].messages[-1].content[0]
    assert isinstance(retry, ToolResultBlock) and retry.result.is_error
    assert "/population: expected integer, got string" in retry.result.content


async def test_a_text_answer_is_asked_again_for_the_tool() -> None:
    model = ScriptedModel(
        [reply("Paris, about two million."), reply("", call(FINAL_TOOL, name="P", population=1))]
    )
    result = await Agent(model, tools=[]).run("?", output=CityDict)
    assert result.output == {"name": "P", "population": 1}
    assert f"calling the {FINAL_TOOL} tool" in model.requests[1].messages[-1].text


async def test_retries_are_bounded_then_a_clear_error() -> None:
    bad = [reply("", call(FINAL_TOOL, name="Paris")) for _ in range(3)]
    model = ScriptedModel([*bad, reply("never asked")])
    agent = Agent(model, tools=[])
    with pytest.raises(OutputError, match=r"did not match CityData after 3 tries") as caught:
        await agent.run("?", output=CityData, output_retries=2)
    assert len(model.requests) == 3 and model.remaining == 1
    assert caught.value.problems == ['/: missing required property "population"']
    assert caught.value.result.stop_reason == "invalid_output"
    assert conversation_problems(agent.messages) == []
    # the conversation goes on without an output type
    model_next = ScriptedModel([reply("ok")])
    agent2 = Agent(model_next, tools=[], messages=agent.messages)
    assert (await agent2.run("never mind")).text == "ok"


async def test_other_tools_still_run_before_the_answer() -> None:
    from nb_tools import tool

    @tool(register=False)
    def lookup(city: str) -> int:
        """Population of a city."""
        return 2_100_000

    model = ScriptedModel(
        [
            reply("", call("lookup", city="Paris")),
            reply("", call(FINAL_TOOL, name="Paris", population=2_100_000)),
        ]
    )
    result = await Agent(model, tools=[lookup], approval="auto").run("?", output=CityModel)
    assert result.output == CityModel(name="Paris", population=2_100_000)
    assert [s.name for s in model.requests[0].tools] == [FINAL_TOOL, "lookup"]
    assert "2100000" in str(model.requests[1].messages[-1].content[0])


def test_a_non_object_output_is_refused() -> None:
    from nb_tools.agent._output import OutputType

    with pytest.raises(TypeError, match="must be an object"):
        OutputType.of(list[int])


# -- Claude's structured outputs on the fake Messages server -----------------------------------


_providers: list[AnthropicProvider] = []


@pytest.fixture
async def server() -> AsyncIterator[FakeMessagesServer]:
    with FakeMessagesServer() as srv:
        yield srv
        check_all(srv.requests)
        while _providers:
            await _providers.pop().client.close()


def claude(srv: FakeMessagesServer, model: str = "claude-sonnet-4-5", **kwargs: Any) -> Agent:
    provider = AnthropicProvider(model, base_url=srv.base_url, api_key="test")
    _providers.append(provider)
    return Agent(provider, tools=[], **kwargs)


@pytest.mark.parametrize("kind", TYPES, ids=lambda k: k if isinstance(k, str) else k.__name__)
async def test_claude_structured_outputs_in_the_request(
    server: FakeMessagesServer, kind: Any
) -> None:
    server.push(reply(json.dumps({"name": "Paris", "population": 2_100_000})))
    result = await claude(server).run("?", output=_target(kind))
    assert result.output == _expected(kind)
    body = server.requests[0].body
    fmt = body["output_config"]["format"]
    assert fmt["type"] == "json_schema"
    schema = fmt["schema"]
    assert schema["type"] == "object" and schema["additionalProperties"] is False
    assert schema["properties"]["population"] == {"type": "integer"}
    assert "name" in schema["required"] and "population" in schema["required"]
    assert all(t["name"] != FINAL_TOOL for t in body.get("tools", ()))


async def test_claude_invalid_json_is_sent_back_with_the_problems(
    server: FakeMessagesServer,
) -> None:
    server.push(
        reply('{"name": "Paris", "population": 2.5}'),
        reply('{"name": "Paris", "population": 2100000}'),
    )
    result = await claude(server).run("?", output=CityModel)
    assert result.output == CityModel(name="Paris", population=2_100_000)
    retry = server.requests[1].body["messages"][-1]
    assert retry["role"] == "user"
    text = retry["content"][-1]["text"]
    assert "not valid CityModel JSON" in text and "/population: expected integer" in text


async def test_effort_and_the_format_share_output_config(server: FakeMessagesServer) -> None:
    server.push(reply('{"name": "P", "population": 1}'))
    await claude(server, model="claude-opus-4-6", effort="low").run("?", output=CityDict)
    config = server.requests[0].body["output_config"]
    assert config["effort"] == "low" and config["format"]["type"] == "json_schema"


async def test_an_older_claude_model_gets_the_final_tool(server: FakeMessagesServer) -> None:
    server.push(reply("", call(FINAL_TOOL, name="Paris", population=3)))
    result = await claude(server, model="claude-sonnet-4-0").run("?", output=CityData)
    assert result.output == CityData(name="Paris", population=3)
    body = server.requests[0].body
    assert "output_config" not in body
    [final] = [t for t in body["tools"] if t["name"] == FINAL_TOOL]
    assert final["strict"] is True
    assert final["input_schema"]["required"] == ["name", "population", "country"]
