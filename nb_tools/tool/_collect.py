"""``tools_from``: the tools of a module, a class or an object, at once."""

from __future__ import annotations

import fnmatch
import inspect
import types
from collections.abc import Iterable
from typing import Any

from nb_tools.tool._decorator import FunctionTool
from nb_tools.tool._derive import SignatureError


def tools_from(
    source: Any,
    *,
    include: Iterable[str] | None = None,
    exclude: Iterable[str] = (),
) -> list[FunctionTool]:
    """The tools of ``source``, sorted by name, registered nowhere (pass them to
    ``Agent(tools=...)`` or ``Registry.register``).

    - a module: every ``@tool`` and every other public function defined in it (what it
      imports from elsewhere is left out);
    - an object: its ``@tool`` methods and its other public methods, bound to it;
    - a class: its ``@tool`` static methods and other public static methods.

    ``include`` and ``exclude`` are attribute names or shell-style patterns
    (``"read_*"``); "public" means not starting with ``_``, unless ``include`` names it.
    A function whose signature cannot be described fails with every such problem listed,
    so you can fix it or leave it out with ``exclude``.
    """
    wanted = None if include is None else list(include)
    unwanted = list(exclude)

    def chosen(name: str) -> bool:
        if any(fnmatch.fnmatchcase(name, p) for p in unwanted):
            return False
        if wanted is None:
            return not name.startswith("_")
        return any(fnmatch.fnmatchcase(name, p) for p in wanted)

    found: dict[str, FunctionTool] = {}
    problems: list[str] = []
    for name, value in _members(source):
        if not chosen(name):
            continue
        made: FunctionTool | None
        try:
            made = _as_tool(source, name, value)
        except SignatureError as exc:
            problems.append(f"{name}: {exc}")
            continue
        if made is not None:
            found[made.info().name] = made
    if wanted is not None:
        names = [n for n, _ in _members(source)]
        missing = [p for p in wanted if not fnmatch.filter(names, p)]
        if missing:
            problems.append(f"include names nothing in {_label(source)}: {', '.join(missing)}")
    if problems:
        raise ValueError(
            f"tools_from({_label(source)}): "
            + "; ".join(problems)
            + " (fix the signature, or leave it out with exclude=[...])"
        )
    return [found[n] for n in sorted(found)]


def _label(source: Any) -> str:
    if isinstance(source, types.ModuleType):
        return source.__name__
    if isinstance(source, type):
        return source.__qualname__
    return f"<{type(source).__qualname__} object>"


def _members(source: Any) -> list[tuple[str, Any]]:
    if isinstance(source, types.ModuleType):
        return list(vars(source).items())
    cls = source if isinstance(source, type) else type(source)
    seen: dict[str, Any] = {}
    for klass in reversed(cls.__mro__[:-1]):  # base classes first, overrides win
        seen.update(vars(klass))
    return list(seen.items())


def _as_tool(source: Any, name: str, value: Any) -> FunctionTool | None:
    if isinstance(source, types.ModuleType):
        if getattr(value, "__module__", None) != source.__name__:
            return None  # imported into the module, not defined there
        if isinstance(value, FunctionTool):
            return value
        if inspect.isfunction(value):
            return FunctionTool(value)
        return None
    is_class = isinstance(source, type)
    if isinstance(value, FunctionTool):
        if not value.is_method:
            return value
        if value.binds_class:
            return value.bind(source if is_class else type(source))
        return None if is_class else value.bind(source)
    if isinstance(value, staticmethod):
        return FunctionTool(value)
    if isinstance(value, classmethod):
        return FunctionTool(value.__func__, name=name).bind(source if is_class else type(source))
    if inspect.isfunction(value) and not is_class:
        return FunctionTool(value).bind(source)
    return None
