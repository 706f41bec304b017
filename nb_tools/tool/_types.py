"""The tool abstraction: what a tool says about itself, what a call returns, and the
optional protocols a tool may implement (approval by arguments, per-call read-only vote,
preview of changes)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from nb_tools.model import Part, ToolGrammar

if TYPE_CHECKING:
    from nb_tools.tool._schema import Schema


@dataclass(frozen=True, kw_only=True)
class Info:
    """Describes a tool to the model and to the runtime.

    ``raw_parameters``, when set, is sent to the model instead of ``parameters`` and
    disables argument validation (for schemas ``Schema`` cannot represent, e.g. MCP's).
    ``read_only`` tools have no side effects; adjacent read-only or ``concurrent`` calls
    run in parallel. A cut-off ``concurrent`` call with side effects is never re-run.
    """

    name: str
    description: str = ""
    parameters: Schema | None = None
    raw_parameters: Mapping[str, Any] | None = None
    read_only: bool = False
    concurrent: bool = False
    requires_approval: bool = False
    strict: bool = False
    grammar: ToolGrammar | None = None

    # -- Claude's tool options (sent in the tool's definition; other providers ignore them)
    eager_input_streaming: bool = False
    """Stream the arguments as the model writes them, without buffering whole JSON values
    (a writer's diff can grow on its card while the model writes the file)."""
    defer_loading: bool = False
    """Left out of the prompt until the model finds it with the tool-search tool."""
    allowed_callers: tuple[str, ...] = ()
    """Who may call it: "direct" (the model) and/or a code-execution version
    ("code_execution_20260120": programmatic calls from the model's code); () means the
    API's default (the model only)."""
    # -- end of Claude's tool options


@dataclass(kw_only=True)
class Result:
    """The output of a tool call. ``metadata`` is never sent to the model."""

    content: str = ""
    parts: list[Part] = field(default_factory=list)
    is_error: bool = False
    metadata: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def error(cls, message: str, **metadata: Any) -> Result:
        return cls(content=message, is_error=True, metadata=dict(metadata))


@runtime_checkable
class Tool(Protocol):
    """A capability the model can invoke. ``call`` may be a coroutine function."""

    def info(self) -> Info: ...

    def call(self, args: str | bytes) -> Result | Awaitable[Result]: ...


@runtime_checkable
class ApprovalByArguments(Protocol):
    """A tool whose need for approval depends on the arguments (e.g. a shell)."""

    def requires_approval_for(self, args: str | bytes) -> bool: ...


@runtime_checkable
class ReadOnlyCall(Protocol):
    """A per-call read-only vote that overrides ``Info.read_only`` (``git log`` vs ``rm``)."""

    def read_only_call(self, args: str | bytes) -> bool: ...


@runtime_checkable
class ProtectedCall(Protocol):
    """A tool that says whether a call touches a protected path (``.env*``, ``.git/``, the
    rules file, IPython startup files): such a call asks a person under every policy, and
    no allow rule lifts that."""

    def is_protected_call(self, args: str | bytes) -> bool: ...


@runtime_checkable
class AnthropicDefined(Protocol):
    """A tool the Messages API defines itself (the text editor, bash): declared to Claude by
    its ``ANTHROPIC_TYPE`` family (``"text_editor_20250728"``), the version chosen for the
    model, instead of by its schema."""

    ANTHROPIC_TYPE: str


@runtime_checkable
class FromMCPServer(Protocol):
    """A tool served by an MCP server: ``mcp_server`` is the server's name, which an allow
    rule for ``mcp__NAME__…`` must match, and which the inspector groups by."""

    mcp_server: str


@runtime_checkable
class ValidatedCall(Protocol):
    """A tool that also takes arguments already validated against its own
    ``Info.parameters`` (a ``@tool`` function), so the executor parses the raw text once.
    ``call_validated`` may return any value ``to_result`` accepts; ``direct_call``, when
    not ``None``, is ``(prepare, fn)``: the executor may await ``fn(**prepare(parsed))``
    itself, two coroutine frames fewer per call."""

    def call_validated(self, parsed: Any) -> Awaitable[Any]: ...

    @property
    def direct_call(self) -> tuple[Callable[[Any], dict[str, Any]], Callable[..., Any]] | None: ...


@dataclass(frozen=True, kw_only=True)
class Change:
    """One file change a writer would make. ``before``/``after`` are ``None`` for a
    created/deleted file; a move is a delete plus a create."""

    path: str
    before: str | None
    after: str | None
    binary: bool = False

    @property
    def kind(self) -> str:
        if self.before is None:
            return "create"
        if self.after is None:
            return "delete"
        return "update"

    def diff(self, context: int = 3) -> str:
        """The change as a unified diff (``a/path`` → ``b/path``)."""
        if self.binary:
            return f"Binary file {self.path} {self.kind}d\n"
        old = (self.before or "").splitlines(keepends=True)
        new = (self.after or "").splitlines(keepends=True)
        fromfile = "/dev/null" if self.before is None else f"a/{self.path}"
        tofile = "/dev/null" if self.after is None else f"b/{self.path}"
        import difflib  # here, not at import time: nb_tools imports this module

        lines = difflib.unified_diff(old, new, fromfile, tofile, n=context)
        return "".join(
            line if line.endswith("\n") else line + "\n\\ No newline at end of file\n"
            for line in lines
        )


@runtime_checkable
class Previewer(Protocol):
    """A writer that can compute the change a call would make without touching disk."""

    def preview(self, args: str | bytes) -> Change: ...


@runtime_checkable
class MultiPreviewer(Protocol):
    """The multi-file form of ``Previewer`` (``apply_patch``): one ``Change`` per file."""

    def preview_files(self, args: str | bytes) -> list[Change]: ...


@dataclass(frozen=True, kw_only=True)
class Call:
    """A single tool invocation as middleware sees it (``arguments`` is raw JSON text).
    ``tool`` is ``None`` when no tool of that name is registered."""

    id: str
    name: str
    arguments: str
    tool: Tool | None = None


class ToolPanic(Exception):
    """An unexpected exception inside a tool. Only the message reaches the model;
    ``traceback`` (formatted) is for middleware and logs."""

    def __init__(self, message: str, *, traceback: str = "", cause: BaseException | None = None):
        super().__init__(message)
        self.traceback = traceback
        self.cause = cause


class ValidationError(ValueError):
    """Arguments that are not I-JSON or do not satisfy a schema. ``problems`` lists every
    problem found, each starting with its JSON path (``/items/2/name: expected string,
    got integer``)."""

    def __init__(self, problems: list[str]):
        self.problems = list(problems)
        super().__init__("; ".join(self.problems) if self.problems else "invalid")
