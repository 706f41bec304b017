"""Tool calls on a ``concurrent.futures.Executor`` (a process pool, Dask's
``Client.get_executor()``): the approvals stay in the kernel; only an approved call of one
of the map's tools is shipped, the tool and its arguments pickled with cloudpickle, and run
in the executor's process by the same :class:`~nb_tools.tool.Executor` the kernel would use
(validation, errors as results). The result comes back as a :class:`~nb_tools.tool.Result`.
"""

from __future__ import annotations

import asyncio
from concurrent.futures import Executor as FuturesExecutor
from typing import Any

from nb_tools.tool import Call, Middleware, Next, Registry, Result


def _pickler() -> Any:
    try:
        import cloudpickle
    except ImportError:
        raise ImportError(
            "nb_tools.map(tool_executor=...) ships tools with cloudpickle, which is not "
            "installed: pip install 'nb_tools[map]' (or pip install cloudpickle)"
        ) from None
    return cloudpickle


def pickled_tools(registry: Registry) -> dict[str, bytes]:
    """Every tool of ``registry`` pickled; a tool that cannot be is named with what to do."""
    cloudpickle = _pickler()
    out: dict[str, bytes] = {}
    for t in registry.list():
        name = t.info().name
        try:
            out[name] = cloudpickle.dumps(t)
        except Exception as err:
            raise TypeError(
                f"nb_tools.map: tool_executor= runs tool calls in other processes, so each "
                f"tool must be picklable (with cloudpickle), and tool {name!r} is not: "
                f"{type(err).__name__}: {err}. The tool object, its function and whatever "
                "the function refers to (globals, closure) travel; create open files, "
                "locks, sockets and clients inside the function instead of referring to "
                "them, or leave tool_executor= out to run the tool in the kernel"
            ) from err
    return out


def run_shipped(tool_bytes: bytes, call_id: str, name: str, arguments: str) -> Result:
    """In the executor's process: run one call of the pickled tool, as the kernel would."""
    import pickle

    from nb_tools.model import ToolCall
    from nb_tools.tool import Executor

    tool = pickle.loads(tool_bytes)
    executor = Executor(Registry(tool))
    done = asyncio.run(executor.execute(ToolCall(id=call_id, name=name, arguments=arguments)))
    metadata = {k: v for k, v in done.metadata.items() if isinstance(v, str | int | float)}
    return Result(
        content=done.content, parts=list(done.parts), is_error=done.is_error, metadata=metadata
    )


def ship_to(executor: FuturesExecutor, registry: Registry) -> Middleware:
    """A middleware that runs the calls of ``registry``'s tools on ``executor``."""
    if not isinstance(executor, FuturesExecutor):
        raise TypeError(
            f"nb_tools.map: tool_executor must be a concurrent.futures.Executor (a "
            f"ProcessPoolExecutor, Dask's client.get_executor()), got {type(executor).__name__}"
        )
    shipped = pickled_tools(registry)

    async def ship(call: Call, next: Next) -> Result:
        payload = shipped.get(call.name)
        if payload is None or call.tool is not registry.get(call.name):
            return await next(call)  # the run's own tools (final_result) stay here
        future = executor.submit(run_shipped, payload, call.id, call.name, call.arguments)
        return await asyncio.wrap_future(future)

    return ship
