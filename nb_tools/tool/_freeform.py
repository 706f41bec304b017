"""Freeform tools: a function of one string that the model calls with text in a grammar
(``@tool(grammar=...)``) instead of JSON arguments.

Where the provider has freeform tools (OpenAI's Responses API: custom tools with a lark or
regex grammar) the model writes the text itself; elsewhere the tool is declared as a
function with one string parameter, ``input``. Either way the call's arguments are
``{"input": "<text>"}`` and the function receives the text.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from nb_tools.model import ToolGrammar
from nb_tools.tool._schema import Schema

__all__ = ["INPUT_SCHEMA", "as_grammar", "freeform_converter"]

INPUT_SCHEMA = Schema.object(
    {"input": Schema.string("The tool's input text, written in the tool's grammar.")}, "input"
)


def as_grammar(grammar: ToolGrammar | str) -> ToolGrammar:
    """A lark grammar given as text, or a :class:`ToolGrammar` (lark or regex)."""
    if isinstance(grammar, ToolGrammar):
        if grammar.syntax not in ("lark", "regex"):
            raise ValueError(f"grammar syntax must be 'lark' or 'regex', not {grammar.syntax!r}")
        return grammar
    if not isinstance(grammar, str):
        raise TypeError(f"grammar= takes a lark grammar (str) or a ToolGrammar, not {grammar!r}")
    return ToolGrammar(syntax="lark", definition=grammar)


def freeform_converter(
    fn: Callable[..., Any], name: str
) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """Maps ``{"input": text}`` onto the function's one string parameter; a function that
    does not take exactly one string is refused, naming what it takes instead."""
    params = [
        p
        for p in inspect.signature(fn).parameters.values()
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
    ]
    required = [p for p in params if p.default is p.empty]
    if len(params) < 1 or len(required) > 1:
        taken = ", ".join(p.name for p in params) or "nothing"
        raise TypeError(
            f"@tool {name}: a freeform tool (grammar=) takes the model's text as its one "
            f"parameter; {name} takes {taken}"
        )
    param = (required or params)[0]
    if param.annotation not in (param.empty, str, "str"):
        raise TypeError(
            f"@tool {name}: a freeform tool's parameter {param.name!r} must be a str, "
            f"not {param.annotation!r}"
        )
    if param.kind is param.POSITIONAL_ONLY:
        raise TypeError(f"@tool {name}: {param.name!r} must not be positional-only")
    target = param.name
    return lambda parsed: {target: parsed["input"]}
