"""Typed outputs: ``agent.run(prompt, output=T)`` ends with a validated ``T``.

``T`` is a pydantic model, a dataclass, a TypedDict or a JSON Schema (a dict, for an
object). Its schema is derived with :func:`~nb_tools.tool._derive.type_schema` (the one
``schema_of`` uses) and every answer is checked with ``Schema.validate``. Two ways to get
the answer, chosen per provider:

- the provider's structured outputs (``provider.output_options(schema)`` returns the request
  options, e.g. Claude's ``output_config.format``): the model's final text is the JSON;
- else a strict tool, ``final_result``, added to the run's tools: the model calls it with
  the answer as its arguments.

An answer that does not validate is sent back with its problems (as the tool's error
result, or as a user message) and the model tries again, at most ``retries`` times; then
the run ends with stop_reason "invalid_output" and ``Agent.run`` raises
:class:`OutputError`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from nb_tools.tool import Info, Result, Schema, ValidationError, strict_validator
from nb_tools.tool._typemap import null_stripper

FINAL_TOOL = "final_result"
DEFAULT_RETRIES = 2
INVALID_OUTPUT = "invalid_output"
"""The stop reason of a run whose answer never validated."""


class OutputError(ValueError):
    """The model's answer did not match the output type after every retry. ``problems``
    lists what was wrong with the last answer; ``result`` is the run's ``RunResult``."""

    def __init__(self, message: str, problems: list[str], result: Any = None) -> None:
        super().__init__(message)
        self.problems = list(problems)
        self.result = result


@dataclass(frozen=True, kw_only=True)
class OutputType:
    """What a run must end with: the schema, how to check and build the value, and its
    name for messages."""

    target: Any
    name: str
    schema: Schema
    convert: Callable[[Any], Any] | None = None

    @classmethod
    def of(cls, target: Any) -> OutputType:
        """The output type for ``T`` (a type, or a JSON Schema dict for an object)."""
        if isinstance(target, OutputType):
            return target
        if isinstance(target, Mapping):
            schema = Schema.from_dict(target)
            name = str(target.get("title") or "output")
            convert = None
        else:
            from nb_tools.tool import type_schema

            schema, convert = type_schema(target)
            name = getattr(target, "__name__", None) or str(target)
        if schema.to_dict().get("type") != "object":
            raise TypeError(
                f"output={name}: the output must be an object (a pydantic model, a "
                "dataclass, a TypedDict or an object JSON Schema); wrap other values in one"
            )
        return cls(target=target, name=name, schema=schema, convert=convert)

    def parse(self, raw: str | bytes) -> Any:
        """The value of the output type from the model's JSON text; raises
        ``ValidationError`` naming every problem. Optional properties may come as null
        (what a strict tool sends for "not given"): they are then left out."""
        value = strict_validator(self.schema)(raw)
        strip = null_stripper(self.schema)
        if strip is not None:
            value = strip(value)
        if self.convert is None:
            return value
        try:
            return self.convert(value)
        except ValidationError:
            raise
        except (TypeError, ValueError) as exc:
            raise ValidationError([f"/: {exc}"]) from exc

    def json_schema(self) -> dict[str, Any]:
        """The schema as our subset writes it (``to_dict``)."""
        return self.schema.to_dict()


@dataclass(kw_only=True)
class OutputState:
    """One run's progress toward its output: the value once valid, the last problems,
    and how many answers were sent back."""

    type: OutputType
    native: bool
    retries: int = DEFAULT_RETRIES
    value: Any = None
    done: bool = False
    problems: list[str] = field(default_factory=list)
    failures: int = 0

    @property
    def exhausted(self) -> bool:
        return self.failures > self.retries

    def accept(self, raw: str | bytes) -> bool:
        """Check one answer; False (and the problems kept) when it does not validate."""
        try:
            self.value = self.type.parse(raw)
        except ValidationError as exc:
            self.problems = exc.problems or [str(exc)]
            self.failures += 1
            return False
        self.done = True
        self.problems = []
        return True

    def retry_text(self) -> str:
        """The user message asking again after a final text that did not validate."""
        if not self.native:
            return (
                f"Give your final answer by calling the {FINAL_TOOL} tool with it as the "
                "arguments; do not answer in text."
            )
        return (
            f"Your answer is not valid {self.type.name} JSON:\n"
            + "\n".join(f"- {p}" for p in self.problems)
            + "\nAnswer again with only the corrected JSON."
        )

    def error_text(self) -> str:
        what = "; ".join(self.problems) or f"no {FINAL_TOOL} call"
        return (
            f"the model's answer did not match {self.type.name} after {self.failures} "
            f"tries ({what}); the conversation is kept: correct the prompt or the type and "
            "run again"
        )


class FinalResultTool:
    """The tool the model calls with its final answer when the provider has no structured
    outputs: strict, read-only, needing no approval; its arguments are the output."""

    def __init__(self, state: OutputState) -> None:
        self.state = state
        out = state.type
        self._info = Info(
            name=FINAL_TOOL,
            description=(
                f"Give the final answer as a {out.name} object. Call this once, when the "
                "answer is complete; its arguments are the answer."
            ),
            # Sent as the strict form and not validated by the executor: every answer,
            # valid or not, comes here and counts.
            raw_parameters=out.schema.to_strict_dict(),
            read_only=True,
            strict=True,
        )

    def info(self) -> Info:
        return self._info

    def call(self, args: str | bytes) -> Result:
        state = self.state
        if state.accept(args or "{}"):
            return Result(content=f"{state.type.name} received.")
        left = state.retries - state.failures + 1
        problems = "\n".join(f"- {p}" for p in state.problems)
        return Result.error(
            f"invalid {state.type.name}:\n{problems}\n"
            + (f"Call {FINAL_TOOL} again with a corrected answer." if left > 0 else ""),
            problems=list(state.problems),
        )


def output_options(provider: object, out: OutputType) -> Mapping[str, Any] | None:
    """The request options asking ``provider``'s model for JSON matching ``out`` (its
    structured outputs), or None when it has none: the run then adds ``final_result``."""
    hook = getattr(provider, "output_options", None)
    if hook is None:
        return None
    options: Mapping[str, Any] | None = hook(out.json_schema())
    return options


__all__ = [
    "DEFAULT_RETRIES",
    "FINAL_TOOL",
    "INVALID_OUTPUT",
    "FinalResultTool",
    "OutputError",
    "OutputState",
    "OutputType",
    "output_options",
]
