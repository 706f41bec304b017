"""``safe_repr`` reads builtins as Python's ``repr`` shows them (within its limits), and
NumPy/pandas values as their own repr; only other objects look different."""

from __future__ import annotations

import collections
import dataclasses
import enum

import numpy as np
import pandas as pd
from hypothesis import given
from hypothesis import strategies as st

from nb_tools.jupyter._static_repr import safe_repr, secret_name

scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=True)
    | st.complex_numbers()
    | st.text(max_size=150)
    | st.binary(max_size=100)
)
# a key that looks like a secret's name ("PASSWD") hides its value, which is tested elsewhere
keys = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.text(max_size=20).filter(lambda k: not secret_name(k))
)


def nested(children: st.SearchStrategy[object]) -> st.SearchStrategy[object]:
    return (
        st.lists(children, max_size=6)
        | st.tuples(children)
        | st.tuples(children, children)
        | st.dictionaries(keys, children, max_size=6)
        | st.frozensets(keys, max_size=6)
    )


@given(st.recursive(scalars, nested, max_leaves=20).filter(lambda v: len(repr(v)) < 2000))
def test_builtins_read_as_python_shows_them(value: object) -> None:
    if _depth(value) <= 3:
        assert safe_repr(value) == repr(value)


def _depth(value: object) -> int:
    if isinstance(value, dict):
        return 1 + max((_depth(v) for v in value.values()), default=0)
    if isinstance(value, (list, tuple, frozenset)):
        return 1 + max((_depth(v) for v in value), default=0)
    return 0


class Color(enum.IntEnum):
    RED = 1


@dataclasses.dataclass
class Point:
    x: int
    y: list[int]


def test_other_values() -> None:
    Pair = collections.namedtuple("Pair", "a b")
    assert safe_repr(Pair(1, "x")) == "Pair(a=1, b='x')"
    assert safe_repr(collections.defaultdict(int, a=1)) == "defaultdict({'a': 1})"
    assert safe_repr(Color.RED) == "Color(1)"
    assert safe_repr(Point(1, [2])) == f"<{__name__}.Point object: x=1, y=[2]>"
    assert safe_repr(set()) == "set()" and safe_repr(frozenset()) == "frozenset()"
    assert safe_repr("x" * 1000).startswith("'xxx") and len(safe_repr("x" * 1000)) == 400
    assert safe_repr(np.float64(1.5)) == "np.float64(1.5)"
    assert safe_repr(pd.Timestamp("2026-01-02")) == "Timestamp('2026-01-02 00:00:00')"
    assert safe_repr(pd.Index([1, 2])) == repr(pd.Index([1, 2]))
    assert safe_repr(pd.DataFrame({"a": [1]})) == "<DataFrame 1x1>"
    assert safe_repr(np.arange(3)) == "[0 1 2]"
    assert safe_repr(ValueError("bad")) == "ValueError('bad',)"
