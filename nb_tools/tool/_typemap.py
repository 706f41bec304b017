"""Map Python types to ``Schema`` nodes, with converters from JSON values back to them.

Used by :mod:`nb_tools.tool._derive`. Every problem is collected in ``Mapper.problems``
(with where it was found) instead of raised, so a signature's problems are reported at once.
"""

from __future__ import annotations

import dataclasses
import enum
import inspect
import json
import pathlib
import re
import sys
import types
import typing
from collections import abc
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from nb_tools.tool._convgen import tag
from nb_tools.tool._docstring import parse_docstring
from nb_tools.tool._schema import UNSET, Schema
from nb_tools.tool._validate import make_nullable

__all__ = [
    "NO_RECORD",
    "Converter",
    "Field",
    "Mapper",
    "is_pydantic_field",
    "null_stripper",
    "type_name",
]

Converter = Callable[[Any], Any]

NO_RECORD: Any = object()  # a default exists but is not recorded in the schema


@dataclass
class Field:
    name: str  # Python name
    key: str  # JSON name
    tp: Any
    default: Any = UNSET  # UNSET: required
    description: str | None = None
    meta: list[Any] = field(default_factory=list)
    fill: Callable[[], Any] | None = None  # computes the default when the key is missing
    required: bool | None = None  # overrides "no default means required"


def type_name(t: Any) -> str:
    if isinstance(t, type) or inspect.isroutine(t):
        mod = t.__module__
        return t.__qualname__ if mod in ("builtins", "__main__") else f"{mod}.{t.__qualname__}"
    return repr(t).replace("typing.", "")


# pydantic 2 loads its submodules lazily: after a bare ``import pydantic``,
# ``pydantic.fields`` is not an attribute yet. Look the submodules up instead: while one is
# not loaded, nothing made from it (a FieldInfo, a model class) can exist. A module another
# thread is still importing (the SDK warm-up after %load_ext imports pydantic) may lack
# the class yet: nothing made from it exists either.


def loaded_class(module: str, name: str) -> type | None:
    """``module.name`` if ``module`` is loaded (fully enough to hold it), else None."""
    found = getattr(sys.modules.get(module), name, None)
    return found if isinstance(found, type) else None


def is_pydantic_field(x: Any) -> bool:
    field_info = loaded_class("pydantic.fields", "FieldInfo")
    return field_info is not None and isinstance(x, field_info)


def _is_pydantic_model(t: Any) -> bool:
    base = loaded_class("pydantic.main", "BaseModel")
    return base is not None and isinstance(t, type) and issubclass(t, base)


def _json_default(value: Any) -> Any:
    """``value`` in JSON form, or ``NO_RECORD`` when it has none."""
    if isinstance(value, enum.Enum):
        value = value.value
    try:
        return json.loads(json.dumps(value, allow_nan=False))
    except (TypeError, ValueError):
        return NO_RECORD


def _to_int(v: Any) -> Any:
    return int(v) if type(v) is float else v


tag(_to_int, "int")


def _is_nullable(s: Schema) -> bool:
    if s.type is None:
        return s.any_of is None or any(_is_nullable(b) for b in s.any_of)
    return s.type == "null" or (isinstance(s.type, list) and "null" in s.type)


class Mapper:
    def __init__(self) -> None:
        self.problems: list[str] = []
        self._active: set[Any] = set()

    def fail(self, where: str, msg: str) -> tuple[Schema, None]:
        self.problems.append(f"{where}: {msg}" if where else msg)
        return Schema(), None

    # Each map returns the schema and a converter (None: the JSON value is already right).
    def map(self, tp: Any, where: str) -> tuple[Schema, Converter | None]:
        origin = typing.get_origin(tp)
        args = typing.get_args(tp)
        if origin is typing.Annotated:
            schema, conv = self.map(args[0], where)
            self.apply_meta(schema, list(args[1:]), where)
            return schema, conv
        if tp is Any:
            return Schema(), None
        if tp is None or tp is type(None):
            return Schema(type="null"), None
        if tp is str:
            return Schema(type="string"), None
        if tp is bool:
            return Schema(type="boolean"), None
        if tp is int:
            return Schema(type="integer"), _to_int
        if tp is float:
            return Schema(type="number"), None
        if tp is bytes or tp is bytearray:
            return Schema(type="string", content_encoding="base64"), _base64_decoder(tp, where)
        if isinstance(tp, type) and issubclass(tp, pathlib.PurePath):
            return Schema(type="string"), tp
        string_format = _string_format(tp)
        if string_format is not None:
            fmt, parse = string_format
            return Schema(type="string", format=fmt), _parser(parse, fmt, where)
        if isinstance(tp, typing.NewType):
            return self.map(tp.__supertype__, where)
        if isinstance(tp, typing.TypeVar):
            if tp.__bound__ is not None:
                return self.map(tp.__bound__, where)
            return Schema(), None
        if origin is typing.Literal:
            return self.literal(args, where)
        if origin is typing.Union or origin is types.UnionType:
            return self.union(args, where)
        if origin in (typing.Required, typing.NotRequired):
            return self.map(args[0], where)
        if isinstance(tp, type) and issubclass(tp, enum.Enum):
            return self.enum_type(tp, where)
        if isinstance(tp, type) and dataclasses.is_dataclass(tp):
            return self.guarded(tp, where, self.dataclass_schema)
        if typing.is_typeddict(tp):
            return self.guarded(tp, where, self.typeddict_schema)
        if _is_pydantic_model(tp):
            return self.guarded(tp, where, self.pydantic_schema)
        container = origin if origin is not None else tp
        if container in (
            list,
            abc.Sequence,
            abc.MutableSequence,
            abc.Iterable,
            abc.Collection,
        ):
            return self.array(args, where, None)
        if container in (set, frozenset, abc.Set, abc.MutableSet):
            return self.array(args, where, frozenset if container is frozenset else set)
        if container is tuple:
            return self.tuple_schema(args, where)
        if container in (dict, abc.Mapping, abc.MutableMapping):
            return self.mapping(args, where)
        return self.fail(where, f"unsupported type {type_name(tp)}")

    def guarded(
        self, tp: type, where: str, fn: Callable[[Any, str], tuple[Schema, Converter | None]]
    ) -> tuple[Schema, Converter | None]:
        if tp in self._active:
            return self.fail(
                where,
                f"recursive type {type_name(tp)} is not supported (the schema subset has no $ref)",
            )
        self._active.add(tp)
        try:
            return fn(tp, where)
        finally:
            self._active.discard(tp)

    def literal(self, values: tuple[Any, ...], where: str) -> tuple[Schema, Converter | None]:
        json_values = [v.value if isinstance(v, enum.Enum) else v for v in values]
        for v in json_values:
            if not isinstance(v, str | int | float | bool | type(None)):
                return self.fail(where, f"unsupported Literal value {v!r}")
        schema = Schema.enum("", *json_values)
        if any(isinstance(v, enum.Enum) for v in values):
            table = {(type(j) is bool, j): v for j, v in zip(json_values, values, strict=True)}
            return schema, lambda x: table.get((type(x) is bool, x), x)
        return schema, None

    def enum_type(self, tp: type[enum.Enum], where: str) -> tuple[Schema, Converter | None]:
        values = [m.value for m in tp]
        for v in values:
            if not isinstance(v, str | int | float | bool):
                return self.fail(where, f"enum {type_name(tp)} has a non-JSON value {v!r}")
        schema = Schema.enum("", *values)
        return schema, tp

    def union(self, args: tuple[Any, ...], where: str) -> tuple[Schema, Converter | None]:
        non_null = [a for a in args if a is not type(None) and a is not None]
        nullable = len(non_null) != len(args)
        mapped = [self.map(a, where) for a in non_null]
        if len(mapped) == 1:
            schema, conv = mapped[0]
        else:
            schema = Schema(any_of=[s for s, _ in mapped])
            conv = _union_converter(mapped)
        if not nullable:
            return schema, conv
        if len(mapped) == 1:
            schema = make_nullable(schema)
        else:
            assert schema.any_of is not None
            schema.any_of.append(Schema(type="null"))
        if conv is None:
            return schema, None
        inner = conv
        return schema, tag(lambda v: None if v is None else inner(v), "nullable", inner)

    def array(
        self, args: tuple[Any, ...], where: str, build: Callable[[Any], Any] | None
    ) -> tuple[Schema, Converter | None]:
        if not args:
            return Schema(type="array"), build
        items, conv = self.map(args[0], where)
        schema = Schema(type="array", items=items)
        if conv is None:
            return schema, build
        c = conv
        if build is None:
            return schema, tag(lambda v: [c(x) for x in v], "list", c)
        b = build
        return schema, tag(lambda v: b(c(x) for x in v), "build", b, c)

    def tuple_schema(self, args: tuple[Any, ...], where: str) -> tuple[Schema, Converter | None]:
        if not args:
            return Schema(type="array"), tuple
        if len(args) == 2 and args[1] is Ellipsis:
            return self.array(args[:1], where, tuple)
        if args == ((),):
            return Schema(type="array", max_items=0), tuple
        mapped = [self.map(a, where) for a in args]
        n = len(args)
        if all(s == mapped[0][0] for s, _ in mapped):
            schema = Schema(type="array", items=mapped[0][0], min_items=n, max_items=n)
        else:  # a schema per position
            schema = Schema(
                type="array", prefix_items=[s for s, _ in mapped], min_items=n, max_items=n
            )
        convs = [c for _, c in mapped]
        if all(c is None for c in convs):
            return schema, tuple
        return schema, lambda v: tuple(
            x if c is None else c(x) for c, x in zip(convs, v, strict=False)
        )

    def mapping(self, args: tuple[Any, ...], where: str) -> tuple[Schema, Converter | None]:
        if args and args[0] not in (str, Any):
            return self.fail(
                where,
                f"dict keys must be str, not {type_name(args[0])} (JSON object keys are strings)",
            )
        if len(args) < 2:
            return Schema(type="object"), None
        values, conv = self.map(args[1], where)
        # The values' schema checks every value (dict[str, Any]: none to check).
        schema = Schema(type="object", additional_properties=values if values.to_dict() else None)
        if conv is None:
            return schema, None
        c = conv
        return schema, tag(lambda v: {k: c(x) for k, x in v.items()}, "dict", c)

    # -- objects --------------------------------------------------------------------------

    def class_hints(self, tp: type, where: str) -> dict[str, Any] | None:
        """A class's annotations resolved (``Annotated`` kept); ``None``, with the problem
        recorded, when they do not resolve."""
        try:
            return typing.get_type_hints(tp, include_extras=True)
        except Exception as e:
            self.fail(where, f"cannot resolve the annotations of {type_name(tp)} ({e})")
            return None

    def dataclass_schema(self, tp: type, where: str) -> tuple[Schema, Converter | None]:
        hints = self.class_hints(tp, where)
        if hints is None:
            return Schema(), None
        desc, docs = _class_doc(tp)
        fs = []
        for f in dataclasses.fields(tp):
            if not f.init:
                continue
            if f.default is not dataclasses.MISSING:
                default: Any = f.default
            elif f.default_factory is not dataclasses.MISSING:
                default = NO_RECORD
            else:
                default = UNSET
            fs.append(
                Field(
                    name=f.name,
                    key=f.name,
                    tp=hints.get(f.name, Any),
                    default=default,
                    description=f.metadata.get("description") or docs.get(f.name),
                )
            )
        schema, conv = self.object_schema(fs, _join(where, type_name(tp)), closed=True, build=tp)
        schema.description = desc or None
        return schema, conv

    def typeddict_schema(self, tp: type, where: str) -> tuple[Schema, Converter | None]:
        hints = self.class_hints(tp, where)
        if hints is None:
            return Schema(), None
        desc, docs = _class_doc(tp)
        required_keys = set(getattr(tp, "__required_keys__", hints))
        for k, t in hints.items():
            # Under PEP 563 the class cannot see Required/NotRequired inside strings.
            marker = typing.get_origin(t)
            if marker is typing.NotRequired:
                required_keys.discard(k)
            elif marker is typing.Required:
                required_keys.add(k)
        fs = [
            Field(
                name=k,
                key=k,
                tp=t,
                description=docs.get(k),
                required=k in required_keys,
                default=UNSET if k in required_keys else NO_RECORD,
            )
            for k, t in hints.items()
        ]
        schema, conv = self.object_schema(fs, _join(where, type_name(tp)), closed=True)
        schema.description = desc or None
        return schema, conv

    def pydantic_schema(self, tp: Any, where: str) -> tuple[Schema, Converter | None]:
        desc, docs = _class_doc(tp)
        fs = []
        for name, fi in tp.model_fields.items():
            key = fi.validation_alias if isinstance(fi.validation_alias, str) else None
            key = key or fi.alias or name
            if fi.is_required():
                default: Any = UNSET
            elif fi.default_factory is not None:
                default = NO_RECORD
            else:
                default = fi.default
            fs.append(
                Field(
                    name=key,
                    key=key,
                    tp=fi.annotation,
                    default=default,
                    description=fi.description or docs.get(name),
                    meta=[fi],
                )
            )
        closed = tp.model_config.get("extra") == "forbid"
        schema, _ = self.object_schema(fs, _join(where, type_name(tp)), closed=closed)
        schema.description = desc or None
        # pydantic converts nested values itself; only nulls that mean "not given" (strict
        # mode) are removed first, at every depth, so its defaults apply.
        validate = tp.model_validate
        strip = null_stripper(schema)
        if strip is None:
            return schema, validate
        return schema, lambda v: validate(strip(v))

    def object_schema(
        self, fs: list[Field], where: str, *, closed: bool, build: Callable[..., Any] | None = None
    ) -> tuple[Schema, Converter | None]:
        props: dict[str, Schema] = {}
        required: list[str] = []
        table: dict[str, tuple[str, Converter | None, bool]] = {}
        fills: dict[str, Callable[[], Any]] = {}
        for f in fs:
            here = _join(where, f"field '{f.name}'") if where else f"parameter '{f.name}'"
            schema, conv = self.map(f.tp, here)
            if f.meta:
                self.apply_meta(schema, f.meta, here)
            if f.description and not schema.description:
                schema.description = f.description
            is_required = f.required if f.required is not None else f.default is UNSET
            if is_required:
                required.append(f.key)
            elif f.default is not NO_RECORD and f.default is not UNSET:
                recorded = _json_default(f.default)
                if recorded is not NO_RECORD:
                    schema.default = recorded
            if f.fill is not None:
                fills[f.name] = f.fill
            props[f.key] = schema
            drop = not is_required and not _is_nullable(schema)
            table[f.key] = (f.name, conv, drop)
        schema = Schema(
            type="object",
            properties=props,
            required=required or None,
            additional_properties=False if closed else None,
        )
        if (
            build is None
            and not fills
            and all(c is None and k == n for k, (n, c, _) in table.items())
        ):
            drop_keys = frozenset(k for k, (_, _, d) in table.items() if d)
            if not drop_keys:
                return schema, None

            def drop_nulls(v: dict[str, Any]) -> Any:
                if None not in v.values():
                    return v
                return {k: x for k, x in v.items() if x is not None or k not in drop_keys}

            return schema, drop_nulls
        get = table.get

        def convert(v: dict[str, Any]) -> Any:
            out: dict[str, Any] = {}
            for k, x in v.items():
                entry = get(k)
                if entry is None:
                    out[k] = x
                    continue
                name, c, drop = entry
                if x is None:
                    if not drop:
                        out[name] = None
                elif c is None:
                    out[name] = x
                else:
                    out[name] = c(x)
            for name, fill in fills.items():
                if name not in out:
                    out[name] = fill()
            return out if build is None else build(**out)

        return schema, tag(convert, "object", table, fills, build, frozenset(required), convert)

    # -- Annotated metadata ---------------------------------------------------------------

    def apply_meta(self, schema: Schema, meta: list[Any], where: str) -> None:
        for m in meta:
            if isinstance(m, str):
                schema.description = m
                continue
            if is_pydantic_field(m):
                if m.description:
                    schema.description = m.description
                if m.title:
                    schema.title = m.title
                self.apply_meta(schema, list(m.metadata), where)
                continue
            self.apply_constraint(schema, m, where)

    def apply_constraint(self, schema: Schema, m: Any, where: str) -> None:
        names = schema.type if isinstance(schema.type, list) else [schema.type]
        is_array = "array" in names
        applied = False
        for attr, target in (
            ("ge", "minimum"),
            ("le", "maximum"),
            ("gt", "exclusive_minimum"),
            ("lt", "exclusive_maximum"),
        ):
            value = getattr(m, attr, None)
            if value is not None:
                setattr(schema, target, value)
                applied = True
        lo = getattr(m, "min_length", None)
        hi = getattr(m, "max_length", None)
        if lo is not None:
            setattr(schema, "min_items" if is_array else "min_length", lo)
            applied = True
        if hi is not None:
            setattr(schema, "max_items" if is_array else "max_length", hi)
            applied = True
        pattern = getattr(m, "pattern", None)
        if isinstance(pattern, str):
            try:
                re.compile(pattern)
                schema.pattern = pattern
            except re.error as e:
                self.problems.append(f"{where}: invalid pattern {pattern!r}: {e}")
            applied = True
        if applied:
            return
        mod = type(m).__module__
        if mod.startswith(("annotated_types", "pydantic")):
            # Constraints outside the subset (MultipleOf, Strict, ...): pydantic metadata
            # that does not constrain values, like Strict, is harmless to skip.
            if type(m).__name__ in ("MultipleOf", "Predicate", "Timezone", "Not"):
                self.problems.append(f"{where}: constraint {m!r} is outside the schema subset")
            return
        self.problems.append(
            f"{where}: unsupported Annotated metadata {m!r}; use a "
            "description string or pydantic.Field(...)"
        )


def _join(where: str, what: str) -> str:
    return f"{where}: {what}" if where else what


def _class_doc(tp: type) -> tuple[str, dict[str, str]]:
    doc = tp.__dict__.get("__doc__")
    if not doc or (dataclasses.is_dataclass(tp) and doc.startswith(tp.__name__ + "(")):
        return "", {}
    return parse_docstring(doc)


def _union_converter(mapped: list[tuple[Schema, Converter | None]]) -> Converter | None:
    if all(c is None for _, c in mapped):
        return None
    branches = [(s.is_valid, c) for s, c in mapped]

    def convert(v: Any) -> Any:
        for is_valid, c in branches:
            if is_valid(v):
                return v if c is None else c(v)
        return v

    return convert


def _string_format(tp: Any) -> tuple[str, Callable[[str], Any]] | None:
    """The JSON Schema format and parser of a date, time or UUID type. The modules are
    looked up, not imported: an annotation naming their types has imported them already
    (and ``import nb_tools`` stays without uuid, which costs a few milliseconds)."""
    if not isinstance(tp, type):
        return None
    dt = sys.modules.get("datetime")
    if dt is not None:
        if tp is dt.datetime:
            return "date-time", dt.datetime.fromisoformat
        if tp is dt.date:
            return "date", dt.date.fromisoformat
        if tp is dt.time:
            return "time", dt.time.fromisoformat
    uuid_type = loaded_class("uuid", "UUID")
    if uuid_type is not None and tp is uuid_type:
        return "uuid", uuid_type
    return None


def _parser(parse: Callable[[str], Any], fmt: str, where: str) -> Converter:
    """Parse a string argument, with a message the model can act on when it is malformed
    (``format`` is only an annotation, so validation lets any string through)."""

    def convert(v: Any) -> Any:
        try:
            return parse(v)
        except ValueError:
            raise ValueError(f"{where}: {v!r} is not a valid {fmt} (ISO 8601 / RFC 4122)") from None

    return convert


def _base64_decoder(tp: type, where: str) -> Converter:
    """Decode a base64 string argument (bytes travel in JSON as base64 text)."""
    import base64
    import binascii

    def convert(v: Any) -> Any:
        try:
            return tp(base64.b64decode(v, validate=True))
        except (binascii.Error, ValueError, TypeError):
            raise ValueError(
                f"{where}: {_short(v)} is not valid base64; send the bytes base64-encoded "
                "(RFC 4648, with padding)"
            ) from None

    return convert


def _short(v: Any) -> str:
    text = repr(v)
    return text if len(text) <= 40 else text[:37] + "..."


def null_stripper(s: Schema) -> Converter | None:
    """A converter removing null values of optional, non-nullable properties at any depth
    (what a strict-mode model sends for "not given"); ``None`` when there are none."""
    if s.properties:
        required = set(s.required or ())
        subs = {k: null_stripper(v) for k, v in s.properties.items()}
        subs = {k: c for k, c in subs.items() if c is not None}
        drop = frozenset(
            k for k, v in s.properties.items() if k not in required and not _is_nullable(v)
        )
        if not subs and not drop:
            return None

        def strip_object(v: Any) -> Any:
            if type(v) is not dict:
                return v
            out: dict[str, Any] = {}
            for k, x in v.items():
                if x is None:
                    if k not in drop:
                        out[k] = x
                else:
                    c = subs.get(k)
                    out[k] = x if c is None else c(x)
            return out

        return strip_object
    if s.items is not None:
        item = null_stripper(s.items)
        if item is None:
            return None
        return lambda v: [item(x) for x in v] if type(v) is list else v
    return None
