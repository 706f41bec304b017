"""Compile a ``Schema`` into closures that check parsed JSON values.

A check takes a value and returns ``None`` when it is valid, else a list of
``(relative_path, message)`` pairs; parents prefix their segment only on failure, so the
valid path allocates nothing. Semantics are JSON Schema 2020-12's for the subset: an
integer is any number without a fractional part, booleans are never numbers, enum compares
JSON values (``0`` is not ``false``, ``1`` equals ``1.0``), lengths count code points,
``format`` is an annotation and ``pattern`` is unanchored (``re.search``, Python syntax).
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable
from typing import Any

from nb_tools.tool._json import json_type, pointer_token
from nb_tools.tool._schema import Schema
from nb_tools.tool._types import ValidationError

__all__ = ["compile_schema", "json_equal", "make_nullable", "raise_problems", "to_strict"]

Problems = list[tuple[str, str]]
Check = Callable[[Any], Problems | None]

_PY_TYPES: dict[str, tuple[type, ...]] = {
    "null": (type(None),),
    "boolean": (bool,),
    "integer": (int,),
    "number": (int, float),
    "string": (str,),
    "array": (list,),
    "object": (dict,),
}


def raise_problems(problems: Problems) -> None:
    raise ValidationError([f"{path or '/'}: {msg}" for path, msg in problems])


def _accept(value: Any) -> None:
    return None


def _show(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 60 else text[:57] + "..."


def json_equal(a: Any, b: Any) -> bool:
    """Equality of JSON values: ``0 != false``, ``1 == 1.0``, containers compared deeply."""
    ta, tb = type(a), type(b)
    if ta is bool or tb is bool:
        return ta is tb and a == b
    if ta in (int, float) and tb in (int, float):
        return bool(a == b)
    if ta is list and tb is list:
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b, strict=True))
    if ta is dict and tb is dict:
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    return ta is tb and a == b


def _enum_key(v: Any) -> tuple[str, Any]:
    t = type(v)
    if t is bool:
        return ("b", v)
    if t is int or t is float:
        return ("n", v)
    return ("s" if t is str else "z", v)


def _type_names(s: Schema) -> list[str] | None:
    if s.type is None:
        return None
    return [s.type] if isinstance(s.type, str) else list(s.type)


def compile_schema(s: Schema, *, null_optional: bool = False) -> Check:
    """Compile ``s`` once; ``null_optional`` lets optional properties be null (strict)."""
    return _compile(s, null_optional)


def _compile(s: Schema, null_optional: bool) -> Check:
    names = _type_names(s)
    by_type: dict[type, Check] = {}

    str_check = _string_check(s)
    if str_check is not None:
        by_type[str] = str_check
    num_check = _number_check(s)
    if num_check is not None:
        by_type[int] = by_type[float] = num_check
    arr_check = _array_check(s, null_optional)
    if arr_check is not None:
        by_type[list] = arr_check
    obj_check = _object_check(s, null_optional)
    if obj_check is not None:
        by_type[dict] = obj_check

    extra: list[Check] = []
    if s.enum is not None:
        extra.append(_enum_check(s.enum))
    if s.any_of is not None:
        extra.append(_any_of_check([_compile(b, null_optional) for b in s.any_of]))

    if names is not None:
        allowed = frozenset(t for n in names for t in _PY_TYPES[n])
        int_floats = "integer" in names and "number" not in names
        expected = " or ".join(names)
        if by_type:
            # Only keep keyword checks for types the node allows.
            by_type = {
                t: c for t, c in by_type.items() if t in allowed or (t is float and int_floats)
            }
    else:
        allowed = None
        int_floats = False
        expected = ""

    if not extra and not by_type:
        if allowed is None:
            return _accept
        if len(allowed) == 1:
            (only,) = allowed
            if not int_floats:

                def check_one(v: Any) -> Problems | None:
                    if type(v) is only:
                        return None
                    return [("", f"expected {expected}, got {json_type(v)}")]

                return check_one

        def check_types(v: Any) -> Problems | None:
            t = type(v)
            if t in allowed or (int_floats and t is float and v.is_integer()):
                return None
            return [("", f"expected {expected}, got {json_type(v)}")]

        return check_types

    if len(extra) == 1 and not by_type and allowed is None:
        return extra[0]

    if (
        allowed is not None
        and not extra
        and len(by_type) == 1
        and len(allowed) == 1
        and not int_floats
    ):
        ((only, kw_check),) = by_type.items()

        def check_kw(v: Any) -> Problems | None:
            if type(v) is only:
                return kw_check(v)
            return [("", f"expected {expected}, got {json_type(v)}")]

        return check_kw

    get_kw = by_type.get

    def check(v: Any) -> Problems | None:
        t = type(v)
        if (
            allowed is not None
            and t not in allowed
            and not (int_floats and t is float and v.is_integer())
        ):
            return [("", f"expected {expected}, got {json_type(v)}")]
        out: Problems | None = None
        kw = get_kw(t)
        if kw is not None:
            out = kw(v)
        for c in extra:
            r = c(v)
            if r:
                out = r if out is None else out + r
        return out

    return check


def _string_check(s: Schema) -> Check | None:
    lo, hi = s.min_length, s.max_length
    search = re.compile(s.pattern).search if s.pattern is not None else None
    pattern = s.pattern
    if lo is None and hi is None and search is None:
        return None

    def check(v: str) -> Problems | None:
        out: Problems | None = None
        if lo is not None or hi is not None:
            n = len(v)
            if lo is not None and n < lo:
                out = [("", f"string is shorter than {lo} characters (has {n})")]
            elif hi is not None and n > hi:
                out = [("", f"string is longer than {hi} characters (has {n})")]
        if search is not None and search(v) is None:
            p = ("", f"string {_show(v)} does not match pattern {pattern!r}")
            out = [p] if out is None else [*out, p]
        return out

    return check


def _number_check(s: Schema) -> Check | None:
    mn, mx, xmn, xmx = s.minimum, s.maximum, s.exclusive_minimum, s.exclusive_maximum
    if mn is None and mx is None and xmn is None and xmx is None:
        return None

    def check(v: int | float) -> Problems | None:
        out: Problems = []
        if mn is not None and v < mn:
            out.append(("", f"{_show(v)} is less than the minimum {mn}"))
        if xmn is not None and v <= xmn:
            out.append(("", f"{_show(v)} is not greater than the exclusive minimum {xmn}"))
        if mx is not None and v > mx:
            out.append(("", f"{_show(v)} is greater than the maximum {mx}"))
        if xmx is not None and v >= xmx:
            out.append(("", f"{_show(v)} is not less than the exclusive maximum {xmx}"))
        return out or None

    return check


def _array_check(s: Schema, null_optional: bool) -> Check | None:
    lo, hi = s.min_items, s.max_items
    item = _compile(s.items, null_optional) if s.items is not None else _accept
    prefix = [_compile(p, null_optional) for p in s.prefix_items or ()]
    start = len(prefix)  # ``items`` applies after the prefixItems positions (2020-12)
    if lo is None and hi is None and item is _accept and all(c is _accept for c in prefix):
        return None

    def check(v: list[Any]) -> Problems | None:
        out: Problems | None = None
        n = len(v)
        if lo is not None and n < lo:
            out = [("", f"array has {n} items, fewer than the minimum {lo}")]
        elif hi is not None and n > hi:
            out = [("", f"array has {n} items, more than the maximum {hi}")]
        for i, x in enumerate(v):
            c = prefix[i] if i < start else item
            if c is _accept:
                continue
            r = c(x)
            if r:
                seg = f"/{i}"
                if out is None:
                    out = []
                out.extend((seg + p, m) for p, m in r)
        return out

    return check


def _object_check(s: Schema, null_optional: bool) -> Check | None:
    required = tuple(s.required or ())
    required_set = frozenset(required)
    closed = s.additional_properties is False
    extra = (
        _compile(s.additional_properties, null_optional)
        if isinstance(s.additional_properties, Schema)
        else _accept
    )
    props: dict[str, Check] = {}
    for name, sub in (s.properties or {}).items():
        c = _compile(sub, null_optional)
        if null_optional and name not in required_set and c is not _accept:
            c = _nullable(c)
        props[name] = c
    if (
        not required
        and not closed
        and extra is _accept
        and all(c is _accept for c in props.values())
    ):
        return None
    allowed_names = ", ".join(f'"{k}"' for k in props) or "none"
    get = props.get

    def check(v: dict[str, Any]) -> Problems | None:
        out: Problems | None = None
        if required and not v.keys() >= required_set:
            out = [
                ("", f'missing required property "{name}"') for name in required if name not in v
            ]
        for k, x in v.items():
            c = get(k)
            if c is None:
                if closed:
                    if out is None:
                        out = []
                    out.append(("", f'unexpected property "{k}"; allowed: {allowed_names}'))
                    continue
                c = extra
            r = c(x)
            if r:
                seg = "/" + pointer_token(k)
                if out is None:
                    out = []
                out.extend((seg + p, m) for p, m in r)
        return out

    return check


def _nullable(c: Check) -> Check:
    def check(v: Any) -> Problems | None:
        return None if v is None else c(v)

    return check


def _enum_check(values: list[Any]) -> Check:
    keys = frozenset(_enum_key(v) for v in values if type(v) not in (list, dict))
    containers = [v for v in values if type(v) in (list, dict)]
    shown = ", ".join(_show(v) for v in values)

    def check(v: Any) -> Problems | None:
        if type(v) in (list, dict):
            if any(json_equal(v, c) for c in containers):
                return None
        elif _enum_key(v) in keys:
            return None
        return [("", f"{_show(v)} is not one of {shown}")]

    return check


def _any_of_check(branches: list[Check]) -> Check:
    def check(v: Any) -> Problems | None:
        results = []
        for b in branches:
            r = b(v)
            if not r:
                return None
            results.append(r)
        # Prefer the branch whose type matched: its problems are the useful ones.
        typed = [
            r
            for r in results
            if not (len(r) == 1 and r[0][0] == "" and r[0][1].startswith("expected "))
        ]
        if len(typed) == 1:
            return typed[0]
        alts = "; ".join(
            f"({i + 1}) " + ", ".join(f"{p or '/'} {m}" if p else m for p, m in r)
            for i, r in enumerate(results)
        )
        return [("", f"matches none of the {len(branches)} allowed forms: {alts}")]

    return check


# -- strict form ---------------------------------------------------------------------------


def to_strict(s: Schema) -> Schema:
    """See ``Schema.strict``."""
    out = copy.copy(s)
    out.__dict__.pop("_compiled", None)
    if s.items is not None:
        out.items = to_strict(s.items)
    # Strict modes take a small subset: positions (prefixItems) and schemas of extra keys
    # are left out of the form sent; ``validate(strict=True)`` still checks them.
    out.content_encoding = None
    if s.prefix_items is not None:
        out.prefix_items = None
        if s.items is None:  # what any position may hold
            distinct: list[Schema] = []
            for b in s.prefix_items:
                if to_strict(b) not in distinct:
                    distinct.append(to_strict(b))
            out.items = distinct[0] if len(distinct) == 1 else Schema(any_of=distinct)
    if s.any_of is not None:
        out.any_of = [to_strict(b) for b in s.any_of]
    names = _type_names(s)
    if s.properties is not None or (names is not None and "object" in names):
        props = s.properties or {}
        required = set(s.required or ())
        out.properties = {
            k: (to_strict(v) if k in required else make_nullable(to_strict(v)))
            for k, v in props.items()
        }
        out.required = list(props)
        out.additional_properties = False
    return out


def make_nullable(s: Schema) -> Schema:
    """A copy of ``s`` that also accepts null."""
    names = _type_names(s)
    out = copy.copy(s)
    if s.any_of is not None and not any(_type_names(b) == ["null"] for b in s.any_of):
        out.any_of = [*s.any_of, Schema(type="null")]
    if names is not None and "null" not in names:
        out.type = [*names, "null"]
    if s.enum is not None and not any(v is None for v in s.enum):
        out.enum = [*s.enum, None]
    return out
