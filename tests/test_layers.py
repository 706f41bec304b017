"""Layers: a package of nb_tools reaches another through its ``__init__``, or through one
of a short list of internal modules meant for the other packages; a new import of another
package's private module fails here (import it from the package, or say why below)."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "nb_tools"

INTERNAL = {
    # the tool runtime's plumbing that the loop, the notebook and the built-ins share
    "nb_tools.tool._tasks": "the one wake loop every wait goes through (interrupts act at once)",
    "nb_tools.tool._votes": "a tool's votes (read-only, protected, parallel) as the pipeline reads them",
    "nb_tools.tool._grant": "what the approval granted a call, read by the tools that act on it",
    "nb_tools.tool._json": "the I-JSON parser arguments are checked with",
    "nb_tools.tool._sync": "running a coroutine from sync code inside or outside a loop",
    "nb_tools.tool._interrupt": "whether a call's thread is still running after a stop",
    "nb_tools.tool._progress": "capturing a tool's progress (MCP notifications)",
    "nb_tools.model._limits": "model limits and beta flags, for the request the loop builds",
    "nb_tools.model._anthropic_features": "the newer Claude features' shapes (cache TTL, betas)",
    "nb_tools.agent._events": "the run's events and their status types, which transcripts record",
    "nb_tools.agent._notices": "the Messages API's events and notice kinds, which transcripts record",
    "nb_tools.agent._persist": "the conversation's JSON encoding, one for saved runs and transcripts",
    "nb_tools.agent._budget": "how money is written, the same in the pause text and the footer",
}  # fmt: skip

ALLOWED = {
    # importer -> another package's private module, still to be moved behind an __init__
    ("nb_tools.agent._budget", "nb_tools.model._pricing"),
    ("nb_tools.agent._persist", "nb_tools.model._types"),  # every block dataclass, by name
    # the map's notebook side: what a row is being run (for the review queue), a frame test
    ("nb_tools.jupyter._review_queue", "nb_tools.agent._map"),
    ("nb_tools.jupyter._map_magic", "nb_tools.agent._map_rows"),
    ("nb_tools.agent._map_plan", "nb_tools.model._pricing"),  # the plan card's cost estimate
    # typed outputs: a type's schema, its strict validator and null stripping, as tools do
    ("nb_tools.agent._output", "nb_tools.tool._derive"),
    ("nb_tools.agent._output", "nb_tools.tool._registry"),
    ("nb_tools.agent._output", "nb_tools.tool._typemap"),
    ("nb_tools.builtin._bash_readonly", "nb_tools.permissions._shell"),
    ("nb_tools.builtin._web", "nb_tools.permissions._hosts"),
    ("nb_tools.jupyter._runner", "nb_tools.agent._approval"),
    ("nb_tools.jupyter._runner", "nb_tools.agent._context"),
    ("nb_tools.jupyter._runner", "nb_tools.agent._turns"),
    ("nb_tools.jupyter._view", "nb_tools.agent._retry"),
    ("nb_tools.permissions._rules", "nb_tools.tool._subject"),
    # the offline doubles speak the providers' wire formats
    ("nb_tools.testing._guard", "nb_tools.model._defaults"),
    ("nb_tools.testing._openai_sse", "nb_tools.model._openai_convert"),
    ("nb_tools.testing._scripted", "nb_tools.model._anthropic_convert"),
    ("nb_tools.testing._sse", "nb_tools.model._sse_parse"),
    ("nb_tools.testing.server", "nb_tools.model._anthropic_convert"),
}


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
