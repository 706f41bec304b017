"""Schema: builders, the JSON form, from_dict checks and the strict form."""

from __future__ import annotations

import copy
import json

import pytest

from nb_tools.tool import Schema, ValidationError
from nb_tools.tool._schema import UNSET


def weather() -> Schema:
    return Schema.object(
        {
            "city": Schema.string("City name"),
            "unit": Schema.enum("Temperature unit", "celsius", "fahrenheit"),
            "days": Schema(type="integer", minimum=1, maximum=14),
            "hours": Schema.array(Schema.integer(), "Hours of the day"),
        },
        "city",
    )


def test_builders_to_dict() -> None:
    assert Schema.string("s").to_dict() == {"type": "string", "description": "s"}
    assert Schema.integer().to_dict() == {"type": "integer"}
    assert Schema.number("n").to_dict() == {"type": "number", "description": "n"}
    assert Schema.boolean().to_dict() == {"type": "boolean"}
    assert Schema.enum("e", "a", "b").to_dict() == {
        "type": "string",
        "description": "e",
        "enum": ["a", "b"],
    }
    assert Schema.enum("", 1, 2).to_dict() == {"type": "integer", "enum": [1, 2]}
    assert Schema.enum("", "a", 1).to_dict() == {"enum": ["a", 1]}
    assert Schema.array(Schema.string(), "list").to_dict() == {
        "type": "array",
        "description": "list",
        "items": {"type": "string"},
    }


def test_object_builder_whole_dict() -> None:
    assert weather().to_dict() == {
        "type": "object",
        "properties": {
            "city": {"type": "string", "description": "City name"},
            "unit": {
                "type": "string",
                "description": "Temperature unit",
                "enum": ["celsius", "fahrenheit"],
            },
            "days": {"type": "integer", "minimum": 1, "maximum": 14},
            "hours": {
                "type": "array",
                "description": "Hours of the day",
                "items": {"type": "integer"},
            },
        },
        "required": ["city"],
    }


def test_object_builder_rejects_unknown_required_names() -> None:
    with pytest.raises(ValueError, match=r"required 'town', 'zip' not in properties \('city'\)"):
        Schema.object({"city": Schema.string()}, "town", "zip")


def test_enum_builder_needs_values_and_instances_keep_their_field() -> None:
    with pytest.raises(ValueError, match="at least one value"):
        Schema.enum("d")
    s = Schema(enum=["x"])
    assert s.enum == ["x"]
    assert Schema().enum is None


def test_json_is_compact_and_keeps_unicode() -> None:
    s = Schema.object({"é": Schema.string("café")})
    assert s.json() == '{"type":"object","properties":{"é":{"type":"string","description":"café"}}}'


def test_every_keyword_round_trips_in_canonical_order() -> None:
    d = {
        "type": ["string", "null"],
        "title": "T",
        "description": "D",
        "properties": {"p": {"type": "integer"}},
        "required": ["p"],
        "items": {"type": "boolean"},
        "enum": ["a", None],
        "default": "a",
        "format": "email",
        "minimum": 0,
        "maximum": 9.5,
        "exclusiveMinimum": -1,
        "exclusiveMaximum": 10,
        "minLength": 1,
        "maxLength": 5,
        "minItems": 0,
        "maxItems": 3,
        "pattern": "^a",
        "anyOf": [{"type": "string"}, {"type": "null"}],
        "additionalProperties": False,
    }
    shuffled = dict(reversed(list(d.items())))
    s = Schema.from_dict(shuffled)
    assert list(s.to_dict()) == list(d)
    assert s.to_dict() == d
    assert Schema.from_dict(s.to_dict()) == s
    assert s.min_length == 1 and s.exclusive_maximum == 10 and s.any_of is not None


def test_default_none_is_kept_and_unset_is_omitted() -> None:
    assert Schema(type="null", default=None).to_dict() == {"type": "null", "default": None}
    assert Schema(type="null").default is UNSET
    assert Schema.from_dict({"default": None}).to_dict() == {"default": None}


def test_to_dict_returns_copies() -> None:
    s = Schema(enum=[[1, 2]], default={"a": [1]})
    d = s.to_dict()
    d["enum"][0].append(3)
    d["default"]["a"].append(2)
    assert s.to_dict() == {"enum": [[1, 2]], "default": {"a": [1]}}


def test_from_dict_ignores_annotations() -> None:
    d = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "examples": [{}],
        "$comment": "c",
        "properties": {},
    }
    assert Schema.from_dict(d).to_dict() == {"type": "object", "properties": {}}


@pytest.mark.parametrize(
    ("d", "message"),
    [
        (
            {"$ref": "#/$defs/x"},
            "/: unsupported keyword '$ref'; $ref/$defs are not supported: inline the definitions",
        ),
        (
            {"properties": {"a": {"oneOf": []}}},
            "/properties/a: unsupported keyword 'oneOf'; use Info.raw_parameters",
        ),
        (
            {"type": "str"},
            "/type: expected one of null, boolean, integer, number, string, "
            "array, object or a list of them, got 'str'",
        ),
        ({"required": "a"}, "/required: expected a list of strings, got 'a'"),
        ({"minimum": True}, "/minimum: expected a number, got True"),
        ({"maxLength": -1}, "/maxLength: expected a non-negative integer, got -1"),
        ({"anyOf": []}, "/anyOf: expected a non-empty list of schemas, got []"),
        ({"items": [{"type": "string"}]}, "/items: the array form of items is draft 2019-09's"),
        (
            {"additionalProperties": 3},
            "/additionalProperties: expected true, false or a schema, got 3",
        ),
        ({"prefixItems": []}, "/prefixItems: expected a non-empty list of schemas, got []"),
        ({"anyOf": [{"type": "string"}, 3]}, "/anyOf/1: expected an object (dict), got int"),
        ({"pattern": "("}, "invalid pattern at /pattern '\\('"),
        ([], "/: expected an object (dict), got list"),
    ],
)
def test_from_dict_errors_name_the_path(d: object, message: str) -> None:
    with pytest.raises(ValueError) as info:
        Schema.from_dict(d)  # type: ignore[arg-type]
    assert message.replace("\\(", "(") in str(info.value)


def test_from_dict_accepts_integral_float_lengths() -> None:
    assert Schema.from_dict({"maxLength": 3.0}).max_length == 3


def test_invalid_pattern_or_type_fails_at_build() -> None:
    with pytest.raises(ValueError, match=r"invalid pattern '\[a'"):
        Schema(type="string", pattern="[a")
    with pytest.raises(ValueError, match="unknown type 'str'"):
        Schema(type="str")


def test_strict_form_whole_dict() -> None:
    nested = Schema.object({"x": Schema.number(), "y": Schema.number()}, "x")
    s = Schema.object(
        {
            "city": Schema.string("City"),
            "unit": Schema.enum("Unit", "c", "f"),
            "any": Schema(),
            "choice": Schema(any_of=[Schema.string(), Schema.integer()]),
            "point": nested,
            "points": Schema.array(nested),
            "maybe": Schema(type=["string", "null"]),
        },
        "city",
        "point",
    )
    point = {
        "type": "object",
        "properties": {"x": {"type": "number"}, "y": {"type": ["number", "null"]}},
        "required": ["x", "y"],
        "additionalProperties": False,
    }
    assert s.to_strict_dict() == {
        "type": "object",
        "properties": {
            "city": {"type": "string", "description": "City"},
            "unit": {"type": ["string", "null"], "description": "Unit", "enum": ["c", "f", None]},
            "any": {},
            "choice": {"anyOf": [{"type": "string"}, {"type": "integer"}, {"type": "null"}]},
            "point": point,
            "points": {"type": ["array", "null"], "items": point},
            "maybe": {"type": ["string", "null"]},
        },
        "required": ["city", "unit", "any", "choice", "point", "points", "maybe"],
        "additionalProperties": False,
    }
    assert json.loads(s.strict_json()) == s.to_strict_dict()
    assert s.strict().to_dict() == s.to_strict_dict()


def test_strict_does_not_touch_the_original() -> None:
    s = weather()
    before = copy.deepcopy(s.to_dict())
    s.strict()
    assert s.to_dict() == before


def test_strict_validation_accepts_null_for_optional_properties_only() -> None:
    s = weather()
    assert s.validate(
        '{"city": "Oslo", "unit": null, "days": null, "hours": null}', strict=True
    ) == {"city": "Oslo", "unit": None, "days": None, "hours": None}
    assert s.validate('{"city": "Oslo"}', strict=True) == {"city": "Oslo"}
    with pytest.raises(ValidationError) as info:
        s.validate('{"city": null}', strict=True)
    assert info.value.problems == ["/city: expected string, got null"]
    with pytest.raises(ValidationError):
        s.validate('{"city": "Oslo", "unit": null}')
    assert s.strict().validate('{"city":"Oslo","unit":null,"days":null,"hours":[1]}') == {
        "city": "Oslo",
        "unit": None,
        "days": None,
        "hours": [1],
    }


def test_assigning_a_field_drops_the_compiled_validator() -> None:
    s = Schema(type="integer", maximum=5)
    assert s.validate("5") == 5
    s.maximum = 4
    with pytest.raises(ValidationError, match="greater than the maximum 4"):
        s.validate("5")


def test_a_used_schema_pickles_and_copies_without_its_compiled_code() -> None:
    import pickle

    s = weather()
    s.validate('{"city": "x"}')
    for other in (pickle.loads(pickle.dumps(s)), copy.copy(s), copy.deepcopy(s)):
        assert other == s
        assert "_compiled" not in other.__dict__
        assert other.validate('{"city": "y"}') == {"city": "y"}


def test_equality_ignores_the_cache() -> None:
    a, b = weather(), weather()
    a.validate('{"city": "x"}')
    assert a == b
