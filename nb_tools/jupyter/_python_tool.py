"""``python``: run the model's code in the kernel's user namespace, as a cell would.

The code runs on the kernel's main thread inside the awaiting ``%%agent`` cell, so the loop
is blocked while it runs, exactly as a cell blocks it. ipykernel (7.4) turns SIGINT into a
cancel of the awaiting cell while a cell awaits; a ``while True`` that never yields would
never see that cancel, so for the duration of the code the default SIGINT handler is put
back (Interrupt raises ``KeyboardInterrupt`` inside the code, as in a plain cell), then the
kernel's handler is restored and called once, so the run stops as it does for any Interrupt.

Outputs are captured in order (streams, ``display()``, matplotlib figures, the last
expression's value) as nbformat v4 outputs: the model gets text plus images, capped head +
tail; ``Result.metadata["outputs"]`` keeps all of them for the call's card and for a live
notebook cell. ``In``/``Out``/``execution_count`` and the history are never touched: the
code is compiled and run here, not through ``run_cell``.
"""

from __future__ import annotations

import ast
import base64
import inspect
import io
import json
import linecache
import signal
import sys
import threading
import time
import traceback
from collections.abc import Mapping
from typing import Any

from nb_tools.model import Part
from nb_tools.tool import Headline, Info, Result, Schema, Subject

__all__ = ["MAX_MODEL_CHARS", "PythonTool", "run_code"]

MAX_MODEL_CHARS = 20_000
"""Characters of text output the model sees (head + tail); the card keeps everything."""
MAX_IMAGES = 4
MAX_IMAGE_BYTES = 5 * 1024 * 1024
_IMAGE_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")
_FILENAME = "<agent python {n}>"
_runs = 0

DESCRIPTION = (
    "Run Python code in the user's live kernel, in the notebook's namespace (the user's "
    "variables, imports and data are there; variables you create stay for the next cells). "
    "Use it to inspect data, compute, and plot. Like a notebook cell: stdout/stderr, "
    "display() and matplotlib figures are captured, and the value of a final expression is "
    "shown. Long output is cut (head and tail). The user approves each run."
)


class _Stream(io.TextIOBase):
    """``sys.stdout``/``sys.stderr`` during a run: appends to the shared output list,
    merging consecutive writes of one stream as a notebook does."""

    def __init__(self, name: str, outputs: list[dict[str, Any]]) -> None:
        self.name = name
        self._outputs = outputs

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        if not isinstance(text, str):
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        if not text:
            return 0
        last = self._outputs[-1] if self._outputs else None
        if last is not None and last["output_type"] == "stream" and last["name"] == self.name:
            last["_parts"].append(text)
        else:
            self._outputs.append({"output_type": "stream", "name": self.name, "_parts": [text]})
        return len(text)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False


def _publisher(outputs: list[dict[str, Any]]) -> Any:
    from IPython.core.displaypub import DisplayPublisher

    class _Publisher(DisplayPublisher):  # type: ignore[misc]
        def publish(  # type: ignore[override]
            self,
            data: dict[str, Any],
            metadata: dict[str, Any] | None = None,
            source: Any = None,
            *,
            transient: Any = None,
            update: bool = False,
            **kwargs: Any,
        ) -> None:
            outputs.append(
                {"output_type": "display_data", "data": data, "metadata": metadata or {}}
            )

        def clear_output(self, wait: bool = False) -> None:
            outputs.clear()

    return _Publisher()


def _finish_streams(outputs: list[dict[str, Any]]) -> None:
    for out in outputs:
        parts = out.pop("_parts", None)
        if parts is not None:
            out["text"] = "".join(parts)


def _compile(source: str, filename: str) -> tuple[Any, Any, bool]:
    """``(body, last_expr, is_async)``: the code objects for all statements but a final
    expression (compiled 'exec') and for that expression (compiled 'eval'), as IPython's
    ``run_ast_nodes`` does with ``ast_node_interactivity='last_expr'``."""
    flags = ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
    tree = ast.parse(source, filename, "exec")
    last = None
    final = tree.body[-1] if tree.body else None
    if isinstance(final, ast.Expr) and not source.rstrip().endswith(";"):
        tree.body.pop()
        last = compile(ast.Expression(final.value), filename, "eval", flags=flags)
    body = compile(tree, filename, "exec", flags=flags)
    is_async = any(bool(c.co_flags & 0x80) for c in (body, last) if c is not None)  # CO_COROUTINE
    return body, last, is_async


def _trimmed_traceback(exc: BaseException, filename: str) -> list[str]:
    """The traceback from the agent's code down (the tool's own frames dropped)."""
    every = traceback.extract_tb(exc.__traceback__)
    frames: list[traceback.FrameSummary] = []
    for i, frame in enumerate(every):
        if frame.filename == filename:
            frames = list(every[i:])
            break
    lines = ["Traceback (most recent call last):\n"] if frames else []
    lines += traceback.format_list(frames)
    lines += traceback.format_exception_only(type(exc), exc)
    return [line.rstrip("\n") for line in "".join(lines).splitlines()]


def _error(exc: BaseException, filename: str) -> dict[str, Any]:
    return {
        "output_type": "error",
        "ename": type(exc).__name__,
        "evalue": str(exc),
        "traceback": _trimmed_traceback(exc, filename),
    }


def _figures_before() -> set[int]:
    plt = sys.modules.get("matplotlib.pyplot")
    return set(plt.get_fignums()) if plt is not None else set()


def _flush_figures(before: set[int], outputs: list[dict[str, Any]]) -> None:
    """Show the figures the code made and left open, as the inline backend does at the end
    of a cell (and close them when that backend is active, so the cell does not show them
    again)."""
    plt = sys.modules.get("matplotlib.pyplot")
    if plt is None:
        return
    import matplotlib

    inline = "inline" in str(matplotlib.get_backend()).lower()
    for num in plt.get_fignums():
        if num in before and not inline:
            continue
        fig = plt.figure(num)
        buf = io.BytesIO()
        try:
            fig.savefig(buf, format="png", bbox_inches="tight")
        except Exception as exc:  # a broken figure must not lose the other outputs
            outputs.append(
                {"output_type": "stream", "name": "stderr", "_parts": [f"figure {num}: {exc}\n"]}
            )
            continue
        data = {"image/png": base64.b64encode(buf.getvalue()).decode(), "text/plain": repr(fig)}
        outputs.append({"output_type": "display_data", "data": data, "metadata": {}})
        if inline:
            plt.close(fig)


def _value_output(ip: Any, value: Any) -> dict[str, Any] | None:
    if value is None:
        return None
    try:
        data, metadata = ip.display_formatter.format(value)
    except Exception:
        data, metadata = {"text/plain": object.__repr__(value)}, {}
    if not data:
        return None
    return {
        "output_type": "execute_result",
        "data": data,
        "metadata": metadata,
        "execution_count": None,
    }


async def run_code(ip: Any, source: str) -> tuple[list[dict[str, Any]], bool, bool]:
    """Run ``source`` in ``ip.user_ns``: ``(outputs, ok, interrupted)``. Outputs are nbformat
    v4 output dicts. Raises ``KeyboardInterrupt`` only when no kernel handler can stop the
    run for us (not inside an awaiting cell)."""
    global _runs
    _runs += 1
    filename = _FILENAME.format(n=_runs)
    outputs: list[dict[str, Any]] = []
    try:
        code = ip.transform_cell(source) if hasattr(ip, "transform_cell") else source
        body, last, is_async = _compile(code, filename)
    except SyntaxError as exc:
        outputs.append(_error(exc, filename))
        return outputs, False, False
    linecache.cache[filename] = (len(code), None, code.splitlines(keepends=True), filename)
    ns = ip.user_ns
    on_main = threading.current_thread() is threading.main_thread()
    saved_sigint = signal.getsignal(signal.SIGINT) if on_main else None
    saved = (sys.stdout, sys.stderr, ip.display_pub)
    sys.stdout, sys.stderr = _Stream("stdout", outputs), _Stream("stderr", outputs)
    ip.display_pub = _publisher(outputs)
    figures = _figures_before()
    ok, interrupted = True, False
    try:
        if on_main and not is_async:
            signal.signal(signal.SIGINT, signal.default_int_handler)
        try:
            if is_async:
                started = eval(body, ns)
                if started is not None:
                    await started
                value = eval(last, ns) if last is not None else None
                if inspect.isawaitable(value):
                    value = await value
            else:
                exec(body, ns)
                value = eval(last, ns) if last is not None else None
        finally:
            if on_main and not is_async:
                signal.signal(signal.SIGINT, saved_sigint)
        _flush_figures(figures, outputs)
        shown = _value_output(ip, value)
        if shown is not None:
            outputs.append(shown)
    except KeyboardInterrupt as exc:
        ok, interrupted = False, True
        outputs.append(_error(exc, filename))
    except Exception as exc:
        ok = False
        _flush_figures(figures, outputs)
        outputs.append(_error(exc, filename))
    finally:
        sys.stdout, sys.stderr, ip.display_pub = saved
        _finish_streams(outputs)
    if interrupted:
        handler = saved_sigint
        if callable(handler) and handler is not signal.default_int_handler:
            handler(signal.SIGINT, None)  # the kernel's own: it cancels the awaiting cell
        else:
            raise KeyboardInterrupt
    return outputs, ok, interrupted


def _cap(text: str, limit: int) -> tuple[str, bool]:
    if len(text) <= limit:
        return text, False
    head = limit * 2 // 3
    tail = limit - head
    cut = len(text) - head - tail
    return f"{text[:head]}\n… [{cut:,} characters cut] …\n{text[-tail:]}", True


def for_model(
    outputs: list[dict[str, Any]], *, limit: int = MAX_MODEL_CHARS
) -> tuple[str, list[Part], dict[str, Any]]:
    """The model's view of ``outputs``: text (head + tail within ``limit`` characters),
    images as parts, and what it saw (``model_saw``/``total_chars``) for the card."""
    blocks: list[str] = []
    parts: list[Part] = []
    for out in outputs:
        kind = out["output_type"]
        if kind == "stream":
            text = out["text"]
            blocks.append(text if out["name"] == "stdout" else f"[stderr]\n{text}")
        elif kind == "error":
            blocks.append("\n".join(out["traceback"]) or f"{out['ename']}: {out['evalue']}")
        else:
            data: Mapping[str, Any] = out.get("data", {})
            image = next((m for m in _IMAGE_TYPES if m in data), None)
            if image is not None:
                raw = base64.b64decode(str(data[image]))
                if len(parts) < MAX_IMAGES and len(raw) <= MAX_IMAGE_BYTES:
                    parts.append(Part(kind="image", media_type=image, data=raw))
                    blocks.append(f"[{image}: image {len(parts)} attached]")
                else:
                    blocks.append(f"[{image}: {len(raw):,} bytes, not attached]")
            text = data.get("text/plain")
            if text is not None and not (image and str(text).startswith("<Figure")):
                prefix = "Out: " if kind == "execute_result" else ""
                blocks.append(prefix + str(text))
            elif image is None:
                blocks.append(f"[{', '.join(data) or 'empty'} output]")
    full = "\n".join(b.rstrip("\n") for b in blocks)
    shown, cut = _cap(full, limit)
    meta = {"total_chars": len(full), "model_saw": min(len(full), limit) if cut else len(full)}
    if cut:
        shown += f"\n[the model saw {meta['model_saw']:,} of {len(full):,} characters]"
    return shown, parts, meta


class PythonTool:
    """The ``python`` tool: approved code in the kernel's namespace (see the module doc)."""

    preview_language = "python"

    def __init__(self, shell: Any = None, *, max_chars: int = MAX_MODEL_CHARS) -> None:
        self._shell = shell
        self.max_chars = max_chars

    @property
    def shell(self) -> Any:
        if self._shell is not None:
            return self._shell
        from IPython import get_ipython

        ip = get_ipython()
        if ip is None:
            raise RuntimeError("python: no IPython kernel is running; use it in a notebook")
        return ip

    def info(self) -> Info:
        return Info(
            name="python",
            description=DESCRIPTION,
            parameters=Schema.object({"code": Schema.string("The Python code to run")}, "code"),
            requires_approval=True,
            # code run in the user's namespace: "Always allow" offers the exact code at most
            subject=Subject(arg="code", kind="code"),
            headline=Headline(arg="code", kind="code", language="python"),
        )

    @staticmethod
    def _code(args: str | bytes | Mapping[str, Any]) -> str:
        parsed = args if isinstance(args, Mapping) else json.loads(args or "{}")
        code = parsed.get("code")
        if not isinstance(code, str):
            raise ValueError("python: 'code' (a string of Python) is required")
        return code

    def replay_code(self, args: str | bytes) -> str:
        """What a call runs, as code (``RunResult.to_code`` writes it as it is)."""
        return self._code(args)

    async def call(self, args: str | bytes) -> Result:
        code = self._code(args)
        start = time.perf_counter()
        outputs, ok, interrupted = await run_code(self.shell, code)
        text, parts, seen = for_model(outputs, limit=self.max_chars)
        if interrupted:
            text = (text + "\n" if text else "") + (
                "Interrupted by the user (KeyboardInterrupt) after "
                f"{time.perf_counter() - start:.1f} s; the code stopped there."
            )
        elif ok and not text and not parts:
            text = "(no output)"
        meta = {"outputs": outputs, "code": code, "language": "python", **seen}
        return Result(content=text, parts=parts, is_error=not ok, metadata=meta)
