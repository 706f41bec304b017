"""Derive object schemas from Python types, and argument converters to go with them.

The pipeline for a function (``function_schema``):

1. read the signature and resolve its annotations (``typing.get_type_hints``);
2. map each parameter's type to a ``Schema`` and a converter (JSON value -> Python value),
   collecting every unsupported type or parameter kind instead of stopping at the first;
3. fill property descriptions from the docstring (Google, NumPy or reST);
4. raise one ``SignatureError`` naming every problem, or return a ``FunctionSchema``.

pydantic is optional: it is only touched when an annotation comes from it.
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

from nb_tools.tool._docstring import parse_docstring
from nb_tools.tool._schema import UNSET, Schema
from nb_tools.tool._validate import make_nullable

__all__ = ["FunctionSchema", "SignatureError", "function_schema", "schema_of"]

Converter = Callable[[Any], Any]


class SignatureError(TypeError):
    """A function or type that cannot be described to a model; ``problems`` lists each."""

    def __init__(self, owner: str, problems: list[str]):
        self.owner = owner
        self.problems = list(problems)
        message = f"{owner}: " + "; ".join(self.problems)
        if any("unsupported type" in p for p in self.problems):
            message += f" ({_SUPPORTED})"
        super().__init__(message)


_SUPPORTED = ("supported: str, int, float, bool, None, Any, Literal, Enum, list/set/tuple, "
              "dict[str, X], Optional/Union, dataclasses, TypedDicts and pydantic models")


@dataclass(frozen=True, kw_only=True)
class FunctionSchema:
    """A function described for a model: its name, description, argument schema, and a
    converter from validated JSON arguments to keyword arguments of the declared types."""

    name: str
    description: str
    schema: Schema
    is_async: bool = False
    _convert: Converter | None = field(default=None, repr=False, compare=False)

    def convert(self, args: dict[str, Any]) -> dict[str, Any]:
        """Keyword arguments for the function from validated JSON arguments: dataclasses
        built, enums and tuples restored; null or missing optional arguments left out so
        the function's default applies."""
        if self._convert is None:
            return args
        result: dict[str, Any] = self._convert(args)
        return result


# -- public entry points ------------------------------------------------------------------


def schema_of(t: Any) -> Schema:
    """The object schema of a function's parameters, a dataclass, a TypedDict or a pydantic
    model (or the schema of any other supported type). Raises ``SignatureError``."""
    if inspect.isroutine(t) or (
        callable(t) and not isinstance(t, type)
        and type(t).__module__ not in ("typing", "types", "typing_extensions")
    ):
        return function_schema(t).schema
    mapper = _Mapper()
    schema, _ = mapper.map(t, "")
    if mapper.problems:
        raise SignatureError(_type_name(t), mapper.problems)
    return schema


def function_schema(
    fn: Callable[..., Any], *, name: str | None = None, description: str | None = None
) -> FunctionSchema:
    """Describe ``fn`` (sync or async) for a model; raises ``SignatureError`` listing every
    parameter that cannot be described."""
    fn_name = name or getattr(fn, "__name__", None) or type(fn).__name__
    target = fn
    doc_desc, param_docs = parse_docstring(inspect.getdoc(fn))
    try:
        sig = inspect.signature(target)
    except (TypeError, ValueError) as e:
        raise SignatureError(fn_name, [f"cannot read the signature: {e}"]) from None
    mapper = _Mapper()
    hint_target = (fn if inspect.isroutine(fn) or isinstance(fn, type) or not callable(fn)
                   else type(fn).__call__)
    hints: dict[str, Any] | None
    try:
        hints = typing.get_type_hints(hint_target, include_extras=True)
    except Exception:
        hints = None  # resolved one parameter at a time below, to name the bad one
    params = list(sig.parameters.values())
    if params and params[0].name in ("self", "cls") and not inspect.ismethod(fn):
        params = params[1:]
    fields_: list[_Field] = []
    for p in params:
        where = f"parameter '{p.name}'"
        if p.kind is p.VAR_KEYWORD:
            mapper.problems.append(f"{where}: **{p.name} is not supported; declare each "
                                   "argument as a parameter")
            continue
        if p.kind is p.VAR_POSITIONAL:
            mapper.problems.append(f"{where}: *{p.name} is not supported; use a list "
                                   "parameter instead")
            continue
        if p.kind is p.POSITIONAL_ONLY:
            if p.default is p.empty:
                mapper.problems.append(f"{where}: positional-only parameters cannot be "
                                       "passed by name; remove the '/'")
            continue
        if p.annotation is p.empty:
            tp = Any
        elif hints is not None:
            tp = hints.get(p.name, Any)
        else:
            tp = _resolve(p.annotation, fn, where, mapper)
            if tp is _NO_RECORD:
                continue
        default: Any = UNSET if p.default is p.empty else p.default
        fill: Callable[[], Any] | None = None
        extra_meta: list[Any] = []
        if _is_pydantic_field(default):
            extra_meta.append(default)
            if default.is_required():
                default = UNSET
            else:
                fi = default
                fill = lambda fi=fi: fi.get_default(call_default_factory=True)  # noqa: E731
                default = fi.default if fi.default_factory is None else _NO_RECORD
        fields_.append(_Field(name=p.name, key=p.name, tp=tp, default=default,
                              description=param_docs.get(p.name), meta=extra_meta,
                              fill=fill))
    schema, conv = mapper.object_schema(fields_, where="", closed=True)
    if mapper.problems:
        order = {f"parameter '{p.name}'": i for i, p in enumerate(params)}
        mapper.problems.sort(key=lambda m: order.get(m.split(":", 1)[0], -1))
        raise SignatureError(fn_name, mapper.problems)
    if description is None:
        description = doc_desc
    unwrapped = inspect.unwrap(fn)
    call = None if inspect.isroutine(unwrapped) else type(unwrapped).__dict__.get("__call__")
    is_async = inspect.iscoroutinefunction(unwrapped) or inspect.iscoroutinefunction(call)
    return FunctionSchema(name=fn_name, description=description, schema=schema,
                          is_async=is_async, _convert=conv)


# -- the mapper ---------------------------------------------------------------------------

_NO_RECORD: Any = object()  # a default exists but is not recorded in the schema


@dataclass
class _Field:
    name: str  # Python name
    key: str  # JSON name
    tp: Any
    default: Any = UNSET  # UNSET: required
    description: str | None = None
    meta: list[Any] = field(default_factory=list)
    fill: Callable[[], Any] | None = None  # computes the default when the key is missing
    required: bool | None = None  # overrides "no default means required"


def _resolve(annotation: Any, fn: Any, where: str, mapper: _Mapper) -> Any:
    """Evaluate a string annotation in the function's module (as get_type_hints would)."""
    if not isinstance(annotation, str):
        return annotation
    target = inspect.unwrap(getattr(fn, "func", fn))
    target = getattr(target, "__func__", target)
    if not hasattr(target, "__globals__") and callable(target):
        target = type(target).__call__
    namespace = getattr(target, "__globals__", {})
    try:
        return eval(annotation, namespace)
    except Exception as e:
        mapper.problems.append(f"{where}: cannot resolve the annotation {annotation!r} ({e}); "
                               "define the type at module level or import it")
        return _NO_RECORD


def _type_name(t: Any) -> str:
    if isinstance(t, type) or inspect.isroutine(t):
        mod = t.__module__
        return t.__qualname__ if mod in ("builtins", "__main__") else f"{mod}.{t.__qualname__}"
    return repr(t).replace("typing.", "")


def _is_pydantic_field(x: Any) -> bool:
    pyd = sys.modules.get("pydantic")
    return pyd is not None and isinstance(x, pyd.fields.FieldInfo)


def _is_pydantic_model(t: Any) -> bool:
    pyd = sys.modules.get("pydantic")
    return pyd is not None and isinstance(t, type) and issubclass(t, pyd.BaseModel)


def _json_default(value: Any) -> Any:
    """``value`` in JSON form, or ``_NO_RECORD`` when it has none."""
    if isinstance(value, enum.Enum):
        value = value.value
    try:
        return json.loads(json.dumps(value, allow_nan=False))
    except (TypeError, ValueError):
        return _NO_RECORD


def _to_int(v: Any) -> Any:
    return int(v) if type(v) is float else v


def _is_nullable(s: Schema) -> bool:
    if s.type is None:
        return s.any_of is None or any(_is_nullable(b) for b in s.any_of)
    return s.type == "null" or (isinstance(s.type, list) and "null" in s.type)


class _Mapper:
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
        if isinstance(tp, type) and issubclass(tp, pathlib.PurePath):
            return Schema(type="string"), tp
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
        if container in (list, abc.Sequence, abc.MutableSequence, abc.Iterable,
                         abc.Collection, typing.List):  # noqa: UP006
            return self.array(args, where, None)
        if container in (set, frozenset, abc.Set, abc.MutableSet):
            return self.array(args, where, frozenset if container is frozenset else set)
        if container is tuple:
            return self.tuple_schema(args, where)
        if container in (dict, abc.Mapping, abc.MutableMapping):
            return self.mapping(args, where)
        return self.fail(where, f"unsupported type {_type_name(tp)}")

    def guarded(self, tp: type, where: str,
                fn: Callable[[Any, str], tuple[Schema, Converter | None]]
                ) -> tuple[Schema, Converter | None]:
        if tp in self._active:
            return self.fail(where, f"recursive type {_type_name(tp)} is not supported "
                                    "(the schema subset has no $ref)")
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
                return self.fail(where, f"enum {_type_name(tp)} has a non-JSON value {v!r}")
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
        return schema, lambda v: None if v is None else inner(v)

    def array(self, args: tuple[Any, ...], where: str,
              build: Callable[[Any], Any] | None) -> tuple[Schema, Converter | None]:
        if not args:
            return Schema(type="array"), build
        items, conv = self.map(args[0], where)
        schema = Schema(type="array", items=items)
        if conv is None:
            return schema, build
        c = conv
        if build is None:
            return schema, lambda v: [c(x) for x in v]
        b = build
        return schema, lambda v: b(c(x) for x in v)

    def tuple_schema(self, args: tuple[Any, ...], where: str) -> tuple[Schema, Converter | None]:
        if not args:
            return Schema(type="array"), tuple
        if len(args) == 2 and args[1] is Ellipsis:
            return self.array(args[:1], where, tuple)
        if args == ((),):
            return Schema(type="array", max_items=0), tuple
        mapped = [self.map(a, where) for a in args]
        distinct: list[Schema] = []
        for s, _ in mapped:
            if s not in distinct:
                distinct.append(s)
        items = distinct[0] if len(distinct) == 1 else Schema(any_of=distinct)
        n = len(args)
        schema = Schema(type="array", items=items, min_items=n, max_items=n)
        convs = [c for _, c in mapped]
        if all(c is None for c in convs):
            return schema, tuple
        return schema, lambda v: tuple(x if c is None else c(x)
                                       for c, x in zip(convs, v, strict=False))

    def mapping(self, args: tuple[Any, ...], where: str) -> tuple[Schema, Converter | None]:
        if args and args[0] not in (str, Any):
            return self.fail(where, f"dict keys must be str, not {_type_name(args[0])} "
                                    "(JSON object keys are strings)")
        if len(args) < 2:
            return Schema(type="object"), None
        _, conv = self.map(args[1], where)
        if conv is None:
            return Schema(type="object"), None
        c = conv
        return Schema(type="object"), lambda v: {k: c(x) for k, x in v.items()}

    # -- objects --------------------------------------------------------------------------

    def dataclass_schema(self, tp: type, where: str) -> tuple[Schema, Converter | None]:
        try:
            hints = typing.get_type_hints(tp, include_extras=True)
        except Exception as e:
            return self.fail(where, f"cannot resolve the annotations of {_type_name(tp)} ({e})")
        desc, docs = _class_doc(tp)
        fs = []
        for f in dataclasses.fields(tp):
            if not f.init:
                continue
            if f.default is not dataclasses.MISSING:
                default: Any = f.default
            elif f.default_factory is not dataclasses.MISSING:
                default = _NO_RECORD
            else:
                default = UNSET
            fs.append(_Field(name=f.name, key=f.name, tp=hints.get(f.name, Any),
                             default=default,
                             description=f.metadata.get("description") or docs.get(f.name)))
        schema, conv = self.object_schema(fs, _join(where, _type_name(tp)), closed=True,
                                          build=tp)
        schema.description = desc or None
        return schema, conv

    def typeddict_schema(self, tp: type, where: str) -> tuple[Schema, Converter | None]:
        try:
            hints = typing.get_type_hints(tp, include_extras=True)
        except Exception as e:
            return self.fail(where, f"cannot resolve the annotations of {_type_name(tp)} ({e})")
        desc, docs = _class_doc(tp)
        required_keys = set(getattr(tp, "__required_keys__", hints))
        for k, t in hints.items():
            # Under PEP 563 the class cannot see Required/NotRequired inside strings.
            marker = typing.get_origin(t)
            if marker is typing.NotRequired:
                required_keys.discard(k)
            elif marker is typing.Required:
                required_keys.add(k)
        fs = [_Field(name=k, key=k, tp=t, description=docs.get(k), required=k in required_keys,
                     default=UNSET if k in required_keys else _NO_RECORD)
              for k, t in hints.items()]
        schema, conv = self.object_schema(fs, _join(where, _type_name(tp)), closed=True)
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
                default = _NO_RECORD
            else:
                default = fi.default
            fs.append(_Field(name=key, key=key, tp=fi.annotation, default=default,
                             description=fi.description or docs.get(name), meta=[fi]))
        closed = tp.model_config.get("extra") == "forbid"
        schema, _ = self.object_schema(fs, _join(where, _type_name(tp)), closed=closed)
        schema.description = desc or None
        # pydantic converts nested values itself; only nulls meaning "not given" are dropped.
        drop = frozenset(f.key for f in fs if f.default is not UNSET
                         and not _is_nullable(schema.properties[f.key]))  # type: ignore[index]
        validate = tp.model_validate
        if not drop:
            return schema, validate
        return schema, lambda v: validate({k: x for k, x in v.items()
                                           if not (x is None and k in drop)})

    def object_schema(self, fs: list[_Field], where: str, *, closed: bool,
                      build: Callable[..., Any] | None = None
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
            elif f.default is not _NO_RECORD and f.default is not UNSET:
                recorded = _json_default(f.default)
                if recorded is not _NO_RECORD:
                    schema.default = recorded
            if f.fill is not None:
                fills[f.name] = f.fill
            props[f.key] = schema
            drop = not is_required and not _is_nullable(schema)
            table[f.key] = (f.name, conv, drop)
        schema = Schema(type="object", properties=props, required=required or None,
                        additional_properties=False if closed else None)
        if build is None and not fills and all(
                c is None and k == n for k, (n, c, _) in table.items()):
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

        return schema, convert

    # -- Annotated metadata ---------------------------------------------------------------

    def apply_meta(self, schema: Schema, meta: list[Any], where: str) -> None:
        for m in meta:
            if isinstance(m, str):
                schema.description = m
                continue
            if _is_pydantic_field(m):
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
        for attr, target in (("ge", "minimum"), ("le", "maximum"), ("gt", "exclusive_minimum"),
                             ("lt", "exclusive_maximum")):
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
        self.problems.append(f"{where}: unsupported Annotated metadata {m!r}; use a "
                             "description string or pydantic.Field(...)")


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
