"""``Schema``: the JSON Schema subset tools describe their arguments with.

Keywords: type, title, description, properties, required, items, prefixItems, enum,
default, format, minimum, maximum, exclusiveMinimum, exclusiveMaximum, minLength,
maxLength, minItems, maxItems, pattern, anyOf, additionalProperties (a boolean or a
schema), contentEncoding (an annotation: bytes travel as base64 strings). Semantics are
JSON Schema 2020-12's (``items`` applies to the positions after ``prefixItems``); see
:mod:`nb_tools.tool._validate` for how a schema is checked.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Protocol, overload

from nb_tools.tool._json import loads_ijson

__all__ = ["UNSET", "Schema"]


class _Unset:
    """Marks ``Schema.default`` as absent (``None`` is a valid default: JSON null)."""

    _instance: _Unset | None = None

    def __new__(cls) -> _Unset:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "UNSET"

    def __bool__(self) -> bool:
        return False

    def __copy__(self) -> _Unset:
        return self

    def __deepcopy__(self, memo: Any) -> _Unset:
        return self


UNSET: Final = _Unset()


if TYPE_CHECKING:

    class _EnumBuilder(Protocol):
        def __call__(self, desc: str, *values: Any) -> Schema: ...

    class _EnumField:
        """How type checkers see ``Schema.enum``: a builder on the class, a list field on
        instances (the runtime gets there with a classmethod the instance value shadows)."""

        @overload
        def __get__(self, obj: None, owner: type[Schema]) -> _EnumBuilder: ...
        @overload
        def __get__(self, obj: Schema, owner: type[Schema]) -> list[Any] | None: ...
        def __get__(self, obj: Schema | None, owner: type[Schema]) -> Any: ...
        def __set__(self, obj: Schema, value: list[Any] | None) -> None: ...


TYPES: Final = ("null", "boolean", "integer", "number", "string", "array", "object")

# JSON keyword -> field name, in the canonical order of to_dict().
_KEYWORDS: Final = {
    "type": "type",
    "title": "title",
    "description": "description",
    "properties": "properties",
    "required": "required",
    "items": "items",
    "prefixItems": "prefix_items",
    "enum": "enum",
    "default": "default",
    "format": "format",
    "contentEncoding": "content_encoding",
    "minimum": "minimum",
    "maximum": "maximum",
    "exclusiveMinimum": "exclusive_minimum",
    "exclusiveMaximum": "exclusive_maximum",
    "minLength": "min_length",
    "maxLength": "max_length",
    "minItems": "min_items",
    "maxItems": "max_items",
    "pattern": "pattern",
    "anyOf": "any_of",
    "additionalProperties": "additional_properties",
}
# Annotations with no validation meaning that from_dict accepts and drops.
_IGNORED: Final = frozenset(
    {"$schema", "$id", "$comment", "examples", "deprecated", "readOnly", "writeOnly"}
)
_CACHE = "_compiled"


@dataclass(kw_only=True, eq=True)
class Schema:
    """A JSON Schema subset node. Field names are the keywords in snake_case.

    Unset fields are ``None`` (``default`` uses ``UNSET``, since ``None`` is a valid
    default). The compiled validator is cached on the instance; assigning a field drops
    the cache, but in-place changes to nested schemas or lists are not seen: build a new
    schema (``copy.deepcopy`` it first) rather than mutating one that has been used.
    """

    type: str | list[str] | None = None
    title: str | None = None
    description: str | None = None
    properties: dict[str, Schema] | None = None
    required: list[str] | None = None
    items: Schema | None = None
    if TYPE_CHECKING:
        # The field doubles as the ``Schema.enum(desc, *values)`` builder on the class.
        enum: _EnumField = _EnumField()
    else:
        enum: list[Any] | None = None
    default: Any = UNSET
    format: str | None = None
    minimum: int | float | None = None
    maximum: int | float | None = None
    exclusive_minimum: int | float | None = None
    exclusive_maximum: int | float | None = None
    min_length: int | None = None
    max_length: int | None = None
    min_items: int | None = None
    max_items: int | None = None
    pattern: str | None = None
    any_of: list[Schema] | None = None
    additional_properties: bool | Schema | None = None
    prefix_items: list[Schema] | None = None
    content_encoding: str | None = None

    def __post_init__(self) -> None:
        if self.pattern is not None:
            _compile_pattern(self.pattern, "pattern")
        if isinstance(self.type, str) and self.type not in TYPES:
            raise ValueError(f"Schema: unknown type {self.type!r}; use one of {', '.join(TYPES)}")
        if isinstance(self.type, list):
            for t in self.type:
                if t not in TYPES:
                    raise ValueError(f"Schema: unknown type {t!r}; use one of {', '.join(TYPES)}")

    def __setattr__(self, name: str, value: Any) -> None:
        object.__setattr__(self, name, value)
        if name != _CACHE:
            self.__dict__.pop(_CACHE, None)

    def __getstate__(self) -> dict[str, Any]:
        # Copies and pickles leave the compiled validators behind (generated code).
        state = dict(self.__dict__)
        state.pop(_CACHE, None)
        return state

    # -- builders -------------------------------------------------------------------------

    @classmethod
    def string(cls, desc: str = "") -> Schema:
        return cls(type="string", description=desc or None)

    @classmethod
    def integer(cls, desc: str = "") -> Schema:
        return cls(type="integer", description=desc or None)

    @classmethod
    def number(cls, desc: str = "") -> Schema:
        return cls(type="number", description=desc or None)

    @classmethod
    def boolean(cls, desc: str = "") -> Schema:
        return cls(type="boolean", description=desc or None)

    @classmethod
    def array(cls, items: Schema, desc: str = "") -> Schema:
        return cls(type="array", items=items, description=desc or None)

    @classmethod
    def object(cls, props: Mapping[str, Schema], *required: str) -> Schema:
        """An object schema; every name in ``required`` must be one of ``props``."""
        missing = [r for r in required if r not in props]
        if missing:
            raise ValueError(
                f"Schema.object: required {', '.join(map(repr, missing))} not in properties "
                f"({', '.join(map(repr, props)) or 'none'}); add them to props or drop them"
            )
        return cls(type="object", properties=dict(props), required=list(required) or None)

    # ``enum`` is also a field: instances read their own value, the class gets the builder.
    # (Assigned after the class body, see below.)

    # -- conversion -----------------------------------------------------------------------

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Schema:
        """Build a schema from its JSON form, raising ``ValueError`` (with the path) for
        keywords outside the subset or values of the wrong type."""
        return _from_dict(d, "")

    def to_dict(self) -> dict[str, Any]:
        """The JSON form: unset keywords omitted, keys in canonical order."""
        out: dict[str, Any] = {}
        for key, name in _KEYWORDS.items():
            value = getattr(self, name)
            if value is UNSET or (value is None and name != "default"):
                continue
            if name == "properties":
                value = {k: v.to_dict() for k, v in value.items()}
            elif name == "items" or (name == "additional_properties" and type(value) is Schema):
                value = value.to_dict()
            elif name in ("any_of", "prefix_items"):
                value = [v.to_dict() for v in value]
            elif isinstance(value, list | dict):
                value = copy.deepcopy(value)
            out[key] = value
        return out

    def json(self) -> str:
        """The schema as compact JSON text."""
        return json.dumps(self.to_dict(), ensure_ascii=False, separators=(",", ":"))

    def strict(self) -> Schema:
        """The form providers' strict modes require: every object sets
        ``additionalProperties: false`` and requires all its properties; properties that
        were optional become nullable instead (so ``None`` means "not given")."""
        from nb_tools.tool._validate import to_strict

        return to_strict(self)

    def to_strict_dict(self) -> dict[str, Any]:
        return self.strict().to_dict()

    def strict_json(self) -> str:
        return json.dumps(self.to_strict_dict(), ensure_ascii=False, separators=(",", ":"))

    # -- validation -----------------------------------------------------------------------

    def validate(self, raw: str | bytes, *, strict: bool = False) -> Any:
        """Parse ``raw`` as I-JSON and check it, returning the parsed value.

        Raises ``ValidationError`` listing every problem with its JSON path. With
        ``strict=True`` optional object properties also accept null, as the strict form
        (``strict_json()``) makes the model send them.
        """
        fast = self._check(strict)
        value = loads_ijson(raw)
        if not fast(value):
            self._explain(value, strict)
        return value

    def validate_value(self, value: Any, *, strict: bool = False) -> Any:
        """Check an already-parsed JSON value (``json.loads`` output); returns it."""
        fast = self._check(strict)
        if not fast(value):
            self._explain(value, strict)
        return value

    def is_valid(self, value: Any, *, strict: bool = False) -> bool:
        """Whether an already-parsed JSON value satisfies the schema (no explanation)."""
        fast = self._check(strict)
        return bool(fast(value))

    def _check(self, strict: bool) -> Callable[[Any], bool]:
        """The generated check for ``strict``: made at first use, kept until the schema
        changes."""
        cache = self.__dict__.get(_CACHE)
        fast = cache.get(strict) if cache is not None else None
        return fast if fast is not None else self._compile(strict)

    def _cache(self) -> dict[Any, Any]:
        cache = self.__dict__.get(_CACHE)
        if cache is None:
            cache = {}
            object.__setattr__(self, _CACHE, cache)
        return cache

    def _compile(self, strict: bool) -> Any:
        from nb_tools.tool._codegen import generate

        cache = self._cache()
        fast = cache[strict] = generate(self, null_optional=strict)
        return fast

    def _explain(self, value: Any, strict: bool) -> None:
        """Raise ``ValidationError`` naming every problem in ``value`` (slow path)."""
        from nb_tools.tool._validate import compile_schema, raise_problems

        cache = self._cache()
        key = ("explain", strict)
        check = cache.get(key)
        if check is None:
            check = cache[key] = compile_schema(self, null_optional=strict)
        problems = check(value)
        if problems:
            raise_problems(problems)


def _enum_builder(cls: type[Schema], desc: str, *values: Any) -> Schema:
    """``Schema.enum(desc, *values)``: a string enum (or the values' JSON type)."""
    if not values:
        raise ValueError("Schema.enum: give at least one value")
    kinds = {_json_kind(v) for v in values}
    typ = kinds.pop() if len(kinds) == 1 else None
    return cls(type=typ, enum=list(values), description=desc or None)


def _json_kind(v: Any) -> str | None:
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, int):
        return "integer"
    if isinstance(v, float):
        return "number"
    if isinstance(v, str):
        return "string"
    if v is None:
        return "null"
    return None


Schema.enum = classmethod(_enum_builder)  # type: ignore[assignment]


def _compile_pattern(pattern: str, where: str) -> re.Pattern[str]:
    try:
        return re.compile(pattern)
    except re.error as e:
        raise ValueError(
            f"Schema: invalid {where} {pattern!r}: {e}; fix the regular "
            "expression (Python re syntax)"
        ) from None


def _from_dict(d: Any, path: str) -> Schema:
    where = path or "/"
    if not isinstance(d, Mapping):
        raise ValueError(
            f"Schema.from_dict: {where}: expected an object (dict), got {type(d).__name__}"
        )
    kw: dict[str, Any] = {}
    for key, value in d.items():
        if key in _IGNORED:
            continue
        name = _KEYWORDS.get(key)
        if name is None:
            hint = (
                "$ref/$defs are not supported: inline the definitions"
                if key in ("$ref", "$defs", "definitions")
                else "use Info.raw_parameters to send such a schema without validation"
            )
            raise ValueError(f"Schema.from_dict: {where}: unsupported keyword {key!r}; {hint}")
        here = f"{path}/{key}"
        kw[name] = _field_value(name, value, here)
    return Schema(**kw)


def _bad(path: str, expected: str, value: Any) -> ValueError:
    return ValueError(f"Schema.from_dict: {path}: expected {expected}, got {value!r}")


def _field_value(name: str, value: Any, path: str) -> Any:
    if name == "type":
        if isinstance(value, str) and value in TYPES:
            return value
        if (
            isinstance(value, list)
            and value
            and all(isinstance(t, str) and t in TYPES for t in value)
        ):
            return list(value)
        raise _bad(path, f"one of {', '.join(TYPES)} or a list of them", value)
    if name in ("title", "description", "format", "content_encoding"):
        if not isinstance(value, str):
            raise _bad(path, "a string", value)
        return value
    if name == "pattern":
        if not isinstance(value, str):
            raise _bad(path, "a string", value)
        _compile_pattern(value, f"pattern at {path}")
        return value
    if name == "properties":
        if not isinstance(value, Mapping):
            raise _bad(path, "an object of schemas", value)
        return {k: _from_dict(v, f"{path}/{k}") for k, v in value.items()}
    if name == "required":
        if not isinstance(value, list) or not all(isinstance(x, str) for x in value):
            raise _bad(path, "a list of strings", value)
        return list(value)
    if name == "items":
        if isinstance(value, list):
            raise ValueError(
                f"Schema.from_dict: {path}: the array form of items is draft 2019-09's; "
                "use prefixItems for per-position schemas"
            )
        return _from_dict(value, path)
    if name in ("any_of", "prefix_items"):
        if not isinstance(value, list) or not value:
            raise _bad(path, "a non-empty list of schemas", value)
        return [_from_dict(v, f"{path}/{i}") for i, v in enumerate(value)]
    if name == "enum":
        if not isinstance(value, list):
            raise _bad(path, "a list", value)
        return copy.deepcopy(value)
    if name == "default":
        return copy.deepcopy(value)
    if name in ("minimum", "maximum", "exclusive_minimum", "exclusive_maximum"):
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise _bad(path, "a number", value)
        return value
    if name in ("min_length", "max_length", "min_items", "max_items"):
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise _bad(path, "a non-negative integer", value)
        return value
    if name == "additional_properties":
        if isinstance(value, bool):
            return value
        if isinstance(value, Mapping):
            return _from_dict(value, path)
        raise _bad(path, "true, false or a schema", value)
    raise AssertionError(name)  # pragma: no cover
