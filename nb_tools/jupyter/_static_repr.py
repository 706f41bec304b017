"""A short repr that runs no code of the user's (``safe_repr``), for ``describe`` and
``list_variables``: builtin scalars and containers through the builtins' own methods,
NumPy/pandas values through their own code with object elements recursed here, anything
else as ``<module.Qualname object: field=...>`` from its instance ``__dict__`` and
``__slots__``. The rules of what may run are in ``_static_read``."""

from __future__ import annotations

import contextlib
import datetime
import decimal
import pathlib
import types
import uuid
from collections.abc import Iterable
from typing import Any

from nb_tools.jupyter._static_read import (
    _ids,
    _instance_dict,
    _is,
    _lookup,
    _package,
    _type_dict,
    _type_mro,
    _type_qualname,
    code_part_hidden,
    kernel_machinery,
    labels_safe,
    safe_values,
    trusted_type,
    type_module,
    type_name,
)
from nb_tools.sandbox import NAME_HIDDEN as HIDDEN
from nb_tools.sandbox import redact_ends, redact_private_keys, redact_shapes, secret_name

__all__ = ["HIDDEN", "array_text", "safe_repr", "secret_name", "secret_record_value"]

_REPR_EXACT = _ids(
    type(None),
    bool,
    int,
    float,
    complex,
    str,
    bytes,
    bytearray,
    range,
    type(Ellipsis),
    type(NotImplemented),
    datetime.date,
    datetime.timedelta,
    datetime.timezone,
    decimal.Decimal,
    uuid.UUID,
    pathlib.PurePosixPath,
    pathlib.PureWindowsPath,
    pathlib.PosixPath,
    pathlib.WindowsPath,
)
"""Exact types whose ``repr`` is the interpreter's or the standard library's and calls no
other object's code (``datetime.datetime``/``time`` too, when their ``tzinfo`` is not the
user's)."""

_EXC_ARGS = BaseException.__dict__["args"].__get__

# -- a repr that runs no user code ----------------------------------------------------

MAX_STRING = 400
MAX_ITEMS = 20
MAX_LEVEL = 3


def _cut(text: str, limit: int = MAX_STRING) -> str:
    if len(text) <= limit:
        return text
    keep = max(limit - 3, 0)
    return text[: keep // 2] + "..." + text[len(text) - (keep - keep // 2) :]


def _scalar_repr(value: Any, base: type | None = None) -> str:
    """The repr of a builtin scalar (or of the builtin value inside a subclass) by the
    builtin's own ``__repr__``; long strings and bytes cut in the middle first."""
    t: Any = base or type(value)
    if t is int:
        try:
            return _cut(int.__repr__(value))
        except ValueError:  # more digits than sys.get_int_max_str_digits()
            return f"<int of {int.bit_length(value)} bits>"
    if t is str and str.__len__(value) > MAX_STRING:
        return _cut(str.__repr__(redact_ends(str.__getitem__(value, slice(None)), MAX_STRING // 2)))
    if (t is bytes or t is bytearray) and t.__len__(value) > MAX_STRING:
        text = t.decode(value, "latin-1")  # the builtin's own method: no __bytes__ runs
        ends = redact_ends(text, MAX_STRING // 2).encode("latin-1", "replace")
        return _cut(t.__repr__(t(ends)))
    if t is str or t is bytes or t is bytearray:
        text: Any = t
        if text.__len__(value) > MAX_STRING:
            half = MAX_STRING // 2
            head = text.__getitem__(value, slice(None, half))
            value = text.__add__(head, text.__getitem__(value, slice(-half, None)))
        # each string on its own: among a container's other items a secret's shape (a
        # "Password=...;" connection string) is not seen in the text as a whole (the
        # environment's values are found by value in the whole text, as they are); a
        # string's own text, not its repr, so that shapes of a whole line (a .pgpass
        # line) and real line breaks are seen as they are
        if t is str:
            plain = str.__getitem__(value, slice(None))  # an exact str: no method of a subclass
            return _cut(str.__repr__(redact_shapes(redact_private_keys(plain)[0])[0]))
        return redact_shapes(redact_private_keys(_cut(text.__repr__(value)))[0])[0]
    return _cut(t.__repr__(value))


def _safe_datetime(value: Any) -> bool:
    t = type(value)
    if t is not datetime.datetime and t is not datetime.time:
        return False
    tz = value.tzinfo
    return tz is None or type(tz) is datetime.timezone


def _items(values: Iterable[Any], level: int, limit: int = MAX_ITEMS) -> list[str]:
    out: list[str] = []
    for i, v in enumerate(values):
        if i >= limit:
            out.append("...")
            break
        out.append(safe_repr(v, level + 1))
    return out


def safe_repr(value: Any, level: int = 0) -> str:
    """A short repr that calls no ``__repr__``/``__str__``/``__len__`` of the user's:
    builtin scalars and containers (subclasses too, read through the builtin's own
    methods), NumPy/pandas values through their own code with object elements recursed
    here, anything else as ``<module.Qualname object: field=...>`` from its instance
    ``__dict__`` and ``__slots__`` (a dataclass's generated ``__repr__`` is not called)."""
    t = type(value)
    if _is(t, _REPR_EXACT) or _safe_datetime(value):
        return _scalar_repr(value)
    if level >= MAX_LEVEL:
        return "..."
    if kernel_machinery(value):
        return f"<{type_name(t)} object (the kernel's own: not read)>"
    name = _type_qualname(t)
    if issubclass(t, dict):
        pairs = []
        named = _names_a_secret(value)
        for i, (k, v) in enumerate(dict.items(value)):
            if i >= MAX_ITEMS:
                pairs.append("...")
                break
            hide = secret_name(k) or (named and _is_value_key(k))
            shown = HIDDEN if hide else safe_repr(v, level + 1)
            pairs.append(f"{safe_repr(k, level + 1)}: {shown}")
        body = "{" + ", ".join(pairs) + "}"
        return body if t is dict else f"{name}({body})"
    if issubclass(t, tuple):
        found = _lookup(t, "_fields")  # a namedtuple
        fields = found[1] if found is not None else None
        if type(fields) is tuple and all(type(f) is str for f in fields):
            shown = _items(tuple.__iter__(value), level)
            parts = [
                f"{f}={HIDDEN if secret_name(f) else v}"
                for f, v in zip(fields, shown, strict=False)
            ]
            return f"{name}({', '.join(parts + shown[len(fields) :])})"
        body = ", ".join(_items(tuple.__iter__(value), level))
        body = f"({body},)" if tuple.__len__(value) == 1 else f"({body})"
        return body if t is tuple else f"{name}{body}"
    for seq, left, right in ((list, "[", "]"), (set, "{", "}"), (frozenset, "frozenset({", "})")):
        if issubclass(t, seq):
            items = ", ".join(_items(seq.__iter__(value), level))
            body = left + items + right if items or seq is list else f"{seq.__name__}()"
            return body if t is seq else f"{name}({body})"
    if trusted_type(t) and (own := _trusted_repr(value, level)) is not None:
        return own  # before the scalars: np.float64 is a float
    for scalar in (bool, int, float, complex, str, bytes, bytearray):  # IntEnum, ...
        if issubclass(t, scalar):
            return f"{name}({_scalar_repr(value, scalar)})"
    if t is types.FunctionType or t is types.BuiltinFunctionType:
        return f"<function {value.__qualname__}>"
    if t is types.MethodType:
        func = value.__func__
        qual = func.__qualname__ if type(func) is types.FunctionType else "?"
        return f"<bound method {qual}>"
    if t is types.ModuleType:
        mod = (_instance_dict(value) or {}).get("__name__")
        return f"<module {_cut(mod, 80) if type(mod) is str else '?'}>"
    if issubclass(t, type):
        return f"<class {type_name(value)}>"
    if issubclass(t, BaseException):
        args = _EXC_ARGS(value)
        return f"{type_name(t)}{safe_repr(args, level) if type(args) is tuple else '(...)'}"
    fields = _items_kv(_fields(value), level)
    head = f"<{type_name(t)} object"
    return f"{head}: {fields}>" if fields else f"{head}>"


_NAME_KEYS = frozenset(("name", "key", "parametername", "secretname", "variable"))
_VALUE_KEYS = frozenset(("value", "secretvalue", "secretstring", "val"))


def secret_record_value(d: Any, key: Any) -> bool:
    """``d[key]`` is the value of a name/value record whose name looks like a secret."""
    return issubclass(type(d), dict) and _is_value_key(key) and _names_a_secret(d)


def _is_value_key(key: Any) -> bool:
    return type(key) is str and key.lower() in _VALUE_KEYS


def _names_a_secret(d: Any) -> bool:
    """A name/value record whose name looks like a secret: ``{"name": "DB_PASSWORD",
    "value": ...}`` (a Kubernetes or ECS environment entry), ``{"Name": "/prod/api_key",
    "Value": ...}`` (an SSM parameter), ``{"key": "token", "value": ...}``. Its value
    entries are hidden as if they were kept under that name. ``d``: a dict (subclasses
    read by dict's own methods)."""
    return any(
        type(k) is str
        and k.lower() in _NAME_KEYS
        and type(v) is str
        and (secret_name(v) or any(secret_name(part) for part in v.split("/")))
        for k, v in dict.items(d)
    )


def _fields(value: Any) -> list[tuple[str, Any]]:
    """The instance ``__dict__`` (a real dict only) and the ``__slots__`` fields set."""
    out = list(dict.items(d)) if (d := _instance_dict(value)) is not None else []
    for c in _type_mro(type(value)):
        for k, v in dict.items(dict(_type_dict(c))):
            if (
                type(v) is types.MemberDescriptorType
                and type(k) is str
                and code_part_hidden(type(value), k) is None  # a partial's args
            ):
                with contextlib.suppress(AttributeError):  # a slot not set
                    out.append((k, v.__get__(value, type(value))))
    return out


def _items_kv(fields: list[tuple[str, Any]], level: int) -> str:
    parts = []
    for i, (k, v) in enumerate(fields):
        if i >= MAX_ITEMS:
            parts.append("...")
            break
        key = k if type(k) is str else safe_repr(k, level + 1)
        parts.append(f"{key}={HIDDEN if secret_name(k) else safe_repr(v, level + 1)}")
    return ", ".join(parts)


_DTYPE_NOT_READ = (
    "whose field titles or metadata are objects of types other than builtins (formatting "
    "it would run their __repr__)"
)
_PANDAS_SCALARS = ("Timestamp", "Timedelta", "Period", "NaTType", "NAType")


def _trusted_repr(value: Any, level: int) -> str | None:
    """NumPy's or pandas' repr where it formats no object of the user's; ``None`` for
    the generic view (a GroupBy, a Styler, ... shown by their fields)."""
    import numpy as np

    from nb_tools.jupyter._static_pandas import (
        field_names,
        plain_dtype,
        shape_of,
        trusted_tz,
        unreadable,
    )

    t = type(value)
    if issubclass(t, np.ndarray):
        return array_text(value, level)
    qual = _type_qualname(t)
    pkg = _package(type_module(t))
    if pkg == "pandas" and qual in ("DataFrame", "Series"):
        return f"<{qual} {shape_of(value)}>"
    if issubclass(t, np.dtype):
        return _cut(repr(value)) if plain_dtype(value) else f"<numpy.dtype {_DTYPE_NOT_READ}>"
    if issubclass(t, np.generic) and not issubclass(t, np.void):
        return _cut(repr(value))
    if issubclass(t, np.void) and plain_dtype(value.dtype):  # a structured array's record
        fields = field_names(value.dtype)
        if any(secret_name(f) for f in fields):
            return f"<structured value: fields {', '.join(fields)}; {HIDDEN}>"
    if pkg == "pandas" and qual in _PANDAS_SCALARS:
        tz = getattr(value, "tzinfo", None)
        if trusted_tz(tz):
            return _cut(repr(value))
        return f"<pandas.{qual} with a {type_name(type(tz))} tzinfo>"
    if _lookup(t, "dtype") is not None and _lookup(t, "__len__") is not None:
        why = unreadable(value)
        if why:
            return f"<{pkg}.{qual}: values not read: {why}>"
        if qual.endswith("Index"):
            from nb_tools.jupyter._static_frames import secret_levels

            if secret_levels(value):
                names = ", ".join(str(n) for n in value.names if type(n) is str)
                return f"<{pkg}.{qual} of {len(value)} labels named {names}: {HIDDEN}>"
        safe = labels_safe(value) if qual.endswith("Index") else safe_values(value)
        if safe:
            return _cut(repr(value))
        return f"<{pkg}.{qual} of {len(value)} {value.dtype} values>"
    return None


def array_text(a: Any, level: int = 0) -> str:
    """An ndarray as ``np.array2string`` shows it, object elements through ``safe_repr``."""
    import numpy as np

    from nb_tools.jupyter._static_pandas import field_names, plain_dtype

    if not plain_dtype(a.dtype):
        return f"<ndarray {a.shape} of a dtype {_DTYPE_NOT_READ}>"
    fields = field_names(a.dtype)
    if any(secret_name(f) for f in fields):
        return f"<structured array {a.shape}: fields {', '.join(fields)}; {HIDDEN}>"
    if not a.dtype.hasobject:
        return np.array2string(a, threshold=50, edgeitems=3, max_line_width=120)
    if a.dtype.names:
        return f"<structured array {a.shape} with object fields>"
    flat = a.reshape(-1)
    n = int(flat.shape[0])
    if n <= 2 * 3 + 1:
        shown = _items(flat.tolist(), level, limit=n)
    else:
        shown = [*_items(flat[:3].tolist(), level), "...", *_items(flat[-3:].tolist(), level)]
    shape = "" if a.ndim == 1 else f" (flattened from shape {a.shape})"
    return "[" + ", ".join(shown) + "]" + shape
