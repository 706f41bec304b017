"""Generate straight-line Python for a converter tree built by :mod:`nb_tools.tool._typemap`.

The mapper builds each converter as a small closure (the reference behaviour) and tags
the structural ones (lists, dicts, nullable wrappers, objects) with ``_gen``, a
description of what they do. ``compile_converter`` turns such a tree into one generated
function: a list of dataclasses becomes one comprehension calling the constructor with
the record's keys, nested records become nested constructor calls, and values that need
no conversion are not touched. Leaves (enum classes, parsers, ``model_validate``, ...)
are called as they are.

The generated function is the fast path only: if it raises anything, the reference
closures run on the same input, so errors (and any input the generated code did not
expect, such as unvalidated arguments) behave exactly as before.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["compile_converter", "tag"]

Converter = Callable[[Any], Any]

_MISSING = object()


class _Mismatch(Exception):
    """The generated code met an input it does not handle; the closures take over."""


def _plain_dataclass(tp: Any) -> dict[str, Any] | None:
    """The defaults of a dataclass whose generated ``__init__`` only stores its arguments
    (so filling ``__dict__`` is the same, at a third of the cost); ``None`` otherwise."""
    import dataclasses

    if not isinstance(tp, type) or not dataclasses.is_dataclass(tp):
        return None
    init = tp.__dict__.get("__init__")
    params = getattr(tp, "__dataclass_params__", None)
    code = getattr(init, "__code__", None)
    if (
        params is None
        or not params.init
        or code is None
        or code.co_filename != "<string>"
        or getattr(init, "__qualname__", "") != f"{tp.__qualname__}.__init__"
        or hasattr(tp, "__post_init__")
        or hasattr(tp, "__slots__")
        or tp.__new__ is not object.__new__
        or (tp.__setattr__ is not object.__setattr__ and not params.frozen)
    ):
        return None
    fields = dataclasses.fields(tp)
    if len(fields) != len(tp.__dataclass_fields__):  # InitVar pseudo-fields
        return None
    defaults: dict[str, Any] = {}
    for f in fields:
        if not f.init or f.default_factory is not dataclasses.MISSING:
            return None
        if hasattr(type(tp.__dict__.get(f.name)), "__set__"):  # a descriptor field
            return None
        if f.default is not dataclasses.MISSING:
            defaults[f.name] = f.default
    return defaults


def tag(conv: Converter, *spec: Any) -> Converter:
    """Record what ``conv`` does for the generator; returns ``conv``."""
    conv._gen = spec  # type: ignore[attr-defined]
    return conv


class _Gen:
    def __init__(self) -> None:
        self.ns: dict[str, Any] = {"_M": _MISSING, "_Mm": _Mismatch, "_new": object.__new__}
        self.counter = 0
        self.consts: dict[int, str] = {}

    def name(self, prefix: str) -> str:
        self.counter += 1
        return f"{prefix}{self.counter}"

    def const(self, value: Any) -> str:
        key = id(value)
        n = self.consts.get(key)
        if n is None:
            n = self.consts[key] = self.name("k")
            self.ns[n] = value
        return n

    def expr(self, conv: Converter | None, src: str, named: bool) -> str:
        """A Python expression converting the value of ``src`` (evaluated once unless
        ``named``: then it is a plain local name and may be repeated)."""
        if conv is None:
            return src
        spec = getattr(conv, "_gen", None)
        if spec is None:
            return f"{self.const(conv)}({src})"
        kind = spec[0]
        if kind == "list":
            x = self.name("x")
            inner = self.expr(spec[1], x, True)
            return f"[{inner} for {x} in {src}]"
        if kind == "build":  # set, frozenset, tuple of converted items
            x = self.name("x")
            inner = self.expr(spec[2], x, True)
            return f"{self.const(spec[1])}([{inner} for {x} in {src}])"
        if kind == "dict":
            x, k = self.name("x"), self.name("k")
            inner = self.expr(spec[1], x, True)
            return f"{{{k}: {inner} for {k}, {x} in {src}.items()}}"
        if kind == "int":
            if named:
                return f"(int({src}) if type({src}) is float else {src})"
            return f"{self.const(conv)}({src})"
        if not named:
            return f"{self.function(conv)}({src})"
        if kind == "nullable":
            return f"(None if {src} is None else {self.expr(spec[1], src, True)})"
        if kind == "object":
            return self.object_expr(spec, src)
        return f"{self.const(conv)}({src})"

    def object_expr(self, spec: tuple[Any, ...], v: str) -> str:
        _, table, fills, build, required, conv = spec
        names_ok = all(k == name for k, (name, _, _) in table.items())
        work = {k: c for k, (_, c, drop) in table.items() if c is not None or drop}
        if (
            not names_ok
            or fills
            or any(k not in required for k in work)
            or _plain_dataclass(build) is not None
        ):
            return f"{self.function(conv)}({v})"
        # Every key that needs work is required (present in valid input; a missing one
        # raises KeyError and the closures take over). Nulls keep their None.
        if not work:
            return v if build is None else f"{self.const(build)}(**{v})"
        parts = []
        for k, c in work.items():
            x = self.name("y")
            got = f"{v}[{k!r}]"
            parts.append(f"{k!r}: (None if ({x} := {got}) is None else {self.expr(c, x, True)})")
        body = f"{{**{v}, {', '.join(parts)}}}"
        return body if build is None else f"{self.const(build)}(**{body})"

    def function(self, conv: Converter) -> str:
        """Emit a function for an object or nullable converter and return its name."""
        spec = conv._gen  # type: ignore[attr-defined]
        fname = self.name("f")
        if spec[0] == "nullable":
            body = f"    return None if v is None else {self.expr(spec[1], 'v', True)}"
        else:
            body = self.object_function(spec)
        code = f"def {fname}(v):\n{body}"
        exec(compile(code, f"<convert {fname}>", "exec"), self.ns)
        return fname

    def object_function(self, spec: tuple[Any, ...]) -> str:
        _, table, fills, build, required, conv = spec
        if not all(k == name for k, (name, _, _) in table.items()):
            return f"    return {self.const(conv)}(v)"
        defaults = None if fills else _plain_dataclass(build)
        if defaults is not None:
            lines = [f"    o = _new({self.const(build)})", "    out = o.__dict__"]
            if defaults:
                lines.append(f"    out.update({self.const(defaults)})")
            lines.append("    out.update(v)")
        else:
            lines = ["    out = {**v}"]
        for k, (_, c, drop) in table.items():
            if c is None and not drop:
                continue
            x = self.name("y")
            if defaults is not None and k in required and c is not None:
                # Present in valid input (else KeyError: the closures take over).
                lines.append(f"    {x} = v[{k!r}]")
                lines.append(f"    if {x} is not None: out[{k!r}] = {self.expr(c, x, True)}")
                continue
            lines.append(f"    {x} = v.get({k!r}, _M)")
            if defaults is not None and drop:
                # A dropped null lets the default apply: store it (there is one, or the
                # key would be required and never dropped).
                gone = f"out[{k!r}] = {self.const(defaults)}[{k!r}]"
            else:
                gone = f"del out[{k!r}]"
            if c is None:  # drop only
                lines.append(f"    if {x} is None: {gone}")
                continue
            lines.append(f"    if {x} is not _M and {x} is not None:")
            lines.append(f"        out[{k!r}] = {self.expr(c, x, True)}")
            if drop:
                lines.append(f"    elif {x} is None: {gone}")
        for name, fill in fills.items():
            lines.append(f"    if {name!r} not in out: out[{name!r}] = {self.const(fill)}()")
        if defaults is not None:
            # Unknown or missing keys: the constructor's own error, from the closures.
            lines.append(f"    if len(out) != {len(table)}: raise _Mm")
            lines.append("    return o")
        else:
            lines.append(
                "    return out" if build is None else f"    return {self.const(build)}(**out)"
            )
        return "\n".join(lines)


def compile_converter(conv: Converter | None) -> Converter | None:
    """One generated function doing what ``conv`` does (``conv`` itself when there is
    nothing to gain or the generation fails)."""
    if conv is None or getattr(conv, "_gen", None) is None:
        return conv
    try:
        gen = _Gen()
        body = gen.expr(conv, "v", True)
        gen.ns["_slow"] = conv
        code = (
            "def convert(v):\n"
            "    try:\n"
            f"        return {body}\n"
            "    except Exception:\n"
            "        return _slow(v)\n"
        )
        exec(compile(code, "<convert>", "exec"), gen.ns)
    except Exception:  # pragma: no cover - a generator bug must not break derivation
        return conv
    fast: Converter = gen.ns["convert"]
    return fast
