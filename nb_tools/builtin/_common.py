"""Small helpers shared by the file tools: argument parsing, error conversion, and the
secrets hidden in what they return."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any, TypeAlias

from nb_tools.builtin._atomic import WriteFailed
from nb_tools.sandbox import SecretStream, redact_secret_text
from nb_tools.tool import Result, Schema, ValidationError
from nb_tools.tool._grant import current_grant

__all__ = [
    "Args",
    "ToolError",
    "guarded",
    "output_stream",
    "parse_args",
    "person_clicked",
    "redact_output",
]

Args: TypeAlias = str | bytes | Mapping[str, Any]
"""A call's arguments: raw JSON from the model, or a mapping for a direct call."""


class ToolError(ValueError):
    """A call the tool refuses or cannot do; the message is for the model."""


def parse_args(name: str, schema: Schema, args: Args) -> dict[str, Any]:
    """Validate raw JSON arguments (a mapping is accepted for direct calls) and drop the
    properties that are null (the strict form sends null for "not given")."""
    raw = json.dumps(args) if isinstance(args, Mapping) else args
    try:
        value = schema.validate(raw, strict=True)
    except ValidationError as exc:
        raise ToolError(f"{name}: invalid arguments: {exc}") from exc
    return {k: v for k, v in value.items() if v is not None}


def guarded(name: str, fn: Callable[[], Result]) -> Result:
    """Run ``fn``; the refusals and I/O errors the tools expect become error results."""
    try:
        return fn()
    except (ValueError, WriteFailed) as exc:  # ToolError, WorkspaceError, TextFileError, ...
        return Result.error(str(exc))
    except OSError as exc:
        return Result.error(f"{name}: {exc.strerror or exc}")


def person_clicked() -> bool:
    """Whether a person approved the current call by a click (not a rule or a policy such
    as ``auto``, and not a direct call outside the tool loop)."""
    grant = current_grant()
    return grant is not None and grant.approved and grant.kind == "person"


def redact_output(text: str) -> tuple[str, int]:
    """What a built-in tool's text becomes before the model or the live view reads it:
    every secret ``nb_tools.sandbox.redact_secret_text`` knows hidden, or only private
    keys when a person clicked this call (they asked to see it); and how many."""
    return redact_secret_text(text, approved=person_clicked())


def output_stream() -> SecretStream:
    """What a streaming tool's progress goes through before the live view shows it
    (chunk by chunk, a secret cut at a chunk's edge seen whole): as ``redact_output``,
    for this call's click or none."""
    return SecretStream(approved=person_clicked())
