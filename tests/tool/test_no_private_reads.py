"""No module of nb_tools reads another module's private attributes: ``obj._name`` (``obj``
not ``self``/``cls``) is allowed only when ``_name`` is defined in the same module (a
class's helper reading its own kind). Public names, ``Registry.entries()`` and the
protocols of ``nb_tools.tool._types`` are the way across modules."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "nb_tools"

DEPENDENCY_PROTOCOLS = {
    "_repr_mimebundle_",  # IPython's display protocol
    "_view_count",  # ipywidgets' view counter (nb_tools.jupyter._headless says why)
    "_replace",  # collections.namedtuple / typing.NamedTuple's documented copy method
    "_asdict",
}
"""Private-looking names that belong to a dependency's documented protocol."""

KNOWN: set[tuple[str, str]] = {
    # pandas keeps its options' defaults only in this table (no public API gives them);
    # the one read is isolated in _static_pandas and checked against pandas 3.1
    ("jupyter/_static_pandas.py", "_registered_options"),
}
"""Reads allowed, each with its reason: a read not listed here fails."""


def _defined_here(tree: ast.AST) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            names.add(node.attr)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return names


def private_reads() -> set[tuple[str, str]]:
    found: set[tuple[str, str]] = set()
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        here = _defined_here(tree)
        for node in ast.walk(tree):
            if not isinstance(node, ast.Attribute):
                continue
            attr = node.attr
            if not attr.startswith("_") or attr.startswith("__") or attr in DEPENDENCY_PROTOCOLS:
                continue
            if isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"):
                continue
            if isinstance(node.value, ast.Name) and node.value.id[:1].isupper():
                continue  # a class of this module reading its own class attribute
            if attr in here:
                continue
            found.add((path.relative_to(PACKAGE).as_posix(), attr))
    return found


def test_no_module_reads_another_modules_private_attributes() -> None:
    new = private_reads() - KNOWN
    assert new == set(), (
        "these modules read another module's private attributes; add a public name or a "
        f"protocol (nb_tools.tool._types) instead: {sorted(new)}"
    )


def test_the_check_sees_a_private_read(tmp_path: Path, monkeypatch) -> None:
    pkg = tmp_path / "nb_tools"
    pkg.mkdir()
    (pkg / "a.py").write_text("class A:\n    def __init__(self):\n        self._x = 1\n")
    (pkg / "b.py").write_text("def f(a):\n    return a._x + a._y\n")
    monkeypatch.setattr(__import__(__name__), "PACKAGE", pkg)
    assert private_reads() == {("b.py", "_x"), ("b.py", "_y")}
