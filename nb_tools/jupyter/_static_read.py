"""Reading the user's objects without running their code, for the tools that run without a
click (``list_variables``, ``describe``).

A property, ``__getattr__``, ``__getattribute__``, ``__getitem__``, ``__missing__``,
``__repr__``, ``__str__``, ``__len__``, ``__dir__``, ``__hash__`` or ``__eq__`` written in
the user's session can do anything (commit a transaction, send a request, delete a file),
so this module only runs code that is

- C code of the interpreter's own types (``dict.__getitem__``, slot and ``__dict__``
  reads, the ``repr`` of exact ``int``/``str``/...), or
- Python or C code from a package in ``TRUSTED_PACKAGES`` (NumPy and pandas properties,
  ``__getattr__`` and ``__getitem__`` of their own types, not of user subclasses).

Anything else is refused with a ``StaticReadError`` that names the object, the code that
would run, and the way out (the ``python`` tool, which asks the user first).
"""

from __future__ import annotations

import abc
import contextlib
import decimal
import functools
import sys
import types
import typing
from typing import Any

__all__ = [
    "TRUSTED_PACKAGES",
    "StaticReadError",
    "attribute_lines",
    "builtin_len",
    "code_part_hidden",
    "holds_unsafe",
    "kernel_machinery",
    "labels_safe",
    "reachable",
    "read_attr",
    "read_item",
    "safe_values",
    "shallow_size",
    "trusted_type",
    "type_module",
    "type_name",
]


def _ids(*ts: type) -> frozenset[int]:
    """A set of types compared by identity: hashing or ``==`` on a type can run its
    metaclass's code."""
    return frozenset(id(t) for t in ts)


def _is(t: type, ids: frozenset[int]) -> bool:
    return id(t) in ids


_DICT_SLOTS = _ids(types.GetSetDescriptorType, types.MemberDescriptorType)


TRUSTED_PACKAGES = frozenset({"numpy", "pandas"})
"""Top-level packages whose code (properties, ``__getattr__``, ``__getitem__``, ``repr``)
may run without a click. Their types only: a user's subclass is the user's code."""

_ELEMENT_TYPES = _ids(type(None), bool, int, float, complex, str, bytes, decimal.Decimal)
"""Exact types an object column or array may hold and still be formatted, hashed and
compared by pandas/NumPy (their ``str``, ``hash`` and ``==`` are the interpreter's)."""

_BINDING_DESCRIPTORS = _ids(
    types.FunctionType,
    types.BuiltinFunctionType,
    types.WrapperDescriptorType,
    types.MethodDescriptorType,
    types.ClassMethodDescriptorType,
    staticmethod,
)
"""Descriptors whose ``__get__`` only makes a (bound) method: binding runs nothing."""

_WRAPPED = ("fget", "func", "__func__", "_accessor")
"""Where a descriptor keeps the code its ``__get__`` runs (``property.fget``,
``functools.cached_property.func``, ``classmethod.__func__``, pandas' ``Accessor``)."""

_WAY_OUT = "use the python tool, which asks the user first"

_CODE_READS: tuple[tuple[type, frozenset[str]], ...] = (
    (types.FunctionType, frozenset({"__name__", "__qualname__", "__module__", "__doc__"})),
    (types.CodeType, frozenset({"co_name", "co_qualname", "co_filename", "co_firstlineno"})),
    (types.CellType, frozenset()),
    (functools.partial, frozenset({"func", "keywords"})),
)
"""What ``describe`` reads of code rather than data (a function, a code object, a closure
cell, a ``functools.partial``): its name, module and docstring, and a partial's function
and keyword arguments. The rest holds the user's values apart from the names they were
given (``__defaults__`` of ``password="..."``, a closure's ``cell_contents`` of ``token``,
``co_consts``, a partial's positional ``args``), where no name-based redaction sees them."""


def _unread(path: str, where: str, why: str) -> str:
    return f"{path}: describe does not read the values of {where}: {why} ({_WAY_OUT})"


def unreadable(obj: Any) -> str | None:
    """``_static_pandas.unreadable``: why a pandas container's values are not read."""
    from nb_tools.jupyter._static_pandas import unreadable as why

    return why(obj)


def where_of(path: str) -> str:
    """The object a path step reads from: ``df`` of ``df.x`` and of ``df["x"]``."""
    cut = max(path.rfind("."), path.rfind("["))
    return path[:cut] if cut > 0 else path


_type_dict = type.__dict__["__dict__"].__get__
_type_mro = type.__dict__["__mro__"].__get__
_type_qualname = type.__dict__["__qualname__"].__get__
_type_module = type.__dict__["__module__"].__get__


class StaticReadError(Exception):
    """A read that would run code outside the trusted set, or that found nothing."""


# -- names and owners, read from the types' own dicts ---------------------------------


def type_module(t: type) -> str:
    mod = _type_module(t)
    return mod if type(mod) is str else "?"


def type_name(t: type) -> str:
    """``module.Qualname`` of ``t``, without asking its metaclass."""
    qual = _type_qualname(t)
    mod = type_module(t)
    return qual if mod == "builtins" else f"{mod}.{qual}"


def _package(module: str) -> str:
    return module.split(".", 1)[0]


KERNEL_PACKAGES = frozenset(
    {"IPython", "ipykernel", "jupyter_client", "jupyter_core", "comm", "ipywidgets", "zmq"}
    | {"traitlets", "nb_tools"}
)
"""The kernel's own machinery, reachable from any namespace (``get_ipython.__self__``,
``sys.modules``, a widget's comm): it holds the kernel's connection key
(``Session.key``, which signs the messages that run code in the kernel), the agent's
model clients and its approval state. ``describe`` reads none of its objects' insides."""


def kernel_machinery(obj: Any) -> bool:
    """``obj`` is an object (or a module, or a class) of ``KERNEL_PACKAGES``."""
    t = type(obj)
    if issubclass(t, types.ModuleType):
        name = (_instance_dict(obj) or {}).get("__name__")
        module = name if type(name) is str else "?"
    elif issubclass(t, type) and _package(type_module(t)) not in KERNEL_PACKAGES:
        module = type_module(obj)  # a class: where it was written (its metaclass: below)
    else:
        module = type_module(t)
    return _package(module) in KERNEL_PACKAGES


def _machinery(path: str, obj: Any) -> StaticReadError:
    return StaticReadError(
        f"{path}: {where_of(path)} is part of the kernel's own machinery (a "
        f"{type_name(type(obj))}), which holds the kernel's keys; describe does not read "
        "into it"
    )


def trusted_type(t: type) -> bool:
    """``t`` is from a trusted package and every class in its MRO is too, or a C type
    of the interpreter's (``pd.Timestamp`` is a ``datetime``; a user's subclass of a
    DataFrame is not trusted)."""
    return _package(type_module(t)) in TRUSTED_PACKAGES and all(
        _trusted_class(c) for c in _type_mro(t)
    )


_type_flags = type.__dict__["__flags__"].__get__
_HEAPTYPE = 1 << 9


def _trusted_class(c: type) -> bool:
    """Code defined by class ``c`` is trusted: a trusted package's, or a C type of the
    interpreter or its standard library (``object``, ``types.SimpleNamespace``,
    ``datetime.date``; not the standard library's Python classes)."""
    mod = type_module(c)
    if _package(mod) in TRUSTED_PACKAGES:  # a static (C) type: no Python code made it
        return reachable(c) or not _type_flags(c) & _HEAPTYPE
    if _is(c, _INERT):
        return True
    return not _type_flags(c) & _HEAPTYPE and _package(mod) in sys.stdlib_module_names


_INERT = _ids(abc.ABC, typing.Generic)
"""Python classes of the standard library in pandas' MROs that define nothing an
instance read runs (``DatetimeIndex`` is an ``abc.ABC``)."""


def reachable(c: type) -> bool:
    """``c`` is the very class its module holds under its name: ``__module__`` and
    ``__qualname__`` are only claims (a user's class may say ``pandas``/``DataFrame``), so
    the class is looked up where it claims to live, through the dicts alone, and compared
    by identity."""
    mod = sys.modules.get(type_module(c))
    qual = _type_qualname(c)
    if mod is None or type(qual) is not str or "<" in qual:
        return False
    found: Any = _instance_dict(mod)
    for part in qual.split("."):
        if type(found) is dict:
            found = found.get(part)
        elif found is not None and issubclass(type(found), type):
            found = _type_dict(found).get(part)
        else:
            return False
    return found is c


def _owner(t: type, name: str) -> type | None:
    """The class in ``t``'s MRO whose own ``__dict__`` defines ``name``."""
    for c in _type_mro(t):
        if name in _type_dict(c):
            return c  # type: ignore[no-any-return]
    return None


def _trusted_owner(t: type, name: str) -> bool:
    owner = _owner(t, name)
    return owner is None or _trusted_class(owner)


def _code_module(code: Any) -> str:
    """The module a callable (or a class, for an accessor) was written in."""
    if type(code) is types.FunctionType:
        mod = code.__module__
        return mod if type(mod) is str else "?"
    if issubclass(type(code), type):
        return type_module(code)
    if type(code) is types.BuiltinFunctionType:
        self = code.__self__
        return "builtins" if self is None else type_module(type(self))
    return type_module(type(code))


def _trusted_code(code: Any) -> bool:
    if issubclass(type(code), type):
        return _trusted_class(code)
    mod = _code_module(code)
    return mod == "builtins" or _package(mod) in TRUSTED_PACKAGES


def _lookup(t: type, name: str) -> tuple[type, Any] | None:
    """``(owner, value)`` for ``name`` in the class dicts along ``t``'s MRO, raw (no
    descriptor called), as the interpreter finds it."""
    for c in _type_mro(t):
        d = _type_dict(c)
        if name in d:
            return c, d[name]
    return None


def _is_descriptor(value: Any) -> bool:
    return _owner(type(value), "__get__") is not None


def _is_data_descr(value: Any) -> bool:
    vt = type(value)
    return _is_descriptor(value) and (
        _owner(vt, "__set__") is not None or _owner(vt, "__delete__") is not None
    )


def _instance_dict(obj: Any) -> dict[Any, Any] | None:
    """``obj.__dict__`` when it is the interpreter's own slot (a class that defines a
    ``__dict__`` property of its own is not asked) and a real dict."""
    found = _lookup(type(obj), "__dict__")
    if found is None or not _is(type(found[1]), _DICT_SLOTS):
        return None
    try:
        d = found[1].__get__(obj, type(obj))
    except (AttributeError, TypeError):
        return None
    return d if type(d) is dict else None


def _descriptor_code(descr: Any) -> list[Any]:
    """The code that ``descr.__get__`` runs, as far as it can be read without running
    any: the descriptor's type and the callables or classes it wraps."""
    dt = type(descr)
    if dt is property:
        return [descr.fget] if descr.fget is not None else []
    if dt is classmethod or dt is staticmethod:
        return [descr.__func__]
    if dt is functools.cached_property:
        own = _instance_dict(descr) or {}
        return [own["func"]] if "func" in own else []
    if not trusted_type(dt):
        return [dt]
    code: list[Any] = [dt]
    own = _instance_dict(descr) or {}
    for attr in _WRAPPED:
        if attr in own:
            code.append(own[attr])
        elif _lookup(dt, attr) is not None:
            wrapped = getattr(descr, attr, None)  # a trusted type's own attribute
            if wrapped is not None:
                code.append(wrapped)
    return code


def _runs_trusted_code(descr: Any) -> bool:
    code = _descriptor_code(descr)
    return bool(code) and all(_trusted_code(c) for c in code)


def _refuse(path: str, what: str, of: type) -> StaticReadError:
    return StaticReadError(
        f"{path} is {what} of {type_name(of)}; reading it runs its code, so describe "
        f"does not ({_WAY_OUT})"
    )


def _what(descr: Any) -> str:
    dt = type(descr)
    if dt is property or dt is types.GetSetDescriptorType:
        return "a property"
    if dt is functools.cached_property:
        return "a cached_property"
    return f"a {type_name(dt)} descriptor"


# -- attributes -----------------------------------------------------------------------


def code_part_hidden(t: type, name: str) -> type | None:
    """The code type (``_CODE_READS``) whose attribute ``name`` of an object of type ``t``
    is not read, or None."""
    for code_type, readable in _CODE_READS:
        if issubclass(t, code_type) and name not in readable:
            return code_type
    return None


def read_attr(obj: Any, name: str, where: str) -> Any:
    """``obj.name`` when reading it runs no code outside the trusted set (``where`` is
    the path so far, for the messages): instance ``__dict__`` values, plain class
    attributes, ``__slots__`` fields, methods (bound, not called), and properties,
    descriptors and ``__getattr__`` only when their code is NumPy's or pandas'."""
    t = type(obj)
    path = f"{where}.{name}"
    if kernel_machinery(obj):
        raise _machinery(path, obj)
    code_type = code_part_hidden(t, name)
    if code_type is not None:
        shown = ", ".join(sorted(dict(_CODE_READS)[code_type])) or "nothing"
        raise StaticReadError(
            f"{path}: describe reads only {shown} of a {type_name(code_type)}: the rest "
            f"holds values apart from their names, which may be secrets ({_WAY_OUT})"
        )
    if not _trusted_owner(t, "__getattribute__"):
        owner = _owner(t, "__getattribute__")
        raise StaticReadError(
            f"{path}: {type_name(owner or t)} defines __getattribute__, so reading any "
            f"attribute of {where} runs its code, and describe does not ({_WAY_OUT})"
        )
    if issubclass(t, type):
        return _class_attr(obj, name, path)
    found = _lookup(t, name)
    if found is not None and _is_data_descr(found[1]):
        return _through(obj, name, path, *found)
    inst = _instance_dict(obj)
    if inst is not None and name in inst:
        return inst[name]
    if found is not None:
        return _through(obj, name, path, *found)
    return _fallback(obj, name, path)


def _through(obj: Any, name: str, path: str, owner: type, value: Any) -> Any:
    """A class attribute as the instance sees it, when that runs no untrusted code."""
    t = type(obj)
    if not _is_descriptor(value):
        return value  # a plain class attribute
    dt = type(value)
    if _is(dt, _BINDING_DESCRIPTORS):
        return value.__get__(obj, t)  # a method, bound, not called
    if dt is classmethod and type(value.__func__) is types.FunctionType:
        return value.__get__(obj, t)
    if dt is types.MemberDescriptorType:
        try:
            return value.__get__(obj, t)  # a __slots__ field
        except AttributeError:
            raise StaticReadError(f"{path}: the slot {name!r} is not set") from None
    if dt is types.GetSetDescriptorType:
        if name in ("__dict__", "__weakref__") or _trusted_code(value.__objclass__):
            return value.__get__(obj, t)
        raise _refuse(path, "a C-level property", value.__objclass__)
    if _runs_trusted_code(value) and _trusted_class(owner) and trusted_type(t):
        why = unreadable(obj)
        if why:
            raise StaticReadError(_unread(path, where_of(path), why))
        if name not in _STRUCTURAL and trusted_type(t) and holds_unsafe(obj):
            raise _holds(path, obj, "it")
        try:
            return value.__get__(obj, t)
        except Exception as exc:
            raise StaticReadError(f"{path}: {type(exc).__name__}: {exc}") from None
    foreign = [c for c in _descriptor_code(value) if not _trusted_code(c)]
    if foreign and issubclass(type(foreign[0]), type) and foreign[0] is not dt:
        raise StaticReadError(  # a pandas accessor of the user's, say
            f"{path} is {_what(value)} of {type_name(owner)} that makes a "
            f"{type_name(foreign[0])}; that runs its code, so describe does not ({_WAY_OUT})"
        )
    raise _refuse(path, _what(value), owner)


def _class_attr(cls: type, name: str, path: str) -> Any:
    """An attribute of a class: the raw entry of its MRO (a property shows as the
    property, unread), a classmethod bound; metaclass attributes only when plain."""
    found = _lookup(cls, name)
    if found is not None:
        value = found[1]
        dt = type(value)
        if dt is classmethod and type(value.__func__) is types.FunctionType:
            return value.__get__(None, cls)
        if dt is staticmethod:
            return value.__func__
        if not _is_descriptor(value) or _is(dt, _BINDING_DESCRIPTORS) or _is(dt, _SHOWN_RAW):
            return value
        raise _refuse(path, _what(value), found[0])
    meta = _lookup(type(cls), name)
    if meta is None:
        raise StaticReadError(f"{path}: class {type_name(cls)} has no attribute {name!r}")
    if not _is_descriptor(meta[1]):
        return meta[1]
    if type_module(meta[0]) == "builtins":
        return getattr(cls, name)  # type's own: __name__, __doc__, mro, ...
    raise _refuse(path, _what(meta[1]), meta[0])


_SHOWN_RAW = _ids(
    property, functools.cached_property, types.MemberDescriptorType, types.GetSetDescriptorType
)
"""Descriptors whose ``__get__(None, cls)`` returns the descriptor itself."""


def _fallback(obj: Any, name: str, path: str) -> Any:
    t = type(obj)
    owner = _owner(t, "__getattr__")
    if owner is None and t is types.ModuleType:
        hook = (_instance_dict(obj) or {}).get("__getattr__")
        if hook is not None:  # PEP 562: the module makes the attribute up when asked
            raise StaticReadError(
                f"{path}: the module has no attribute {name!r} of its own; its __getattr__ "
                f"would make one up by running its code, so describe does not ({_WAY_OUT})"
            )
    if owner is None:
        raise StaticReadError(f"{path}: {type_name(t)} has no attribute {name!r}")
    if not _trusted_owner(t, "__getattr__"):
        raise StaticReadError(
            f"{path}: {type_name(t)} has no attribute {name!r} of its own; its "
            f"__getattr__ ({type_name(owner)}) would make one up by running its code, so "
            f"describe does not ({_WAY_OUT})"
        )
    if not trusted_type(t):
        raise StaticReadError(
            f"{path}: {type_name(t)} has no attribute {name!r} of its own; its "
            f"__getattr__ ({type_name(owner)}) would run on the user's subclass, whose code "
            f"it may call, so describe does not ({_WAY_OUT})"
        )
    why = unreadable(obj)
    if why:
        raise StaticReadError(_unread(path, where_of(path), why))
    if holds_unsafe(obj, lookup_only=True):
        raise _holds(path, obj, "its labels")
    try:
        return getattr(obj, name)
    except Exception as exc:
        raise StaticReadError(f"{path}: {type(exc).__name__}: {exc}") from None


_STRUCTURAL = frozenset(
    {"shape", "dtype", "dtypes", "ndim", "size", "index", "columns", "name", "names"}
    | {"nbytes", "T", "axes", "empty", "values", "array", "flags", "attrs", "levels", "codes"}
)
"""NumPy/pandas attributes that read structure, never the values' own code."""


def _holds(path: str, obj: Any, what: str) -> StaticReadError:
    pkg = _package(type_module(type(obj)))
    return StaticReadError(
        f"{path}: the {type_name(type(obj))} holds objects of types other than builtins, "
        f"and reading {what} makes {pkg} hash, compare or format them, which runs their "
        f"code, so describe does not ({_WAY_OUT})"
    )


# -- items ----------------------------------------------------------------------------


def read_item(obj: Any, key: Any, where: str) -> Any:
    """``obj[key]`` for a literal ``key`` when no code outside the trusted set runs:
    no user ``__getitem__``, no ``__missing__`` (a ``defaultdict`` would insert the key),
    no user ``__eq__``/``__hash__`` on the stored keys (a dict is scanned, not hashed)."""
    t = type(obj)
    path = f"{where}[{key!r}]"
    if kernel_machinery(obj):
        raise _machinery(path, obj)
    if issubclass(t, dict) and _trusted_owner(t, "__getitem__"):
        for k, v in dict.items(obj):
            if _is(type(k), _ELEMENT_TYPES) and _is(type(key), _ELEMENT_TYPES) and k == key:
                return v
        extra = ""
        missing = _owner(t, "__missing__")
        if missing is not None and missing is not dict:
            extra = f" (a {type_name(t)} would make it up; describe does not)"
        raise StaticReadError(f"{where} has no item {key!r}{extra}")
    for base in (list, tuple, str, bytes):
        if issubclass(t, base) and _trusted_owner(t, "__getitem__"):
            if type(key) is not int and type(key) is not bool:
                raise StaticReadError(
                    f"{where} has no item {key!r} (a {base.__name__} takes integer indexes)"
                )
            try:
                return base.__getitem__(obj, key)
            except IndexError:
                n = base.__len__(obj)
                raise StaticReadError(f"{where} has no item {key!r} (length {n})") from None
    if trusted_type(t) and _owner(t, "__getitem__") is not None:
        why = unreadable(obj)
        if why:
            raise StaticReadError(_unread(path, where, why))
        if holds_unsafe(obj, lookup_only=True):
            raise _holds(path, obj, "an item")
        try:
            return obj[key]
        except Exception as exc:
            raise StaticReadError(
                f"{where} has no item {key!r} ({type(exc).__name__}: {exc})"
            ) from None
    if _owner(t, "__getitem__") is None:
        raise StaticReadError(f"{where} has no items: {type_name(t)} is not subscriptable")
    raise StaticReadError(
        f"{path}: {type_name(t)} defines __getitem__; reading an item runs its code, so "
        f"describe does not ({_WAY_OUT})"
    )


def builtin_len(value: Any) -> int | None:
    """The length of a builtin container (or a subclass), read by the builtin's own
    ``__len__``; ``None`` for anything else."""
    for base in (dict, list, tuple, set, frozenset, str, bytes, bytearray):
        if issubclass(type(value), base):
            return int(base.__len__(value))
    return None


def safe_values(values: Any) -> bool:
    """Whether a NumPy/pandas array-like holds only values pandas may format, hash and
    compare without running the user's code: no object dtype, or object elements all of
    exact builtin types (``map(type, ...)`` reads types only; compared by ``id``, since
    even hashing a type can run its metaclass's code). Extension dtypes not from NumPy or
    pandas are not safe: their formatting is their code."""
    import numpy as np

    dtype = values.dtype
    if issubclass(type(dtype), np.dtype):
        if not dtype.hasobject:
            return True
        if dtype.names:
            return False
        arr = values if issubclass(type(values), np.ndarray) else values.to_numpy()
        seen = {id(t): t for t in map(type, arr.reshape(-1))}
        return all(id(t) in _ELEMENT_TYPES or _trusted_scalar(t) for t in seen.values())
    if not trusted_type(type(dtype)):
        return False
    if _type_qualname(type(dtype)) == "NumpyEADtype":  # pandas' own wrapper of an ndarray
        return safe_values(values.to_numpy())
    if _lookup(type(dtype), "categories") is not None:
        cats = dtype.categories
        return cats is None or safe_values(cats)
    subtype: Any = getattr(dtype, "subtype", None)  # IntervalDtype
    return not (issubclass(type(subtype), np.dtype) and bool(subtype.hasobject))


def labels_safe(index: Any) -> bool:
    """``safe_values`` for a pandas axis; a MultiIndex by its levels."""
    if type_name(type(index)) == "pandas.MultiIndex":
        return all(safe_values(level) for level in index.levels)
    return safe_values(index)


def holds_unsafe(obj: Any, *, lookup_only: bool = False) -> bool:
    """Whether pandas/NumPy code run on ``obj`` may hash, compare or format objects of
    the user's: its values or labels are not all ``safe_values``. ``lookup_only``: only
    the labels a key is looked up in (a DataFrame's columns, a Series' index)."""
    import numpy as np

    t = type(obj)
    name = type_name(t)
    if name == "pandas.DataFrame":
        if not labels_safe(obj.columns):
            return True
        if lookup_only:
            return False
        if not labels_safe(obj.index):
            return True
        dtypes = obj.dtypes.values
        return not all(
            safe_values(obj.iloc[:, i])
            for i, d in enumerate(dtypes)
            if not (issubclass(type(d), np.dtype) and not d.hasobject)
        )
    if name == "pandas.Series":
        return not labels_safe(obj.index) or (not lookup_only and not safe_values(obj))
    if lookup_only or issubclass(t, np.ndarray):
        return False  # positions: no label is hashed; numpy's getsets touch no element
    if _lookup(t, "dtype") is not None and _lookup(t, "__len__") is not None:
        return not (labels_safe(obj) if name.endswith("Index") else safe_values(obj))
    return False


def _trusted_scalar(t: type) -> bool:
    """NumPy scalars and pandas' missing-value markers: their ``str``, ``hash`` and
    ``==`` are NumPy's and pandas' own."""
    import numpy as np

    if not trusted_type(t):
        return False
    if issubclass(t, np.void):  # a structured scalar: its fields may hold any object
        return False
    return issubclass(t, np.generic) or _type_qualname(t) in ("NAType", "NaTType")


def attribute_lines(value: Any, limit: int = 40) -> list[str]:
    """``  name: type`` for the public attributes of ``value``, from its instance dict and
    the class dicts along its MRO (no ``dir()``, no property read)."""
    seen: set[str] = set()
    out: list[str] = []
    inst = _instance_dict(value)
    entries: list[tuple[str, Any, bool, bool]] = []
    if inst is not None:
        entries += [(k, v, True, False) for k, v in dict.items(inst) if type(k) is str]
    runs = trusted_type(type(value))  # trusted code runs on trusted types only (_through)
    for c in _type_mro(type(value)):
        if type_module(c) == "builtins":
            continue
        ok = runs and _trusted_class(c)
        entries += [(k, v, False, ok) for k, v in dict.items(dict(_type_dict(c))) if type(k) is str]
    for key, v, own, ok in entries:
        if key.startswith("_") or key in seen:
            continue
        seen.add(key)
        vt = type(v)
        if own or not _is_descriptor(v):
            if not _is(vt, _BINDING_DESCRIPTORS) and not issubclass(vt, type):
                out.append(f"  {key}: {_type_qualname(vt)}")
        elif vt is types.MemberDescriptorType:
            with contextlib.suppress(AttributeError):  # a slot not set
                out.append(f"  {key}: {_type_qualname(type(v.__get__(value, type(value))))}")
        elif _is(vt, _BINDING_DESCRIPTORS) or vt is classmethod:
            continue  # methods
        else:
            if vt is types.GetSetDescriptorType:
                trusted = _trusted_code(v.__objclass__)
            else:
                trusted = ok and _runs_trusted_code(v)
            kind = "property" if vt is property or vt is types.GetSetDescriptorType else None
            label = kind or _type_qualname(vt)
            out.append(f"  {key}: {label}" + ("" if trusted else " (not read: runs code)"))
        if len(out) >= limit:
            break
    return out


def shallow_size(value: Any) -> int:
    """``sys.getsizeof`` where ``__sizeof__`` is the interpreter's; the bare object size
    otherwise (pandas' ``__sizeof__`` walks object values, a user's is their code)."""
    owner = _owner(type(value), "__sizeof__")
    if owner is None or type_module(owner) == "builtins":
        return sys.getsizeof(value, 0)
    return object.__sizeof__(value)
