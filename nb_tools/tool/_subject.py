"""What a tool declares for the approval boundary and the views: the argument a permission
rule reads and its kind, how its narrowest "Always allow" rule is made, and the argument a
card shows as the call's headline.

The permission layer (:mod:`nb_tools.permissions`), the approval pipeline and the
renderers read these declarations from the tool's :class:`~nb_tools.tool.Info`; none of
them keeps a table keyed by tool names. A tool that declares nothing (a user's ``@tool``,
an MCP tool) gets the defaults: its first string parameter, as its schema declares them,
of kind ``"text"``.

Kinds, and what a rule's specifier means for each (see ``docs/approvals.md``):

- ``"command"``: a shell script, read with the bash parser (``bash(git log:*)``);
- ``"path"``: a gitignore-style glob on the path(s) relative to the workspace root;
- ``"url"``: ``domain:HOST``, or a glob on the URL;
- ``"code"``: code run as given (``python``); a glob on it, and "Always allow" offers at
  most the exact code, never the whole tool;
- ``"text"``: a glob on the value.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

if TYPE_CHECKING:
    from nb_tools.tool._types import Info

SubjectKind: TypeAlias = Literal["path", "command", "url", "code", "text"]
SUBJECT_KINDS: tuple[SubjectKind, ...] = ("path", "command", "url", "code", "text")


@dataclass(frozen=True, kw_only=True)
class Subject:
    """What a permission rule for the tool reads.

    ``arg``: the argument (``None``: the first string parameter the schema declares).
    ``paths``: for kind ``"path"``, the paths one value names (``apply_patch``'s patch);
    default: the value itself, and the workspace root when the argument is absent.
    ``reads_files``: the tool shows file contents, so a deny or ask rule for
    ``read_file`` covers it too ("the model does not read these").
    ``searches``: the tool reads everything under its path (``grep``, ``glob``), so a deny
    or ask rule matches a search whose folder may hold what the rule names.
    ``runs_code``: see the field."""

    arg: str | None = None
    kind: SubjectKind = "text"
    paths: Callable[[str], list[str]] | None = None
    reads_files: bool = False
    searches: bool = False
    runs_code: Callable[[Mapping[str, Any]], bool] | None = None
    """The call runs code taken from its arguments (``notebook_edit`` with ``run=true``,
    ``notebook_run``): an allow rule with a specifier does not allow it (the specifier
    reads the path or the selection, not the code), and "Always allow" offers no rule
    for it, as for ``python`` beyond its exact code. Deny and ask rules still apply."""

    def __post_init__(self) -> None:
        if self.kind not in SUBJECT_KINDS:
            raise ValueError(
                f"Subject: unknown kind {self.kind!r}; use one of {', '.join(SUBJECT_KINDS)}"
            )


AlwaysAllowRule: TypeAlias = Callable[[Mapping[str, Any], Path], str | None] | str
"""How a tool's "Always allow" rule is made from a call: a function of the arguments and
the workspace root returning the rule text (``None``: offer none), or a template filled
from the arguments (``"deploy({target})"``; a missing or non-string argument: none)."""


@dataclass(frozen=True, kw_only=True)
class Headline:
    """The argument a card and the transcript show as the call's headline, and how:
    ``"command"`` and ``"code"`` as a code block (highlighted as ``language``),
    ``"path"`` and ``"url"`` on a line of their own, ``"text"`` on a line."""

    arg: str
    kind: SubjectKind = "text"
    language: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The form a transcript's tool item carries (``headline``)."""
        return {"arg": self.arg, "kind": self.kind, "language": self.language}


def declared_properties(info: Info | None) -> dict[str, dict[str, Any]] | None:
    """The tool's parameters as its schema declares them, in order (``None``: unknown)."""
    if info is None:
        return None
    try:
        raw, params = info.raw_parameters, info.parameters
        schema = dict(raw) if raw is not None else params.to_dict() if params else None
    except Exception:  # a schema that cannot be read: nothing is declared
        return None
    props = schema.get("properties") if isinstance(schema, dict) else None
    if not isinstance(props, dict) or not props:
        return None
    return {str(k): v if isinstance(v, dict) else {} for k, v in props.items()}


def first_string_parameter(props: Mapping[str, Mapping[str, Any]]) -> str | None:
    """The first declared parameter that takes a string."""
    for key, schema in props.items():
        if _takes_string(schema):
            return key
    return None


def _takes_string(schema: Mapping[str, Any]) -> bool:
    kind = schema.get("type")
    if kind == "string" or (isinstance(kind, list) and "string" in kind):
        return True
    enum = schema.get("enum")
    if kind is None and isinstance(enum, list) and enum and all(isinstance(v, str) for v in enum):
        return True
    options = schema.get("anyOf") or schema.get("oneOf")
    return isinstance(options, list) and any(
        isinstance(o, Mapping) and _takes_string(o) for o in options
    )


def info_of(tool: Any) -> Info | None:
    """``tool.info()``, or ``None`` for no tool or one whose ``info()`` fails."""
    getter = getattr(tool, "info", None)
    if not callable(getter):
        return None
    try:
        return getter()  # type: ignore[no-any-return]
    except Exception:  # a broken info(): nothing is declared (the defaults apply)
        return None


def subject_of(info: Info | None) -> Subject:
    """The tool's declared subject, its argument resolved (``arg`` stays ``None`` only
    when the schema is unknown or declares no string parameter)."""
    declared = info.subject if info is not None else None
    subject = declared if declared is not None else Subject()
    if subject.arg is not None:
        return subject
    props = declared_properties(info)
    key = first_string_parameter(props) if props else None
    if key is None:
        return subject
    from dataclasses import replace

    return replace(subject, arg=key)


def headline_of(info: Info | None) -> Headline | None:
    """What the card shows as the call's headline: the declared one, else the subject's
    argument and kind (``None``: no argument to show)."""
    if info is None:
        return None
    if info.headline is not None:
        return info.headline
    subject = subject_of(info)
    if subject.arg is None:
        return None
    language = "bash" if subject.kind == "command" else None
    return Headline(arg=subject.arg, kind=subject.kind, language=language)
