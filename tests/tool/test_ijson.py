"""loads_ijson: JSON that every parser reads the same way, or a precise refusal."""

from __future__ import annotations

import json

import pytest

from nb_tools.tool import ValidationError
from nb_tools.tool._json import json_type, loads_ijson, pointer


def problems(raw: str | bytes) -> list[str]:
    with pytest.raises(ValidationError) as info:
        loads_ijson(raw)
    return info.value.problems


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ('{"city": "Paris", "n": 2}', {"city": "Paris", "n": 2}),
        (b'{"city": "Z\xc3\xbcrich"}', {"city": "Zürich"}),
        (bytearray(b"[1, 2.5, true, null]"), [1, 2.5, True, None]),
        ('  \n\t{"a": []}\r\n ', {"a": []}),
        ('"\\ud83d\\ude00"', "😀"),  # a valid surrogate pair
        ('"\\uD83D\\uDE00"', "😀"),
        (
            '{"a": {"a": 1}, "b": {"a": 2}}',
            {"a": {"a": 1}, "b": {"a": 2}},
        ),  # same name, other objects
        ("1e300", 1e300),
        ('"é"', "é"),
        ("[]", []),
    ],
)
def test_accepts_i_json(raw: str | bytes, expected: object) -> None:
    assert loads_ijson(raw) == expected


def test_duplicate_key_at_root() -> None:
    assert problems('{"city": "Paris", "city": "Rome"}') == ["/city: duplicate key"]


def test_duplicate_keys_at_depth_name_every_path() -> None:
    raw = '{"a": [{"x": 1}, {"y": 1, "y": 2}], "b": {"c": {"d": 1, "d": 2}}}'
    assert problems(raw) == ["/a/1/y: duplicate key", "/b/c/d: duplicate key"]


def test_duplicate_key_path_escapes_pointer_characters() -> None:
    assert problems('{"a/b": {"~k": 1, "~k": 2}}') == ["/a~1b/~0k: duplicate key"]


def test_duplicate_key_written_with_an_escape_is_still_a_duplicate() -> None:
    assert problems('{"a": 1, "\\u0061": 2}') == ["/a: duplicate key"]


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity"])
def test_non_finite_literals_are_rejected_with_their_path(literal: str) -> None:
    assert problems(f'{{"x": [1, {literal}]}}') == [
        f"/x/1: {literal} is not a JSON number; use null or a string"
    ]


def test_numbers_that_overflow_a_double_are_rejected() -> None:
    assert problems('{"x": [1e400, -1E+999, 1.5]}') == [
        "/x/0: 1e400 is out of the range of a double (I-JSON); send it as a string",
        "/x/1: -1E+999 is out of the range of a double (I-JSON); send it as a string",
    ]
    assert problems("1" * 400 + ".0")[0].startswith("/: 111111111111111111111111111...")
    assert loads_ijson("1e308") == 1e308
    assert loads_ijson("1" * 400) == int("1" * 400)  # integers are exact in Python


def test_lone_surrogate_escape_in_a_value() -> None:
    assert problems('{"name": "a\\ud800b"}') == [
        "/name: string contains a lone surrogate escape (\\ud800-\\udfff without its pair)"
    ]


def test_lone_low_surrogate_and_uppercase_escape() -> None:
    assert problems('["ok", "\\uDC00"]') == [
        "/1: string contains a lone surrogate escape (\\ud800-\\udfff without its pair)"
    ]


def test_lone_surrogate_escape_in_a_key_is_shown_printable() -> None:
    got = problems('{"k\\ud800": 1}')
    assert got == ["/k\\ud800: member name contains a lone surrogate escape"]
    got[0].encode("utf-8")  # the message itself is valid Unicode


def test_lone_surrogate_in_a_python_str() -> None:
    assert problems('"\ud800"') == [
        "invalid JSON: lone surrogate U+D800 at offset 1 is not Unicode text"
    ]


def test_invalid_utf8_bytes() -> None:
    assert problems(b'{"a": "\xff"}') == [
        "invalid JSON: not valid UTF-8 at byte 7 (invalid start byte); send UTF-8 text"
    ]


def test_utf8_encoded_surrogate_bytes_are_invalid_utf8() -> None:
    assert problems(b'"\xed\xa0\x80"')[0].startswith("invalid JSON: not valid UTF-8 at byte 1")


@pytest.mark.parametrize("bom", [b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff"])
def test_byte_order_marks_are_rejected(bom: bytes) -> None:
    assert problems(bom + b"{}") == [
        "invalid JSON: the text starts with a byte order mark; send UTF-8 without a BOM"
    ]


def test_bom_in_str_is_rejected() -> None:
    assert problems("\ufeff{}") == [
        "invalid JSON: the text starts with a byte order mark (U+FEFF); remove it"
    ]


def test_utf16_without_bom_is_rejected() -> None:
    assert problems('{"a": 1}'.encode("utf-16-le"))[0].startswith("invalid JSON at line 1")


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("", "invalid JSON at line 1 column 1: Expecting value"),
        ("   ", "invalid JSON at line 1 column 4: Expecting value"),
        ('{"a": }', "invalid JSON at line 1 column 7: Expecting value"),
        (
            '{"a": 1,',
            "invalid JSON at line 1 column 9: Expecting property name enclosed in double quotes",
        ),
        ('{"a": 1}\n  x', "invalid JSON at line 2 column 3: Extra data"),
        ("{} {}", "invalid JSON at line 1 column 4: Extra data"),
        (
            "{'a': 1}",
            "invalid JSON at line 1 column 2: Expecting property name enclosed in double quotes",
        ),
        ('"tab\there"', "invalid JSON at line 1 column 5: Invalid control character at"),
    ],
)
def test_syntax_errors_name_line_and_column(raw: str, expected: str) -> None:
    assert problems(raw) == [expected]


def test_deep_nesting_is_a_validation_error_not_a_crash() -> None:
    assert problems("[" * 100_000 + "]" * 100_000) == [
        "invalid JSON: nested too deeply to parse; flatten the arguments"
    ]


def test_moderate_nesting_parses() -> None:
    assert loads_ijson("[" * 200 + "]" * 200) is not None


def test_several_problems_are_reported_together() -> None:
    raw = '{"a": 1, "a": 2, "b": NaN, "c": "\\udfff"}'
    assert problems(raw) == [
        "/a: duplicate key",
        "/b: NaN is not a JSON number; use null or a string",
        "/c: string contains a lone surrogate escape (\\ud800-\\udfff without its pair)",
    ]


def test_rejects_non_text_input() -> None:
    with pytest.raises(TypeError, match="expected str or bytes, got dict"):
        loads_ijson({"a": 1})  # type: ignore[arg-type]


def test_large_document_matches_json_loads() -> None:
    doc = {f"k{i}": [{"x": i, "y": "é" * i, "z": None}] for i in range(200)}
    raw = json.dumps(doc)
    assert loads_ijson(raw) == doc
    assert loads_ijson(raw.encode()) == doc


def test_json_type_and_pointer_helpers() -> None:
    assert [json_type(v) for v in (None, True, 1, 1.0, 1.5, "s", [], {})] == [
        "null",
        "boolean",
        "integer",
        "integer",
        "number",
        "string",
        "array",
        "object",
    ]
    assert pointer([]) == "/"
    assert pointer(["a/b", 0, "~"]) == "/a~1b/0/~0"
