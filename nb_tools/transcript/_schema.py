"""The transcript's JSON Schema, generated from :mod:`nb_tools.transcript._types`.

``transcript_schema()`` builds it from the types; ``SCHEMA_PATH`` is the generated file
shipped beside this module (``scripts/gen_transcript_contract.py`` writes it, and a test
checks that it is what the types give, byte for byte). The generator knows the few forms
the types use: TypedDict, Literal, unions (``X | None``), ``list[X]``, ``dict[str, X]``,
``Annotated[X, "description"]``, ``NotRequired``, str, int, float, bool, Any.
"""

from __future__ import annotations

import functools
import json
import types
import typing
from pathlib import Path
from typing import Any, Literal, NotRequired, Required, Union, get_args, get_origin

from nb_tools.transcript._types import NAMED_ALIASES, Transcript

SCHEMA_PATH = Path(__file__).with_name("transcript.schema.json")
SCHEMA_ID = "https://nb-tools.invalid/transcript.schema.json"
_PRIMITIVES: dict[Any, str] = {str: "string", int: "integer", float: "number", bool: "boolean"}


def transcript_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of a version-1 transcript."""
    return _Generator().document(Transcript)


def schema_text() -> str:
    """The schema as the shipped file holds it (sorted $defs, two-space indent, a final
    newline)."""
    return json.dumps(transcript_schema(), indent=2, ensure_ascii=False) + "\n"


def load_schema() -> dict[str, Any]:
    """The shipped schema file."""
    loaded: dict[str, Any] = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    return loaded


class _Generator:
    def __init__(self) -> None:
        self.defs: dict[str, dict[str, Any]] = {}

    def document(self, root: type) -> dict[str, Any]:
        body = self.object_schema(root)
        return {
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "$id": SCHEMA_ID,
            "title": "nb_tools transcript (application/vnd.nbtools.transcript+json)",
            **body,
            "$defs": dict(sorted(self.defs.items())),
        }

    def ref(self, name: str, build: typing.Callable[[], dict[str, Any]]) -> dict[str, Any]:
        if name not in self.defs:
            self.defs[name] = {}  # a placeholder: recursion stops here
            self.defs[name] = build()
        return {"$ref": f"#/$defs/{name}"}

    def of(self, tp: Any) -> dict[str, Any]:
        for name, alias in NAMED_ALIASES.items():
            if tp is alias or (get_origin(tp) is get_origin(alias) and tp == alias):
                return self.ref(name, functools.partial(self.inline, alias))
        return self.inline(tp)

    def inline(self, tp: Any) -> dict[str, Any]:
        origin = get_origin(tp)
        if origin is typing.Annotated:
            inner, *meta = get_args(tp)
            schema = dict(self.of(inner))
            notes = [m for m in meta if isinstance(m, str)]
            if notes:
                schema["description"] = " ".join(notes)
            return schema
        if tp is Any:
            return {}
        if tp is None or tp is type(None):
            return {"type": "null"}
        if tp in _PRIMITIVES:
            return {"type": _PRIMITIVES[tp]}
        if origin is Literal:
            values = list(get_args(tp))
            return {"const": values[0]} if len(values) == 1 else {"enum": values}
        if origin in (Union, types.UnionType):
            return self.union(get_args(tp))
        if origin is list:
            (item,) = get_args(tp)
            return {"type": "array", "items": self.of(item)}
        if origin is dict:
            key, value = get_args(tp)
            if key is not str:
                raise TypeError(f"transcript schema: dict keys must be str, not {key!r}")
            return {"type": "object", "additionalProperties": self.of(value)}
        if typing.is_typeddict(tp):
            return self.ref(tp.__name__, lambda: self.object_schema(tp))
        raise TypeError(f"transcript schema: no JSON Schema form for {tp!r}; extend _Generator")

    def union(self, members: tuple[Any, ...]) -> dict[str, Any]:
        schemas = [self.of(m) for m in members]
        simple = [s.get("type") for s in schemas]
        if all(isinstance(t, str) and len(s) == 1 for t, s in zip(simple, schemas, strict=True)):
            return {"type": simple}  # str | None -> {"type": ["string", "null"]}
        if schemas[-1] == {"type": "null"} and len(schemas) == 2:
            other = schemas[0]
            if set(other) == {"enum"}:
                return {"enum": [*other["enum"], None]}
        return {"anyOf": schemas}

    def object_schema(self, td: Any) -> dict[str, Any]:
        hints = typing.get_type_hints(td, include_extras=True)
        properties: dict[str, Any] = {}
        required: list[str] = []
        for name, hint in hints.items():
            tp, optional = hint, False
            if get_origin(tp) is NotRequired:
                (tp,), optional = get_args(tp), True
            elif get_origin(tp) is Required:
                (tp,) = get_args(tp)
            properties[name] = self.of(tp)
            if not optional:
                required.append(name)
        schema: dict[str, Any] = {"type": "object"}
        doc = typing.cast(str | None, td.__doc__)
        if doc and not doc.startswith(td.__name__ + "("):  # not TypedDict's generated one
            schema["description"] = " ".join(doc.split())
        schema |= {"properties": properties, "required": required}
        schema["additionalProperties"] = False
        return schema
