from __future__ import annotations

import pytest

from nb_tools.tool import MCP_NAME_PREFIX, split_mcp_name, validate_name


@pytest.mark.parametrize("name", ["a", "get_weather", "Get-Weather-2", "_", "-", "9", "x" * 64])
def test_accepts_names_every_provider_accepts(name: str) -> None:
    validate_name(name)


@pytest.mark.parametrize(
    ("name", "problem"),
    [
        ("", "it is empty"),
        ("x" * 65, "it is 65 characters long (the limit is 64)"),
        ("get weather", "it contains ' '"),
        ("get.weather/now", "it contains '.', '/'"),
        ("météo", "it contains 'é'"),
        ("name\n", "it contains '\\n'"),
    ],
)
def test_rejects_names_with_the_problem_and_the_way_out(name: str, problem: str) -> None:
    with pytest.raises(ValueError) as info:
        validate_name(name)
    assert str(info.value) == (
        f"invalid tool name {name!r}: {problem}; use 1 to 64 letters, digits, '_' or '-'"
    )


def test_rejects_non_strings() -> None:
    with pytest.raises(ValueError, match="must be a string, got int"):
        validate_name(42)  # type: ignore[arg-type]


def test_mcp_prefix_is_reserved_for_mcp_tools() -> None:
    assert MCP_NAME_PREFIX == "mcp__"
    with pytest.raises(ValueError) as info:
        validate_name("mcp__files__read")
    assert str(info.value) == (
        "invalid tool name 'mcp__files__read': the prefix 'mcp__' is reserved for tools "
        "from MCP servers; rename the tool"
    )
    validate_name("mcp__files__read", mcp=True)
    validate_name("mcp_files", mcp=False)  # one underscore is not the namespace


@pytest.mark.parametrize("name", ["mcp__files", "mcp____read", "mcp__files__", "get_weather"])
def test_mcp_names_must_be_well_formed(name: str) -> None:
    with pytest.raises(ValueError, match="expected 'mcp__<server>__<tool>'"):
        validate_name(name, mcp=True)


@pytest.mark.parametrize(
    ("name", "parts"),
    [
        ("mcp__srv__tool", ("srv", "tool")),
        ("mcp__srv__read__file", ("srv", "read__file")),
        ("mcp__my-server__x", ("my-server", "x")),
        ("mcp__srv___x", ("srv", "_x")),
        ("mcp__srv", None),
        ("mcp____tool", None),
        ("mcp__srv__", None),
        ("mcp_srv__tool", None),
        ("get_weather", None),
        ("", None),
    ],
)
def test_split_mcp_name(name: str, parts: tuple[str, str] | None) -> None:
    assert split_mcp_name(name) == parts
