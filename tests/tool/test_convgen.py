"""The generated converters (``_convgen``) agree with the reference closures they replace."""

from __future__ import annotations

import dataclasses
import datetime
import enum
import json
from typing import Any, NotRequired, TypedDict

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nb_tools.tool._convgen import _plain_dataclass, compile_converter
from nb_tools.tool._derive import function_schema


class Level(enum.Enum):
    LOW = 1
    HIGH = 2


@dataclasses.dataclass
class Address:
    street: str
    zip: str | None = None
    level: Level = Level.LOW


@dataclasses.dataclass
class Person:
    name: str
    age: int
    address: Address
    tags: list[str]
    born: datetime.date | None = None


@dataclasses.dataclass(frozen=True)
class Frozen:
    a: int
    b: str = "b"


@dataclasses.dataclass
class Posted:
    a: int
    seen: list[int] = dataclasses.field(default_factory=list)

    def __post_init__(self) -> None:
        self.seen.append(self.a)


class Movie(TypedDict):
    title: str
    year: NotRequired[int]
    level: NotRequired[Level]


def people(people: list[Person], frozen: list[Frozen], posted: Posted, movie: Movie) -> None:
    """Everything at once."""


FS = function_schema(people)


def slow(args: dict[str, Any]) -> Any:
    """The reference closure behind the generated function."""
    fast = FS._convert
    assert fast is not None
    ref = fast.__globals__["_slow"]  # type: ignore[attr-defined]
    return ref(args)


def test_the_converter_is_generated_code() -> None:
    fast = FS._convert
    assert fast is not None
    assert fast.__code__.co_filename == "<convert>"  # type: ignore[attr-defined]


def test_plain_dataclasses_are_filled_without_their_constructor_others_use_it() -> None:
    assert _plain_dataclass(Address) == {"zip": None, "level": Level.LOW}
    assert _plain_dataclass(Frozen) == {"b": "b"}
    assert _plain_dataclass(Posted) is None  # __post_init__ must run
    assert _plain_dataclass(Movie) is None
    assert compile_converter(None) is None


ARGS = {
    "people": [
        {"name": "A", "age": 3.0, "address": {"street": "s", "level": 2}, "tags": ["x"]},
        {
            "name": "B",
            "age": 4,
            "address": {"street": "t", "zip": None},
            "tags": [],
            "born": "2026-11-29",
        },
    ],
    "frozen": [{"a": 1}, {"a": 2.0, "b": "c"}],
    "posted": {"a": 5},
    "movie": {"title": "T", "level": 1},
}


def test_generated_conversion_builds_every_declared_type() -> None:
    out = FS.convert(FS.schema.validate_value(json.loads(json.dumps(ARGS))))
    assert out == {
        "people": [
            Person("A", 3, Address("s", level=Level.HIGH), ["x"]),
            Person("B", 4, Address("t"), [], datetime.date(2026, 11, 29)),
        ],
        "frozen": [Frozen(1), Frozen(2, "c")],
        "posted": Posted(5),
        "movie": {"title": "T", "level": Level.LOW},
    }
    assert type(out["people"][0].age) is int
    assert type(out["frozen"][1].a) is int
    assert out == slow(json.loads(json.dumps(ARGS)))
    with pytest.raises(dataclasses.FrozenInstanceError):
        out["frozen"][0].a = 3  # type: ignore[misc]


def test_nulls_of_optional_fields_let_defaults_apply_at_depth() -> None:
    args = {
        "people": [{"name": "A", "age": 1, "address": {"street": "s", "level": None}, "tags": []}],
        "frozen": [{"a": 1, "b": None}],
        "posted": {"a": 1, "seen": None},
        "movie": {"title": "T", "year": None, "level": None},
    }
    strict = FS.schema.validate_value(args, strict=True)
    out = FS.convert(strict)
    assert out["people"][0].address == Address("s")
    assert out["frozen"] == [Frozen(1)]
    assert out["posted"] == Posted(1) and out["posted"].seen == [1]
    assert out["movie"] == {"title": "T"}
    assert out == slow(args)


@pytest.mark.parametrize(
    "bad, error",
    [
        ({"people": [{"name": "A", "age": 1, "tags": []}]}, TypeError),  # no address
        (
            {"people": [{"name": "A", "age": 1, "address": {"street": "s", "x": 1}, "tags": []}]},
            TypeError,
        ),  # unknown field
        (
            {
                "people": [
                    {"name": "A", "age": 1, "address": {"street": "s"}, "tags": [], "born": "x"}
                ]
            },
            ValueError,
        ),  # not a date
    ],
)
def test_unexpected_input_fails_as_the_reference_closures_do(
    bad: dict[str, Any], error: type[Exception]
) -> None:
    with pytest.raises(error) as fast_err:
        FS.convert(bad)
    with pytest.raises(error) as slow_err:
        slow(bad)
    assert str(fast_err.value) == str(slow_err.value)


names = st.text("abc", max_size=3)
addresses = st.fixed_dictionaries(
    {"street": names},
    optional={"zip": st.none() | names, "level": st.none() | st.sampled_from([1, 2])},
)
persons = st.fixed_dictionaries(
    {
        "name": names,
        "age": st.integers(-5, 5) | st.integers(-5, 5).map(float),
        "address": addresses,
        "tags": st.lists(names, max_size=2),
    },
    optional={"born": st.none() | st.dates().map(str)},
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.fixed_dictionaries(
        {
            "people": st.lists(persons, max_size=3),
            "frozen": st.lists(
                st.fixed_dictionaries({"a": st.integers()}, optional={"b": st.none() | names}),
                max_size=2,
            ),
            "posted": st.fixed_dictionaries(
                {"a": st.integers()}, optional={"seen": st.none() | st.lists(st.integers())}
            ),
            "movie": st.fixed_dictionaries(
                {"title": names},
                optional={
                    "year": st.none() | st.integers(),
                    "level": st.none() | st.sampled_from([1, 2]),
                },
            ),
        }
    )
)
def test_generated_and_reference_conversion_agree(args: dict[str, Any]) -> None:
    FS.schema.validate_value(args, strict=True)
    copy = json.loads(json.dumps(args))
    out = FS.convert(args)
    assert out == slow(copy)
    assert args == copy  # the input is not modified
