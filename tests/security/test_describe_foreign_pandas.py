"""``list_variables`` and ``describe`` read pandas and NumPy containers only when every part
of them is pandas' or NumPy's own, by type identity: a user's ``ExtensionArray`` (its
``dtype``, ``nbytes``, ``__len__``, ``__getitem__``, ``copy``), a ``__deepcopy__`` in
``DataFrame.attrs``, a user's ``tzinfo``, the session's display formatters, and classes
that only claim to be pandas' all ran the user's code before. Each hook writes a marker
file; the tools are driven in process with the real tool objects."""

from __future__ import annotations

import datetime
import json
import types
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from pandas.api.extensions import ExtensionArray, ExtensionDtype

from nb_tools.jupyter._kernel_tools import DescribeTool, ListVariablesTool

RAN: list[str] = []
MARKER: list[Path] = []


def ran(what: str) -> None:
    RAN.append(what)
    if MARKER:
        MARKER[0].write_text(what)


class UserDtype(ExtensionDtype):
    name = "user"
    type = object

    def __str__(self) -> str:
        ran("dtype __str__")
        return "user"

    @classmethod
    def construct_array_type(cls) -> type[UserArray]:
        return UserArray


class UserArray(ExtensionArray):
    """A custom ExtensionArray: every hook pandas calls to measure, slice or copy it."""

    def __init__(self, values: Any) -> None:
        self._v = np.asarray(values, dtype=object)

    @classmethod
    def _from_sequence(cls, scalars: Any, dtype: Any = None, copy: bool = False) -> UserArray:
        return cls(scalars)

    @property
    def dtype(self) -> UserDtype:
        ran("EA dtype")
        return UserDtype()

    @property
    def nbytes(self) -> int:
        ran("EA nbytes")
        return 0

    def __len__(self) -> int:
        ran("EA __len__")
        return len(self._v)

    def __getitem__(self, item: Any) -> Any:
        ran("EA __getitem__")
        got = self._v[item]
        return UserArray(got) if isinstance(item, slice | np.ndarray | list) else got

    def copy(self) -> UserArray:
        ran("EA copy")
        return UserArray(self._v.copy())

    def take(self, indices: Any, allow_fill: bool = False, fill_value: Any = None) -> UserArray:
        ran("EA take")
        return UserArray(self._v[indices])

    def isna(self) -> np.ndarray:
        ran("EA isna")
        return np.zeros(len(self._v), dtype=bool)

    @classmethod
    def _concat_same_type(cls, to_concat: Any) -> UserArray:
        return cls(np.concatenate([a._v for a in to_concat]))


class Deep:
    """In ``attrs``: pandas deep-copies them into every frame it makes."""

    def __deepcopy__(self, memo: Any) -> Deep:
        ran("attrs __deepcopy__")
        return Deep()


class UserTz(datetime.tzinfo):
    def utcoffset(self, dt: Any) -> datetime.timedelta:
        ran("tzinfo utcoffset")
        return datetime.timedelta(hours=1)

    def dst(self, dt: Any) -> datetime.timedelta:
        return datetime.timedelta(0)

    def tzname(self, dt: Any) -> str:
        ran("tzinfo tzname")
        return "U"


class Posing:
    """Says it is pandas' DataFrame (``__module__``/``__qualname__`` are only claims)."""

    __module__ = "pandas"
    __qualname__ = "DataFrame"
    shape = (1, 1)

    def __getattr__(self, name: str) -> Any:
        ran(f"posing __getattr__ {name}")
        return lambda *a, **k: 0


class PosingProperty:
    """A user's class whose property code claims to be pandas'."""

    def _get(self) -> int:
        ran("posing property")
        return 1

    _get.__module__ = "pandas.core.frame"
    total = property(_get)


class Sub(np.ndarray):
    def __array_finalize__(self, obj: Any) -> None:
        ran("ndarray subclass __array_finalize__")


class OddKey:
    """A namespace key that is not a str (``globals()[OddKey()] = 1``)."""

    def __hash__(self) -> int:
        ran("key __hash__")
        return 1

    def __getattr__(self, name: str) -> Any:
        ran(f"key __getattr__ {name}")
        return lambda *a: False


def float_format(x: float) -> str:
    ran("pandas display.float_format")
    return f"{x}"


def numpy_formatter(x: float) -> str:
    ran("numpy formatter")
    return f"{x}"


def namespace() -> dict[str, Any]:
    tz_index = pd.DatetimeIndex([pd.Timestamp("2024-01-01")]).tz_localize(UserTz())
    with_attrs = pd.DataFrame({"n": [1.5, 2.5]})
    with_attrs.attrs["meta"] = Deep()
    series_attrs = pd.Series([1.5])
    series_attrs.attrs["meta"] = Deep()
    return {
        "ea": pd.DataFrame({"x": UserArray(["a", "b"]), "n": [1.0, 2.0]}),
        "ea_series": pd.Series(UserArray(["a", "b"])),
        "ea_index": pd.Series([1, 2], index=pd.Index(UserArray(["a", "b"]))),
        "ea_cats": pd.Series(pd.Categorical(["a"], categories=pd.Index(UserArray(["a"])))),
        "ea_bare": UserArray(["a"]),
        "with_attrs": with_attrs,
        "series_attrs": series_attrs,
        "tz_col": pd.DataFrame(
            {"t": pd.Series([pd.Timestamp("2024-01-01")]).dt.tz_localize(UserTz())}
        ),
        "tz_index": pd.DataFrame({"a": [1]}, index=tz_index),
        "tz_stamp": pd.Timestamp("2024-01-01").tz_localize(UserTz()),
        "floats": pd.DataFrame({"f": [1.25, 2.5]}),
        "float_series": pd.Series([1.25, 2.5]),
        "array": np.array([1.25, 2.5]),
        "posing": Posing(),
        "posing_property": PosingProperty(),
        "sub": np.arange(3.0).view(Sub),
        OddKey(): "a value under a key that is not a str",
    }


PATHS = [
    "ea",
    "ea_series",
    "ea_index",
    "ea_cats",
    "ea_bare",
    "ea.x",
    'ea["x"]',
    "ea.dtypes",
    "ea_index.index",
    "with_attrs",
    "with_attrs.n",
    'with_attrs["n"]',
    "series_attrs",
    "tz_col",
    "tz_col.t",
    "tz_index",
    "tz_stamp",
    "floats",
    "floats.f",
    "float_series",
    "array",
    "posing",
    "posing.shape",
    "posing.head",
    "posing_property",
    "posing_property.total",
    "sub",
    "sub.shape",
]


@pytest.fixture
def ns(tmp_path: Path) -> Any:
    built = namespace()
    MARKER[:] = [tmp_path / "side-effect"]
    pd.set_option("display.float_format", float_format)
    np.set_printoptions(formatter={"float": numpy_formatter})
    RAN.clear()  # building the frames ran some of the hooks
    yield built
    pd.reset_option("display.float_format")
    np.set_printoptions(formatter=None)
    MARKER.clear()
    RAN.clear()


def describe(ns: dict[str, Any], path: str) -> types.SimpleNamespace:
    result = DescribeTool(types.SimpleNamespace(user_ns=ns)).call(json.dumps({"name": path}))
    return types.SimpleNamespace(text=result.content, error=result.is_error)


def test_the_hooks_fire_when_pandas_runs_them(ns: dict[str, Any]) -> None:
    """The detectors work: pandas' and NumPy's ordinary reads run every hook."""
    _ = ns["ea"].memory_usage(), ns["ea"].head(), str(ns["floats"]), str(ns["array"])
    _ = ns["with_attrs"].head(), str(ns["tz_col"]), ns["ea_series"].dtype
    _ = ns["posing"].dtypes, ns["posing_property"].total, np.arange(2.0).view(Sub)[:1]
    for hook in (
        "EA nbytes",
        "EA dtype",
        "attrs __deepcopy__",
        "tzinfo utcoffset",
        "pandas display.float_format",
        "numpy formatter",
        "posing __getattr__ dtypes",
        "posing property",
        "ndarray subclass __array_finalize__",
    ):
        assert hook in RAN, hook
    assert MARKER[0].exists()


def test_describe_and_list_variables_run_none_of_it(ns: dict[str, Any]) -> None:
    shell = types.SimpleNamespace(user_ns=ns, user_ns_hidden={})
    listing = ListVariablesTool(shell).call("{}").content
    answers = {path: describe(ns, path) for path in PATHS}
    assert RAN == []
    assert not MARKER[0].exists()
    lines = {line.split(":")[0]: line for line in listing.splitlines()[1:]}
    assert lines["ea"] == (
        "ea: DataFrame 2x2 (values not read: it holds a test_describe_foreign_pandas."
        "UserArray, an array type that is not pandas' own)"
    )
    assert lines["with_attrs"] == (
        "with_attrs: DataFrame 2x1 (values not read: its attrs hold objects other than "
        "builtins (pandas deep-copies attrs on every operation, running their code))"
    )
    assert "its time zone is a test_describe_foreign_pandas.UserTz" in lines["tz_col"]
    assert lines["ea_index"].startswith("ea_index: Series len ? (values not read")
    assert answers["ea"].text.splitlines() == [
        "ea: DataFrame 2x2; its values are not read: it holds a test_describe_foreign_pandas."
        "UserArray, an array type that is not pandas' own (the python tool can read them "
        "once the user approves)",
        "columns: x, n",
    ]
    assert answers["ea.x"].error and answers["ea.x"].text == (
        "describe: ea.x: describe does not read the values of ea: it holds a "
        "test_describe_foreign_pandas.UserArray, an array type that is not pandas' own (use "
        "the python tool, which asks the user first)"
    )
    # formatted under the default options: no user formatter, the usual text
    assert "0  1.25" in answers["floats"].text and "mean   1.875000" in answers["floats"].text
    assert "[1.25 2.5 ]" in answers["array"].text
    # a class that only says it is pandas' is read as any other object
    assert answers["posing"].text.splitlines()[:2] == [
        "posing: pandas.DataFrame",
        "<pandas.DataFrame object>",
    ]
    assert answers["posing.head"].error
    assert answers["posing_property.total"].error
    assert "property (not read: runs code)" in answers["posing_property"].text
    assert answers["sub"].text.startswith("sub: test_describe_foreign_pandas.Sub\n")
    # the user's options are the user's again
    assert pd.get_option("display.float_format") is float_format
    assert np.get_printoptions()["formatter"] == {"float": numpy_formatter}


def test_standard_time_zones_and_pandas_arrays_still_read(ns: dict[str, Any]) -> None:
    plain = {
        "utc": pd.DataFrame({"t": pd.date_range("2024-01-01", periods=2, tz="UTC")}),
        "paris": pd.Series(pd.date_range("2024-01-01", periods=2, tz="Europe/Paris")),
        "ints": pd.DataFrame({"i": pd.array([1, None], dtype="Int64"), "c": ["a", "b"]}),
        "cats": pd.Series(pd.Categorical(["a", "b", "a"])),
        "timed": pd.DataFrame({"n": [1.0]}, index=pd.date_range("2024-01-01", periods=1)),
        "meta": pd.DataFrame({"n": [1.0]}),
    }
    plain["meta"].attrs.update(source="sales.csv", units={"n": ["kg", 1]})
    for name in plain:
        answer = describe(plain, name)
        assert not answer.error and "not read" not in answer.text, answer.text
    assert "Europe/Paris" in describe(plain, "paris").text
    assert "i: Int64, 1 null" in describe(plain, "ints").text
