"""Names a package exports but imports only on first use (PEP 562 module ``__getattr__``)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(package: str, exports: Mapping[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` for ``package`` that imports ``exports[name]`` (a module
    path) on first access and returns its attribute ``name``; other names raise the
    usual AttributeError. Use as ``__getattr__ = lazy_exports(__name__, {...})``."""

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        import importlib

        return getattr(importlib.import_module(module), name)

    return __getattr__
