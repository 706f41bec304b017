"""Schema.validate: JSON Schema 2020-12 semantics for the subset, every problem named."""

from __future__ import annotations

import json
from typing import Any

import pytest

from nb_tools.tool import Schema, ValidationError


def ok(schema: Schema | dict[str, Any], value: Any) -> bool:
    """Validate ``value`` from text and from the parsed value; both paths must agree."""
    s = schema if isinstance(schema, Schema) else Schema.from_dict(schema)
    raw = json.dumps(value, ensure_ascii=False)
    try:
        s.validate(raw)
    except ValidationError:
        with pytest.raises(ValidationError):
            s.validate_value(value)
        assert not s.is_valid(value)
        return False
    assert s.validate_value(value) is value
    assert s.is_valid(value)
    return True


def problems(schema: Schema | dict[str, Any], raw: str | bytes) -> list[str]:
    s = schema if isinstance(schema, Schema) else Schema.from_dict(schema)
    with pytest.raises(ValidationError) as info:
        s.validate(raw)
    return info.value.problems


# -- types --------------------------------------------------------------------------------

VALUES = [None, True, False, 0, 1, -7, 1.0, 1e300, 1.5, "", "1", [], [1], {}, {"a": 1}]


@pytest.mark.parametrize(
    ("type_", "accepted"),
    [
        ("null", [None]),
        ("boolean", [True, False]),
        ("integer", [0, 1, -7, 1.0, 1e300]),
        ("number", [0, 1, -7, 1.0, 1e300, 1.5]),
        ("string", ["", "1"]),
        ("array", [[], [1]]),
        ("object", [{}, {"a": 1}]),
    ],
)
def test_each_type_accepts_exactly_its_values(type_: str, accepted: list[Any]) -> None:
    got = [v for v in VALUES if ok({"type": type_}, v)]
    assert json.dumps(got) == json.dumps(accepted)  # json.dumps: True != 1 here


def test_type_list() -> None:
    s = {"type": ["string", "null"]}
    assert [v for v in VALUES if ok(s, v)] == [None, "", "1"]
    assert problems(s, "3") == ["/: expected string or null, got integer"]


def test_no_type_accepts_everything() -> None:
    assert all(ok({}, v) for v in VALUES)


def test_integer_message_and_float_integers() -> None:
    assert problems({"type": "integer"}, "1.5") == ["/: expected integer, got number"]
    assert problems({"type": "integer"}, "true") == ["/: expected integer, got boolean"]
    assert Schema.integer().validate("1.0") == 1.0
    assert Schema.integer().validate("1E2") == 100.0


def test_booleans_are_never_numbers() -> None:
    assert not ok({"type": "number"}, True)
    assert not ok({"type": "integer"}, False)
    assert ok({"minimum": 5}, True)  # minimum does not apply to booleans


# -- numbers ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kw", "bound", "inside", "outside", "message"),
    [
        ("minimum", 2, [2, 2.0, 3], [1.99, 1], "/: 1 is less than the minimum 2"),
        ("maximum", 2, [2, 1.5], [2.01, 3], "/: 3 is greater than the maximum 2"),
        (
            "exclusiveMinimum",
            2,
            [2.01, 3],
            [2, 1],
            "/: 1 is not greater than the exclusive minimum 2",
        ),
        ("exclusiveMaximum", 2, [1.99, 1], [2, 3], "/: 3 is not less than the exclusive maximum 2"),
    ],
)
def test_numeric_bounds(
    kw: str, bound: float, inside: list[float], outside: list[float], message: str
) -> None:
    s = {"type": "number", kw: bound}
    assert all(ok(s, v) for v in inside)
    assert not any(ok(s, v) for v in outside)
    assert problems(s, json.dumps(outside[-1])) == [message]


def test_numeric_bounds_ignore_other_types() -> None:
    assert ok({"minimum": 10}, "short")
    assert ok({"type": ["integer", "string"], "maximum": 1}, "x")
    assert not ok({"type": ["integer", "string"], "maximum": 1}, 2)


def test_large_integers_compare_exactly() -> None:
    assert not ok({"maximum": 2**64}, 2**64 + 1)
    assert ok({"maximum": 2**64}, 2**64)


# -- strings ------------------------------------------------------------------------------


def test_lengths_count_code_points() -> None:
    s = {"type": "string", "minLength": 2, "maxLength": 2}
    assert ok(s, "éé")  # 4 UTF-8 bytes, 2 code points
    assert ok(s, "😀😀")  # 2 astral code points (4 UTF-16 units)
    assert not ok(s, "é")
    assert problems(s, '"😀😀😀"') == ["/: string is longer than 2 characters (has 3)"]
    assert problems(s, '"a"') == ["/: string is shorter than 2 characters (has 1)"]


def test_pattern_is_unanchored() -> None:
    s = {"type": "string", "pattern": "b+"}
    assert ok(s, "abbbc")
    assert not ok(s, "ac")
    assert problems(s, '"ac"') == ["/: string \"ac\" does not match pattern 'b+'"]
    assert ok({"type": "string", "pattern": "^a"}, "abc")
    assert not ok({"type": "string", "pattern": "^a"}, "ba")


def test_pattern_ignores_non_strings() -> None:
    assert ok({"pattern": "^x$"}, 5)


def test_format_is_an_annotation() -> None:
    for fmt in ("email", "date-time", "uri", "uuid"):
        assert ok({"type": "string", "format": fmt}, "not that at all")


def test_length_and_pattern_problems_together() -> None:
    s = {"type": "string", "maxLength": 2, "pattern": "^[0-9]+$"}
    assert problems(s, '"abc"') == [
        "/: string is longer than 2 characters (has 3)",
        "/: string \"abc\" does not match pattern '^[0-9]+$'",
    ]


# -- enum ---------------------------------------------------------------------------------


def test_enum_compares_json_values() -> None:
    assert not ok({"enum": [0]}, False)
    assert not ok({"enum": [False]}, 0)
    assert not ok({"enum": [1]}, True)
    assert ok({"enum": [1]}, 1.0)
    assert ok({"enum": [1.0]}, 1)
    assert ok({"enum": [None]}, None)
    assert not ok({"enum": [None]}, 0)
    assert not ok({"enum": ["1"]}, 1)


def test_enum_with_containers() -> None:
    s = {"enum": [[1, "a"], {"k": [True]}]}
    assert ok(s, [1.0, "a"])
    assert ok(s, {"k": [True]})
    assert not ok(s, [True, "a"])
    assert not ok(s, {"k": [1]})
    assert not ok(s, [1])
    assert not ok(s, "a")


def test_enum_problem_lists_the_choices() -> None:
    assert problems(Schema.enum("", "celsius", "fahrenheit"), '"kelvin"') == [
        '/: "kelvin" is not one of "celsius", "fahrenheit"'
    ]


# -- arrays -------------------------------------------------------------------------------


def test_items_and_counts() -> None:
    s = {"type": "array", "items": {"type": "integer"}, "minItems": 1, "maxItems": 3}
    assert ok(s, [1, 2.0])
    assert not ok(s, [])
    assert not ok(s, [1, 2, 3, 4])
    assert problems(s, "[]") == ["/: array has 0 items, fewer than the minimum 1"]
    assert problems(s, "[1, 2, 3, 4]") == ["/: array has 4 items, more than the maximum 3"]
    assert problems(s, '[1, "x", 2.5]') == [
        "/1: expected integer, got string",
        "/2: expected integer, got number",
    ]


def test_array_keywords_ignore_other_types() -> None:
    assert ok({"minItems": 3, "items": {"type": "string"}}, {"a": 1})


# -- objects ------------------------------------------------------------------------------


def test_required_and_properties_collect_every_problem() -> None:
    s = Schema.object(
        {
            "city": Schema.string(),
            "days": Schema(type="integer", minimum=1),
            "items": Schema.array(Schema.object({"name": Schema.string()}, "name")),
        },
        "city",
        "days",
    )
    assert problems(s, '{"items": [{"name": "a"}, {}, {"name": 3}]}') == [
        '/: missing required property "city"',
        '/: missing required property "days"',
        '/items/1: missing required property "name"',
        "/items/2/name: expected string, got integer",
    ]
    assert problems(s, '{"city": 1, "days": 0}') == [
        "/city: expected string, got integer",
        "/days: 0 is less than the minimum 1",
    ]


def test_additional_properties_false_names_the_extras() -> None:
    s = Schema(
        type="object", properties={"a": Schema.string(), "b": Schema()}, additional_properties=False
    )
    assert ok(s, {"a": "x", "b": [1]})
    assert problems(s, '{"a": "x", "zz": 1, "q": 2}') == [
        '/: unexpected property "zz"; allowed: "a", "b"',
        '/: unexpected property "q"; allowed: "a", "b"',
    ]
    assert ok({"type": "object", "additionalProperties": True}, {"any": 1})
    assert ok({"type": "object"}, {"any": 1})
    assert problems({"additionalProperties": False}, '{"x": 1}') == [
        '/: unexpected property "x"; allowed: none'
    ]


def test_property_paths_escape_pointer_characters() -> None:
    s = Schema.object({"a/b": Schema.object({"~": Schema.integer()})})
    assert problems(s, '{"a/b": {"~": "x"}}') == ["/a~1b/~0: expected integer, got string"]


def test_object_keywords_ignore_other_types() -> None:
    assert ok({"required": ["a"], "properties": {"a": {"type": "string"}}}, [1])


def test_properties_do_not_require() -> None:
    assert ok(Schema.object({"a": Schema.string()}), {})


# -- anyOf --------------------------------------------------------------------------------


def test_any_of() -> None:
    s = {"anyOf": [{"type": "string", "maxLength": 2}, {"type": "integer", "minimum": 0}]}
    assert ok(s, "ab")
    assert ok(s, 3)
    assert not ok(s, "abc")
    assert not ok(s, -1)
    assert not ok(s, None)
    # The branch whose type matched explains the failure.
    assert problems(s, '"abc"') == ["/: string is longer than 2 characters (has 3)"]
    assert problems(s, "null") == [
        "/: matches none of the 2 allowed forms: (1) expected string, got null; "
        "(2) expected integer, got null"
    ]


def test_nullable_any_of_reports_the_inner_problem() -> None:
    s = Schema.object(
        {"p": Schema(any_of=[Schema.object({"x": Schema.integer()}, "x"), Schema(type="null")])}
    )
    assert ok(s, {"p": None})
    assert problems(s, '{"p": {"x": "1"}}') == ["/p/x: expected integer, got string"]


def test_any_of_with_nested_paths_in_summary() -> None:
    s = {
        "anyOf": [
            {"type": "array", "items": {"type": "string"}},
            {"type": "array", "items": {"type": "null"}},
        ]
    }
    assert problems(s, "[1]") == [
        "/: matches none of the 2 allowed forms: (1) /0 expected string, got integer; "
        "(2) /0 expected null, got integer"
    ]


# -- parsing and the I-JSON checks go through validate ------------------------------------


def test_validate_returns_the_parsed_value_from_str_and_bytes() -> None:
    s = Schema.object({"city": Schema.string()}, "city")
    assert s.validate('{"city": "Zürich"}') == {"city": "Zürich"}
    assert s.validate('{"city": "Zürich"}'.encode()) == {"city": "Zürich"}


def test_validate_rejects_duplicates_even_when_both_values_are_valid() -> None:
    s = Schema.object({"city": Schema.string()}, "city")
    assert problems(s, '{"city": "Paris", "city": "Rome"}') == ["/city: duplicate key"]


def test_validate_reports_syntax_errors() -> None:
    assert problems(Schema.object({}), '{"a": ') == [
        "invalid JSON at line 1 column 7: Expecting value"
    ]


def test_validation_error_message_joins_problems() -> None:
    with pytest.raises(ValidationError) as info:
        Schema.object({"a": Schema.string()}, "a").validate('{"b": 1}')
    assert str(info.value) == '/: missing required property "a"'


# -- depth: the generated validator splits deep schemas ------------------------------------


def test_deeply_nested_schema() -> None:
    s: Schema = Schema.integer()
    value: Any = 1
    for i in range(30):
        s = Schema.object({f"k{i}": Schema.array(s)}, f"k{i}") if i % 2 else Schema.array(s)
        value = {f"k{i}": [value]} if i % 2 else [value]
    assert s.validate(json.dumps(value)) == value
    bad = json.dumps(value).replace("[1]", '["1"]')
    got = problems(s, bad)
    assert len(got) == 1 and got[0].endswith(": expected integer, got string")
    assert got[0].count("/") == 45  # 15 objects (key + index) + 15 arrays


def test_many_properties() -> None:
    s = Schema.object(
        {f"p{i}": Schema(type="integer", maximum=i) for i in range(300)},
        *(f"p{i}" for i in range(300)),
    )
    value = {f"p{i}": i for i in range(300)}
    assert s.validate(json.dumps(value)) == value
    value["p150"] = 151
    assert problems(s, json.dumps(value)) == ["/p150: 151 is greater than the maximum 150"]
