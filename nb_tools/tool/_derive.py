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

import inspect
import typing
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from nb_tools.tool._schema import UNSET, Schema

if TYPE_CHECKING:
    from nb_tools.tool._typemap import Converter, Mapper

# The type mapper, the docstring parser and the converter generator are imported by the
# functions below: ``import nb_tools`` imports this module but derives nothing.

__all__ = ["FunctionSchema", "SignatureError", "function_schema", "schema_of", "type_schema"]


class SignatureError(TypeError):
    """A function or type that cannot be described to a model; ``problems`` lists each."""

    def __init__(self, owner: str, problems: list[str]):
        self.owner = owner
        self.problems = list(problems)
        message = f"{owner}: " + "; ".join(self.problems)
        if any("unsupported type" in p for p in self.problems):
            message += f" ({_SUPPORTED})"
        super().__init__(message)

    def _render_traceback_(self) -> list[str]:
        """What IPython shows instead of a traceback: the problems and the user's own
        line, not the nb_tools frames the error went through."""
        from nb_tools.tool._errors_text import signature_error_lines

        return signature_error_lines(self)


_SUPPORTED = (
    "supported: str, int, float, bool, None, Any, Literal, Enum, list/set/tuple, "
    "dict[str, X], Optional/Union, Path, datetime/date/time, UUID, dataclasses, TypedDicts "
    "and pydantic models"
)


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
        callable(t)
        and not isinstance(t, type)
        and type(t).__module__ not in ("typing", "types", "typing_extensions")
    ):
        return function_schema(t).schema
    return type_schema(t)[0]


def type_schema(t: Any) -> tuple[Schema, Converter | None]:
    """The schema of a type (a dataclass, TypedDict, pydantic model, ...) and the converter
    from a JSON value valid for it to a value of the type (``None``: the JSON value is
    it). Raises ``SignatureError``."""
    from nb_tools.tool._typemap import Mapper, type_name

    mapper = Mapper()
    schema, convert = mapper.map(t, "")
    if mapper.problems:
        raise SignatureError(type_name(t), mapper.problems)
    return schema, convert


def function_schema(
    fn: Callable[..., Any], *, name: str | None = None, description: str | None = None
) -> FunctionSchema:
    """Describe ``fn`` (sync or async) for a model; raises ``SignatureError`` listing every
    parameter that cannot be described."""
    from nb_tools.tool._convgen import compile_converter
    from nb_tools.tool._docstring import parse_docstring
    from nb_tools.tool._typemap import NO_RECORD, Field, Mapper, is_pydantic_field

    fn_name = name or getattr(fn, "__name__", None) or type(fn).__name__
    target = fn
    doc_desc, param_docs = parse_docstring(inspect.getdoc(fn))
    try:
        sig = inspect.signature(target)
    except (TypeError, ValueError) as e:
        raise SignatureError(fn_name, [f"cannot read the signature: {e}"]) from None
    mapper = Mapper()
    hint_target = (
        fn
        if inspect.isroutine(fn) or isinstance(fn, type) or not callable(fn)
        else type(fn).__call__
    )
    hints: dict[str, Any] | None
    try:
        hints = typing.get_type_hints(hint_target, include_extras=True)
    except Exception:
        hints = None  # resolved one parameter at a time below, to name the bad one
    params = list(sig.parameters.values())
    if params and params[0].name in ("self", "cls") and not inspect.ismethod(fn):
        params = params[1:]
    fields_: list[Field] = []
    for p in params:
        where = f"parameter '{p.name}'"
        if p.kind is p.VAR_KEYWORD:
            mapper.problems.append(
                f"{where}: **{p.name} is not supported; declare each argument as a parameter"
            )
            continue
        if p.kind is p.VAR_POSITIONAL:
            mapper.problems.append(
                f"{where}: *{p.name} is not supported; use a list parameter instead"
            )
            continue
        if p.kind is p.POSITIONAL_ONLY:
            if p.default is p.empty:
                mapper.problems.append(
                    f"{where}: positional-only parameters cannot be passed by name; remove the '/'"
                )
            continue
        if p.annotation is p.empty:
            tp = Any
        elif hints is not None:
            tp = hints.get(p.name, Any)
        else:
            tp = _resolve(p.annotation, fn, where, mapper)
            if tp is NO_RECORD:
                continue
        default: Any = UNSET if p.default is p.empty else p.default
        fill: Callable[[], Any] | None = None
        extra_meta: list[Any] = []
        if is_pydantic_field(default):
            extra_meta.append(default)
            if default.is_required():
                default = UNSET
            else:
                fi = default
                fill = lambda fi=fi: fi.get_default(call_default_factory=True)  # noqa: E731
                default = fi.default if fi.default_factory is None else NO_RECORD
        fields_.append(
            Field(
                name=p.name,
                key=p.name,
                tp=tp,
                default=default,
                description=param_docs.get(p.name),
                meta=extra_meta,
                fill=fill,
            )
        )
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
    return FunctionSchema(
        name=fn_name,
        description=description,
        schema=schema,
        is_async=is_async,
        _convert=compile_converter(conv),
    )


def _resolve(annotation: Any, fn: Any, where: str, mapper: Mapper) -> Any:
    """Evaluate a string annotation in the function's module (as get_type_hints would)."""
    from nb_tools.tool._typemap import NO_RECORD

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
        mapper.problems.append(
            f"{where}: cannot resolve the annotation {annotation!r} ({e}); "
            "define the type at module level or import it"
        )
        return NO_RECORD
