"""``%%agent --over DF``: the cell body is a template run over every row of the DataFrame
``DF`` with :func:`nb_tools.amap`; the result table is put in a variable and shown."""

from __future__ import annotations

from argparse import Namespace
from typing import Any

from IPython.core.error import UsageError

from nb_tools.jupyter._map_cell import MapInterrupted, row_names, run_in_cell

__all__ = ["DEFAULT_VARIABLE", "MapInterrupted", "row_names", "run_over"]

DEFAULT_VARIABLE = "map_result"
"""Where the result goes without ``--output NAME``."""


def _frame(ns: dict[str, Any], name: str) -> Any:
    from nb_tools.agent import is_frame

    if name not in ns:
        raise UsageError(f"%%agent --over {name}: {name} is not defined in the notebook")
    value = ns[name]
    if not (is_frame(value) or isinstance(value, list)):
        raise UsageError(
            f"%%agent --over {name}: {name} is a {type(value).__name__}; give a pandas "
            "DataFrame, a list of dicts or a list of strings"
        )
    return value


def _target(ns: dict[str, Any], spec: str | None) -> tuple[str, Any]:
    """``--output NAME[:TYPE]``: the variable for the table and the rows' output type
    (TYPE, else NAME's annotation, else none: the rows' answers are text)."""
    if spec is None:
        return DEFAULT_VARIABLE, None
    from nb_tools.jupyter._magics import _output_target

    name, _, type_name = (p.strip() for p in spec.partition(":"))
    if type_name or name in (ns.get("__annotations__") or {}):
        return _output_target(spec)
    if not name.isidentifier():
        raise UsageError(f"%%agent --output {spec!r}: NAME must be a Python variable name")
    return name, None


async def run_over(args: Namespace, template: str, ns: dict[str, Any]) -> Any:
    """Run the map the options in ``args`` describe, after its plan card; returns the
    table (also in the variable and displayed), or None when the plan was cancelled."""
    from nb_tools.agent import read_inputs, render_prompts
    from nb_tools.jupyter._runner import default_budget, resolve_model
    from nb_tools.jupyter._session import get_session
    from nb_tools.tool import default_registry

    if not template.strip():
        raise UsageError("%%agent --over: the cell body is the prompt template; write one")
    inputs = _frame(ns, args.over)
    variable, output = _target(ns, args.output)
    session = get_session()
    _, model = resolve_model(session, args.model, args.base_url)
    registry = default_registry()
    if args.tools:
        registry = registry.subset(*(n.strip() for n in args.tools.split(",") if n.strip()))
    try:
        prompts = render_prompts(template.strip(), read_inputs(inputs))
    except (KeyError, ValueError, TypeError) as exc:
        raise UsageError(str(exc).strip("'\"")) from None
    options: dict[str, Any] = dict(
        tools=registry.clone(),
        output=output,
        model=model,
        system=args.system,
        concurrency=args.concurrency or 8,
        approval=args.approval,
        rules=session.rules,
        budget_usd=args.budget if args.budget is not None else default_budget(),
        max_turns=args.max_turns or 10,
        checkpoint=args.checkpoint,
        backend="batch" if args.batch else "kernel",
    )

    def keep(result: Any) -> None:
        ns[variable] = result

    try:
        return await run_in_cell(
            template.strip(), inputs, options, keep=keep, where=variable, prompts=prompts
        )
    except (KeyError, ValueError, TypeError) as exc:
        raise UsageError(str(exc).strip("'\"")) from None
