"""Generate a straight-line ``is_valid(value) -> bool`` for a ``Schema``.

Validation is on the hot path of every tool call, and almost every call is valid. The
closures in :mod:`nb_tools.tool._validate` collect every problem with its path, which costs a
function call per node; this module emits one Python function per schema (inline type and
keyword checks, loops over items, dictionary lookups for properties) that only answers
yes or no. ``Schema.validate`` runs it first and falls back to the closures to explain a
failure. The two must agree; the property tests check that they do.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable
from typing import Any

from nb_tools.tool._schema import Schema

__all__ = ["generate"]

_MISSING = object()
_BUILTINS = ("type", "str", "int", "float", "bool", "list", "dict", "len", "any")
_MAX_DEPTH = 6  # nested blocks per generated function (CPython allows 20)

_TYPE_EXPR = {
    "null": "{v} is None",
    "boolean": "type({v}) is bool",
    "string": "type({v}) is str",
    "array": "type({v}) is list",
    "object": "type({v}) is dict",
    "number": "(type({v}) is int or type({v}) is float)",
    "integer": "(type({v}) is int or (type({v}) is float and {v}.is_integer()))",
}

_NOT_TYPE_EXPR = {  # the negation of a single-type check, without a ``not (...)``
    "null": "{v} is not None",
    "boolean": "type({v}) is not bool",
    "string": "type({v}) is not str",
    "array": "type({v}) is not list",
    "object": "type({v}) is not dict",
}


def _enum_key(v: Any) -> tuple[str, Any]:
    t = type(v)
    if t is str:
        return ("s", v)
    if t is bool:
        return ("b", v)
    if t is int or t is float:
        return ("n", v)
    if t is list or t is dict:
        return ("c", None)  # containers are compared separately; never a scalar key
    return ("z", v)


class _Gen:
    def __init__(self, null_optional: bool) -> None:
        self.null_optional = null_optional
        self.ns: dict[str, Any] = {"_M": _MISSING, "_ek": _enum_key}
        self.counter = 0

    def name(self, prefix: str) -> str:
        self.counter += 1
        return f"{prefix}{self.counter}"

    def const(self, prefix: str, value: Any) -> str:
        n = self.name(prefix)
        self.ns[n] = value
        return n

    def function(self, s: Schema) -> str:
        """Emit a function for ``s`` into the namespace and return its name."""
        fname = self.name("f")
        lines: list[str] = []
        self.node(s, "v", lines, 1, 0)
        body = "\n".join(lines)
        # Constants and helpers become keyword defaults: locals are faster than globals.
        names = [*(n for n in self.ns if not n.startswith("__")), *_BUILTINS]
        used = [n for n in names if re.search(rf"\b{n}\b", body)]
        params = "".join(f", {n}={n}" for n in used)
        code = (
            f"def {fname}(v{params}):\n{body}\n    return True"
            if body
            else (f"def {fname}(v):\n    return True")
        )
        exec(compile(code, f"<schema {fname}>", "exec"), self.ns)
        return fname

    def node(self, s: Schema, v: str, out: list[str], ind: int, depth: int) -> None:
        pad = "    " * ind
        if depth >= _MAX_DEPTH:
            fname = self.function(s)
            out.append(f"{pad}if not {fname}({v}): return False")
            return
        names: list[str] | None
        names = None if s.type is None else ([s.type] if isinstance(s.type, str) else s.type)
        if names is not None and len(names) == 1 and names[0] in _NOT_TYPE_EXPR:
            out.append(f"{pad}if {_NOT_TYPE_EXPR[names[0]].format(v=v)}: return False")
        elif names is not None:
            cond = " or ".join(_TYPE_EXPR[n].format(v=v) for n in names)
            out.append(f"{pad}if not ({cond}): return False")
        allowed = set(names) if names is not None else set(_TYPE_EXPR)
        if "number" in allowed:
            allowed.add("integer")
        only = len(allowed) == 1 or allowed == {"integer", "number"}

        def block(kind_expr: str, emit: Callable[[str, int], None]) -> None:
            if only:
                emit(pad, ind)
                return
            out.append(f"{pad}if {kind_expr}:")
            size = len(out)
            emit(pad + "    ", ind + 1)
            if len(out) == size:  # nothing to check for that type after all
                out.pop()

        if "string" in allowed and (
            s.min_length is not None or s.max_length is not None or s.pattern is not None
        ):
            block(f"type({v}) is str", lambda p, i: self.string(s, v, out, p))
        if allowed & {"integer", "number"} and any(
            x is not None for x in (s.minimum, s.maximum, s.exclusive_minimum, s.exclusive_maximum)
        ):
            block(
                f"(type({v}) is int or type({v}) is float)", lambda p, i: self.number(s, v, out, p)
            )
        if "array" in allowed and (
            s.items is not None
            or s.prefix_items is not None
            or s.min_items is not None
            or s.max_items is not None
        ):
            block(f"type({v}) is list", lambda p, i: self.array(s, v, out, i, depth))
        if "object" in allowed and (
            s.required or s.properties or s.additional_properties is not None
        ):
            block(f"type({v}) is dict", lambda p, i: self.object(s, v, out, i, depth))
        if s.enum is not None:
            self.enum(s.enum, v, out, pad, known_str=names == ["string"])
        if s.any_of is not None:
            fns = [self.function(b) for b in s.any_of]
            out.append(f"{pad}if not ({' or '.join(f'{f}({v})' for f in fns)}): return False")

    def string(self, s: Schema, v: str, out: list[str], pad: str) -> None:
        lo, hi = _int(s.min_length), _int(s.max_length)
        if lo is not None and hi is not None:
            out.append(f"{pad}if not ({lo} <= len({v}) <= {hi}): return False")
        elif lo is not None:
            out.append(f"{pad}if len({v}) < {lo}: return False")
        elif hi is not None:
            out.append(f"{pad}if len({v}) > {hi}: return False")
        if s.pattern is not None:
            search = self.const("p", re.compile(s.pattern).search)
            out.append(f"{pad}if {search}({v}) is None: return False")

    def number(self, s: Schema, v: str, out: list[str], pad: str) -> None:
        if (
            s.minimum is not None
            and s.maximum is not None
            and s.exclusive_minimum is None
            and s.exclusive_maximum is None
        ):
            lo, hi = self.const("n", s.minimum), self.const("n", s.maximum)
            out.append(f"{pad}if not ({lo} <= {v} <= {hi}): return False")
            return
        for value, op in (
            (s.minimum, "<"),
            (s.maximum, ">"),
            (s.exclusive_minimum, "<="),
            (s.exclusive_maximum, ">="),
        ):
            if value is not None:
                out.append(f"{pad}if {v} {op} {self.const('n', value)}: return False")

    def nested(
        self, head: list[str], s: Schema, v: str, out: list[str], ind: int, depth: int
    ) -> None:
        """``head`` (lines that bind ``v`` or open a block), then the checks of ``s`` at
        indent ``ind``; no ``head`` either when ``s`` turns out to check nothing."""
        out.extend(head)
        size = len(out)
        self.node(s, v, out, ind, depth + 1)
        if len(out) == size:
            del out[-len(head) :]

    def array(self, s: Schema, v: str, out: list[str], ind: int, depth: int) -> None:
        pad = "    " * ind
        lo, hi = _int(s.min_items), _int(s.max_items)
        if lo is not None:
            out.append(f"{pad}if len({v}) < {lo}: return False")
        if hi is not None:
            out.append(f"{pad}if len({v}) > {hi}: return False")
        prefix = s.prefix_items or []
        for i, sub in enumerate(prefix):
            if not _constrains(sub):
                continue
            x = self.name("x")
            head = [f"{pad}if len({v}) > {i}:", f"{pad}    {x} = {v}[{i}]"]
            self.nested(head, sub, x, out, ind + 1, depth)
        if s.items is not None and _constrains(s.items):
            x = self.name("x")
            # ``items`` applies after the prefixItems positions (2020-12).
            seq = f"{v}[{len(prefix)}:]" if prefix else v
            self.nested([f"{pad}for {x} in {seq}:"], s.items, x, out, ind + 1, depth)

    def object(self, s: Schema, v: str, out: list[str], ind: int, depth: int) -> None:
        pad = "    " * ind
        required = list(dict.fromkeys(s.required or ()))
        props = s.properties or {}
        if s.additional_properties is False and required and set(required) == set(props):
            # Every property required, no others: one comparison instead of two.
            out.append(f"{pad}if {v}.keys() != {self.const('k', frozenset(props))}: return False")
        elif required:
            out.append(
                f"{pad}if not {v}.keys() >= {self.const('r', frozenset(required))}: return False"
            )
        if s.additional_properties is False and not (required and set(required) == set(props)):
            out.append(
                f"{pad}if not {v}.keys() <= {self.const('k', frozenset(props))}: return False"
            )
        extra = s.additional_properties
        if isinstance(extra, Schema) and _constrains(extra):
            k, x = self.name("k"), self.name("x")
            known = self.const("k", frozenset(props))
            head = [f"{pad}for {k}, {x} in {v}.items():", f"{pad}    if {k} in {known}: continue"]
            self.nested(head, extra, x, out, ind + 1, depth)
        for key, sub in props.items():
            if not _constrains(sub):
                continue
            x = self.name("x")
            if key in required:  # present: checked above
                self.nested([f"{pad}{x} = {v}[{key!r}]"], sub, x, out, ind, depth)
                continue
            nullable = f" and {x} is not None" if self.null_optional else ""
            head = [f"{pad}{x} = {v}.get({key!r}, _M)", f"{pad}if {x} is not _M{nullable}:"]
            self.nested(head, sub, x, out, ind + 1, depth)

    def enum(
        self, values: list[Any], v: str, out: list[str], pad: str, known_str: bool = False
    ) -> None:
        from nb_tools.tool._validate import json_equal

        scalars = frozenset(_enum_key(x) for x in values if type(x) not in (list, dict))
        containers = [x for x in values if type(x) in (list, dict)]
        if not containers and all(type(x) is str for x in values):
            strs = self.const("e", frozenset(values))
            check = (
                f"{v} not in {strs}"
                if known_str
                else (f"type({v}) is not str or {v} not in {strs}")
            )
            out.append(f"{pad}if {check}: return False")
            return
        keys = self.const("e", scalars)
        if not containers:
            out.append(f"{pad}if _ek({v}) not in {keys}: return False")
            return
        c = self.const("c", containers)
        eq = self.const("q", json_equal)
        out.append(
            f"{pad}if (_ek({v}) not in {keys}) if type({v}) not in (list, dict) else "
            f"not any({eq}({v}, y) for y in {c}): return False"
        )


def _int(n: int | None) -> int | None:
    """Lengths are written into the generated code: only ever as integer literals."""
    return None if n is None else operator.index(n)


def _constrains(s: Schema) -> bool:
    return (
        any(
            getattr(s, f) is not None
            for f in (
                "type",
                "enum",
                "any_of",
                "minimum",
                "maximum",
                "exclusive_minimum",
                "exclusive_maximum",
                "min_length",
                "max_length",
                "pattern",
                "min_items",
                "max_items",
                "items",
                "prefix_items",
                "properties",
                "required",
            )
        )
        or s.additional_properties is False
        or (isinstance(s.additional_properties, Schema) and _constrains(s.additional_properties))
    )


def generate(s: Schema, *, null_optional: bool = False) -> Callable[[Any], bool]:
    """A function that tells whether a parsed JSON value satisfies ``s``."""
    gen = _Gen(null_optional)
    fname = gen.function(s)
    fn: Callable[[Any], bool] = gen.ns[fname]
    return fn
