"""``@tool``: a Python function as a tool, still callable as the function."""

from __future__ import annotations

import functools
import inspect
import types
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypedDict, TypeVar, Unpack, overload

from nb_tools.model import ToolGrammar
from nb_tools.tool._derive import function_schema
from nb_tools.tool._executor import run_in_thread
from nb_tools.tool._freeform import INPUT_SCHEMA, as_grammar, freeform_converter
from nb_tools.tool._names import validate_name
from nb_tools.tool._progress import current_call_id, progress
from nb_tools.tool._registry import Registry, default_registry, strict_validator
from nb_tools.tool._results import to_result
from nb_tools.tool._schema import Schema
from nb_tools.tool._subject import AlwaysAllowRule, Headline, Subject
from nb_tools.tool._types import Change, Info, Result, ValidationError

F = TypeVar("F", bound=Callable[..., Any])

ApprovalVote = Callable[[dict[str, Any]], bool]
"""``@tool(approver=...)``: votes from a call's arguments (as the function receives them)
whether the call needs approval. Not the agent's ``Approver``, which is a person's answer."""

PreviewFn = Callable[[dict[str, Any]], "Change | list[Change]"]
"""Computes, from a call's arguments, the file change(s) the call would make."""


class FunctionTool:
    """A function as a ``Tool``. Calling the object calls the function (an async one
    returns its coroutine); ``call(args)`` runs it as the model would, from raw JSON.

    Arguments arrive as keyword arguments converted to the declared parameter types; with
    ``schema=`` they arrive as validated JSON values, unconverted. With ``approver=`` the
    tool also implements ``ApprovalByArguments``; with ``preview=`` ``Previewer`` and
    ``MultiPreviewer``. Both receive the arguments dict the function would receive.

    A generator (or async generator) function streams: each item it yields goes to
    ``progress()`` as it comes, and the call returns the items joined when they are all
    strings, else the last item. A method (first parameter ``self``) is bound when read
    from an instance: ``obj.method`` is a tool calling the method on ``obj``, its schema
    without ``self``. ``timeout`` (seconds) stops a call that runs longer: an async one is
    cancelled, a sync one interrupted in its thread, and the model reads "timed out".
    """

    def __new__(cls, fn: Callable[..., Any], **options: Any) -> FunctionTool:
        if cls is FunctionTool:
            cls = _CLASSES[
                (options.get("approver") is not None, options.get("preview") is not None)
            ]
        return super().__new__(cls)

    def __getnewargs__(self) -> tuple[Any, ...]:
        """For pickling (cloudpickle ships tools to other processes): ``__new__`` takes
        the function; the rest is the instance's ``__dict__``."""
        return (self._fn,)

    def __init__(
        self,
        fn: Callable[..., Any],
        *,
        name: str | None = None,
        description: str | None = None,
        read_only: bool = False,
        concurrent: bool = False,
        requires_approval: bool = False,
        strict: bool = False,
        schema: Schema | None = None,
        approver: ApprovalVote | None = None,
        preview: PreviewFn | None = None,
        timeout: float | None = None,
        grammar: ToolGrammar | str | None = None,
        # what permission rules, "Always allow" and the cards read (tool/_subject.py)
        subject: Subject | None = None,
        always_allow_rule: AlwaysAllowRule | None = None,
        headline: Headline | None = None,
        eager_input_streaming: bool = False,
        defer_loading: bool = False,
        allowed_callers: Sequence[str] = (),
    ) -> None:
        if isinstance(fn, staticmethod):
            fn = fn.__func__
        self._binds_class = isinstance(fn, classmethod)
        if isinstance(fn, classmethod):
            fn = fn.__func__
        if timeout is not None and not timeout > 0:
            raise ValueError(f"@tool: timeout must be a positive number of seconds, got {timeout}")
        if not callable(fn):
            raise TypeError(f"@tool needs a function, got {type(fn).__name__}")
        tool_grammar = as_grammar(grammar) if grammar is not None else None
        self._convert: Callable[[dict[str, Any]], dict[str, Any]] | None
        if tool_grammar is not None:
            tool_name = name or fn.__name__
            tool_description = description if description is not None else _doc(fn)
            schema = INPUT_SCHEMA
            self._convert = freeform_converter(fn, tool_name)
        elif schema is not None:
            tool_name = name or fn.__name__
            tool_description = description if description is not None else _doc(fn)
            if schema.to_dict().get("type") != "object":
                raise TypeError(
                    f"@tool {tool_name}: schema= must be an object schema (tool arguments "
                    "are keyword arguments); use Schema.object({...})"
                )
            self._convert = None
        else:
            derived = function_schema(fn, name=name, description=description)
            tool_name, tool_description, schema = derived.name, derived.description, derived.schema
            self._convert = derived.convert
        validate_name(tool_name)
        _check_declared(tool_name, schema, subject, headline)
        functools.update_wrapper(self, fn)
        self._fn = fn
        self._is_async = inspect.iscoroutinefunction(fn)
        self._is_async_gen = inspect.isasyncgenfunction(fn)
        self._timeout = timeout
        self._method = self._binds_class or _is_method(fn)
        self._attr: str | None = None  # the attribute name in the class body
        self._direct: tuple[Callable[[Any], dict[str, Any]], Callable[..., Any]] | None = (
            (self._kwargs, fn) if self._is_async and timeout is None and not self._method else None
        )
        self._approver = approver
        self._defaults = {
            p.name: p.default
            for p in inspect.signature(fn).parameters.values()
            if p.default is not p.empty and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
        }
        self._preview = preview
        self._info = Info(
            name=tool_name,
            description=tool_description,
            parameters=schema,
            read_only=read_only,
            concurrent=concurrent,
            requires_approval=requires_approval,
            strict=strict,
            grammar=tool_grammar,
            subject=subject,
            always_allow_rule=always_allow_rule,
            headline=headline,
            eager_input_streaming=eager_input_streaming,
            defer_loading=defer_loading,
            allowed_callers=_callers(allowed_callers, tool_name),
        )
        self._validate = strict_validator(schema) if strict else schema.validate
        # In strict mode optional properties arrive as null: drop them so defaults apply.
        required = set(schema.to_dict().get("required", ()))
        self._nullable: frozenset[str] = (
            frozenset(p for p in schema.to_dict().get("properties", {}) if p not in required)
            if strict
            else frozenset()
        )

    # -- the function ---------------------------------------------------------------------

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._fn(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<FunctionTool {self._info.name}>"

    # -- methods ----------------------------------------------------------------------------

    def __set_name__(self, owner: type, name: str) -> None:
        self._attr = name

    def __get__(self, obj: Any, objtype: type | None = None) -> Any:
        """A method tool read from an instance (or a classmethod one from its class) is
        that tool bound: ``obj.method`` calls the method on ``obj``. The bound tool is
        kept in the instance's ``__dict__``, so reading it again gives the same tool."""
        if not self._method:
            return self
        target = objtype if self._binds_class else obj
        if target is None:
            return self
        bound = self.bind(target)
        cache = getattr(obj, "__dict__", None) if not self._binds_class else None
        if cache is not None and self._attr is not None:
            cache[self._attr] = bound
        return bound

    def bind(self, target: Any) -> FunctionTool:
        """This method tool bound to ``target`` (the instance, or the class of a
        classmethod): same name, description and schema, ``self`` supplied."""
        bound = object.__new__(type(self))
        bound.__dict__.update(self.__dict__)
        bound._fn = types.MethodType(self._fn, target)
        bound._method = bound._binds_class = False
        bound._direct = None
        functools.update_wrapper(bound, bound._fn)
        return bound

    # -- the tool -----------------------------------------------------------------------

    @property
    def is_method(self) -> bool:
        """Whether the function is a method (or classmethod) still to be bound."""
        return self._method

    @property
    def binds_class(self) -> bool:
        """Whether it binds to the class (a classmethod), not to an instance."""
        return self._binds_class

    def info(self) -> Info:
        return self._info

    @property
    def direct_call(self) -> tuple[Callable[[Any], dict[str, Any]], Callable[..., Any]] | None:
        """``(prepare, fn)`` for an async function without a timeout: the executor awaits
        ``fn(**prepare(parsed))`` itself; ``None`` for the others (``ValidatedCall``)."""
        return self._direct

    async def call(self, args: str | bytes) -> Result:
        """Validate the raw JSON arguments, convert them, run the function and turn what
        it returns into a ``Result``. Raises ``ValidationError`` for invalid arguments and
        lets the function's exceptions through (the executor reports both to the model)."""
        return to_result(await self.call_validated(self._validate(args or "{}")))

    async def call_validated(self, parsed: Any) -> Any:
        """The call from arguments already validated (the executor's fast path): returns
        what the function returned, or for a sync function the ``Result`` made of it in
        the worker thread (saving a figure as PNG takes a while)."""
        kwargs = self._kwargs(parsed)
        if self._method:
            raise TypeError(
                f"{self._info.name} is a method: bind it to an instance first "
                f"(use obj.{self._attr or self._info.name}, or tools_from(obj))"
            )
        if self._timeout is None:
            return await self._run(kwargs)
        import asyncio

        try:
            return await asyncio.wait_for(self._run(kwargs), self._timeout)
        except TimeoutError:
            return _timed_out(self._info.name, self._timeout)

    async def _run(self, kwargs: dict[str, Any]) -> Any:
        if self._is_async:
            return await self._fn(**kwargs)
        if self._is_async_gen:
            return _joined([item async for item in _streamed_async(self._fn(**kwargs))])
        return await run_in_thread(self._run_sync, kwargs)

    def _run_sync(self, kwargs: dict[str, Any]) -> Result:
        value = self._fn(**kwargs)
        if inspect.isgenerator(value):
            value = _joined([_stream(item) for item in value])
        return to_result(value)

    def _kwargs(self, parsed: Any) -> dict[str, Any]:
        if type(parsed) is not dict and not isinstance(parsed, Mapping):
            raise ValidationError([f"/: expected object, got {type(parsed).__name__}"])
        if self._nullable:
            parsed = {k: v for k, v in parsed.items() if v is not None or k not in self._nullable}
        if self._convert is None:
            return dict(parsed)
        try:
            return self._convert(parsed)
        except ValidationError:
            raise
        except (TypeError, ValueError) as exc:
            raise ValidationError([f"/: {exc}"]) from exc

    def _parse(self, args: str | bytes) -> dict[str, Any]:
        """The arguments as the function would see them, defaults filled in (what
        approvers and previews decide on)."""
        kwargs = self._kwargs(self._validate(args or "{}"))
        for key, default in self._defaults.items():
            kwargs.setdefault(key, default)
        return kwargs


class _ApprovingTool(FunctionTool):
    def requires_approval_for(self, args: str | bytes) -> bool:
        """The approver's answer for these arguments (``ApprovalByArguments``)."""
        approver = self._approver
        if approver is None:
            return self._info.requires_approval
        return bool(approver(self._parse(args)))


class _PreviewingTool(FunctionTool):
    def preview_files(self, args: str | bytes) -> list[Change]:
        """The changes the call would make (``MultiPreviewer``)."""
        if self._preview is None:
            return []
        changes = self._preview(self._parse(args))
        return [changes] if isinstance(changes, Change) else list(changes)

    def preview(self, args: str | bytes) -> Change:
        """The change the call would make (``Previewer``); fails if it touches several files."""
        changes = self.preview_files(args)
        if len(changes) != 1:
            raise ValueError(
                f"{self._info.name}: the preview has {len(changes)} changes; use preview_files()"
            )
        return changes[0]


class _ApprovingPreviewingTool(_ApprovingTool, _PreviewingTool):
    pass


_CLASSES: dict[tuple[bool, bool], type[FunctionTool]] = {
    (False, False): FunctionTool,
    (True, False): _ApprovingTool,
    (False, True): _PreviewingTool,
    (True, True): _ApprovingPreviewingTool,
}


def _check_declared(
    name: str, schema: Schema, subject: Subject | None, headline: Headline | None
) -> None:
    """A declared subject or headline names a parameter the tool has (all problems at once)."""
    props = schema.to_dict().get("properties", {})
    problems = [
        f"{what}={arg!r} is not a parameter"
        for what, arg in (
            ("subject.arg", subject.arg if subject is not None else None),
            ("headline.arg", headline.arg if headline is not None else None),
        )
        if arg is not None and arg not in props
    ]
    if problems:
        raise TypeError(
            f"@tool {name}: {'; '.join(problems)} (parameters: {', '.join(props) or 'none'})"
        )


def _callers(callers: Sequence[str], name: str) -> tuple[str, ...]:
    """``allowed_callers`` checked: "direct" or a code-execution tool version."""
    if isinstance(callers, str):
        callers = (callers,)
    for caller in callers:
        if caller != "direct" and not caller.startswith("code_execution_"):
            raise ValueError(
                f"@tool {name}: allowed_callers={caller!r}: use 'direct' (the model) or a "
                "code-execution version such as 'code_execution_20260120'"
            )
    return tuple(callers)


def _doc(fn: Callable[..., Any]) -> str:
    return inspect.getdoc(fn) or ""


def _is_method(fn: Callable[..., Any]) -> bool:
    """A function defined in a class body whose first parameter is ``self``."""
    qualname = getattr(fn, "__qualname__", "")
    owner = qualname.rsplit(".", 1)[0] if "." in qualname else ""
    if not owner or owner.endswith("<locals>"):
        return False
    try:
        params = list(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        return False
    return bool(params) and params[0] == "self"


def _stream(item: Any) -> Any:
    """Send a generator tool's item to ``progress()`` and give it back."""
    progress(item if isinstance(item, str) else str(item))
    return item


async def _streamed_async(gen: Any) -> Any:
    async for item in gen:
        yield _stream(item)


def _joined(items: list[Any]) -> Any:
    """What a generator tool returns: its items joined if all are strings, else the last."""
    if all(isinstance(i, str) for i in items):
        return "".join(items)
    return items[-1]


def _timed_out(name: str, timeout: float) -> Result:
    from nb_tools.tool._interrupt import still_running

    call_id = current_call_id()
    background = call_id is not None and still_running(call_id)
    text = f"{name} timed out after {timeout:g} s and was stopped"
    if background:
        text = (
            f"{name} timed out after {timeout:g} s; it could not be interrupted (blocked "
            "outside Python) and may still be running in the background"
        )
    return Result(
        content=text,
        is_error=True,
        metadata={"status": "timed_out", "timeout": timeout, "still_running": background},
    )


class ToolOptions(TypedDict, total=False):
    """The options ``@tool(...)`` passes on to :class:`FunctionTool` (its parameters)."""

    name: str | None
    description: str | None
    read_only: bool
    concurrent: bool
    requires_approval: bool
    strict: bool
    schema: Schema | None
    approver: ApprovalVote | None
    preview: PreviewFn | None
    timeout: float | None
    grammar: ToolGrammar | str | None
    subject: Subject | None
    always_allow_rule: AlwaysAllowRule | None
    headline: Headline | None
    eager_input_streaming: bool
    defer_loading: bool
    allowed_callers: Sequence[str]


@overload
def tool(fn: F, /) -> FunctionTool: ...


@overload
def tool(
    *, register: bool = True, registry: Registry | None = None, **options: Unpack[ToolOptions]
) -> Callable[[F], FunctionTool]: ...


def tool(
    fn: Callable[..., Any] | None = None,
    /,
    *,
    register: bool = True,
    registry: Registry | None = None,
    **options: Unpack[ToolOptions],
) -> FunctionTool | Callable[[F], FunctionTool]:
    """Make a function a tool: ``@tool`` or ``@tool(name=..., read_only=True, ...)``.

    The name defaults to the function's name and the description to its docstring; the
    schema is derived from the signature unless ``schema=`` is given. The tool goes into
    ``registry`` (default: ``default_registry()``) with ``Registry.add``, replacing a tool
    of the same name, so re-running a notebook cell is harmless; ``register=False`` keeps
    it out. Invalid names and signatures fail here, at decoration time.

    In a class body, ``@tool`` on a method (first parameter ``self``) registers nothing:
    there is no instance yet, and a tool is a method bound to one. Read it from an
    instance (``Agent(tools=[obj.method])``) or collect an instance's tools with
    ``tools_from(obj)``. ``@tool`` on a ``staticmethod`` registers like a function.
    ``timeout=SECONDS`` bounds each call (see :class:`FunctionTool`).
    ``grammar=`` (a lark grammar as text, or a ``ToolGrammar`` for lark or regex) makes a
    freeform tool: the function takes one string, the model's text in that grammar (a
    custom tool on OpenAI's Responses API; elsewhere a function with one string parameter,
    ``input``).
    ``subject=Subject(arg=..., kind=...)`` says which argument a permission rule reads
    (default: the first string parameter, kind ``"text"``), ``always_allow_rule=`` how the
    card's "Always allow" rule is made (a function of the arguments and the workspace root,
    or a template such as ``"deploy({target})"``), ``headline=`` what the card shows as the
    call's headline (see :mod:`nb_tools.tool._subject`).
    Claude's tool options, sent in the tool's definition (other providers ignore them):
    ``eager_input_streaming=True`` streams the arguments as the model writes them;
    ``defer_loading=True`` keeps the tool out of the prompt until tool search finds it;
    ``allowed_callers=("code_execution_20260120",)`` lets the model's code call it
    (programmatic tool calling; add "direct" to keep direct calls too).
    """

    unknown = sorted(options.keys() - ToolOptions.__annotations__.keys())
    if unknown:
        raise TypeError(
            f"@tool: unknown option(s) {', '.join(unknown)}; the options are register, "
            f"registry, {', '.join(ToolOptions.__annotations__)}"
        )

    def decorate(f: Callable[..., Any]) -> FunctionTool:
        made = FunctionTool(f, **options)
        if register and not made._method:
            (registry if registry is not None else default_registry()).add(made)
        return made

    if fn is not None:
        return decorate(fn)
    return decorate
