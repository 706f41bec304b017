"""``list_variables`` and ``describe`` run without a click, so they must not run the user's
code whatever path the model asks for: properties, ``__getattr__``, ``__getattribute__``,
``__getitem__``, ``__missing__``, ``__repr__``, ``__str__``, ``__dir__``, ``__len__``,
``__hash__``, ``__eq__`` of the user's classes, also inside lists, dicts, object arrays and
DataFrame columns. Each hook appends to ``RAN`` (the property also writes a file); the
tools are driven in process with the real tool objects, and each case checks the effects."""

from __future__ import annotations

import collections
import dataclasses
import functools
import json
import types
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from nb_tools.jupyter._kernel_tools import DescribeTool, ListVariablesTool

RAN: list[str] = []
MARKER: list[Path] = []


def ran(what: str) -> None:
    RAN.append(what)
    if MARKER:
        MARKER[0].write_text(what)


class Report:
    """A property with a side effect (as a DB commit would be), and the display hooks."""

    rate = 0.5

    def __init__(self) -> None:
        self.rows = [1, 2, 3]

    @property
    def total(self) -> int:
        ran("property total")
        return 3

    @functools.cached_property
    def cached(self) -> int:
        ran("cached_property")
        return 4

    def __repr__(self) -> str:
        ran("__repr__")
        return "Report()"

    def __str__(self) -> str:
        ran("__str__")
        return "Report"

    def __dir__(self) -> list[str]:
        ran("__dir__")
        return ["total"]

    def __len__(self) -> int:
        ran("__len__")
        return 1


class Proxy:
    """A remote-API proxy: every unknown attribute is a request."""

    def __init__(self) -> None:
        self.endpoint = "https://api.example.invalid"

    def __getattr__(self, name: str) -> Any:
        ran(f"__getattr__ {name}")
        return 1


class Spy:
    """Every attribute read runs code, even ``isinstance``'s read of ``__class__``."""

    def __init__(self) -> None:
        self.x = 1

    def __getattribute__(self, name: str) -> Any:
        ran(f"__getattribute__ {name}")
        return object.__getattribute__(self, name)


class Bag:
    def __getitem__(self, key: Any) -> Any:
        ran("__getitem__")
        return 1


class Loud:
    """An element: every hook a formatter, hasher or sorter could call."""

    def __init__(self, tag: int) -> None:
        object.__setattr__(self, "tag", tag)

    def __getattribute__(self, name: str) -> Any:
        ran(f"element __getattribute__ {name}")
        return object.__getattribute__(self, name)

    def __repr__(self) -> str:
        ran("element __repr__")
        return "Loud"

    def __str__(self) -> str:
        ran("element __str__")
        return "Loud"

    def __format__(self, spec: str) -> str:
        ran("element __format__")
        return "Loud"

    def __hash__(self) -> int:
        ran("element __hash__")
        return hash("k")  # collides with the literal key "k"

    def __eq__(self, other: object) -> bool:
        ran("element __eq__")
        return False

    def __lt__(self, other: object) -> bool:
        ran("element __lt__")
        return False

    def __len__(self) -> int:
        ran("element __len__")
        return 0

    def __sizeof__(self) -> int:
        ran("element __sizeof__")
        return 0

    def __bool__(self) -> bool:
        ran("element __bool__")
        return True


class Missing(dict):  # type: ignore[type-arg]
    def __missing__(self, key: Any) -> Any:
        ran("__missing__")
        self[key] = 0
        return 0


class OwnFrame(pd.DataFrame):
    @property
    def total(self) -> float:
        ran("DataFrame subclass property")
        return 0.0


class Masked:
    """``isinstance`` reads ``__class__`` when the type does not match: a property here."""

    @property  # type: ignore[misc]
    def __class__(self) -> type:
        ran("__class__ property")
        return Masked


class Meta(type):
    """Even hashing or comparing a type can run code: its metaclass's."""

    def __hash__(cls) -> int:
        ran("metaclass __hash__")
        return 1

    def __eq__(cls, other: object) -> bool:
        ran("metaclass __eq__")
        return cls is other


class Odd(metaclass=Meta):
    __slots__ = ("v",)

    def __init__(self, v: int) -> None:
        self.v = v


class Probe:
    """A pandas accessor of the user's: pandas' descriptor, the user's class."""

    def __init__(self, obj: Any) -> None:
        ran("accessor __init__")


@dataclasses.dataclass
class Row:
    name: str
    payload: Any


def objects(n: int) -> np.ndarray:
    arr = np.empty(n, dtype=object)
    for i in range(n):
        arr[i] = Loud(i)
    return arr


def namespace() -> dict[str, Any]:
    frame = pd.DataFrame({"obj": objects(3), "n": [1.0, 2.0, np.nan], "s": ["a", "b", None]})
    return {
        "report": Report(),
        "proxy": Proxy(),
        "spy": Spy(),
        "bag": Bag(),
        "dd": collections.defaultdict(list, a=[1]),
        "counts": Missing(a=1),
        "keyed": {Loud(0): "loud", "k": "plain"},
        "items": [Loud(1), {"inner": Loud(2)}, (Loud(3),)],
        "arr": objects(12),
        "frame": frame,
        "labelled": pd.DataFrame({"n": [1, 2, 3]}, index=objects(3)),
        "col_labels": pd.DataFrame(np.zeros((2, 2)), columns=objects(2)),
        "series": pd.Series(objects(4), name=Loud(9)),
        "cats": pd.Series(pd.Categorical(objects(3))),
        "own_frame": OwnFrame({"a": [1, 2]}),
        "row": Row("r", Loud(4)),
        "error": ValueError("bad", Loud(5)),
        "masked": Masked(),
        "odd": [Odd(1), Odd(2)],
        "odd_arr": np.array([Odd(1), Odd(2)], dtype=object),
        "odd_frame": pd.DataFrame({"o": np.array([Odd(1), None], dtype=object)}),
    }


REFUSED = [
    "report.total",
    "report.cached",
    "proxy.secret_method",
    "spy.x",
    'bag["k"]',
    'dd["new"]',
    'counts["new"]',
    "own_frame.total",
    # pandas' own code, but it would hash, compare or format the user's objects
    "frame.obj.is_unique",
    "labelled.index.is_unique",
    "col_labels[0]",
    "cats.cat",
    "series.hasnans",
    "frame.nbtools_probe",
]
PATHS = [
    *REFUSED,
    "report",
    "report.rows",
    "proxy",
    "spy",
    "bag",
    "dd",
    "keyed",
    'keyed["k"]',
    "items",
    "items[0]",
    'items[1]["inner"]',
    "arr",
    "arr[0]",
    "arr.shape",
    "frame",
    "frame.obj",
    'frame["obj"]',
    "frame.n",
    "frame.n.is_unique",
    "labelled",
    'labelled["n"]',
    "labelled.index",
    "col_labels",
    "series",
    "series[0]",
    "cats",
    "own_frame",
    "row",
    "row.payload",
    "error",
    "masked",
    "odd",
    "odd[0].v",
    "odd_arr",
    "odd_frame",
]


@pytest.fixture
def ns(tmp_path: Path) -> dict[str, Any]:
    pd.api.extensions.register_dataframe_accessor("nbtools_probe")(Probe)
    built = namespace()
    MARKER[:] = [tmp_path / "side-effect"]
    RAN.clear()  # building the frames hashed and measured the elements
    yield built
    MARKER.clear()
    RAN.clear()
    delattr(pd.DataFrame, "nbtools_probe")
    pd.DataFrame._accessors.discard("nbtools_probe")


def describe(ns: dict[str, Any], path: str) -> types.SimpleNamespace:
    result = DescribeTool(types.SimpleNamespace(user_ns=ns)).call(json.dumps({"name": path}))
    return types.SimpleNamespace(text=result.content, error=result.is_error)


def test_the_hooks_fire_when_python_runs_them(ns: dict[str, Any]) -> None:
    """The detectors work: ordinary Python reads run every hook the tools must not."""
    assert ns["report"].total == 3 and MARKER[0].read_text() == "property total"
    _ = ns["proxy"].secret_method, ns["spy"].x, ns["bag"]["k"], ns["dd"]["new"]
    _ = repr(ns["items"]), repr(ns["arr"]), str(ns["frame"]), ns["counts"]["new"]
    _ = ns["keyed"]["k"], dir(ns["report"]), len(ns["report"]), ns["own_frame"].total
    ns["frame"].describe(include="all")
    _ = ns["frame"].nbtools_probe, isinstance(ns["masked"], int), {type(ns["odd"][0])}
    for hook in (
        "__getattr__ secret_method",
        "__getattribute__ x",
        "__getitem__",
        "__missing__",
        "__dir__",
        "__len__",
        "element __repr__",
        "element __eq__",
        "DataFrame subclass property",
        "accessor __init__",
        "__class__ property",
        "metaclass __hash__",
    ):
        assert hook in RAN
    assert "new" in ns["dd"] and "new" in ns["counts"]


def test_describe_and_list_variables_run_none_of_it(ns: dict[str, Any]) -> None:
    shell = types.SimpleNamespace(user_ns=ns, user_ns_hidden={})
    listing = ListVariablesTool(shell).call("{}").content
    answers = {path: describe(ns, path) for path in PATHS}
    assert RAN == []
    assert not MARKER[0].exists()
    assert dict(ns["dd"]) == {"a": [1]} and dict(ns["counts"]) == {"a": 1}
    assert listing.startswith(f"{len(ns)} user variables")
    # what is refused says why, and the way out
    way_out = "(use the python tool, which asks the user first)"
    assert answers["report.total"].error
    assert answers["report.total"].text == (
        "describe: report.total is a property of test_describe_runs_no_user_code.Report; "
        f"reading it runs its code, so describe does not {way_out}"
    )
    assert answers["report.cached"].text.startswith(
        "describe: report.cached is a cached_property of "
    )
    assert answers["proxy.secret_method"].text == (
        "describe: proxy.secret_method: test_describe_runs_no_user_code.Proxy has no "
        "attribute 'secret_method' of its own; its __getattr__ "
        "(test_describe_runs_no_user_code.Proxy) would make one up by running its code, "
        f"so describe does not {way_out}"
    )
    assert "defines __getattribute__" in answers["spy.x"].text
    assert "defines __getitem__" in answers['bag["k"]'].text
    assert answers['dd["new"]'].text == (
        "describe: dd has no item 'new' (a collections.defaultdict would make it up; "
        "describe does not)"
    )
    assert answers['counts["new"]'].error
    assert "is a property of test_describe_runs_no_user_code.OwnFrame" in (
        answers["own_frame.total"].text
    )
    assert answers["frame.obj.is_unique"].text == (
        "describe: frame.obj.is_unique: the pandas.Series holds objects of types other than "
        "builtins, and reading it makes pandas hash, compare or format them, which runs "
        f"their code, so describe does not {way_out}"
    )
    assert answers["frame.nbtools_probe"].text == (
        "describe: frame.nbtools_probe is a pandas.core.accessor.Accessor descriptor of "
        "pandas.DataFrame that makes a test_describe_runs_no_user_code.Probe; that runs its "
        f"code, so describe does not {way_out}"
    )
    assert [p for p, answer in answers.items() if answer.error] == REFUSED


def test_what_is_shown_instead(ns: dict[str, Any]) -> None:
    report = describe(ns, "report").text
    assert report.splitlines() == [
        "report: test_describe_runs_no_user_code.Report",
        "<test_describe_runs_no_user_code.Report object: rows=[1, 2, 3]>",
        "attributes:",
        "  rows: list",
        "  rate: float",
        "  total: property (not read: runs code)",
        "  cached: cached_property (not read: runs code)",
    ]
    assert describe(ns, 'keyed["k"]').text == "keyed[\"k\"]: builtins.str, len 5\n'plain'"
    assert "Row object: name='r', payload=<test_describe_runs_no_user_code.Loud object: " in (
        describe(ns, "row").text
    )
    frame = describe(ns, "frame").text
    assert "  obj: object" in frame and "  n: float64, 1 null" in frame
    assert "0  <test_describe_runs_no_user_code.Lou...  1.0    a" in frame  # max_colwidth
    assert "describe() leaves out obj: objects of types other than builtins" in frame
    assert "mean   1.500000" in frame.replace("mean    1.5", "mean   1.500000")
    assert "Series <test_describe_runs_no_user_code.Loud object: tag=9>, 4 values" in (
        describe(ns, "series").text
    )
    assert RAN == []


def test_normal_data_reads_as_before(ns: dict[str, Any]) -> None:
    """NumPy's and pandas' own properties and ``__getattr__`` still answer, and a model's
    fitted attributes (in its ``__dict__``) read as before."""
    model = types.SimpleNamespace(coef_=np.array([1.0, 2.0]), alpha=0.1)
    plain = {"model": model, "df": pd.DataFrame({"x": [1, 2, 3]}), "a": np.arange(6)}
    assert describe(plain, "model.coef_").text.startswith(
        "model.coef_: ndarray shape (2,), dtype float64"
    )
    assert describe(plain, "df.x").text.startswith("df.x: Series 'x', 3 values, dtype int64")
    assert describe(plain, "df.shape").text == "df.shape: builtins.tuple, len 2\n(3, 1)"
    assert describe(plain, "a.shape").text == "a.shape: builtins.tuple, len 1\n(6,)"
    assert describe(plain, "df.columns").text.startswith("df.columns: pandas.Index")


def test_a_modules_getattr_is_not_asked(ns: dict[str, Any]) -> None:
    """PEP 562: a module's ``__getattr__`` makes attributes up by running code."""
    lazy = types.ModuleType("lazy")
    lazy.__dict__["__getattr__"] = lambda name: ran(f"module __getattr__ {name}")
    lazy.__dict__["ready"] = 5
    ns["lazy"] = lazy
    assert describe(ns, "lazy.ready").text.endswith("5")
    refused = describe(ns, "lazy.loaded")
    assert refused.error and "its __getattr__ would make one up" in refused.text
    assert RAN == []
