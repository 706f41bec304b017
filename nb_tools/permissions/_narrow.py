"""The narrowest rule that covers a call: what the approval card's "Always allow" offers
and adds (``bash(git log:*)``, ``edit_file(notebooks/**)``, ``web_fetch(domain:example.com)``),
made from what the tool declares (``Info.always_allow_rule``, else its subject's kind:
:mod:`nb_tools.tool._subject`). A tool of kind ``code`` (``python``) is offered at most
its exact code, never the whole tool.

``None`` means no rule narrower than "everything this tool does" covers the call (a shell
script the parser cannot read as literal words, a path outside the workspace, a patch
spread over the workspace root): then "Always allow" is not offered, since a broader rule
would allow more than the card showed.
"""

from __future__ import annotations

import os
import posixpath
import re
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from nb_tools.permissions._hosts import HostError, url_host
from nb_tools.permissions._rules import runs_code
from nb_tools.permissions._shell_rules import bash_rule_for
from nb_tools.tool import subject_of

if TYPE_CHECKING:
    from nb_tools.tool import Info

__all__ = ["narrowest_rule"]

_GLOB_SPECIAL = re.compile(r"[*?\[\]\\!#]")
_CODE_RULE_MAX = 200  # longer code is not offered as a rule: nobody reads it on a button


def narrowest_rule(
    name: str, arguments: Mapping[str, Any] | None, root: Path, info: Info | None = None
) -> str | None:
    """The rule text "Always allow" adds for this call, or ``None`` (see the module): the
    tool's declared ``always_allow_rule`` if it has one, else made from its subject's kind."""
    args = arguments or {}
    if runs_code(subject_of(info), args):
        return None  # a rule would stand for code nobody has seen yet
    declared = info.always_allow_rule if info is not None else None
    if callable(declared):
        made = declared(args, root)
        return made if isinstance(made, str) and made.strip() else None
    if isinstance(declared, str):
        return _from_template(declared, args)
    subject = subject_of(info)
    value = args.get(subject.arg) if subject.arg is not None else None
    if subject.kind == "command":
        rule = bash_rule_for(value) if isinstance(value, str) else None
        return f"{name}({rule[5:-1]})" if rule is not None else None
    if subject.kind == "url":
        if not isinstance(value, str):
            return None
        try:
            return f"{name}(domain:{url_host(value)})"
        except HostError:
            return None
    if subject.kind == "path" and subject.arg is not None:
        if not isinstance(value, str):
            return None
        paths = subject.paths(value) if subject.paths is not None else [value]
        return _folder_rule(name, list(paths), root)
    if subject.kind == "code":
        return _exact_code_rule(name, value)
    return name


def _exact_code_rule(name: str, code: Any) -> str | None:
    """``python(x.describe())`` for one short line with no glob or control character (the
    rule then matches exactly that code); never the whole tool, which would run any code."""
    if not isinstance(code, str) or not code or code != code.strip():
        return None
    if len(code) > _CODE_RULE_MAX or any(c in "*?[" for c in code):
        return None
    if not code.isprintable():  # controls, line breaks, bidi and zero-width characters
        return None
    return f"{name}({code})"


def _from_template(template: str, args: Mapping[str, Any]) -> str | None:
    """``"deploy({target})"`` filled from the arguments; ``None`` when a named argument is
    missing or not a string (a rule must not stand for a value nobody saw)."""
    import string

    fields = [f for _, f, _, _ in string.Formatter().parse(template) if f is not None]
    if any(not isinstance(args.get(f), str) for f in fields):
        return None
    return template.format_map({f: args[f] for f in fields})


def _folder_rule(name: str, paths: list[Any], root: Path) -> str | None:
    """``tool(folder/**)`` for the folder holding every path (relative to ``root``), or
    ``tool(/file)`` for one file at the root; ``None`` when a path is outside the root,
    odd (glob characters, control characters) or the only common folder is the root."""
    rels: list[str] = []
    root_s = posixpath.normpath(str(root).replace(os.sep, "/"))
    for path in paths:
        if not isinstance(path, str) or not path or path.startswith("~"):
            return None
        if any(ord(c) < 32 or c in "\x7f\u2028\u2029" for c in path):
            return None
        full = path if os.path.isabs(path) else posixpath.join(root_s, path.replace(os.sep, "/"))
        norm = posixpath.normpath(full)
        if norm == root_s or not norm.startswith(root_s.rstrip("/") + "/"):
            return None
        rel = posixpath.relpath(norm, root_s)
        if _GLOB_SPECIAL.search(rel) or rel != rel.strip():
            return None
        rels.append(rel)
    if not rels:
        return None
    folders = {posixpath.dirname(r) for r in rels}
    if len(rels) == 1 and folders == {""}:
        return f"{name}(/{rels[0]})"
    common = posixpath.commonpath(sorted(folders)) if "" not in folders else ""
    if not common:
        return None
    return f"{name}({common}/**)"
