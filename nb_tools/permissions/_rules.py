"""Permission rules: ordered allow / ask / deny rules with argument specifiers.

A rule is ``tool`` or ``tool(specifier)``; the tool part may use ``*`` globs
(``mcp__github__*``). What a specifier means depends on the tool:

- ``bash(git log:*)`` matches a command that is ``git log`` or starts with ``git log ``;
  ``bash(npm test)`` matches exactly that command. A compound command (``a && b``, pipes,
  ``;``) matches an allow rule only if every part does, and never when it holds command
  substitution or redirection to a file; a deny or ask rule matches if any part does.
- file tools (``read_file``, ``write_file``, ``edit_file``, ``notebook_read``,
  ``notebook_edit``, ``apply_patch``, ``glob``, ``grep``): a gitignore-style glob on the
  path relative to the workspace root (``edit_file(notebooks/**)``); ``..`` and absolute
  paths are normalised first, and a path outside the root matches nothing.
  ``apply_patch`` matches an allow rule only if every file it touches matches.
- ``web_fetch(domain:example.com)`` matches that host; ``domain:*.example.com`` its
  subdomains. Hosts compare case-insensitively, without a trailing dot.
- any other tool: the specifier is a glob on its first string argument.

Deny wins over ask, ask over allow. Tool names match case-insensitively for deny and ask
rules (fail closed) and exactly for allow rules. A rule naming an ``mcp__`` tool matches
only tools that really come from that MCP server (``tool.mcp_server``), so a user tool
that spoofs the name gains nothing.
"""

from __future__ import annotations

import fnmatch
import json
import os
import re
import shlex
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypeAlias
from urllib.parse import urlsplit

from nb_tools.tool._names import MCP_NAME_PREFIX, split_mcp_name

Action: TypeAlias = Literal["allow", "ask", "deny"]
ACTIONS: tuple[Action, ...] = ("deny", "ask", "allow")

_RULE = re.compile(r"^\s*([A-Za-z0-9_*?\-\[\]]+)\s*(?:\((.*)\))?\s*$", re.DOTALL)
_FILE_TOOLS = {
    "read_file": ("file_path",),
    "write_file": ("file_path",),
    "edit_file": ("file_path",),
    "notebook_read": ("notebook_path",),
    "notebook_edit": ("notebook_path",),
    "glob": ("path",),
    "grep": ("path",),
    "str_replace_based_edit_tool": ("path",),
}


@dataclass(frozen=True, kw_only=True)
class Rule:
    """One parsed rule. ``text`` is the rule as written (``bash(git log:*)``)."""

    action: Action
    tool: str
    specifier: str | None
    text: str
    source: str = "session"

    def __str__(self) -> str:
        return f"{self.action} {self.text}"


@dataclass(frozen=True, kw_only=True)
class RuleMatch:
    """The rule that decided a call: ``label`` is what transcripts show
    (``rule:deny bash(rm:*) [project]``)."""

    action: Action
    rule: Rule

    @property
    def label(self) -> str:
        return f"rule:{self.rule} [{self.rule.source}]"


def parse_rule(text: str, action: Action, source: str = "session") -> Rule:
    """Parse ``tool`` or ``tool(specifier)``; raises ``ValueError`` with the way out."""
    if action not in ACTIONS:
        raise ValueError(f"permission rule action {action!r}: use one of allow, ask, deny")
    m = _RULE.match(text)
    if not m:
        raise ValueError(
            f"permission rule {text!r}: expected TOOL or TOOL(SPECIFIER), "
            "e.g. bash(git log:*), edit_file(notebooks/**), web_fetch(domain:example.com)"
        )
    tool, spec = m.group(1), m.group(2)
    if spec is not None:
        spec = spec.strip()
        if not spec:
            raise ValueError(f"permission rule {text!r}: empty specifier; write just {tool!r}")
    return Rule(action=action, tool=tool, specifier=spec, text=text.strip(), source=source)


@dataclass
class PermissionRules:
    """An ordered set of rules, checked before a tool's own approval setting."""

    root: Path = field(default_factory=Path.cwd)
    rules: list[Rule] = field(default_factory=list)

    def add(self, action: Action, *texts: str, source: str = "session") -> list[Rule]:
        parsed = [parse_rule(t, action, source) for t in texts]
        for rule in parsed:
            if rule not in self.rules:
                self.rules.append(rule)
        return parsed

    def allow(self, *texts: str, source: str = "session") -> list[Rule]:
        return self.add("allow", *texts, source=source)

    def ask(self, *texts: str, source: str = "session") -> list[Rule]:
        return self.add("ask", *texts, source=source)

    def deny(self, *texts: str, source: str = "session") -> list[Rule]:
        return self.add("deny", *texts, source=source)

    def remove(self, text: str) -> int:
        before = len(self.rules)
        self.rules = [r for r in self.rules if r.text != text.strip() and str(r) != text.strip()]
        return before - len(self.rules)

    def clear(self, source: str | None = None) -> None:
        self.rules = [r for r in self.rules if source is not None and r.source != source]

    def load(self, path: str | os.PathLike[str], source: str | None = None) -> int:
        """Read ``{"permissions": {"allow": [...], "ask": [...], "deny": [...]}}``;
        returns how many rules were added. A missing file adds none."""
        p = Path(path)
        if not p.is_file():
            return 0
        try:
            data = json.loads(p.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ValueError(f"permission settings {p}: cannot read: {exc}") from exc
        perms = data.get("permissions", {}) if isinstance(data, dict) else {}
        if not isinstance(perms, dict):
            raise ValueError(f"permission settings {p}: 'permissions' must be an object")
        count = 0
        for action in ACTIONS:
            texts = perms.get(action, [])
            if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
                raise ValueError(f"permission settings {p}: '{action}' must be a list of strings")
            count += len(self.add(action, *texts, source=source or str(p)))
        return count

    def check(
        self, name: str, args: str | bytes | dict[str, Any], tool: Any = None
    ) -> RuleMatch | None:
        """The deciding rule for a call, or ``None`` when no rule matches."""
        parsed = _parse_args(args)
        for action in ACTIONS:
            for rule in self.rules:
                if rule.action == action and _matches(rule, name, parsed, tool, self.root):
                    return RuleMatch(action=action, rule=rule)
        if name == "bash":
            return self._cover_compound(str(parsed.get("command", "")), tool)
        return None

    def _cover_compound(self, command: str, tool: Any) -> RuleMatch | None:
        """Allow ``a | b`` when each part is allowed by some rule (``git log:*``, ``wc:*``)."""
        parts, unsafe = _split_shell(command)
        allows = [r for r in self.rules if r.action == "allow" and _name_matches(r, "bash", tool)]
        if unsafe or len(parts) < 2 or not allows:
            return None
        used: list[Rule] = []
        for part in parts:
            rule = next(
                (
                    r
                    for r in allows
                    if r.specifier is None or _match_command(r.specifier, part, True)
                ),
                None,
            )
            if rule is None:
                return None
            if rule not in used:
                used.append(rule)
        combined = Rule(
            action="allow",
            tool="bash",
            specifier=None,
            text=" + ".join(r.text for r in used),
            source="+".join(dict.fromkeys(r.source for r in used)),
        )
        return RuleMatch(action="allow", rule=combined)


def user_settings_path() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return Path(base) / "nb_tools" / "settings.json"


def project_settings_path(folder: str | os.PathLike[str]) -> Path:
    return Path(folder) / ".nb_tools" / "settings.json"


def load_rules(folder: str | os.PathLike[str], *, user: bool = True) -> PermissionRules:
    """Rules from the user's config dir, then the project's ``.nb_tools/settings.json``."""
    rules = PermissionRules(root=Path(folder).resolve())
    if user:
        rules.load(user_settings_path(), source="user")
    rules.load(project_settings_path(folder), source="project")
    return rules


def _parse_args(args: str | bytes | dict[str, Any]) -> dict[str, Any]:
    if isinstance(args, dict):
        return args
    try:
        value = json.loads(args or "{}")
    except (ValueError, RecursionError):
        return {}
    return value if isinstance(value, dict) else {}


def _name_matches(rule: Rule, name: str, tool: Any) -> bool:
    if rule.action == "allow":
        ok = fnmatch.fnmatchcase(name, rule.tool)
    else:
        ok = fnmatch.fnmatchcase(name.lower(), rule.tool.lower())
    if ok and rule.tool.lower().startswith(MCP_NAME_PREFIX) and rule.action == "allow":
        split = split_mcp_name(name)
        server = getattr(tool, "mcp_server", None)
        return split is not None and server is not None and server == split[0]
    return ok


def _matches(rule: Rule, name: str, args: dict[str, Any], tool: Any, root: Path) -> bool:
    if not _name_matches(rule, name, tool):
        return False
    if rule.specifier is None:
        return True
    spec = rule.specifier
    strict = rule.action == "allow"  # allow must match every part; deny/ask any part
    lname = name.lower()
    if lname == "bash":
        return _match_command(spec, str(args.get("command", "")), strict)
    if lname == "web_fetch":
        return _match_domain(spec, str(args.get("url", "")))
    if lname == "apply_patch":
        paths = _patch_paths(str(args.get("input", "")))
        hits = [_match_path(spec, p, root, strict) for p in paths]
        return bool(hits) and (all(hits) if strict else any(hits))
    if lname in _FILE_TOOLS:
        for key in _FILE_TOOLS[lname]:
            if key in args:
                return _match_path(spec, str(args[key]), root, strict)
        return _match_path(spec, ".", root, strict)
    first = next((v for v in args.values() if isinstance(v, str)), None)
    return first is not None and fnmatch.fnmatchcase(first, spec)


_SAFE_REDIRECT = re.compile(r"\s*(?:[0-9]?>&[0-9]|[0-9]?>>?\s*/dev/null|&>\s*/dev/null)")


def _split_shell(command: str) -> tuple[list[str], bool]:
    """Split on ``&&``, ``||``, ``;``, ``|``, ``&`` and newlines outside quotes. The flag is
    True when the command holds something an allow rule must never cover: command or
    process substitution, redirection to a file, or an unterminated quote."""
    parts: list[str] = []
    buf: list[str] = []
    quote = ""
    unsafe = False
    i, n = 0, len(command)
    while i < n:
        c = command[i]
        if quote:
            if c == quote:
                quote = ""
            elif c == "\\" and quote == '"' and i + 1 < n:
                buf.append(c)
                i += 1
                c = command[i]
            elif quote == '"' and (c == "`" or command.startswith("$(", i)):
                unsafe = True
            buf.append(c)
            i += 1
            continue
        if c in "'\"":
            quote = c
        elif c == "\\" and i + 1 < n:
            buf.append(c)
            i += 1
            c = command[i]
        elif c == "`" or command.startswith(("$(", "<(", ">("), i):
            unsafe = True
        elif c in ">" or (c == "<" and not command.startswith("<<<", i)):
            m = _SAFE_REDIRECT.match(command, i - 1 if i and command[i - 1].isdigit() else i)
            if m is None or m.end() <= i:
                unsafe = True
            else:
                if i and command[i - 1].isdigit():
                    buf.pop()
                i = m.end()
                continue
        elif c == "&" and command.startswith("&>", i):
            m = _SAFE_REDIRECT.match(command, i)
            if m is None:
                unsafe = True
            else:
                i = m.end()
                continue
        elif c in ";|&\n":
            parts.append("".join(buf))
            buf = []
            i += 2 if command.startswith(("&&", "||"), i) else 1
            continue
        buf.append(c)
        i += 1
    if quote:
        unsafe = True
    parts.append("".join(buf))
    return [p.strip() for p in parts if p.strip()], unsafe


def _match_command(spec: str, command: str, strict: bool) -> bool:
    prefix = spec[:-2] if spec.endswith(":*") else None
    parts, unsafe = _split_shell(command)
    if not parts or (strict and unsafe):
        return False

    def one(part: str) -> bool:
        try:
            words = shlex.split(part)
        except ValueError:
            return not strict and part.startswith(prefix or spec)
        if prefix is not None:
            want = shlex.split(prefix) if prefix.strip() else []
            return words[: len(want)] == want
        return words == shlex.split(spec)

    return all(one(p) for p in parts) if strict else any(one(p) for p in parts)


def _match_domain(spec: str, url: str) -> bool:
    if not spec.startswith("domain:"):
        return fnmatch.fnmatchcase(url, spec)
    want = spec[len("domain:") :].strip().lower().rstrip(".")
    try:
        host = (urlsplit(url).hostname or "").lower().rstrip(".")
    except ValueError:
        return False
    if not host:
        return False
    if want.startswith("*."):
        return host.endswith(want[1:])
    return host == want


def _match_path(spec: str, path: str, root: Path, strict: bool = False) -> bool:
    """Whether the gitignore-style ``spec`` matches ``path`` (relative to ``root`` or
    absolute) as written (``..`` folded) and as the tools will act on it (symlinks
    resolved, as ``Workspace.resolve`` does). ``strict`` (allow rules): both must match,
    so ``allow write_file(notes/**)`` does not cover ``notes/link/x`` with ``link ->
    ../.git``. Otherwise (deny, ask) either may, so ``deny edit_file(secrets/**)`` catches
    ``link/x`` with ``link -> secrets``. A path outside the root, with a NUL byte or
    starting with ``~`` matches no allow rule; for deny and ask its lexical form inside
    the root still counts."""
    if "\x00" in path or path.startswith("~"):
        return False
    forms = _path_forms(path, root)
    if strict:
        return None not in forms and all(_spec_matches(spec, f) for f in forms if f is not None)
    return any(_spec_matches(spec, f) for f in forms if f is not None)


def _path_forms(path: str, root: Path) -> list[str | None]:
    """``path`` relative to the root, lexically and resolved (``None``: outside)."""
    root_s = os.path.normpath(str(root))
    real_root = os.path.realpath(root_s)
    full = os.path.join(root_s, path)  # an absolute path replaces the root
    lexical = os.path.normpath(full)
    resolved = os.path.realpath(full)
    lex = _inside(lexical, root_s)
    if lex is None:
        lex = _inside(lexical, real_root)
    return [lex, _inside(resolved, real_root)]


def _inside(path: str, base: str) -> str | None:
    p, b = Path(path), Path(base)
    if p != b and not p.is_relative_to(b):
        return None
    rel = p.relative_to(b).as_posix()
    return rel if rel != "." else ""


def _spec_matches(spec: str, rel: str) -> bool:
    import unicodedata

    import pathspec

    matcher = pathspec.GitIgnoreSpec.from_lines([spec])
    return any(
        matcher.match_file(form or ".")
        for form in dict.fromkeys((rel, unicodedata.normalize("NFC", rel)))
    )


def _patch_paths(patch: str) -> list[str]:
    """The paths an ``apply_patch`` input names, split exactly as the patch parser splits
    it (one shared function: ``_patch_parse.patch_paths``): a header cut by U+2028 or
    another Unicode line boundary reads the same here as where it is written."""
    from nb_tools.builtin._patch_parse import patch_paths

    return patch_paths(patch)


def rules_from(lines: Iterable[tuple[Action, str]]) -> PermissionRules:
    rules = PermissionRules()
    for action, text in lines:
        rules.add(action, text)
    return rules
