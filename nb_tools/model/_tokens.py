"""The one rough token count: what the agent uses before (or instead of) a server's own
count, for the context window and for budgets.

A deliberate overestimate: a token per 3.5 characters of text (code and non-English text
take more tokens than English prose), an image or document at 1,600 tokens. No provider's
tokenizer is imported."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from nb_tools.model._provider import ModelRequest
    from nb_tools.model._types import Message

__all__ = ["CHARS_PER_TOKEN", "PART_TOKENS", "estimate_tokens"]

CHARS_PER_TOKEN = 3.5
PART_TOKENS = 1_600


def _count(value: Any) -> tuple[int, int]:
    """(characters of text, binary parts) inside ``value`` (dataclasses, lists, dicts)."""
    chars = parts = 0
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, str):
            chars += len(v)
        elif isinstance(v, bytes | bytearray):
            parts += 1
        elif isinstance(v, dict):
            stack.extend(v.values())
        elif isinstance(v, list | tuple):
            stack.extend(v)
        elif dataclasses.is_dataclass(v) and not isinstance(v, type):
            stack.extend(getattr(v, f.name) for f in dataclasses.fields(v))
    return chars, parts


def estimate_tokens(what: ModelRequest | Iterable[Message]) -> int:
    """The rough input tokens of a request (system prompt, messages, tool specs) or of a
    list of messages."""
    from nb_tools.model._provider import ModelRequest

    if isinstance(what, ModelRequest):
        chars, parts = _count(list(what.messages))
        chars += len(what.system)
        for spec in what.tools:
            chars += len(spec.name) + len(spec.description or "")
            chars += len(json.dumps(spec.input_schema)) if spec.input_schema else 0
    else:
        chars, parts = _count(list(what))
    return int(chars / CHARS_PER_TOKEN) + parts * PART_TOKENS
