"""A run as code: the tool calls it made, in order, as Python that re-does them without
the model (:meth:`RunResult.to_code`), and :func:`call_tool`, which that code calls.

Each call that ran becomes ``call_tool("name", arg=value, ...)``; a tool that runs code
(``python``) declares it with ``replay_code(args)`` and its code is written as it is. Calls
that failed, were denied, stopped or cut off are written as comments, so the code shows
the whole run and re-does only what happened. Running the code is the person's own act:
``call_tool`` runs each call as approved by them (a shell call in the approved sandbox).
"""

from __future__ import annotations

import json
import keyword
import pprint
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from nb_tools.model import ToolCall
from nb_tools.tool import Executor, Registry, Tool
from nb_tools.tool._grant import Grant, granted

if TYPE_CHECKING:
    from nb_tools.agent._events import ToolStatus

__all__ = ["ReplayedCall", "ToolCallFailed", "call_tool", "calls_as_code", "remember_tools"]

_REPLAYED_BY = "user:code"


@dataclass(frozen=True, kw_only=True)
class ReplayedCall:
    """One finished call of a run, as :meth:`RunResult.to_code` needs it: ``code`` is
    what the tool declared it runs (``replay_code``), else ``None``."""

    id: str
    name: str
    arguments: str
    status: ToolStatus
    code: str | None = None


class ToolCallFailed(RuntimeError):
    """``call_tool``: the tool answered with an error (the message is the tool's)."""


_latest: Registry | None = None


def remember_tools(registry: Registry) -> None:
    """The tools of the latest run in this process: what ``call_tool`` uses by default."""
    global _latest
    _latest = registry


def replay_code(tool: Tool | None, arguments: str) -> str | None:
    """The code a call runs, where its tool declares it (``replay_code(args)``)."""
    method = getattr(tool, "replay_code", None)
    if method is None:
        return None
    try:
        code = method(arguments)
    except Exception:  # invalid arguments: the call failed and is written as a comment
        return None
    return code if isinstance(code, str) else None


def call_tool(
    name: str, tools: Registry | Iterable[Tool] | None = None, /, **arguments: Any
) -> str:
    """Run tool ``name`` with ``arguments`` as the person's own call, and return its
    result's text; raises :class:`ToolCallFailed` with the tool's message when it fails.
    ``tools`` (positional, so that a tool may take an argument of that name): where to
    find it (default: the tools of the latest agent run in this
    process, else the ``@tool`` registry)."""
    if tools is None:
        registry = _latest if _latest is not None and _latest.get(name) else None
        if registry is None:
            from nb_tools.tool import default_registry

            registry = default_registry()
    else:
        registry = tools if isinstance(tools, Registry) else Registry(*tools)
    if registry.get(name) is None:
        raise KeyError(
            f"call_tool: no tool named {name!r} (tools: {', '.join(registry.names())}); pass "
            "tools= with the tools the run had"
        )
    call = ToolCall(id=f"replay_{name}", name=name, arguments=json.dumps(arguments))
    with granted(Grant(approved=True, kind="person", by=_REPLAYED_BY)):
        result = Executor(registry).execute_sync(call)
    if result.is_error:
        raise ToolCallFailed(f"{name}: {result.content}")
    return result.content


def _kwargs(arguments: str) -> str | None:
    """``a=1, b="x"`` for a JSON object whose keys are Python names; ``None`` otherwise."""
    try:
        value = json.loads(arguments or "{}")
    except ValueError:
        return None
    if not isinstance(value, Mapping):
        return None
    if not all(isinstance(k, str) and k.isidentifier() and not keyword.iskeyword(k) for k in value):
        return None
    return ", ".join(f"{k}={_literal(v)}" for k, v in value.items())


def _literal(value: Any) -> str:
    """A Python literal for a JSON value (``true`` -> ``True``, ``null`` -> ``None``)."""
    return pprint.pformat(value, width=88, sort_dicts=False)


def _call_line(call: ReplayedCall) -> str:
    kwargs = _kwargs(call.arguments)
    if kwargs is None:  # keys that are not Python names: pass them as a dict
        try:
            value = json.loads(call.arguments or "{}")
        except ValueError:
            return f"call_tool({call.name!r})  # arguments were not JSON: {call.arguments!r}"
        return f"call_tool({call.name!r}, **{_literal(value)})"
    return f"call_tool({call.name!r}{', ' if kwargs else ''}{kwargs})"


_NOT_REDONE = {
    "error": "failed",
    "denied": "denied",
    "stopped": "stopped before it ran",
    "cut_off": "cut off while it ran",
    "running_in_background": "stopped while it ran",
    "pending": "never finished",
}


def calls_as_code(calls: Sequence[ReplayedCall], header: str = "") -> str:
    """Python that re-does ``calls`` in order (see the module doc)."""
    lines = [
        "# The tool calls of an agent run, in order, without the model.",
        *(f"# {line}" for line in header.splitlines() if line),
    ]
    plain = [c for c in calls if c.status == "ok" and c.code is None]
    if plain:
        lines.append("from nb_tools import call_tool")
    if not calls:
        lines.append("# (the run made no tool calls)")
    for i, c in enumerate(calls, 1):
        lines.append("")
        if c.status != "ok":
            why = _NOT_REDONE.get(c.status, c.status)
            lines.append(f"# {i}. {c.name}: {why}, not re-done")
            shown = c.code if c.code is not None else _call_line(c)
            lines += [f"# {line}" for line in shown.splitlines()]
            continue
        if c.code is not None:
            lines.append(f"# {i}. {c.name}: code run in the kernel")
            lines.append(c.code.rstrip())
            continue
        lines.append(f"# {i}. {c.name}")
        lines.append(_call_line(c))
    return "\n".join(lines) + "\n"
