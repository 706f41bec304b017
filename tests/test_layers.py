"""Layers: a package of nb_tools reaches another through its ``__init__``, or through one
of a short list of internal modules meant for the other packages; a new import of another
package's private module fails here (import it from the package, or say why below)."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "nb_tools"

# Modules meant for the other packages of nb_tools, not for users: each group with why.
INTERNAL_GROUPS = {
    "the tool runtime's plumbing the loop, the notebook and the built-ins share: the one "
    "wake loop every wait goes through, a tool's votes as the pipeline reads them, what an "
    "approval granted a call, the I-JSON parser, running a coroutine from sync code, whether "
    "a stopped call's thread still runs, capturing progress (MCP notifications)": (
        "nb_tools.tool._tasks", "nb_tools.tool._votes", "nb_tools.tool._grant",
        "nb_tools.tool._json", "nb_tools.tool._sync", "nb_tools.tool._interrupt",
        "nb_tools.tool._progress",
    ),
    "how a Python type maps to a schema and back, read by typed outputs as by tools "
    "(imported lazily: it is heavy for `import nb_tools`)": ("nb_tools.tool._typemap",),
    "the request the loop builds: model limits, beta flags, the newer Claude features' "
    "shapes, and the environment variables and default model the providers read": (
        "nb_tools.model._limits", "nb_tools.model._anthropic_features",
        "nb_tools.model._defaults",
    ),
    "the one cost formula and the list prices, for budgets and the offline doubles": (
        "nb_tools.model._pricing",
    ),
    "every message dataclass by name, for the saved conversation's decoder": (
        "nb_tools.model._types",
    ),
    "the providers' wire formats, which the offline doubles speak": (
        "nb_tools.model._anthropic_convert", "nb_tools.model._openai_convert",
        "nb_tools.model._sse_parse",
    ),
    "what transcripts record: the run's events and status types, the notice kinds, the "
    "conversation's JSON encoding, how money is written (pause text and footer alike)": (
        "nb_tools.agent._events", "nb_tools.agent._notices", "nb_tools.agent._persist",
        "nb_tools.agent._budget",
    ),
}  # fmt: skip
INTERNAL = {m for group in INTERNAL_GROUPS.values() for m in group}

# importer -> another package's private module, still to be moved behind an __init__
ALLOWED: set[tuple[str, str]] = set()


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imported(tree: ast.AST, module: str, is_package: bool) -> set[str]:
    """Every module ``module`` imports, at any depth (functions too), made absolute."""
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            name = node.module or ""
            if node.level:
                base = module.split(".")
                base = base[: len(base) - node.level + (1 if is_package else 0)]
                name = ".".join([*base, name] if name else base)
            out.add(name)
            out.update(f"{name}.{a.name}" for a in node.names)  # from pkg import _module
    return out


def _private_crossings() -> set[tuple[str, str]]:
    found: set[tuple[str, str]] = set()
    for path in sorted(PACKAGE.rglob("*.py")):
        module = _module_name(path)
        mine = module.split(".")[1] if module.count(".") else None
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for name in _imported(tree, module, path.name == "__init__.py"):
            parts = name.split(".")
            if parts[0] != "nb_tools" or len(parts) < 3 or parts[1] == mine:
                continue
            private = next((i for i, p in enumerate(parts[2:], 2) if p.startswith("_")), None)
            if private is None:
                continue
            target = ".".join(parts[: private + 1])
            if target not in INTERNAL:
                found.add((module, target))
    return found


def test_no_new_import_of_another_packages_private_module() -> None:
    new = sorted(_private_crossings() - ALLOWED)
    assert not new, (
        "these import another package's private module: import the name from that "
        "package's __init__ (export it there), or add the module to INTERNAL with a reason: "
        + ", ".join(f"{a} -> {b}" for a, b in new)
    )


def test_the_allow_list_holds_only_imports_that_exist() -> None:
    gone = sorted(ALLOWED - _private_crossings())
    assert not gone, f"no longer imported, remove from ALLOWED: {gone}"


def test_internal_modules_exist() -> None:
    for name in INTERNAL:
        path = PACKAGE.parent / (name.replace(".", "/") + ".py")
        assert path.is_file(), name


def test_the_check_sees_a_private_import(tmp_path: Path) -> None:
    tree = ast.parse(
        "from nb_tools.sandbox._hide import x\n"
        "def f():\n    from nb_tools.sandbox import _bwrap\n"
        "from .. import tool\n"
    )
    seen = _imported(tree, "nb_tools.builtin._files", False)
    assert {"nb_tools.sandbox._hide", "nb_tools.sandbox._bwrap", "nb_tools.tool"} <= seen
