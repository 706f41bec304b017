"""Property tests: validation never crashes, and agrees with jsonschema (Draft 2020-12).

Random schemas are drawn from the subset and random values are biased towards the keys and
small numbers the schemas use, so that both verdicts come up often.
"""

from __future__ import annotations

import dataclasses
import datetime
import enum
import json
from typing import Any, Literal

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from nb_tools.tool import Schema, ValidationError
from nb_tools.tool._derive import function_schema
from nb_tools.tool._json import loads_ijson

SETTINGS = settings(
    max_examples=200,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

LIGHT = settings(SETTINGS, max_examples=100)

KEYS = ["a", "b", "c", "é/~"]

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-3, max_value=3),
    st.integers(),
    st.sampled_from([0.0, 1.0, -2.0, 0.5, 2.5, 1e300, -1e-300]),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from(["", "a", "ab", "abc", "b1", "é", "😀😀", "x9"]),
    st.text(max_size=5),
)
json_values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.one_of(st.sampled_from(KEYS), st.text(max_size=3)), inner, max_size=4),
    ),
    max_leaves=8,
)

TYPE_NAMES = ["null", "boolean", "integer", "number", "string", "array", "object"]
PATTERNS = ["a", "^a", "b$", "[0-9]", "^$", "^[a-c]+$", "é"]
enum_values = st.one_of(scalars, st.lists(st.sampled_from([0, 1, "a", True, None]), max_size=2))
small_num = st.one_of(
    st.integers(min_value=-3, max_value=3), st.sampled_from([0.5, -0.5, 2.5, 1e300])
)
small_len = st.integers(min_value=0, max_value=3)


def _maybe(strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(st.none(), strategy)


leaf_schemas = st.builds(
    lambda kw: Schema(**kw),
    st.fixed_dictionaries(
        {},
        optional={
            "type": st.one_of(
                st.sampled_from(TYPE_NAMES),
                st.lists(st.sampled_from(TYPE_NAMES), min_size=1, max_size=3, unique=True),
            ),
            "enum": st.lists(enum_values, min_size=1, max_size=4),
            "minimum": small_num,
            "maximum": small_num,
            "exclusive_minimum": small_num,
            "exclusive_maximum": small_num,
            "min_length": small_len,
            "max_length": small_len,
            "pattern": st.sampled_from(PATTERNS),
            "format": st.sampled_from(["email", "date-time"]),
            "description": st.sampled_from(["", "d"]),
        },
    ),
)


def _extend(children: st.SearchStrategy[Schema]) -> st.SearchStrategy[Schema]:
    objects = st.builds(
        lambda props, req, extra, base: _with(
            base, properties=props, required=req, additional_properties=extra
        ),
        st.dictionaries(st.sampled_from(KEYS), children, max_size=3),
        _maybe(st.lists(st.sampled_from(KEYS), max_size=3, unique=True)),
        st.sampled_from([None, True, False]),
        st.one_of(st.just(Schema(type="object")), st.just(Schema()), leaf_schemas),
    )
    arrays = st.builds(
        lambda items, lo, hi, base: _with(base, items=items, min_items=lo, max_items=hi),
        _maybe(children),
        _maybe(small_len),
        _maybe(small_len),
        st.one_of(st.just(Schema(type="array")), st.just(Schema()), leaf_schemas),
    )
    any_ofs = st.builds(lambda bs: Schema(any_of=bs), st.lists(children, min_size=1, max_size=3))
    return st.one_of(objects, arrays, any_ofs)


def _with(base: Schema, **changes: Any) -> Schema:
    return Schema.from_dict({**base.to_dict(), **Schema(**changes).to_dict()})


schemas = st.recursive(leaf_schemas, _extend, max_leaves=6)


def _jsonschema_says(schema: Schema, value: Any) -> bool:
    return bool(Draft202012Validator(schema.to_dict()).is_valid(value))


def _ours(schema: Schema, value: Any, *, strict: bool = False) -> bool:
    """Our verdict, checking that the fast path, the explainer and validate() agree."""
    fast = schema.is_valid(value, strict=strict)
    try:
        schema.validate_value(value, strict=strict)
        explained = True
    except ValidationError as e:
        assert e.problems, "a ValidationError must list its problems"
        explained = False
    assert fast == explained, f"fast path says {fast}, explainer says {explained}"
    raw = json.dumps(value, ensure_ascii=False)
    try:
        parsed = schema.validate(raw, strict=strict)
        from_text = True
        assert parsed == value
    except ValidationError:
        from_text = False
    assert from_text == fast
    return fast


@SETTINGS
@given(schemas, json_values)
def test_verdict_agrees_with_jsonschema(schema: Schema, value: Any) -> None:
    # One draw checks several things: generating random schemas is the costly part.
    ours = _ours(schema, value)
    assert ours == _jsonschema_says(schema, value)
    # The strict form is a schema like any other, and accepts what the original accepts
    # when validate(strict=True) is asked.
    strict = schema.strict()
    assert _ours(strict, value) == _jsonschema_says(strict, value)
    if ours:
        assert _ours(schema, value, strict=True)
    # Round trips, and both forms are valid Draft 2020-12 schemas.
    assert Schema.from_dict(schema.to_dict()) == schema
    assert Schema.from_dict(json.loads(schema.json())).to_dict() == schema.to_dict()
    Draft202012Validator.check_schema(strict.to_dict())


def _mutate(text: str, edits: list[tuple[int, int, str]]) -> str:
    for pos, kind, ch in edits:
        i = pos % (len(text) + 1)
        if kind == 0:
            text = text[:i] + ch + text[i:]
        elif kind == 1:
            text = text[:i] + text[i + 1 :]
        else:
            text = text[:i] + ch + text[i + 1 :]
    return text


garbage_chars = st.one_of(
    st.sampled_from(list('{}[]",:\\ 0-eE.+tnfNaI\ud800\ufeff')), st.characters()
)


FIXED_SCHEMAS = [
    Schema(),
    Schema.object({"a": Schema.string(), "b": Schema.array(Schema.integer())}, "a"),
    Schema(any_of=[Schema.number(), Schema(type="string", pattern="^a")]),
]


@LIGHT
@given(
    st.sampled_from(FIXED_SCHEMAS),
    json_values,
    st.lists(st.tuples(st.integers(0, 10_000), st.integers(0, 2), garbage_chars), max_size=4),
)
def test_mutated_text_only_ever_raises_validation_error(
    schema: Schema,
    value: Any,
    edits: list[tuple[int, int, str]],
) -> None:
    text = _mutate(json.dumps(value, ensure_ascii=bool(edits and edits[0][1])), edits)
    for raw in (text, text.encode("utf-8", "surrogatepass")):
        try:
            schema.validate(raw)
        except ValidationError as e:
            assert e.problems
            assert all(isinstance(p, str) and p for p in e.problems)
            "; ".join(e.problems).encode("utf-8")  # messages are always valid Unicode


@LIGHT
@given(st.one_of(st.binary(max_size=40), st.text(max_size=40)))
def test_random_input_only_ever_raises_validation_error(raw: str | bytes) -> None:
    try:
        value = loads_ijson(raw)
    except ValidationError as e:
        assert e.problems
        return
    # Whatever we accept, Python's json reads the same way.
    assert json.loads(raw) == value


@LIGHT
@given(json_values)
def test_i_json_values_round_trip(value: Any) -> None:
    raw = json.dumps(value, ensure_ascii=False)
    assert loads_ijson(raw) == value
    assert loads_ijson(json.dumps(value).encode()) == value


@LIGHT
@given(st.dictionaries(st.sampled_from(KEYS), scalars, min_size=1), st.data())
def test_a_repeated_key_is_always_found(obj: dict[str, Any], data: st.DataObject) -> None:
    key = data.draw(st.sampled_from(sorted(obj)))
    body = json.dumps(obj)[1:-1]
    raw = "{" + body + ", " + json.dumps(key) + ": 1}"
    assume(raw.count(json.dumps(key)) >= 2)
    with pytest.raises(ValidationError) as info:
        loads_ijson(raw)
    token = key.replace("~", "~0").replace("/", "~1")
    assert info.value.problems == [f"/{token}: duplicate key"]


# -- derivation round trip: Python values -> JSON -> validate -> convert -> same values ----


class Color(enum.Enum):
    RED = "red"
    GREEN = "green"


@dataclasses.dataclass
class Point:
    x: float
    y: float = 0.0
    tags: list[str] = dataclasses.field(default_factory=list)


@dataclasses.dataclass
class Route:
    start: Point
    stops: list[Point]
    color: Color = Color.RED


def plan(
    route: Route,
    pair: tuple[int, str],
    ids: set[int],
    when: datetime.date | None = None,
    mode: Literal["fast", "slow"] = "fast",
) -> None: ...


PLAN = function_schema(plan)
finite = st.floats(allow_nan=False, allow_infinity=False)
points = st.builds(Point, x=finite, y=finite, tags=st.lists(st.text(max_size=3), max_size=2))
routes = st.builds(
    Route, start=points, stops=st.lists(points, max_size=3), color=st.sampled_from(Color)
)


def _to_json(value: Any) -> Any:
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, datetime.date):
        return value.isoformat()
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _to_json(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, dict):
        return {k: _to_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set):
        return [_to_json(v) for v in value]
    return value


@LIGHT
@given(
    st.fixed_dictionaries(
        {
            "route": routes,
            "pair": st.tuples(st.integers(), st.text(max_size=3)),
            "ids": st.sets(st.integers(), max_size=3),
        },
        optional={"when": st.dates(), "mode": st.sampled_from(["fast", "slow"])},
    )
)
def test_arguments_survive_json_validation_and_conversion(kwargs: dict[str, Any]) -> None:
    fs = PLAN
    raw = json.dumps(_to_json(kwargs), ensure_ascii=False)
    assert fs.convert(fs.schema.validate(raw)) == kwargs
    assert fs.convert(fs.schema.validate(raw, strict=True)) == kwargs
