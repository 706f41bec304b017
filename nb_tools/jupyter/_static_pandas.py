"""Which pandas and NumPy containers ``describe`` and ``list_variables`` read, decided by
type identity before any of their code runs, and the default display options they format
under.

pandas runs code of the user's while it slices, copies, measures or formats a container:

- a user's ``ExtensionArray`` (its ``dtype``, ``nbytes``, ``__len__``, ``__getitem__``,
  ``copy``, ``take``) and a user's ``ExtensionDtype`` (``__str__``, ``name``);
- ``copy.deepcopy`` of ``DataFrame.attrs`` (every new frame or Series pandas makes copies
  them), so a ``__deepcopy__`` of an object in ``attrs``;
- a user's ``tzinfo`` (``utcoffset``, ``tzname``) in a tz-aware column or index;
- the session's display formatters (``pd.set_option("display.float_format", fn)``,
  ``np.set_printoptions(formatter=...)``).

So a DataFrame, Series or Index is read only when its type is pandas' own class (the very
class, not a subclass, compared by identity), every array it holds is an exact
``numpy.ndarray`` with a NumPy dtype or one of pandas' own extension arrays with pandas'
own dtype (checked the same way, through the block manager, without asking the arrays
anything), its ``attrs`` hold builtins only (``plain_data``) and every ``tzinfo`` in it
is one of ``TRUSTED_TZ``. Otherwise ``unreadable`` says why and the tools show the type
and what the block manager knows without the values. ArrowDtype columns are not read: a
pyarrow type may be an extension type of the user's.

The block manager is read through pandas' private attributes (``_mgr``, ``blocks``,
``values``, ``axes``; an Index's ``_data``, ``_levels``), checked against pandas 3.1.
"""

from __future__ import annotations

import contextlib
import sys
import threading
import types
from collections.abc import Iterator
from typing import Any

from nb_tools.jupyter._static_read import (
    _instance_dict,
    _is_descriptor,
    _type_dict,
    _type_mro,
    _type_qualname,
    trusted_type,
    type_name,
)

__all__ = [
    "TRUSTED_TZ",
    "axis_length",
    "default_display",
    "exact_array",
    "field_names",
    "pandas_kind",
    "plain_data",
    "plain_dtype",
    "shape_of",
    "trusted_tz",
    "unreadable",
]

TRUSTED_TZ = (
    ("datetime", "timezone"),
    ("zoneinfo", "ZoneInfo"),
    ("dateutil.tz", "tzutc"),
    ("dateutil.tz", "tzoffset"),
    ("dateutil.tz", "tzlocal"),
    ("dateutil.tz", "tzfile"),
    ("dateutil.tz", "tzstr"),
    ("dateutil.tz", "tzrange"),
    ("pytz", "UTC"),
)
"""``tzinfo`` classes whose ``utcoffset``/``tzname`` are the standard library's or a
time-zone library's (exact classes, looked up in the modules already imported); pytz's
per-zone classes (built at run time from ``DstTzInfo``/``StaticTzInfo``, with data only)
too. Any other ``tzinfo`` is the user's code."""

_PLAIN = (type(None), bool, int, float, complex, str, bytes)
_CONTAINERS = (list, tuple, set, frozenset)


def plain_data(value: Any, budget: list[int] | None = None) -> bool:
    """``value`` is builtins all the way down (exact ``dict``/``list``/``str``/``int``...;
    at most 1,000 of them): ``copy.deepcopy`` of it runs no code of the user's."""
    budget = [1000] if budget is None else budget
    budget[0] -= 1
    t = type(value)
    if budget[0] < 0:
        return False
    if any(t is p for p in _PLAIN):
        return True
    if t is dict:
        return all(plain_data(k, budget) and plain_data(v, budget) for k, v in dict.items(value))
    if any(t is c for c in _CONTAINERS):
        return all(plain_data(v, budget) for v in t.__iter__(value))
    return False


_PYTZ_BASES = (("pytz.tzinfo", "DstTzInfo"), ("pytz.tzinfo", "StaticTzInfo"))
_ATTRS = (
    "its attrs hold objects other than builtins (pandas deep-copies attrs on every "
    "operation, running their code)"
)


def _class(module: str, name: str) -> Any:
    """``module.name`` when the module is imported already (nothing is imported here)."""
    mod = sys.modules.get(module)
    found = (_instance_dict(mod) or {}).get(name) if mod is not None else None
    if module == "pytz" and name == "UTC" and found is not None:
        return type(found)  # pytz.UTC is the instance
    return found


def trusted_tz(tz: Any) -> bool:
    """``tz`` is ``None`` or an instance of exactly one of ``TRUSTED_TZ`` (or a pytz zone)."""
    if tz is None:
        return True
    t = type(tz)
    if any(t is _class(m, n) for m, n in TRUSTED_TZ):
        return True
    bases = [b for m, n in _PYTZ_BASES if (b := _class(m, n)) is not None]
    mro = _type_mro(t)
    if len(mro) < 2 or not any(mro[1] is b for b in bases):
        return False
    own = _type_dict(t)  # a pytz zone class holds data only: no method of its own
    return not any(_is_descriptor(v) for v in own.values())


def pandas_kind(value: Any) -> str:
    """``"DataFrame"``, ``"Series"`` or ``"Index"`` when ``value`` is exactly pandas' own
    (an Index of pandas' own Index classes), else ``""``; pandas is not imported."""
    pd = sys.modules.get("pandas")
    if pd is None:
        return ""
    t = type(value)
    if t is pd.DataFrame:
        return "DataFrame"
    if t is pd.Series:
        return "Series"
    if issubclass(t, pd.Index) and trusted_type(t):
        return "Index"
    return ""


def exact_array(value: Any) -> bool:
    """``value`` is exactly a ``numpy.ndarray`` (not a subclass) with a NumPy dtype."""
    np = sys.modules.get("numpy")
    return np is not None and type(value) is np.ndarray and _numpy_dtype(value.dtype)


def _numpy_dtype(dtype: Any) -> bool:
    np = sys.modules["numpy"]
    t = type(dtype)
    # NumPy's own, not a plug-in's, and nothing of the user's formatted with it
    return issubclass(t, np.dtype) and trusted_type(t) and plain_dtype(dtype)


def plain_dtype(dtype: Any, depth: int = 0) -> bool:
    """A NumPy dtype whose ``str``/``repr`` formats nothing of the user's: every field
    name and title of a structured dtype (nested too) a ``str``, its ``metadata``
    builtins only (a title may be any object: NumPy's repr calls its ``__repr__``), and a
    ``StringDType``'s ``na_object`` builtin data or NumPy's or pandas' own (``pd.NA``)."""
    np = sys.modules["numpy"]
    if depth > 32 or not (issubclass(type(dtype), np.dtype) and trusted_type(type(dtype))):
        return False
    meta = dtype.metadata  # a mappingproxy of a dict: its items() are the dict's own
    if meta is not None and not (
        type(meta) is types.MappingProxyType
        and all(plain_data(k) and plain_data(v) for k, v in meta.items())
    ):
        return False
    na = getattr(dtype, "na_object", None)  # NumPy's StringDType: its repr shows it
    if na is not None and not (plain_data(na) or trusted_type(type(na))):
        return False
    sub = dtype.subdtype
    if sub is not None:
        return plain_dtype(sub[0], depth + 1)
    fields = dtype.fields
    if fields is None:
        return True
    for key, spec in fields.items():
        if type(key) is not str or type(spec) is not tuple:
            return False
        if len(spec) > 2 and type(spec[2]) is not str:
            return False
        if not plain_dtype(spec[0], depth + 1):
            return False
    return True


def field_names(dtype: Any) -> list[str]:
    """Every field name of a structured dtype, nested fields included."""
    out: list[str] = []
    for name in dtype.names or ():
        out.append(name)
        out += field_names(dtype.fields[name][0])
    sub = dtype.subdtype
    return out + (field_names(sub[0]) if sub is not None else [])


def _array_reason(arr: Any) -> str | None:
    """Why the values of ``arr`` (a block's or an Index's array) are not read, or None."""
    np = sys.modules["numpy"]
    t = type(arr)
    if t is np.ndarray:
        return None if _numpy_dtype(arr.dtype) else "its dtype is not NumPy's"
    if not trusted_type(t):
        return f"it holds a {type_name(t)}, an array type that is not pandas' own"
    dtype = arr.dtype  # pandas' own array: its own property
    return _dtype_reason(dtype)


def _dtype_reason(dtype: Any) -> str | None:
    dt = type(dtype)
    if _numpy_dtype(dtype):
        return None
    if not trusted_type(dt):
        return f"its dtype {type_name(dt)} is not pandas' own"
    name = _type_qualname(dt)  # pandas' own class (trusted_type): its name is its identity
    if name == "ArrowDtype":
        return "it holds a pyarrow column (ArrowDtype), which describe does not read"
    if name == "DatetimeTZDtype" and not trusted_tz(dtype.tz):
        return f"its time zone is a {type_name(type(dtype.tz))}, not the standard library's"
    if name == "SparseDtype":  # its repr shows the fill value
        fill = dtype.fill_value
        if not (plain_data(fill) or trusted_type(type(fill))):
            return f"its fill value is a {type_name(type(fill))}, not NumPy's or a builtin"
    if name == "CategoricalDtype" and dtype.categories is not None:
        return _index_reason(dtype.categories)
    sub = getattr(dtype, "subtype", None) if name in ("IntervalDtype", "SparseDtype") else None
    return None if sub is None else _dtype_reason(sub)


def _index_reason(index: Any) -> str | None:
    t = type(index)
    pd = sys.modules["pandas"]
    if not (issubclass(t, pd.Index) and trusted_type(t)):
        return f"an axis is a {type_name(t)}, not pandas' own Index"
    own = _instance_dict(index) or {}
    freq = own.get("_freq")  # a DatetimeIndex's: pandas formats it (its ``freqstr``)
    if freq is not None and not trusted_type(type(freq)):
        return f"its frequency is a {type_name(type(freq))}, not one of pandas' own"
    names = own.get("_names") if "_levels" in own else (own.get("_name"),)
    if not plain_data(names):  # pandas formats a name with its str() and getattr()
        return "an axis name is not a builtin value (formatting it runs its code)"
    if "_levels" in own:  # a MultiIndex: its levels; the codes are integer arrays
        for level in own["_levels"]:
            why = _index_reason(level)
            if why:
                return why
        return None
    if "_range" in own:  # a RangeIndex holds no array
        return None
    return _array_reason(own.get("_data"))


def _manager_parts(obj: Any) -> tuple[list[Any], list[Any]] | None:
    """``(arrays, axes)`` of a DataFrame's or Series' block manager, read from pandas'
    own attributes; None when the manager is not pandas' own."""
    mgr = (_instance_dict(obj) or {}).get("_mgr")
    if mgr is None or not trusted_type(type(mgr)):
        return None
    blocks = mgr.blocks
    for blk in blocks:
        if not trusted_type(type(blk)):
            return None
    return [blk.values for blk in blocks], list(mgr.axes)


def unreadable(obj: Any) -> str | None:
    """Why ``describe``/``list_variables`` read no values of pandas container ``obj`` (a
    sentence to follow "the DataFrame ..."), or None when they may. Other objects: None."""
    kind = pandas_kind(obj)
    if not kind:
        pd = sys.modules.get("pandas")
        if pd is not None and issubclass(type(obj), pd.api.extensions.ExtensionArray):
            return _array_reason(obj)
        return None
    if kind == "Index":
        return _index_reason(obj)
    own = _instance_dict(obj) or {}
    attrs = own.get("_attrs")
    if attrs is not None and not plain_data(attrs):
        return _ATTRS
    parts = _manager_parts(obj)
    if parts is None:
        return "its block manager is not pandas' own"
    arrays, axes = parts
    for axis in axes:
        why = _index_reason(axis)
        if why:
            return why
    for arr in arrays:
        why = _array_reason(arr)
        if why:
            return why
    return None


def axis_length(index: Any) -> int | None:
    """``len(index)`` when that runs pandas' or NumPy's code only (its array is pandas' or
    NumPy's, whatever its values)."""
    pd = sys.modules["pandas"]
    t = type(index)
    if not (issubclass(t, pd.Index) and trusted_type(t)):
        return None
    own = _instance_dict(index) or {}
    data = own.get("_data")
    if "_range" in own or "_levels" in own or trusted_type(type(data)):
        return len(index)
    return None


def shape_of(obj: Any) -> str:
    """``rows x columns`` (or ``length``) of a DataFrame/Series from the axes that are
    pandas' own; ``?`` where an axis is not."""
    parts = _manager_parts(obj)
    if parts is None:
        return "?"
    axes = parts[1]
    sizes = [axis_length(a) for a in reversed(axes)]  # a frame's axes: columns, rows
    return "x".join("?" if n is None else str(n) for n in sizes)


# -- default display options -----------------------------------------------------------

_DISPLAY = threading.RLock()
"""pandas' options are global: two tools formatting at once must not restore each other's
defaults into the user's session, nor format under the user's formatter in between."""

_NUMPY_DEFAULTS: dict[str, Any] = {
    "precision": 8,
    "threshold": 1000,
    "edgeitems": 3,
    "linewidth": 75,
    "suppress": False,
    "nanstr": "nan",
    "infstr": "inf",
    "formatter": None,
    "sign": "-",
    "floatmode": "maxprec",
    "legacy": False,
}
"""``np.set_printoptions``' documented defaults."""


def _pandas_display_defaults() -> list[Any]:
    """``[key, default, ...]`` of every ``display.*`` and ``styler.*`` option (a Styler a
    path makes takes its formatter from them), for ``pd.option_context``
    (pandas keeps the defaults in a private table; checked against pandas 3.1)."""
    from pandas._config import config  # type: ignore[import-untyped,unused-ignore]

    pairs: list[Any] = []
    for key, option in config._registered_options.items():
        if key.startswith(("display.", "styler.")):
            pairs += [key, option.defval]
    return pairs


@contextlib.contextmanager
def default_display() -> Iterator[None]:
    """Format under pandas' and NumPy's default display options, so no formatter of the
    user's session runs (``display.float_format``, ``np.set_printoptions(formatter=)``,
    ``override_repr``)."""
    np = sys.modules.get("numpy")
    pd = sys.modules.get("pandas")
    with _DISPLAY, contextlib.ExitStack() as stack:
        if np is not None:
            options = dict(_NUMPY_DEFAULTS)
            if "override_repr" in np.get_printoptions():
                options["override_repr"] = None
            stack.enter_context(np.printoptions(**options))
        if pd is not None:
            stack.enter_context(pd.option_context(*_pandas_display_defaults()))
        yield
