"""The official JSON Schema Test Suite (draft 2020-12), for the keywords of our subset.

``data/json_schema_suite_2020_12.json`` holds the suite's groups whose schema uses only
our keywords (taken from the jsonschema 4.26.0 sdist; MIT licence, see the file's header).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from nb_tools.tool import Schema, ValidationError

SUITE = json.loads((Path(__file__).parent / "data" / "json_schema_suite_2020_12.json").read_text())
GROUPS: list[dict[str, Any]] = SUITE["groups"]


@pytest.mark.parametrize("group", GROUPS, ids=[f"{g['file']}: {g['description']}" for g in GROUPS])
def test_suite_group(group: dict[str, Any]) -> None:
    schema = Schema.from_dict(group["schema"])
    for case in group["tests"]:
        try:
            schema.validate(json.dumps(case["data"], ensure_ascii=False))
            from_text = True
        except ValidationError:
            from_text = False
        verdicts = (from_text, schema.is_valid(case["data"]))
        assert verdicts == (case["valid"], case["valid"]), case["description"]


def test_the_suite_covers_every_keyword_file() -> None:
    files = {g["file"] for g in GROUPS}
    assert len(GROUPS) >= 80
    assert {
        "type.json",
        "enum.json",
        "anyOf.json",
        "pattern.json",
        "required.json",
        "additionalProperties.json",
        "minLength.json",
        "exclusiveMinimum.json",
    } <= files
