"""Argument validation from raw JSON text: nb_tools ``Schema.validate`` against the
alternatives a user would pick.

* jsonschema: ``Draft202012Validator`` built once, fed ``json.loads`` output (no I-JSON
  checks: duplicate keys are silently resolved, NaN accepted).
* pydantic: ``TypeAdapter(Model).validate_json(raw, strict=True)`` (no I-JSON checks).

Run from the repository root: ``python benchmarks/bench_validate.py``. Prints
microseconds per call and ratios (targets: >= 4x jsonschema on the small schema, >= 10x on
the medium and large ones).
"""

from __future__ import annotations

import json
import sys
import timeit
from pathlib import Path
from typing import Annotated, Any, Literal

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from nb_tools.tool import Schema

SMALL_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "city": {"type": "string", "description": "City name"},
        "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
    },
    "required": ["city"],
}
SMALL_ARGS = {"city": "Paris", "unit": "celsius"}

MEDIUM_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "query": {"type": "string", "minLength": 1, "maxLength": 200},
        "mode": {"type": "string", "enum": ["fast", "thorough", "balanced"]},
        "limit": {"type": "integer", "minimum": 1, "maximum": 100},
        "offset": {"type": "integer", "minimum": 0},
        "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 10},
        "lang": {"type": "string", "pattern": "^[a-z]{2}(-[A-Z]{2})?$"},
        "threshold": {"type": "number", "exclusiveMinimum": 0, "maximum": 1},
        "verbose": {"type": "boolean"},
    },
    "required": ["query", "mode", "limit"],
    "additionalProperties": False,
}
MEDIUM_ARGS = {
    "query": "weather in paris",
    "mode": "balanced",
    "limit": 20,
    "offset": 40,
    "tags": ["a", "b", "c", "d"],
    "lang": "en-US",
    "threshold": 0.5,
    "verbose": True,
}


def _large() -> tuple[dict[str, Any], dict[str, Any]]:
    address = {
        "type": "object",
        "properties": {
            "street": {"type": "string"},
            "city": {"type": "string", "minLength": 1},
            "zip": {"type": "string", "pattern": "^[0-9]{5}$"},
            "country": {"type": "string", "enum": ["FR", "DE", "US", "JP"]},
        },
        "required": ["street", "city", "country"],
    }
    item = {
        "type": "object",
        "properties": {
            "sku": {"type": "string", "pattern": "^[A-Z]{3}-[0-9]+$"},
            "qty": {"type": "integer", "minimum": 1, "maximum": 1000},
            "price": {"type": "number", "minimum": 0},
            "gift": {"type": "boolean"},
            "note": {"type": ["string", "null"], "maxLength": 200},
        },
        "required": ["sku", "qty", "price"],
    }
    props: dict[str, Any] = {
        "order_id": {"type": "string", "minLength": 8},
        "customer": {
            "type": "object",
            "properties": {
                "name": {"type": "string"},
                "email": {"type": "string", "format": "email"},
                "age": {"type": "integer", "minimum": 0},
                "vip": {"type": "boolean"},
                "billing": address,
                "shipping": address,
            },
            "required": ["name", "email"],
        },
        "items": {"type": "array", "items": item, "minItems": 1, "maxItems": 50},
        "status": {"type": "string", "enum": ["new", "paid", "shipped", "done"]},
        "priority": {"type": "integer", "minimum": 0, "maximum": 5},
        "coupon": {"anyOf": [{"type": "string"}, {"type": "null"}]},
    }
    for i in range(6):
        props[f"flag_{i}"] = {"type": "boolean"}
    schema = {
        "type": "object",
        "properties": props,
        "required": ["order_id", "customer", "items", "status"],
    }
    addr = {"street": "1 rue de Rivoli", "city": "Paris", "zip": "75001", "country": "FR"}
    args = {
        "order_id": "ORD-000123",
        "customer": {
            "name": "Ann",
            "email": "ann@example.com",
            "age": 41,
            "vip": False,
            "billing": addr,
            "shipping": addr,
        },
        "items": [
            {
                "sku": f"ABC-{i}",
                "qty": i + 1,
                "price": 9.5,
                "gift": i % 2 == 0,
                "note": None if i % 2 else "wrap it",
            }
            for i in range(8)
        ],
        "status": "paid",
        "priority": 2,
        "coupon": None,
        **{f"flag_{i}": i % 2 == 0 for i in range(6)},
    }
    return schema, args


def _pydantic_models() -> dict[str, Any]:
    from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

    class Small(BaseModel):
        city: str
        unit: Literal["celsius", "fahrenheit"] | None = None

    class Medium(BaseModel):
        model_config = ConfigDict(extra="forbid")
        query: Annotated[str, Field(min_length=1, max_length=200)]
        mode: Literal["fast", "thorough", "balanced"]
        limit: Annotated[int, Field(ge=1, le=100)]
        offset: Annotated[int, Field(ge=0)] = 0
        tags: Annotated[list[str], Field(max_length=10)] = []
        lang: Annotated[str, Field(pattern="^[a-z]{2}(-[A-Z]{2})?$")] = "en"
        threshold: Annotated[float, Field(gt=0, le=1)] = 0.5
        verbose: bool = False

    class Address(BaseModel):
        street: str
        city: Annotated[str, Field(min_length=1)]
        zip: Annotated[str, Field(pattern="^[0-9]{5}$")] | None = None
        country: Literal["FR", "DE", "US", "JP"]

    class Item(BaseModel):
        sku: Annotated[str, Field(pattern="^[A-Z]{3}-[0-9]+$")]
        qty: Annotated[int, Field(ge=1, le=1000)]
        price: Annotated[float, Field(ge=0)]
        gift: bool = False
        note: Annotated[str, Field(max_length=200)] | None = None

    class Customer(BaseModel):
        name: str
        email: str
        age: Annotated[int, Field(ge=0)] | None = None
        vip: bool = False
        billing: Address | None = None
        shipping: Address | None = None

    class Large(BaseModel):
        order_id: Annotated[str, Field(min_length=8)]
        customer: Customer
        items: Annotated[list[Item], Field(min_length=1, max_length=50)]
        status: Literal["new", "paid", "shipped", "done"]
        priority: Annotated[int, Field(ge=0, le=5)] = 0
        coupon: str | None = None
        flag_0: bool = False
        flag_1: bool = False
        flag_2: bool = False
        flag_3: bool = False
        flag_4: bool = False
        flag_5: bool = False

    return {"small": TypeAdapter(Small), "medium": TypeAdapter(Medium), "large": TypeAdapter(Large)}


def _race(fns: list[Any], numbers: list[int], rounds: int = 15) -> list[float]:
    """Microseconds per call for each of ``fns``: the best of ``rounds`` short runs,
    interleaved so that load from other processes hits every contender alike."""
    best = [float("inf")] * len(fns)
    for _ in range(rounds):
        for i, (fn, n) in enumerate(zip(fns, numbers, strict=True)):
            best[i] = min(best[i], timeit.timeit(fn, number=n) / n * 1e6)
    return best


def main() -> None:
    from jsonschema import Draft202012Validator

    large_schema, large_args = _large()
    cases = [
        ("small", SMALL_SCHEMA, SMALL_ARGS, 5000),
        ("medium", MEDIUM_SCHEMA, MEDIUM_ARGS, 2000),
        ("large", large_schema, large_args, 300),
    ]
    models = _pydantic_models()
    print(
        f"python {sys.version.split()[0]}; microseconds per call from raw JSON text "
        "(best of 15 interleaved runs)"
    )
    print(
        f"{'case':<8}{'props':>6}{'nb_tools':>10}{'jsonschema':>12}{'pydantic':>10}"
        f"{'vs jsonschema':>15}{'vs pydantic':>13}"
    )
    for name, schema_dict, args, number in cases:
        raw = json.dumps(args)
        ours = Schema.from_dict(schema_dict)
        ours.validate(raw)
        validator = Draft202012Validator(schema_dict)
        if not validator.is_valid(json.loads(raw)):
            raise SystemExit(f"{name}: benchmark arguments are invalid for jsonschema")
        adapter = models[name]
        adapter.validate_json(raw, strict=True)
        t_ours, t_js, t_pyd = _race(
            [
                lambda raw=raw, s=ours: s.validate(raw),
                lambda raw=raw, v=validator: v.validate(json.loads(raw)),
                lambda raw=raw, a=adapter: a.validate_json(raw, strict=True),
            ],
            [number, number // 10, number],
        )
        n_props = raw.count('":')
        print(
            f"{name:<8}{n_props:>6}{t_ours:>10.2f}{t_js:>12.2f}{t_pyd:>10.2f}"
            f"{t_js / t_ours:>14.1f}x{t_pyd / t_ours:>12.2f}x"
        )
    print(
        "ratios > 1 mean nb_tools is faster; nb_tools also rejects duplicate keys, NaN, "
        "lone surrogates and invalid UTF-8, which the others do not."
    )


if __name__ == "__main__":
    main()
