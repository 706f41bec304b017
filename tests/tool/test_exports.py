from __future__ import annotations

import importlib

import pytest

import nb_tools
import nb_tools.model

# ``nb_tools.tool`` the attribute is the decorator; the package is reached by its name.
core = importlib.import_module("nb_tools.tool")

# The core names DESIGN.md promises from ``nb_tools``.
DESIGN_CORE = {
    "tool", "Tool", "Info", "Result", "Schema", "schema_of", "ValidationError", "ToolPanic",
    "Registry", "Executor", "Call", "Middleware", "chain", "allow", "truncate_output",
    "needs_approval", "validate_name", "truncate", "progress", "MCP_NAME_PREFIX",
    "split_mcp_name", "Agent",
}  # fmt: skip
DESIGN_MODEL = {"ToolCall", "ToolResult", "ToolSpec", "Part"}


def isort_key(name: str) -> tuple[int, str]:
    """RUF022's order: CONSTANTS, then Classes, then functions."""
    if name.isupper():
        return (0, name)
    if name[:1].isupper():
        return (1, name)
    return (2, name)


@pytest.mark.parametrize("module", [nb_tools, core, nb_tools.model])
def test_all_is_sorted_and_has_no_duplicates(module: object) -> None:
    names = list(module.__all__)  # type: ignore[attr-defined]
    assert names == sorted(names, key=isort_key)
    assert len(names) == len(set(names))


@pytest.mark.parametrize("module", [core, nb_tools.model])
def test_every_exported_core_name_resolves(module: object) -> None:
    for name in module.__all__:  # type: ignore[attr-defined]
        assert getattr(module, name) is not None, name


def test_every_top_level_name_resolves() -> None:
    for name in nb_tools.__all__:
        assert getattr(nb_tools, name) is not None, name


def test_design_names_are_exported() -> None:
    assert set(nb_tools.__all__) >= DESIGN_CORE
    assert DESIGN_CORE - {"Agent"} <= set(core.__all__)
    assert set(nb_tools.model.__all__) >= DESIGN_MODEL


def test_core_names_are_the_same_objects_everywhere() -> None:
    for name in set(core.__all__) & set(nb_tools.__all__):
        assert getattr(nb_tools, name) is getattr(core, name), name


def test_implementation_modules_are_private() -> None:
    for name in core.__all__:
        module = getattr(getattr(core, name), "__module__", None)
        if isinstance(module, str) and module.startswith("nb_tools"):
            assert module.startswith(("nb_tools.tool._", "nb_tools.model._")), (name, module)


def test_the_decorator_shadows_the_subpackage_name() -> None:
    assert nb_tools.tool is core.tool
