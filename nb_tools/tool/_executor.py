"""Run the model's tool calls: look up, validate, invoke, and turn every outcome into a
result the model can read.

``Executor.execute`` never raises for anything the model sent or a tool did: unknown
tools, invalid arguments, error results and exceptions all come back as ``is_error``
results. Only cancellation (and ``KeyboardInterrupt``/``SystemExit``) propagates.
"""

from __future__ import annotations

import contextvars
import inspect
import threading
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar, cast

from nb_tools.model import ToolCall, ToolResult
from nb_tools.tool._middleware import Middleware, Next, chain
from nb_tools.tool._progress import call_id_var
from nb_tools.tool._registry import Entry, Registry, make_entry
from nb_tools.tool._results import to_result
from nb_tools.tool._types import Call, Result, ToolPanic, ValidationError
from nb_tools.tool._votes import is_parallel_call

if TYPE_CHECKING:
    from concurrent.futures import ThreadPoolExecutor

# asyncio, concurrent.futures and traceback are imported where they are used: together they
# are most of what ``import nb_tools`` would cost outside a kernel (which has them loaded).

T = TypeVar("T")

THREAD_POOL_SIZE = 32
"""Workers for sync tools. The default asyncio pool has min(32, cores + 4), so on a small
machine 16 blocking read-only calls would run in waves instead of together."""

_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def _thread_pool() -> ThreadPoolExecutor:
    global _pool
    if _pool is None:
        from concurrent.futures import ThreadPoolExecutor

        with _pool_lock:
            if _pool is None:
                _pool = ThreadPoolExecutor(THREAD_POOL_SIZE, thread_name_prefix="nb_tools-tool")
    return _pool


async def run_in_thread(fn: Callable[..., T], *args: Any) -> T:
    """Run a blocking ``fn(*args)`` on nb_tools' tool thread pool, in a copy of the current
    context (so ``progress()`` inside it reaches the caller's sink). Cancelling the await
    interrupts the thread (``_interrupt``): ``fn`` raises ``ToolInterrupted`` at its next
    bytecode; a thread still running after ``INTERRUPT_WAIT_SECONDS`` is recorded for
    ``still_running(call_id)``."""
    import asyncio

    from nb_tools.tool._interrupt import Slot, wait_stopped

    ctx = contextvars.copy_context()
    slot = Slot(call_id_var.get())
    work = _thread_pool().submit(ctx.run, slot.run, fn, *args)
    try:
        return await asyncio.wrap_future(work)
    except asyncio.CancelledError:
        # Stop, Interrupt or a timeout: stop the thread too (at its next bytecode), and
        # wait a little for it; one blocked in C runs on and is reported as such.
        if not work.cancel():  # it started
            slot.interrupt()
            if not await wait_stopped(slot):
                slot.mark_background()
        raise


# -- results the model sees ------------------------------------------------------------


def _panic_result(name: str, exc: BaseException) -> Result:
    if isinstance(exc, ToolPanic):
        panic = exc
    else:
        import traceback

        tb = "".join(traceback.format_exception(exc))
        panic = ToolPanic(f"{name} raised {type(exc).__name__}: {exc}", traceback=tb, cause=exc)
    return Result(
        content=str(panic),
        is_error=True,
        metadata={"panic": panic, "traceback": panic.traceback},
    )


def _invalid_result(name: str, exc: ValidationError) -> Result:
    problems = exc.problems or [str(exc)]
    return Result(
        content=f"invalid arguments for {name}:\n" + "\n".join(problems),
        is_error=True,
        metadata={"problems": list(problems)},
    )


def _not_a_result(value: object) -> Result:
    """A tool's return value that is not exactly a ``Result`` (a subclass, a plain value)."""
    if isinstance(value, Result):
        return value
    return to_result(value)


def _make_tool_result_builder() -> Callable[..., ToolResult]:
    """A fast ``ToolResult`` constructor. The frozen dataclass's generated ``__init__``
    assigns each field through ``object.__setattr__`` (about 1 us per call for five
    fields); filling ``__dict__`` does the same in a fifth of the time. Used only while
    ToolResult stays a plain dataclass with exactly these fields and no ``__post_init__``,
    else the normal constructor."""
    import dataclasses

    names = ("tool_use_id", "content", "parts", "is_error", "metadata")
    plain = (
        tuple(f.name for f in dataclasses.fields(ToolResult)) == names
        and not hasattr(ToolResult, "__post_init__")
        and not hasattr(ToolResult, "__slots__")
    )
    if not plain:

        def build(
            tool_use_id: str, content: str, parts: Any, is_error: bool, metadata: Any
        ) -> ToolResult:
            return ToolResult(
                tool_use_id=tool_use_id,
                content=content,
                parts=parts,
                is_error=is_error,
                metadata=metadata,
            )

        return build
    new = object.__new__

    def fast(
        tool_use_id: str, content: str, parts: Any, is_error: bool, metadata: Any
    ) -> ToolResult:
        result = new(ToolResult)
        result.__dict__.update(
            tool_use_id=tool_use_id,
            content=content,
            parts=parts,
            is_error=is_error,
            metadata=metadata,
        )
        return result

    return fast


_tool_result: Callable[[str, str, tuple[Any, ...], bool, dict[str, Any]], ToolResult] = (
    _make_tool_result_builder()
)


class Executor:
    """Runs tool calls from ``registry`` through ``middlewares`` (the first is outermost).

    Sync tools run on a thread pool of ``THREAD_POOL_SIZE`` workers; async tools are
    awaited on the caller's loop. Every result carries ``metadata["duration"]`` (seconds).
    """

    def __init__(self, registry: Registry, *middlewares: Middleware) -> None:
        self.registry = registry
        self.middlewares: tuple[Middleware, ...] = middlewares
        # No middleware: ``None``, and a call goes straight to ``_invoke_entry`` without a
        # ``Call`` to build or a chain to enter (benchmarks/bench_execute.py (d) measures it).
        self._invoke: Next | None = chain(self._final, *middlewares) if middlewares else None
        self._entries = registry.entries()  # a live view, read without the lock

    # -- one call -----------------------------------------------------------------------

    async def execute(self, call: ToolCall) -> ToolResult:
        """Run one call; never raises except for cancellation."""
        return await self._execute(call, self._invoke)

    async def execute_with(self, call: ToolCall, *mws: Middleware) -> ToolResult:
        """Like ``execute`` with ``mws`` around the executor's own middleware."""
        return await self._execute(call, chain(self._invoke or self._final, *mws))

    async def _execute(self, tc: ToolCall, invoke: Next | None) -> ToolResult:
        """The one execute path: ``invoke`` is the middleware chain (``None``: none, the
        tool is called directly); the outcome becomes a ``ToolResult`` with its duration."""
        start = time.perf_counter()
        token = call_id_var.set(tc.id)
        try:
            entry = self._entries.get(tc.name)
            if invoke is None:
                result = await self._invoke_entry(tc.name, tc.arguments, entry)
            else:
                tool = None if entry is None else entry.tool
                call = Call(id=tc.id, name=tc.name, arguments=tc.arguments, tool=tool)
                result = await invoke(call)
            if type(result) is str:  # the common case: straight to the ToolResult
                duration = {"duration": time.perf_counter() - start}
                return _tool_result(tc.id, result, (), False, duration)
            if type(result) is not Result:
                result = _not_a_result(result)
        except Exception as exc:  # a middleware failed, or converting the return value
            result = _panic_result(tc.name, exc)
        finally:
            call_id_var.reset(token)
        metadata = {**result.metadata, "duration": time.perf_counter() - start}
        return _tool_result(tc.id, result.content, tuple(result.parts), result.is_error, metadata)

    async def _final(self, call: Call) -> Result:
        """The innermost handler of a middleware chain: validate the arguments from the raw
        text, call the tool."""
        tool = call.tool
        if tool is None:
            return self._unknown(call.name)
        entry = self._entries.get(call.name)
        if entry is None or entry.tool is not tool:  # a middleware swapped the tool
            entry = make_entry(tool)
        value = await self._invoke_entry(call.name, call.arguments, entry)
        return value if type(value) is Result else _not_a_result(value)

    async def _invoke_entry(self, name: str, raw: str, entry: Entry | None) -> Any:
        """Validate and call; returns a ``Result`` or a tool function's plain value."""
        if entry is None:
            return self._unknown(name)
        if not raw or raw.isspace():
            raw = "{}"
        try:
            validate = entry.validate
            if validate is not None:
                parsed = validate(raw)
                if entry.direct is not None:  # an async @tool function: awaited here
                    prepare, fn = entry.direct
                    return await fn(**prepare(parsed))
                if entry.call_validated is not None:
                    return await entry.call_validated(parsed)
            tool = entry.tool
            if entry.call_is_async:
                value = await cast("Awaitable[Any]", tool.call(raw))
            else:
                value = await run_in_thread(tool.call, raw)
                if inspect.isawaitable(value):
                    value = await value
        except ValidationError as exc:
            return _invalid_result(name, exc)
        except Exception as exc:
            return _panic_result(name, exc)
        return value

    def _unknown(self, name: str) -> Result:
        available = self.registry.visible_names()
        listing = ", ".join(available) if available else "none"
        return Result.error(f"unknown tool {name!r}; available tools: {listing}")

    # -- many calls ---------------------------------------------------------------------

    def _parallel(self, call: ToolCall) -> bool:
        entry = self._entries.get(call.name)
        return entry is not None and is_parallel_call(entry.tool, call.arguments)

    async def execute_batch(self, calls: Sequence[ToolCall]) -> list[ToolResult]:
        """Run ``calls`` and return their results in the same order. Each run of adjacent
        read-only or concurrent calls runs in parallel; other calls run one at a time, in
        order. Cancelling the batch cancels the calls in flight and propagates."""
        from nb_tools.tool._tasks import run_grouped  # asyncio: not at import time

        return await run_grouped(calls, self._parallel, self.execute)

    # -- from sync code ---------------------------------------------------------------------

    def execute_sync(self, call: ToolCall) -> ToolResult:
        """Run one call from synchronous code. Inside a running event loop (a Jupyter
        cell) the call runs on a fresh loop in a helper thread while this thread waits."""
        from nb_tools.tool._sync import run_blocking

        return run_blocking(self.execute(call))
