"""Looking a type up in a module that another thread is still importing (the SDK warm-up
after %load_ext imports pydantic while a cell decorates a tool) finds nothing, not an
AttributeError: nothing made from a class that does not exist yet can be passed in."""

from __future__ import annotations

import sys
import types

import pytest

from nb_tools import tool
from nb_tools.tool._results import to_json
from nb_tools.tool._typemap import is_pydantic_field


@pytest.mark.parametrize("module", ["pydantic.fields", "pydantic.main", "uuid", "decimal"])
def test_a_half_imported_module_is_treated_as_not_loaded(monkeypatch, module: str) -> None:
    monkeypatch.setitem(sys.modules, module, types.ModuleType(module))  # no classes yet

    @tool(register=False)
    def greet(name: str = "you") -> str:
        """Greet someone."""
        return f"hi {name}"

    assert greet.info().name == "greet"
    assert not is_pydantic_field("you")
    assert to_json({"a": 1}) == '{"a": 1}'
