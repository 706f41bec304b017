"""A thread-safe set of tools keyed by name, and the process-wide default registry."""

from __future__ import annotations

import builtins
import copy
import functools
import inspect
import json
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from nb_tools.model import ToolSpec
from nb_tools.tool._names import MCP_NAME_PREFIX, validate_name
from nb_tools.tool._types import Info, Tool, ValidatedCall

if TYPE_CHECKING:
    from nb_tools.tool._schema import Schema

_EMPTY_OBJECT: dict[str, Any] = {"type": "object", "properties": {}}


@dataclass(frozen=True, slots=True)
class Entry:
    """A registered tool with everything the runtime derives from it once, at add time:
    its ``Info``, its spec (schema serialised once, so every request carries byte-identical
    tool definitions and the provider's prompt cache holds), how its arguments are
    validated (raw text -> parsed value; ``None``: not validated) and how to call it."""

    tool: Tool
    info: Info
    spec: ToolSpec
    validate: Callable[[str | bytes], Any] | None
    call_is_async: bool
    call_validated: Callable[[Any], Any] | None
    direct: tuple[Callable[[Any], dict[str, Any]], Callable[..., Any]] | None = None


def make_entry(tool: Tool) -> Entry:
    """Derive an ``Entry``; raises ``TypeError`` for an object that is not a tool."""
    info_method = getattr(tool, "info", None)
    call = getattr(tool, "call", None)
    if not callable(info_method) or not callable(call):
        raise TypeError(
            f"{tool!r} is not a tool: a tool has info() and call(args) methods; "
            "decorate a function with @tool to make one"
        )
    info = info_method()
    if not isinstance(info, Info):
        raise TypeError(f"{tool!r}.info() returned {type(info).__name__}, expected Info")
    validate: Callable[[str | bytes], Any] | None = None
    if info.raw_parameters is not None:
        input_schema: dict[str, Any] = copy.deepcopy(dict(info.raw_parameters))
    elif info.parameters is not None:
        params = info.parameters
        if info.strict:
            input_schema = json.loads(params.strict_json())
            validate = strict_validator(params)
        else:
            input_schema = params.to_dict()
            validate = params.validate
    else:
        input_schema = dict(_EMPTY_OBJECT)
    spec = ToolSpec(
        name=info.name,
        description=info.description,
        input_schema=input_schema,
        strict=info.strict,
        grammar=info.grammar,
        eager_input_streaming=info.eager_input_streaming,
        defer_loading=info.defer_loading,
        allowed_callers=tuple(info.allowed_callers),
    )
    # A tool that takes arguments already validated (a ValidatedCall, e.g. a @tool
    # function) gets the parsed value, so the executor parses the raw text once.
    fast: Callable[[Any], Any] | None = None
    direct: tuple[Callable[[Any], dict[str, Any]], Callable[..., Any]] | None = None
    if validate is not None and isinstance(tool, ValidatedCall):
        fast, direct = tool.call_validated, tool.direct_call
    return Entry(
        tool=tool,
        info=info,
        spec=spec,
        validate=validate,
        call_is_async=inspect.iscoroutinefunction(call),
        call_validated=fast,
        direct=direct,
    )


def strict_validator(schema: Schema) -> Callable[[str | bytes], Any]:
    """Validation for a strict tool: like the schema's own, but optional properties may be
    null (the strict form makes the model send them as null). Omitting them stays valid,
    for providers without a strict mode."""
    if "strict" in inspect.signature(schema.validate).parameters:
        return functools.partial(schema.validate, strict=True)
    return schema.strict().validate


def _check_name(name: str) -> None:
    validate_name(name, mcp=name.startswith(MCP_NAME_PREFIX))


class Registry:
    """A thread-safe set of tools keyed by name.

    ``list()`` and ``specs()`` are sorted by name so prompts stay byte-identical across
    requests; ``names()`` and iteration keep first-seen order. Hidden tools stay callable
    by name but are left out of ``specs()``.
    """

    def __init__(self, *tools: Tool) -> None:
        self._lock = threading.RLock()
        self._entries: dict[str, Entry] = {}
        self._hidden: set[str] = set()
        self._specs: tuple[ToolSpec, ...] | None = None
        self._sorted: tuple[Entry, ...] | None = None
        if tools:
            self.register(*tools)

    # -- changing ---------------------------------------------------------------------

    def register(self, *tools: Tool) -> None:
        """Add tools, all or nothing: an invalid name, a name already registered or one
        repeated among ``tools`` raises ``ValueError`` and registers none of them."""
        entries = [make_entry(t) for t in tools]
        with self._lock:
            seen: set[str] = set()
            for entry in entries:
                name = entry.info.name
                _check_name(name)
                if name in self._entries or name in seen:
                    raise ValueError(
                        f"tool {name!r} is already registered; use Registry.add() to "
                        "replace it or give the tool another name"
                    )
                seen.add(name)
            for entry in entries:
                self._entries[entry.info.name] = entry
            self._changed()

    def add(self, tool: Tool) -> None:
        """Add ``tool``, replacing a tool of the same name in its place (first-seen order
        is kept, and so is its hidden state)."""
        entry = make_entry(tool)
        _check_name(entry.info.name)
        with self._lock:
            self._entries[entry.info.name] = entry
            self._changed()

    def remove(self, *names: str) -> None:
        """Remove the named tools; names that are not registered are ignored."""
        with self._lock:
            for name in names:
                self._entries.pop(name, None)
                self._hidden.discard(name)
            self._changed()

    def remove_prefix(self, prefix: str) -> int:
        """Remove every tool whose name starts with ``prefix`` (e.g. an MCP server's
        ``mcp__<server>__`` on disconnect) and return how many were removed."""
        with self._lock:
            doomed = [name for name in self._entries if name.startswith(prefix)]
            self.remove(*doomed)
            return len(doomed)

    def hide(self, name: str) -> None:
        """Leave a registered tool out of ``specs()``; it stays callable by name. A name
        that is not registered is ignored."""
        with self._lock:
            if name in self._entries:
                self._hidden.add(name)
                self._changed()

    def unhide(self, name: str) -> None:
        with self._lock:
            self._hidden.discard(name)
            self._changed()

    def _changed(self) -> None:
        self._specs = None
        self._sorted = None

    # -- reading ----------------------------------------------------------------------

    def get(self, name: str) -> Tool | None:
        entry = self._entries.get(name)
        return None if entry is None else entry.tool

    def entry(self, name: str) -> Entry | None:
        """The tool registered as ``name`` with what was derived from it (executor use)."""
        return self._entries.get(name)

    def entries(self) -> Mapping[str, Entry]:
        """The entries by name, live, for hot paths (the executor): reading takes no lock
        (a dict lookup is atomic) and sees later changes. Read-only: change the registry
        through its methods. (Not a ``MappingProxyType``: its lookups cost 3x a dict's.)"""
        return self._entries

    def is_hidden(self, name: str) -> bool:
        return name in self._hidden

    def _sorted_entries(self) -> tuple[Entry, ...]:
        cached = self._sorted
        if cached is None:
            with self._lock:
                cached = tuple(sorted(self._entries.values(), key=lambda e: e.info.name))
                self._sorted = cached
        return cached

    def list(self) -> list[Tool]:
        """All tools, hidden ones too, sorted by name."""
        return [e.tool for e in self._sorted_entries()]

    def names(self) -> builtins.list[str]:
        """All tool names in first-seen order."""
        with self._lock:
            return list(self._entries)

    def visible_names(self) -> builtins.list[str]:
        """The names of the tools the model sees, sorted."""
        with self._lock:
            hidden = self._hidden
            return [e.info.name for e in self._sorted_entries() if e.info.name not in hidden]

    def specs(self) -> builtins.list[ToolSpec]:
        """The visible tools as the provider sees them, sorted by name. The same
        ``ToolSpec`` objects come back each time until the registry changes; treat them
        as read-only."""
        cached = self._specs
        if cached is None:
            with self._lock:
                hidden = self._hidden
                cached = tuple(e.spec for e in self._sorted_entries() if e.info.name not in hidden)
                self._specs = cached
        return list(cached)

    def subset(self, *names: str) -> Registry:
        """A new registry with only the named tools (and their hidden state); raises
        ``KeyError`` naming the first unknown name."""
        with self._lock:
            missing = [n for n in names if n not in self._entries]
            if missing:
                raise KeyError(
                    f"unknown tool {missing[0]!r} in subset(); registered tools: "
                    + (", ".join(sorted(self._entries)) or "none")
                )
            out = Registry()
            for name in names:
                out._entries[name] = self._entries[name]
            out._hidden.update(n for n in names if n in self._hidden)
            return out

    def clone(self) -> Registry:
        """An independent copy: changing one does not change the other."""
        with self._lock:
            out = Registry()
            out._entries.update(self._entries)
            out._hidden.update(self._hidden)
            return out

    def visible_count(self) -> int:
        with self._lock:
            return len(self._entries) - len(self._hidden)

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __iter__(self) -> Iterator[Tool]:
        """The tools in first-seen order (a snapshot)."""
        with self._lock:
            return iter([e.tool for e in self._entries.values()])

    def __repr__(self) -> str:
        return f"Registry({', '.join(self.names())})"


_default = Registry()


def default_registry() -> Registry:
    """The process-wide registry ``@tool`` registers into (one per kernel)."""
    return _default
