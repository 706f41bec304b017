from __future__ import annotations

import json
import threading
from typing import Any

import pytest

from nb_tools.model import ToolSpec
from nb_tools.tool import Info, Registry, Result, Schema, default_registry

WEATHER = Schema.object(
    {"city": Schema.string("City name"), "days": Schema.integer("How many days")}, "city"
)


class Echo:
    """A minimal Tool: answers with its raw arguments."""

    def __init__(self, name: str, **info: Any) -> None:
        self._info = Info(name=name, **info)
        self.info_calls = 0

    def info(self) -> Info:
        self.info_calls += 1
        return self._info

    async def call(self, args: str | bytes) -> Result:
        return Result(content=f"{self._info.name}({args!s})")


def test_lookup_length_membership_and_orders() -> None:
    b, a, c = Echo("b"), Echo("a"), Echo("c")
    reg = Registry(b, a)
    reg.register(c)
    assert reg.get("a") is a and reg.get("zz") is None
    assert len(reg) == 3 and "c" in reg and "zz" not in reg
    assert reg.names() == ["b", "a", "c"]  # first-seen order
    assert reg.list() == [a, b, c]  # sorted by name
    assert list(reg) == [b, a, c]
    assert repr(reg) == "Registry(b, a, c)"


def test_register_is_all_or_nothing() -> None:
    reg = Registry(Echo("a"))
    with pytest.raises(ValueError, match="invalid tool name 'bad name'"):
        reg.register(Echo("x"), Echo("bad name"))
    with pytest.raises(ValueError) as info:
        reg.register(Echo("y"), Echo("a"))
    assert str(info.value) == (
        "tool 'a' is already registered; use Registry.add() to replace it or give the tool "
        "another name"
    )
    with pytest.raises(ValueError, match="tool 'z' is already registered"):
        reg.register(Echo("z"), Echo("z"))
    assert reg.names() == ["a"]


def test_register_rejects_what_is_not_a_tool() -> None:
    with pytest.raises(TypeError, match="is not a tool: a tool has info\\(\\) and call"):
        Registry().register(object())  # type: ignore[arg-type]


def test_add_replaces_in_place() -> None:
    first, other, second = Echo("t"), Echo("u"), Echo("t", description="new")
    reg = Registry(first, other)
    reg.hide("t")
    reg.add(second)
    assert reg.get("t") is second
    assert reg.names() == ["t", "u"]
    assert reg.is_hidden("t")
    with pytest.raises(ValueError, match="invalid tool name"):
        reg.add(Echo(""))


def test_remove_and_remove_prefix() -> None:
    reg = Registry(
        Echo("mcp__git__log"), Echo("mcp__git__diff"), Echo("mcp__gitx__log"), Echo("read")
    )
    reg.hide("mcp__git__log")
    assert reg.remove_prefix("mcp__git__") == 2
    assert reg.names() == ["mcp__gitx__log", "read"]
    assert not reg.is_hidden("mcp__git__log")
    reg.remove("read", "never-registered")
    assert reg.names() == ["mcp__gitx__log"]
    assert reg.remove_prefix("nothing") == 0


def test_mcp_names_must_be_well_formed() -> None:
    with pytest.raises(ValueError, match="mcp__<server>__<tool>"):
        Registry(Echo("mcp__nothing"))


def test_hidden_tools_stay_callable_but_leave_the_specs() -> None:
    reg = Registry(Echo("a"), Echo("b"))
    reg.hide("a")
    reg.hide("unknown")  # ignored
    assert reg.is_hidden("a") and not reg.is_hidden("unknown")
    assert reg.get("a") is not None
    assert [s.name for s in reg.specs()] == ["b"]
    assert reg.visible_names() == ["b"]
    assert (len(reg), reg.visible_count()) == (2, 1)
    reg.unhide("a")
    assert [s.name for s in reg.specs()] == ["a", "b"]
    assert reg.visible_count() == 2


def test_specs_are_what_the_provider_sees() -> None:
    raw = {"type": "object", "properties": {"q": {"type": "string", "x-extra": 1}}}
    reg = Registry(
        Echo("weather", description="Forecast.", parameters=WEATHER, read_only=True),
        Echo("strict_weather", description="Strict.", parameters=WEATHER, strict=True),
        Echo("mcp__srv__search", description="MCP.", raw_parameters=raw),
        Echo("ping"),
    )
    assert reg.specs() == [
        ToolSpec(name="mcp__srv__search", description="MCP.", input_schema=raw),
        ToolSpec(name="ping", description="", input_schema={"type": "object", "properties": {}}),
        ToolSpec(
            name="strict_weather",
            description="Strict.",
            input_schema=json.loads(WEATHER.strict_json()),
            strict=True,
        ),
        ToolSpec(
            name="weather",
            description="Forecast.",
            input_schema={
                "type": "object",
                "properties": {
                    "city": {"type": "string", "description": "City name"},
                    "days": {"type": "integer", "description": "How many days"},
                },
                "required": ["city"],
            },
        ),
    ]
    strict_schema = reg.specs()[2].input_schema
    assert strict_schema["additionalProperties"] is False
    assert sorted(strict_schema["required"]) == ["city", "days"]


def test_specs_are_serialised_once_and_byte_stable() -> None:
    raw: dict[str, Any] = {"type": "object", "properties": {}}
    tool = Echo("weather", parameters=WEATHER)
    mcp = Echo("mcp__s__t", raw_parameters=raw)
    reg = Registry(tool, mcp)
    first = reg.specs()
    text = json.dumps([s.input_schema for s in first])
    reg.register(Echo("another"))
    reg.hide("another")
    raw["properties"]["late"] = {"type": "string"}  # the owner's later change is not seen
    again = reg.specs()
    assert [s.name for s in again] == ["mcp__s__t", "weather"]
    assert again[0] is first[0] and again[1] is first[1]
    assert json.dumps([s.input_schema for s in again]) == text
    assert tool.info_calls == 1


def test_subset_keeps_the_named_tools_and_their_hidden_state() -> None:
    a, b, c = Echo("a"), Echo("b"), Echo("c")
    reg = Registry(a, b, c)
    reg.hide("b")
    sub = reg.subset("c", "b")
    assert sub.names() == ["c", "b"] and sub.is_hidden("b")
    assert [s.name for s in sub.specs()] == ["c"]
    sub.remove("c")
    assert "c" in reg
    with pytest.raises(KeyError) as info:
        reg.subset("a", "nope")
    assert info.value.args[0] == "unknown tool 'nope' in subset(); registered tools: a, b, c"


def test_clone_is_independent() -> None:
    reg = Registry(Echo("a"))
    copy = reg.clone()
    copy.register(Echo("b"))
    copy.hide("a")
    reg.remove("a")
    assert reg.names() == [] and copy.names() == ["a", "b"]
    assert [s.name for s in copy.specs()] == ["b"]


def test_default_registry_is_one_per_process() -> None:
    assert default_registry() is default_registry()
    assert isinstance(default_registry(), Registry)


def test_concurrent_changes_and_reads_stay_consistent() -> None:
    reg = Registry(Echo("stable"))
    errors: list[BaseException] = []
    start = threading.Barrier(8)

    def worker(n: int) -> None:
        try:
            start.wait()
            for i in range(200):
                name = f"t{n}_{i % 5}"
                reg.add(Echo(name))
                specs = reg.specs()
                assert [s.name for s in specs] == sorted(s.name for s in specs)
                assert "stable" in reg.visible_names()
                if i % 3 == 0:
                    reg.hide(name)
                reg.remove(name)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert reg.names() == ["stable"] and reg.visible_count() == 1
    assert [s.name for s in reg.specs()] == ["stable"]
