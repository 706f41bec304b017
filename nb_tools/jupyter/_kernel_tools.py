"""Read-only views of the kernel's session for the model: ``list_variables`` and
``describe``, and ``kernel_tools()`` (these two plus ``python``, plus the live notebook
tools when a frontend with the nb_tools extension is connected).

Both read ``get_ipython().user_ns`` without running the user's code (they run without a
click): attributes, items and reprs go through ``_static_read`` (no property, ``__getattr__``,
``__getitem__``, ``__repr__``, ``__len__`` or ``__dir__`` of the user's runs; NumPy's and
pandas' own code does), no ``repr()`` of a big object (DataFrames and arrays are summarised
from their shape, dtypes and ``nbytes``; ``memory_usage(deep=False)`` never walks object
columns), every answer capped in characters. ``describe`` takes a name or an
attribute/item path with literal keys (``model.coef_``, ``d["key"]``, ``xs[0]``); no calls,
no evaluation.
"""

from __future__ import annotations

import functools
import json
import os
import reprlib
import sys
import types
from collections.abc import Mapping
from typing import Any

from nb_tools.jupyter._describe_path import PathError, last_name, resolve_path, secret_path
from nb_tools.jupyter._static_frames import (
    NOT_RUN,
    hidden_axis,
    hide_secrets,
    null_count,
    relabel,
    repr_name,
    safe_head,
    secret_levels,
)
from nb_tools.jupyter._static_pandas import (
    default_display,
    exact_array,
    pandas_kind,
    shape_of,
    unreadable,
)
from nb_tools.jupyter._static_read import (
    _instance_dict,
    attribute_lines,
    builtin_len,
    kernel_machinery,
    safe_values,
    shallow_size,
    type_module,
    type_name,
)
from nb_tools.jupyter._static_repr import array_text, safe_repr
from nb_tools.sandbox import NAME_HIDDEN as HIDDEN
from nb_tools.sandbox import redact_ends, redact_secret_text, secret_env_name, secret_name
from nb_tools.tool import Info, Registry, Result, Schema, Tool

__all__ = [
    "DescribeTool",
    "ListVariablesTool",
    "agent_tools",
    "describe_value",
    "kernel_tools",
    "list_user",
]

MAX_LIST_CHARS = 14_000
"""``list_variables`` answer cap (≈3,500 tokens at 4 characters a token)."""
MAX_DESCRIBE_CHARS = 8_000
LISTED_COLUMNS = 60
"""``describe`` of a wider frame lists, shows and summarises its first this many columns."""
_SKIP_TYPES: tuple[type, ...] = (
    types.ModuleType,
    types.FunctionType,
    types.BuiltinFunctionType,
    types.MethodType,
    types.BuiltinMethodType,
    type,
    functools.partial,
)
_INTERNAL = frozenset(("In", "Out", "exit", "quit", "get_ipython"))
_SCALARS = (int, float, complex, bool)
_CONTAINERS = (list, tuple, dict, set, frozenset, bytes, bytearray)


def _shell(shell: Any = None) -> Any:
    if shell is not None:
        return shell
    from IPython import get_ipython

    ip = get_ipython()
    if ip is None:
        raise RuntimeError("no IPython kernel is running; use these tools in a notebook")
    return ip


def _size(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GB"  # pragma: no cover


def _kind(value: Any) -> str:
    """``DataFrame``, ``Series`` or ``ndarray`` when ``value`` is exactly pandas' or NumPy's
    class (by identity: a subclass, or a class that only says so, is another object)."""
    kind = pandas_kind(value)
    if kind in ("DataFrame", "Series"):
        return kind
    return "ndarray" if exact_array(value) else ""


def is_user_variable(name: str, value: Any, hidden: Mapping[str, Any]) -> bool:
    if type(name) is not str or name.startswith("_") or name in _INTERNAL:
        return False
    if name in hidden and hidden[name] is value:
        return False
    if issubclass(type(value), _SKIP_TYPES):  # not isinstance: it may read __class__
        return False
    mod = type_module(type(value))
    return not mod.startswith(("nb_tools.", "IPython.", "ipykernel."))


def _frame_summary(df: Any, limit: int = 6, exact: int = 50) -> tuple[str, int]:
    """``"col:dtype, ..."`` (the first ``limit`` columns) and the shallow memory in bytes,
    from ``df.dtypes`` alone: a NumPy column holds ``itemsize`` bytes a row (a pointer for
    object columns, as ``memory_usage(deep=False)`` counts it); only extension columns
    (categorical, string, nullable) are asked for their ``nbytes`` (the first ``exact`` of
    them; later ones are counted at 8 bytes a row). ``memory_usage()`` and ``items()``
    build a Series per column and cost 10x more."""
    import numpy as np

    dtypes = df.dtypes
    rows = len(df.index)
    mem = int(df.index.nbytes)
    asked = 0
    cols: list[str] = []
    labels = hidden_axis(df.columns) if secret_levels(df.columns) else dtypes.index
    for i, (name, dtype) in enumerate(zip(labels, dtypes.values, strict=False)):
        if i < limit:
            cols.append(f"{repr_name(name)}:{dtype}")
        if issubclass(type(dtype), np.dtype):
            mem += dtype.itemsize * rows
        elif asked < exact:  # pandas' own (``unreadable`` checked the arrays)
            asked += 1
            mem += int(df.iloc[:, i].array.nbytes)
        else:
            mem += 8 * rows
    more = len(dtypes) - limit
    return ", ".join(cols) + (f", +{more} more" if more > 0 else ""), mem


def summary_line(name: str, value: Any) -> tuple[str, int]:
    """One line about ``value`` and its memory in bytes (shallow where deep is costly)."""
    kind = _kind(value)
    t = type(value)
    tname = type_name(t).rpartition(".")[2]
    why = unreadable(value) if kind in ("DataFrame", "Series") else None
    if why:
        shape = shape_of(value) if kind == "DataFrame" else f"len {shape_of(value)}"
        return f"{name}: {kind} {shape} (values not read: {why})", 0
    if kind == "DataFrame":
        cols, mem = _frame_summary(value)
        rows, ncols = value.shape
        return f"{name}: DataFrame {rows}x{ncols} [{cols}] {_size(mem)}", mem
    if kind == "Series":
        mem = int(value.memory_usage(index=True, deep=False))
        return f"{name}: Series len {len(value)} {value.dtype} {_size(mem)}", mem
    if kind == "ndarray":
        mem = int(value.nbytes)
        shape = "x".join(str(d) for d in value.shape) or "scalar"
        return f"{name}: ndarray {shape} {value.dtype} {_size(mem)}", mem
    mem = shallow_size(value)
    if any(t is s for s in _SCALARS):
        return f"{name}: {tname} = {value!r}"[:80], mem
    if t is str:
        shown = reprlib.repr(redact_ends(value, 40)) if len(value) > 40 else repr(value)
        return f"{name}: str len {len(value)} = {shown}", mem
    if any(t is c for c in _CONTAINERS):
        return f"{name}: {tname} len {builtin_len(value)} {_size(mem)}", mem
    mod = type_module(t)
    qual = tname if mod in ("builtins", "__main__") else f"{mod.split('.')[0]}.{tname}"
    size = builtin_len(value)
    return f"{name}: {qual}" + (f" len {size}" if size is not None else ""), mem


def list_user(ns: Mapping[str, Any], hidden: Mapping[str, Any], *, pattern: str = "") -> str:
    """The ``list_variables`` text for namespace ``ns`` (``hidden``: IPython's
    ``user_ns_hidden``, what the namespace held when the kernel started)."""
    lines: list[str] = []
    total = 0
    count = 0
    size = 0
    cut = 0
    for name, value in list(ns.items()):
        if type(name) is not str or (pattern and pattern not in name):
            continue  # a key that is not a str: its hash and == are not read
        if not is_user_variable(name, value, hidden):
            continue
        count += 1
        try:
            line, mem = summary_line(name, value)
            if secret_name(name):
                line = f"{name}: {type_name(type(value))} {HIDDEN}"
        except Exception as exc:  # a broken property must not hide the others
            line, mem = f"{name}: {type_name(type(value))} (unreadable: {exc})", 0
        total += mem
        if size + len(line) + 1 > MAX_LIST_CHARS:
            cut += 1
            continue
        lines.append(line)
        size += len(line) + 1
    if not count:
        which = f" matching {pattern!r}" if pattern else ""
        return f"No user variables{which} in the kernel."
    head = f"{count} user variable{'s' if count != 1 else ''}, {_size(total)} (shallow):"
    tail = [f"… {cut} more not shown (output cap); pass pattern= to narrow the list"] if cut else []
    return "\n".join([head, *lines, *tail])


# -- describe -------------------------------------------------------------------------


def _frame_text(obj: Any, width: int = 120) -> str:
    import pandas as pd  # type: ignore[import-untyped,unused-ignore]

    with pd.option_context(
        "display.max_columns", 20, "display.width", width, "display.max_colwidth", 40
    ):
        if isinstance(obj, pd.DataFrame):
            return str(obj.to_string(max_rows=20, max_cols=20, max_colwidth=40))
        return str(obj.to_string(max_rows=20))


def _plain(dtype: Any) -> bool:
    import numpy as np

    return issubclass(type(dtype), np.dtype) and not dtype.hasobject


def _describe_frame(name: str, df: Any, rows: int) -> str:
    """Columns whose values are not all builtins (``safe_values``) are shown through
    ``safe_repr``, counted by ``null_count`` and left out of ``describe()``."""
    import numpy as np

    mem = _frame_summary(df)[1]  # memory_usage() makes a Series per column
    # only the columns listed are read: pandas' describe(), a hidden column's
    # isetitem, ... cost milliseconds a column (20,000 columns took a minute)
    wide = df.shape[1] > LISTED_COLUMNS
    work, notes = relabel(df.iloc[:, :LISTED_COLUMNS] if wide else df)
    declared = list(work.dtypes.values)  # before hidden values turn columns to object
    work, hidden = hide_secrets(work)
    notes += hidden
    dtypes = list(work.dtypes.values)
    listed = len(dtypes)
    safe = [_plain(dtypes[i]) or safe_values(work.iloc[:, i]) for i in range(listed)]
    plain = [i for i in range(listed) if safe[i]]
    # the safe columns (all of them, mostly: no copy then)
    safe_part = work if len(plain) == len(dtypes) else work.iloc[:, plain]
    nulls = dict(zip(plain, safe_part.isna().sum().values, strict=False))
    cols = []
    for i in range(listed):
        n = nulls[i] if safe[i] else null_count(work.iloc[:, i])
        cols.append(
            f"  {repr_name(work.columns[i])}: {declared[i]}" + (f", {int(n)} null" if n else "")
        )
    if wide:
        cols.append(f"  … {df.shape[1] - listed} more columns")
    head, unsafe = safe_head(work, rows)
    out = [
        f"{name}: DataFrame, {df.shape[0]} rows x {df.shape[1]} columns, {_size(mem)} (shallow)",
        f"index: {type_name(type(df.index)).rpartition('.')[2]} {df.index.dtype}",
        *notes,
        "columns:",
        *cols,
        f"head({rows}):",
        _frame_text(head),
    ]
    if unsafe:
        out.append(f"note: column(s) {', '.join(unsafe)} hold {NOT_RUN}")
    left_out = [repr_name(work.columns[i]) for i in range(listed) if not safe[i]]
    if not wide:
        stats_frame = safe_part
    else:  # describe()'s default: the numeric and datetime columns (of those listed)
        kinds = [issubclass(type(d), np.dtype) and d.kind in "iufcmM" for d in dtypes[:listed]]
        stats_frame = work.iloc[:, [i for i, k in enumerate(kinds) if k]]
    try:
        if stats_frame.shape[1]:
            stats = stats_frame.describe(include="all") if not wide else stats_frame.describe()
            out += ["describe():", _frame_text(stats)]
    except (ValueError, TypeError) as exc:
        out.append(f"describe() failed: {exc}")
    if left_out:
        out.append(
            f"describe() leaves out {', '.join(left_out)}: objects of types other than builtins"
        )
    return "\n".join(out)


def _describe_series(name: str, s: Any, rows: int) -> str:
    mem = int(s.memory_usage(index=True, deep=False))
    work, notes = relabel(s)
    work, hidden = hide_secrets(work)
    notes += hidden
    head, _ = safe_head(work, rows)
    out = [
        f"{name}: Series {safe_repr(s.name)}, {len(s)} values, dtype {s.dtype}, "
        f"{null_count(s)} null, {_size(mem)} (shallow)",
        *notes,
        f"head({rows}):",
        _frame_text(head),
    ]
    if not safe_values(work):
        out.append(f"note: its values are {NOT_RUN}; no describe() for them")
        return "\n".join(out)
    try:
        out += ["describe():", _frame_text(work.describe())]
    except (ValueError, TypeError) as exc:
        out.append(f"describe() failed: {exc}")
    return "\n".join(out)


def _describe_array(name: str, a: Any) -> str:
    import numpy as np

    out = [f"{name}: ndarray shape {a.shape}, dtype {a.dtype}, {_size(a.nbytes)}"]
    if a.size and (np.issubdtype(a.dtype, np.number) or a.dtype == bool):
        with np.errstate(all="ignore"):
            nums = a.astype(float, copy=False) if a.dtype == bool else a
            nan = int(np.isnan(nums).sum()) if np.issubdtype(a.dtype, np.floating) else 0
            stats = [np.nanmin(nums), np.nanmax(nums), np.nanmean(nums), np.nanstd(nums)]
            low, high, mean, std = (f"{float(v):.6g}" for v in stats)
            out.append(
                f"min {low}, max {high}, mean {mean}, std {std}" + (f", {nan} NaN" if nan else "")
            )
    out.append(array_text(a))
    if not safe_values(a):
        out.append(f"note: its elements are {NOT_RUN}")
    return "\n".join(out)


def _describe_other(name: str, value: Any) -> str:
    t = type(value)
    shown = type_name(t) if type_module(t) != "builtins" else f"builtins.{type_name(t)}"
    out = [f"{name}: {shown}"]
    size = builtin_len(value)
    if size is not None:
        out[0] += f", len {size}"
    out.append(safe_repr(value))
    if type_module(t) != "builtins" and not kernel_machinery(value):
        attrs = attribute_lines(value)
        if attrs:
            out += ["attributes:", *attrs]
    return "\n".join(out)


def _describe_environ(name: str, env: Any) -> str:
    """``os.environ`` as the variables it holds, read from its own data (no code of the
    mapping runs); values under secret-looking names are hidden."""
    data = (_instance_dict(env) or {}).get("_data")
    if type(data) is not dict:
        return f"{name}: os._Environ (its data cannot be read without running code)"
    lines = [f"{name}: the environment, {len(data)} variables"]
    for key in sorted(data, key=lambda k: os.fsdecode(k) if type(k) in (str, bytes) else ""):
        if type(key) not in (str, bytes) or type(data[key]) not in (str, bytes):
            continue
        text = os.fsdecode(key)
        shown = HIDDEN if secret_env_name(text) else safe_repr(os.fsdecode(data[key]))
        lines.append(f"  {text}={shown}")
    return "\n".join(lines)


def _describe_unread(name: str, value: Any, kind: str, why: str) -> str:
    """A DataFrame or Series whose values are not read: its shape, and the column labels
    when they are pandas' own."""
    shape = shape_of(value) if kind == "DataFrame" else f"len {shape_of(value)}"
    out = [
        f"{name}: {kind} {shape}; its values are not read: {why} (the python "
        "tool can read them once the user approves)"
    ]
    if kind == "DataFrame" and not unreadable(value.columns) and not secret_levels(value.columns):
        labels = [repr_name(c) for c in value.columns[:LISTED_COLUMNS]]
        more = " …" if len(value.columns) > LISTED_COLUMNS else ""
        out.append("columns: " + ", ".join(labels) + more)
    return "\n".join(out)


def describe_value(name: str, value: Any, *, rows: int = 5) -> str:
    """What ``describe`` shows of ``value``, formatted under the default display options."""
    with default_display():
        return _describe(name, value, rows)


def _describe(name: str, value: Any, rows: int) -> str:
    if type(value) is type(os.environ):
        return _describe_environ(name, value)
    kind = _kind(value)
    why = unreadable(value) if kind in ("DataFrame", "Series") else None
    if why:
        return _describe_unread(name, value, kind, why)
    if kind == "DataFrame":
        return _describe_frame(name, value, rows)
    if kind == "Series":
        return _describe_series(name, value, rows)
    if kind == "ndarray":
        return _describe_array(name, value)
    return _describe_other(name, value)


def _cap(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    head = limit * 3 // 4
    return (
        f"{text[:head]}\n… [cut: {len(text) - limit:,} characters] …\n{text[-(limit - head) :]}"
        f"\n[the model saw {limit:,} of {len(text):,} characters]"
    )


class _ReadOnlyTool:
    def __init__(self, shell: Any = None) -> None:
        self._shell = shell

    @staticmethod
    def _args(args: str | bytes | Mapping[str, Any]) -> Mapping[str, Any]:
        return args if isinstance(args, Mapping) else json.loads(args or "{}")


class ListVariablesTool(_ReadOnlyTool):
    """``list_variables``: the user's variables with type, shape, dtypes and memory."""

    def info(self) -> Info:
        return Info(
            name="list_variables",
            description=(
                "List the user's variables in the live kernel (not modules, functions, "
                "classes or IPython internals): name, type, shape or length, dtypes and "
                "memory. Read-only. Use describe for one variable in detail."
            ),
            parameters=Schema.object({"pattern": Schema.string("Only names containing this text")}),
            read_only=True,
            concurrent=True,
        )

    def call(self, args: str | bytes) -> Result:
        pattern = str(self._args(args).get("pattern") or "")
        ip = _shell(self._shell)
        with default_display():
            text = list_user(ip.user_ns, ip.user_ns_hidden, pattern=pattern)
        return Result(content=redact_secret_text(text)[0])


class DescribeTool(_ReadOnlyTool):
    """``describe``: one variable (or attribute/item path) in detail, capped."""

    def info(self) -> Info:
        return Info(
            name="describe",
            description=(
                "Describe one variable of the live kernel: a DataFrame/Series (shape, dtypes, "
                "nulls, head, describe()), an ndarray (shape, dtype, stats) or any other "
                'object (capped repr, attributes). name may be a path: model.coef_, d["key"], '
                "xs[0] (literal keys only; nothing is called). Read-only."
            ),
            parameters=Schema.object(
                {
                    "name": Schema.string(
                        'A variable name or path such as df, model.coef_, d["k"]'
                    ),
                    "rows": Schema.integer("Rows of head() to show (default 5, at most 50)"),
                },
                "name",
            ),
            read_only=True,
            concurrent=True,
        )

    def call(self, args: str | bytes) -> Result:
        parsed = self._args(args)
        path = str(parsed.get("name", ""))
        rows = max(1, min(int(parsed.get("rows") or 5), 50))
        ip = _shell(self._shell)
        try:
            with default_display():
                value = resolve_path(path, ip.user_ns)
        except PathError as exc:
            return Result.error(str(exc))
        if secret_name(last_name(path)):
            return Result.error(secret_path(path))
        text = describe_value(path.strip(), value, rows=rows)
        # a copy of a secret has no secret name: its value is hidden where it shows
        return Result(content=redact_secret_text(_cap(text, MAX_DESCRIBE_CHARS))[0])


def kernel_tools(*, python: bool = True, shell: Any = None) -> list[Tool]:
    """The tools on the live kernel: ``python`` (unless ``python=False``),
    ``list_variables``, ``describe``, ``ask_user`` (a question to the person), plus
    ``notebook_read``/``notebook_edit`` on the open notebook when a frontend with the
    nb_tools extension is connected."""
    from nb_tools.jupyter._ask_user import AskUserTool
    from nb_tools.jupyter._live_notebook import live, live_tools
    from nb_tools.jupyter._python_tool import PythonTool

    tools: list[Tool] = []
    if python:
        tools.append(PythonTool(shell))
    tools += [ListVariablesTool(shell), DescribeTool(shell), AskUserTool()]
    if live().connected:
        tools += live_tools()
    return tools


def listed_kernel_tools() -> list[Tool]:
    """The kernel tools a run may offer, for ``%tools`` (none outside IPython)."""
    ip = sys.modules.get("IPython")
    if ip is None or ip.get_ipython() is None:
        return []
    from nb_tools.jupyter._live_notebook import live, live_tools
    from nb_tools.jupyter._notebook_run import NotebookRunTool

    live_names = {t.info().name for t in live_tools()}
    own = [t for t in kernel_tools() if t.info().name not in live_names]
    return [*own, *live_tools(), NotebookRunTool(live())]


def agent_tools(
    names: list[str] | None,
    builtins: Registry | None,
    *,
    python: bool = True,
    hidden: frozenset[str] = frozenset(),
) -> tuple[list[str] | None, Registry | None]:
    """What ``%%agent`` hands ``Session.refresh_tools``: the session tool names left once
    the kernel tools are taken out of ``names`` (``--tools``), and the extra registry (the
    built-ins, then the kernel tools, which replace the disk ``notebook_*`` tools when the
    open notebook is live). With ``--tools``, a kernel tool is there only when named;
    ``hidden``: kernel tools hidden with ``%tools`` (kept, but not shown to the model)."""
    ip = sys.modules.get("IPython")
    if ip is None or ip.get_ipython() is None:
        return names, builtins
    # the kernel tools' names come from the tools themselves (one list: listed_kernel_tools)
    kernel_names = {t.info().name for t in listed_kernel_tools()}
    wanted = None if names is None else {n for n in names if n in kernel_names}
    rest = None if names is None else [n for n in names if n not in kernel_names]
    extra = Registry()
    disk: dict[str, Tool] = {}
    if builtins is not None:
        for tool in builtins.list():
            name = tool.info().name
            extra.add(tool)
            disk[name] = tool
            if builtins.is_hidden(name):
                extra.hide(name)
    tools = kernel_tools(python=python)
    if getattr(ip.get_ipython(), "kernel", None) is not None:
        from nb_tools.jupyter._live_notebook import live, live_tools

        live().new_run()  # its edits: one undo step; its first live call opens the comm
        from nb_tools.jupyter._notebook_run import NotebookRunTool

        live_names = ("notebook_read", "notebook_edit")
        tools = [t for t in tools if t.info().name not in live_names] + live_tools(disk)
        tools.append(NotebookRunTool(live()))
    for tool in tools:
        name = tool.info().name
        if wanted is None or name in wanted:
            extra.add(tool)
            if name in hidden:
                extra.hide(name)
    return rest, extra
