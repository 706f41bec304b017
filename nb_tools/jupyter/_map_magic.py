"""``%%agent --over DF``: the cell body is a template run over every row of the DataFrame
``DF`` with :func:`nb_tools.amap`; the result table is put in a variable and shown."""

from __future__ import annotations

from argparse import Namespace
from typing import Any

from IPython.core.error import UsageError

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
    """Run the map the options in ``args`` describe; returns the table (also in the
    variable and displayed)."""
    import nb_tools
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
    from nb_tools.jupyter._map_view import MapView
    from nb_tools.jupyter._runner import default_approval

    view = MapView()
    view.show()
    queue = approver = None
    if (args.approval or default_approval()) == "ask":
        from nb_tools.jupyter._headless import FrontendWatch
        from nb_tools.jupyter._review_queue import ReviewQueue

        queue = ReviewQueue()
        watch = FrontendWatch(queue.box)  # headless (nbclient): deny at once, never wait
        queue.show()
        approver = watch.guard(queue)
    try:
        result = await nb_tools.amap(
            template.strip(),
            inputs,
            tools=registry.clone(),
            output=output,
            model=model,  # type: ignore[arg-type]
            system=args.system,
            concurrency=args.concurrency or 8,
            approval=args.approval,
            approver=approver,
            rules=session.rules,
            budget_usd=args.budget if args.budget is not None else default_budget(),
            max_turns=args.max_turns or 10,
            checkpoint=args.checkpoint,
            backend="batch" if args.batch else "kernel",
            on_progress=view.update,
            stop=view.stop,
        )
    except (KeyError, ValueError, TypeError) as exc:
        view.finish(None)
        raise UsageError(str(exc).strip("'\"")) from None
    except BaseException:  # an interrupt: finished rows are in the checkpoint, if any
        view.finish(None)
        raise
    finally:
        if queue is not None:
            queue.close()
    ns[variable] = result
    view.finish(result)
    return result
