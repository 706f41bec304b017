"""schema_of / function_schema: Python types to schemas, and JSON arguments back."""

from __future__ import annotations

import dataclasses
import datetime
import enum
import pathlib
import socket
import sys
import uuid
from collections.abc import Sequence
from typing import (
    Annotated,
    Any,
    Literal,
    NewType,
    NotRequired,
    Optional,
    Required,
    TypedDict,
)

import annotated_types as at
import pytest
from pydantic import BaseModel, ConfigDict, Field

from nb_tools.tool import Schema, schema_of
from nb_tools.tool._derive import FunctionSchema, SignatureError, function_schema


def props(fn: Any) -> dict[str, Any]:
    return function_schema(fn).schema.to_dict()["properties"]


class Color(enum.Enum):
    RED = "red"
    GREEN = "green"


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


@dataclasses.dataclass
class Point:
    """A point on the map.

    Attributes:
        x: Horizontal position.
    """

    x: float
    y: float = 0.0
    label: str = dataclasses.field(default="", metadata={"description": "Shown next to it."})
    tags: list[str] = dataclasses.field(default_factory=list)


POINT = {
    "type": "object",
    "description": "A point on the map.",
    "properties": {
        "x": {"type": "number", "description": "Horizontal position."},
        "y": {"type": "number", "default": 0.0},
        "label": {"type": "string", "description": "Shown next to it.", "default": ""},
        "tags": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["x"],
    "additionalProperties": False,
}


@dataclasses.dataclass
class Route:
    start: Point
    stops: list[Point]
    color: Color = Color.RED


class Movie(TypedDict):
    """A film."""

    title: str
    year: NotRequired[int]


class Partial(TypedDict, total=False):
    a: int
    b: Required[str]


class Person(BaseModel):
    """Someone."""

    name: Annotated[str, Field(min_length=1, description="Full name")]
    age: int = Field(default=0, ge=0, le=150)
    email: str | None = None
    home: Point | None = None


# -- the type mapping ---------------------------------------------------------------------


def test_scalars_and_required() -> None:
    def f(s: str, i: int, x: float, b: bool, n: None, a: Any, untyped, d: int = 3) -> None:  # type: ignore[no-untyped-def]
        """Scalars."""

    assert function_schema(f).schema.to_dict() == {
        "type": "object",
        "properties": {
            "s": {"type": "string"},
            "i": {"type": "integer"},
            "x": {"type": "number"},
            "b": {"type": "boolean"},
            "n": {"type": "null"},
            "a": {},
            "untyped": {},
            "d": {"type": "integer", "default": 3},
        },
        "required": ["s", "i", "x", "b", "n", "a", "untyped"],
        "additionalProperties": False,
    }


def test_literal_and_enums() -> None:
    def f(
        mode: Literal["fast", "slow"],
        n: Literal[1, 2],
        mixed: Literal["a", 1, None],
        color: Color,
        level: Level = Level.LOW,
        flag: Literal[True] = True,
    ) -> None: ...

    assert props(f) == {
        "mode": {"type": "string", "enum": ["fast", "slow"]},
        "n": {"type": "integer", "enum": [1, 2]},
        "mixed": {"enum": ["a", 1, None]},
        "color": {"type": "string", "enum": ["red", "green"]},
        "level": {"type": "integer", "enum": [1, 2], "default": 1},
        "flag": {"type": "boolean", "enum": [True], "default": True},
    }


def test_optional_and_unions() -> None:
    def f(
        a: int | None,
        b: Optional[str] = None,  # noqa: UP045
        c: int | str = 1,
        d: Literal["x", "y"] | None = None,
        e: int | str | None = None,
    ) -> None: ...

    fs = function_schema(f)
    assert fs.schema.to_dict() == {
        "type": "object",
        "properties": {
            "a": {"type": ["integer", "null"]},
            "b": {"type": ["string", "null"], "default": None},
            "c": {"anyOf": [{"type": "integer"}, {"type": "string"}], "default": 1},
            "d": {"type": ["string", "null"], "enum": ["x", "y", None], "default": None},
            "e": {
                "anyOf": [{"type": "integer"}, {"type": "string"}, {"type": "null"}],
                "default": None,
            },
        },
        "required": ["a"],  # Optional without a default is still required
        "additionalProperties": False,
    }


def test_collections() -> None:
    def f(
        a: list[int],
        b: Sequence[str],
        c: set[str],
        d: tuple[int, ...],
        e: tuple[int, str],
        g: tuple[int, int],
        h: dict[str, float],
        i: dict,  # type: ignore[type-arg]
        j: list,
        k: frozenset[int],
    ) -> None: ...  # type: ignore[type-arg]

    assert props(f) == {
        "a": {"type": "array", "items": {"type": "integer"}},
        "b": {"type": "array", "items": {"type": "string"}},
        "c": {"type": "array", "items": {"type": "string"}},
        "d": {"type": "array", "items": {"type": "integer"}},
        "e": {
            "type": "array",
            "prefixItems": [{"type": "integer"}, {"type": "string"}],
            "minItems": 2,
            "maxItems": 2,
        },
        "g": {"type": "array", "items": {"type": "integer"}, "minItems": 2, "maxItems": 2},
        "h": {"type": "object", "additionalProperties": {"type": "number"}},
        "i": {"type": "object"},
        "j": {"type": "array"},
        "k": {"type": "array", "items": {"type": "integer"}},
    }


def test_dataclass_schema() -> None:
    assert schema_of(Point).to_dict() == POINT


def test_nested_dataclasses() -> None:
    point = {k: v for k, v in POINT.items()}
    assert schema_of(Route).to_dict() == {
        "type": "object",
        "properties": {
            "start": point,
            "stops": {"type": "array", "items": point},
            "color": {"type": "string", "enum": ["red", "green"], "default": "red"},
        },
        "required": ["start", "stops"],
        "additionalProperties": False,
    }


def test_typeddicts() -> None:
    assert schema_of(Movie).to_dict() == {
        "type": "object",
        "description": "A film.",
        "properties": {"title": {"type": "string"}, "year": {"type": "integer"}},
        "required": ["title"],
        "additionalProperties": False,
    }
    assert schema_of(Partial).to_dict() == {
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "string"}},
        "required": ["b"],
        "additionalProperties": False,
    }


def test_pydantic_model() -> None:
    point = {k: v for k, v in POINT.items()}
    assert schema_of(Person).to_dict() == {
        "type": "object",
        "description": "Someone.",
        "properties": {
            "name": {"type": "string", "description": "Full name", "minLength": 1},
            "age": {"type": "integer", "default": 0, "minimum": 0, "maximum": 150},
            "email": {"type": ["string", "null"], "default": None},
            "home": {**point, "type": ["object", "null"], "default": None},
        },
        "required": ["name"],
    }


def test_pydantic_extra_forbid_and_alias() -> None:
    class M(BaseModel):
        model_config = ConfigDict(extra="forbid")
        user_id: int = Field(alias="userId")

    assert schema_of(M).to_dict() == {
        "type": "object",
        "properties": {"userId": {"type": "integer"}},
        "required": ["userId"],
        "additionalProperties": False,
    }


def test_annotated_descriptions_and_constraints() -> None:
    def f(
        city: Annotated[str, "The city"],
        days: Annotated[int, at.Ge(1), at.Le(14)],
        ratio: Annotated[float, at.Gt(0), at.Lt(1)],
        code: Annotated[
            str,
            Field(pattern="^[A-Z]{3}$", min_length=3, max_length=3, title="Code", examples=["ABC"]),
        ],
        names: Annotated[list[str], at.MinLen(1), at.MaxLen(5)],
        pair: Annotated[list[int], at.Len(2, 2)],
        word: Annotated[str, at.Len(1, 10)],
        n: Annotated[int, Field(description="Count", ge=0)] = 0,
    ) -> None: ...

    assert props(f) == {
        "city": {"type": "string", "description": "The city"},
        "days": {"type": "integer", "minimum": 1, "maximum": 14},
        "ratio": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1},
        "code": {
            "type": "string",
            "title": "Code",
            "minLength": 3,
            "maxLength": 3,
            "pattern": "^[A-Z]{3}$",
        },
        "names": {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 5},
        "pair": {"type": "array", "items": {"type": "integer"}, "minItems": 2, "maxItems": 2},
        "word": {"type": "string", "minLength": 1, "maxLength": 10},
        "n": {"type": "integer", "description": "Count", "default": 0, "minimum": 0},
    }


def test_pydantic_field_as_default() -> None:
    def f(
        q: str = Field("x", description="Query"),
        k: list[int] = Field(  # noqa: B008
            default_factory=list
        ),
    ) -> dict[str, Any]:
        return {"q": q, "k": k}

    fs = function_schema(f)
    assert fs.schema.to_dict()["properties"] == {
        "q": {"type": "string", "description": "Query", "default": "x"},
        "k": {"type": "array", "items": {"type": "integer"}},
    }
    assert fs.convert({}) == {"q": "x", "k": []}
    assert f(**fs.convert({"q": "y"})) == {"q": "y", "k": []}


UserId = NewType("UserId", int)


def test_path_and_newtype() -> None:
    def f(p: pathlib.Path, u: UserId) -> None: ...

    fs = function_schema(f)
    assert props(f) == {"p": {"type": "string"}, "u": {"type": "integer"}}
    assert fs.convert({"p": "a/b", "u": 3.0}) == {"p": pathlib.Path("a/b"), "u": 3}


def test_dates_times_and_uuids_are_formatted_strings() -> None:
    def f(at: datetime.datetime, day: datetime.date, t: datetime.time, id: uuid.UUID) -> None: ...

    fs = function_schema(f)
    assert props(f) == {
        "at": {"type": "string", "format": "date-time"},
        "day": {"type": "string", "format": "date"},
        "t": {"type": "string", "format": "time"},
        "id": {"type": "string", "format": "uuid"},
    }
    u = "12345678-1234-5678-1234-567812345678"
    args = {"at": "2026-11-29T21:30:00+00:00", "day": "2026-11-29", "t": "21:30", "id": u}
    assert fs.convert(args) == {
        "at": datetime.datetime(2026, 11, 29, 21, 30, tzinfo=datetime.UTC),
        "day": datetime.date(2026, 11, 29),
        "t": datetime.time(21, 30),
        "id": uuid.UUID(u),
    }
    with pytest.raises(ValueError, match="parameter 'day': '29/11/2026' is not a valid date"):
        fs.convert({**args, "day": "29/11/2026"})


def test_docstring_fills_descriptions_and_description_is_cleaned() -> None:
    def get_weather(city: str, unit: str = "c") -> str:
        """Get the weather.

        Args:
            city: City name.
            unit: Unit letter.

        Returns:
            A report.
        """
        return ""

    fs = function_schema(get_weather)
    assert fs.name == "get_weather"
    assert fs.description == "Get the weather."
    assert fs.schema.to_dict() == {
        "type": "object",
        "properties": {
            "city": {"type": "string", "description": "City name."},
            "unit": {"type": "string", "description": "Unit letter.", "default": "c"},
        },
        "required": ["city"],
        "additionalProperties": False,
    }


def test_name_and_description_overrides_and_no_docstring() -> None:
    def f(x: int) -> None: ...

    fs = function_schema(f, name="other", description="Custom.")
    assert (fs.name, fs.description) == ("other", "Custom.")
    assert function_schema(f).description == ""


def test_async_functions_methods_and_callables() -> None:
    async def fetch(url: str) -> str:
        return url

    class Api:
        def get(self, key: str) -> str:
            return key

        @classmethod
        def make(cls, n: int) -> None: ...

    class Callable_:
        async def __call__(self, q: str) -> None: ...

    assert function_schema(fetch).is_async
    assert not function_schema(Api().get).is_async
    assert props(Api().get) == {"key": {"type": "string"}}
    assert props(Api.get) == {"key": {"type": "string"}}  # unbound: self skipped
    assert props(Api.make) == {"n": {"type": "integer"}}
    assert function_schema(Callable_()).is_async
    assert schema_of(fetch).to_dict()["properties"] == {"url": {"type": "string"}}


def test_keyword_only_and_positional_only_with_default() -> None:
    def f(a: int = 1, /, *, b: str) -> None: ...

    assert function_schema(f).schema.to_dict() == {
        "type": "object",
        "properties": {"b": {"type": "string"}},
        "required": ["b"],
        "additionalProperties": False,
    }


def test_non_json_defaults_are_not_recorded() -> None:
    def f(
        s: set[int] = frozenset(), p: pathlib.Path = pathlib.Path("."), t: tuple[int, int] = (1, 2)
    ) -> None: ...

    assert props(f) == {
        "s": {"type": "array", "items": {"type": "integer"}},
        "p": {"type": "string"},
        "t": {
            "type": "array",
            "items": {"type": "integer"},
            "default": [1, 2],
            "minItems": 2,
            "maxItems": 2,
        },
    }


def test_schema_of_plain_types() -> None:
    assert schema_of(list[int]).to_dict() == {"type": "array", "items": {"type": "integer"}}
    assert schema_of(Optional[int]).to_dict() == {"type": ["integer", "null"]}  # noqa: UP045


# -- problems are collected ---------------------------------------------------------------


def test_every_signature_problem_is_named_at_once() -> None:
    def get_weather(
        conn: socket.socket,
        x: object,
        *args: int,
        cb: Any = None,
        key: dict[int, str] | None = None,
        b: complex = 0j,
        **kw: Any,
    ) -> None: ...

    with pytest.raises(SignatureError) as info:
        function_schema(get_weather)
    assert info.value.problems == [
        "parameter 'conn': unsupported type socket.socket",
        "parameter 'x': unsupported type object",
        "parameter 'args': *args is not supported; use a list parameter instead",
        "parameter 'key': dict keys must be str, not int (JSON object keys are strings)",
        "parameter 'b': unsupported type complex",
        "parameter 'kw': **kw is not supported; declare each argument as a parameter",
    ]
    assert str(info.value).startswith(
        "get_weather: parameter 'conn': unsupported type socket.socket; parameter 'x'"
    )
    assert "(supported: str, int, float" in str(info.value)
    assert isinstance(info.value, TypeError)


def test_positional_only_without_default_is_a_problem() -> None:
    def f(a: int, /) -> None: ...

    with pytest.raises(
        SignatureError,
        match="parameter 'a': positional-only parameters cannot be passed by name; remove the '/'",
    ):
        function_schema(f)


def test_nested_problems_name_the_field() -> None:
    @dataclasses.dataclass
    class Bad:
        ok: int
        conn: socket.socket

    with pytest.raises(SignatureError) as info:
        schema_of(Bad)
    assert info.value.problems == [
        "test_derive.test_nested_problems_name_the_field.<locals>.Bad: field 'conn': "
        "unsupported type socket.socket".replace("test_derive.", f"{__name__}.")
    ]


def test_recursive_types_are_a_problem() -> None:
    with pytest.raises(SignatureError, match=r"recursive type .*Tree is not supported"):
        schema_of(Tree)


@dataclasses.dataclass
class Tree:
    children: list[Tree]


def test_unresolvable_annotation_names_the_parameter() -> None:
    def f(x: Undefined, y: int) -> None: ...  # type: ignore[name-defined]  # noqa: F821

    with pytest.raises(SignatureError) as info:
        function_schema(f)
    assert info.value.problems == [
        "parameter 'x': cannot resolve the annotation 'Undefined' (name 'Undefined' is not "
        "defined); define the type at module level or import it"
    ]


def test_constraint_outside_the_subset_is_a_problem() -> None:
    def f(n: Annotated[int, at.MultipleOf(2)]) -> None: ...

    with pytest.raises(SignatureError, match="constraint MultipleOf"):
        function_schema(f)


def test_unknown_annotated_metadata_is_a_problem() -> None:
    def f(n: Annotated[int, 42]) -> None: ...

    with pytest.raises(SignatureError, match="unsupported Annotated metadata 42"):
        function_schema(f)


# -- convert ------------------------------------------------------------------------------


class Named(TypedDict):
    name: str


def test_convert_is_identity_when_nothing_needs_converting() -> None:
    def f(a: str, b: list[str], c: dict[str, Any], d: Named, e: float = 1.0) -> None: ...

    args = {"a": "x", "b": ["y"], "c": {"k": 1}, "d": {"name": "T"}}
    assert function_schema(f).convert(args) is args
    assert function_schema(f).convert({"a": "x", "e": None}) == {"a": "x"}


def test_convert_typeddict_drops_null_for_not_required_keys() -> None:
    def f(m: Movie) -> None: ...

    assert function_schema(f).convert({"m": {"title": "T", "year": None}}) == {"m": {"title": "T"}}


def test_convert_builds_declared_types() -> None:
    def plan(
        route: Route,
        level: Level,
        mode: Literal["a", "b"],
        pair: tuple[int, str],
        tags: set[str],
        ids: frozenset[int],
        n: int,
        when: Point | None = None,
        lookup: dict[str, Point] | None = None,
        person: Person | None = None,
        many: list[list[Point]] | None = None,
        movie: Movie | None = None,
    ) -> None: ...

    fs = function_schema(plan)
    args = {
        "route": {"start": {"x": 1}, "stops": [{"x": 2, "y": 3}], "color": "green"},
        "level": 2,
        "mode": "a",
        "pair": [1, "z"],
        "tags": ["a", "a"],
        "ids": [1],
        "n": 4.0,
        "when": None,
        "lookup": {"k": {"x": 5}},
        "person": {"name": "Ann", "home": {"x": 0}},
        "many": [[{"x": 1}]],
        "movie": {"title": "M"},
    }
    assert fs.schema.validate_value(args) is args
    assert fs.convert(args) == {
        "route": Route(start=Point(x=1), stops=[Point(x=2, y=3)], color=Color.GREEN),
        "level": Level.HIGH,
        "mode": "a",
        "pair": (1, "z"),
        "tags": {"a"},
        "ids": frozenset({1}),
        "n": 4,
        "when": None,
        "lookup": {"k": Point(x=5)},
        "person": Person(name="Ann", home=Point(x=0)),
        "many": [[Point(x=1)]],
        "movie": {"title": "M"},
    }
    converted = fs.convert(args)
    assert type(converted["n"]) is int
    assert type(converted["level"]) is Level


def test_convert_drops_null_for_non_nullable_optionals_so_defaults_apply() -> None:
    def f(
        city: str,
        unit: Color = Color.RED,
        days: int = 3,
        note: str | None = "n",
        p: Point | None = None,
    ) -> dict[str, Any]:
        return {"city": city, "unit": unit, "days": days, "note": note, "p": p}

    fs = function_schema(f)
    strict_args = fs.schema.validate(
        '{"city": "Oslo", "unit": null, "days": null, "note": null, "p": {"x": 1, "y": null, '
        '"label": null, "tags": null}}',
        strict=True,
    )
    kwargs = fs.convert(strict_args)
    assert kwargs == {"city": "Oslo", "note": None, "p": Point(x=1)}
    assert f(**kwargs) == {
        "city": "Oslo",
        "unit": Color.RED,
        "days": 3,
        "note": None,
        "p": Point(x=1),
    }


def test_convert_missing_optional_is_not_passed() -> None:
    def f(a: int, b: Level = Level.LOW) -> None: ...

    assert function_schema(f).convert({"a": 1}) == {"a": 1}


@dataclasses.dataclass
class Circle:
    r: float


@dataclasses.dataclass
class Square:
    side: float


def test_convert_union_picks_the_matching_branch() -> None:
    def f(shape: Circle | Square | int) -> None: ...

    fs = function_schema(f)
    assert fs.convert({"shape": {"side": 2}}) == {"shape": Square(side=2)}
    assert fs.convert({"shape": {"r": 1}}) == {"shape": Circle(r=1)}
    assert fs.convert({"shape": 5.0}) == {"shape": 5}


def test_convert_pydantic_drops_nulls_for_defaults_at_every_depth() -> None:
    def f(p: Person) -> None: ...

    fs = function_schema(f)
    args = {"p": {"name": "A", "age": None, "email": None, "home": {"x": 1, "y": None}}}
    assert fs.schema.validate_value(args, strict=True) is args
    assert fs.convert(args) == {"p": Person(name="A", age=0, email=None, home=Point(x=1))}


def test_function_schema_is_frozen() -> None:
    def f(x: int) -> None: ...

    fs = function_schema(f)
    assert isinstance(fs, FunctionSchema)
    assert isinstance(fs.schema, Schema)
    with pytest.raises(dataclasses.FrozenInstanceError):
        fs.name = "g"  # type: ignore[misc]


def test_pydantic_is_not_imported_by_derivation() -> None:
    import subprocess

    code = (
        "import sys\nfrom nb_tools.tool._derive import function_schema\n"
        "def f(a: int, b: list[str]) -> None: ...\nfunction_schema(f)\n"
        "assert 'pydantic' not in sys.modules, 'pydantic imported'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
