"""Permission rules: ordered allow / ask / deny rules with argument specifiers.

A rule is ``tool`` or ``tool(specifier)``; the tool part may use ``*`` globs
(``mcp__github__*``). What a specifier means depends on the tool's declared subject
(``Info.subject``, :mod:`nb_tools.tool._subject`): which argument a rule reads, and its
kind. No table here is keyed by tool names; the built-ins declare, e.g.:

- kind ``command`` (``bash``): ``bash(git log:*)`` matches a command whose words start
  with ``git log`` (whole words);
  ``bash(npm test)`` matches exactly that command. The script is read as bash reads it
  (``_shell``, tree-sitter-bash): a deny or ask rule matches any simple command anywhere
  in it (substitutions, groups, ``sh -c`` strings, wrappers such as ``env``/``xargs``/
  ``timeout``, ``/bin/rm`` as ``rm``), and when it cannot tell (``$CMD``, ``eval "$x"``)
  the call asks; an allow rule applies only when every simple command is covered by some
  allow rule and the script has no unseen code, assignment or redirection to a file
  (see ``_shell_rules``).
- kind ``path`` (``read_file``, ``write_file``, ``edit_file``, ``notebook_read``,
  ``notebook_edit``, ``apply_patch``, ``glob``, ``grep``): a gitignore-style glob on the
  path relative to the workspace root (``edit_file(notebooks/**)``); ``..`` and absolute
  paths are normalised first, and a path outside the root matches nothing. A deny or
  ask rule for a tool that declares ``searches`` (``grep``, ``glob``) also matches a
  search whose folder may hold what the rule names (``grep(secrets/**)`` matches a
  search of ``secrets`` or of the root). A deny or ask rule for ``read_file`` covers
  every tool that declares ``reads_files`` (``grep``, ``notebook_read``,
  ``str_replace_based_edit_tool``): "do not read these". A tool whose value names several
  paths (``apply_patch``) matches an allow rule only if every path matches.
- kind ``url``: ``web_fetch(domain:example.com)`` matches that host; ``domain:*.example.com`` its
  subdomains (not the domain itself). Hosts compare as httpx connects to them: IDNA
  (UTS-46), ideographic and full-width dots, case, trailing dot, percent-escapes, IPv6
  literals (``nb_tools.permissions._hosts``).
- kinds ``code`` and ``text`` (a tool that declares nothing: its first string parameter,
  kind ``text``): the specifier is a glob on the subject argument, by default the first
  string parameter in the order the tool's schema declares its parameters (the model
  orders the keys of its arguments, and may add keys a schema sent as is does not
  forbid): an allow rule matches only that
  parameter's value (or its declared default); without a schema, only a call with exactly
  one string argument. A deny or ask rule matches when any string in the arguments
  matches, at any depth (fail closed: an undeclared key may be the one a server acts on).

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
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Any, Literal, TypeAlias

from nb_tools.permissions._hosts import HostError, domain_matches, url_host
from nb_tools.permissions._shell import parse_script
from nb_tools.permissions._shell_rules import covers, deny_match
from nb_tools.permissions._unreadable import matching_paths
from nb_tools.tool import (
    MCP_NAME_PREFIX,
    FromMCPServer,
    Info,
    Subject,
    declared_properties,
    info_of,
    split_mcp_name,
    subject_of,
)

Action: TypeAlias = Literal["allow", "ask", "deny"]
ACTIONS: tuple[Action, ...] = ("deny", "ask", "allow")

_RULE = re.compile(r"^\s*([A-Za-z0-9_*?\-\[\]]+)\s*(?:\((.*)\))?\s*$", re.DOTALL)


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
        """The deciding rule for a call, or ``None`` when no rule matches.

        For ``bash``, a deny or ask rule that cannot tell whether it matches (a word it
        needs is computed, or the script runs code the parse cannot see) makes the call
        ask: fail closed (see ``_shell_rules``)."""
        parsed = _parse_args(args)
        call = _Call(name=name, args=parsed, tool=tool, info=info_of(tool))
        shell = call.subject.kind == "command"
        unsure: Rule | None = None
        for action in ACTIONS:
            for rule in self.rules:
                if rule.action != action:
                    continue
                if action != "allow" and shell and rule.specifier is not None:
                    if not _name_matches(rule, call):
                        continue
                    verdict = deny_match(rule.specifier, parse_script(call.value))
                    if verdict == "yes":
                        return RuleMatch(action=action, rule=rule)
                    if verdict == "maybe" and unsure is None:
                        unsure = rule
                elif _matches(rule, call, self.root):
                    return RuleMatch(action=action, rule=rule)
            if action == "ask" and unsure is not None:
                return RuleMatch(action="ask", rule=_unsure_rule(unsure, call.value))
        if shell:
            return self._cover_compound(call)
        return None

    def unreadable(self, top: Path, *, approved: bool) -> tuple[Path, ...]:
        """The files and folders under ``top`` that a process running for the model must
        not see: what a ``read_file`` deny rule names, and for a call that ran without a
        click what an ask rule names too (the ``bash`` tool hides them in its sandbox).
        A rule without a specifier names everything. Raises ``UnreadableError`` when the
        tree is too large to look through."""
        actions = ("deny",) if approved else ("deny", "ask")
        specs = [
            r.specifier for r in self.rules if r.action in actions and r.tool.lower() == "read_file"
        ]
        if not specs:
            return ()
        if None in specs:
            return (Path(os.path.realpath(top)),)
        named = [s for s in specs if s is not None]
        return matching_paths(
            top, self.root, lambda rel: any(_spec_matches(s, rel) for s in named if rel)
        )

    def _cover_compound(self, call: _Call) -> RuleMatch | None:
        """Allow ``a | b`` when each simple command is allowed by some rule."""
        allows = [
            r
            for r in self.rules
            if r.action == "allow" and r.specifier is not None and _name_matches(r, call)
        ]
        if not allows:
            return None
        specs = [r.specifier for r in allows if r.specifier is not None]
        used = covers(specs, parse_script(call.value))
        if not used:
            return None
        rules = [next(r for r in allows if r.specifier == u) for u in used]
        if len(rules) == 1:
            return RuleMatch(action="allow", rule=rules[0])
        combined = Rule(
            action="allow",
            tool=call.name,
            specifier=None,
            text=" + ".join(r.text for r in rules),
            source="+".join(dict.fromkeys(r.source for r in rules)),
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


@dataclass(frozen=True)
class _Call:
    """A call as the rules read it: its parsed arguments and the tool's declarations."""

    name: str
    args: dict[str, Any]
    tool: Any
    info: Info | None

    @cached_property
    def subject(self) -> Subject:
        return subject_of(self.info)

    @property
    def value(self) -> str:
        """The subject argument as text (``""`` when absent)."""
        key = self.subject.arg
        return str(self.args.get(key, "")) if key is not None else ""


def _name_matches(rule: Rule, call: _Call) -> bool:
    name = call.name
    if rule.action == "allow":
        ok = fnmatch.fnmatchcase(name, rule.tool)
    else:
        ok = fnmatch.fnmatchcase(name.lower(), rule.tool.lower())
        if not ok and rule.tool.lower() == "read_file":  # "the model does not read these"
            ok = call.subject.reads_files
    if ok and rule.tool.lower().startswith(MCP_NAME_PREFIX) and rule.action == "allow":
        split = split_mcp_name(name)
        server = call.tool.mcp_server if isinstance(call.tool, FromMCPServer) else None
        return split is not None and server is not None and server == split[0]
    return ok


def _matches(rule: Rule, call: _Call, root: Path) -> bool:
    if not _name_matches(rule, call):
        return False
    if rule.specifier is None:
        return True
    spec = rule.specifier
    strict = rule.action == "allow"  # allow must match every part; deny/ask any part
    subject, args = call.subject, call.args
    if strict and runs_code(subject, args):
        return False  # the specifier does not read the code the call runs
    if subject.kind == "command":
        if strict:
            return False  # allow rules for a shell: PermissionRules._cover_compound
        return deny_match(spec, parse_script(call.value)) == "yes"
    if subject.kind == "url":
        return _match_domain(spec, call.value, strict)
    if subject.kind == "path" and subject.arg is not None:
        if subject.paths is not None:  # one value naming several paths (a patch)
            hits = [_match_path(spec, p, root, strict) for p in subject.paths(call.value)]
            return bool(hits) and (all(hits) if strict else any(hits))
        below = not strict and subject.searches
        path = str(args[subject.arg]) if subject.arg in args else "."
        return _match_path(spec, path, root, strict, below=below)
    return _match_generic(spec, call, strict)


def runs_code(subject: Subject, args: Mapping[str, Any]) -> bool:
    """The call runs code from its arguments (``Subject.runs_code``); a declaration that
    fails counts as yes (fail closed)."""
    if subject.runs_code is None:
        return False
    try:
        return bool(subject.runs_code(args))
    except Exception:
        return True


def _match_generic(spec: str, call: _Call, strict: bool) -> bool:
    """A glob on a tool's subject: the argument it declares, else the first string
    parameter its schema declares (see the module). Never the first key the model
    happened to write."""
    args = call.args
    props = declared_properties(call.info)
    key = call.subject.arg
    default = props[key].get("default") if props and key in props else None
    subject = args.get(key, default) if key is not None else None
    if strict:
        if props or key is not None:
            return isinstance(subject, str) and fnmatch.fnmatchcase(subject, spec)
        strings = [v for v in args.values() if isinstance(v, str)]
        return len(strings) == 1 and fnmatch.fnmatchcase(strings[0], spec)
    values = _strings(args)
    if isinstance(subject, str):
        values.append(subject)
    return any(fnmatch.fnmatchcase(v, spec) for v in values)


def _strings(value: Any) -> list[str]:
    """Every string in ``value``, at any depth (a deny rule's glob may match any of them:
    ``send(*@evil.example)`` catches ``{"to": ["a@evil.example"]}``)."""
    out: list[str] = []
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, str):
            out.append(v)
        elif isinstance(v, dict):
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)
    return out


def _unsure_rule(rule: Rule, command: str) -> Rule:
    """The ask that a deny/ask rule turns into when it cannot see the whole command."""
    script = parse_script(command)
    why = script.hidden[0] if script.hidden else "a word it needs is computed"
    return Rule(
        action="ask",
        tool=rule.tool,
        specifier=rule.specifier,
        text=f"{rule.text} (cannot tell: {why})",
        source=rule.source,
    )


def _match_domain(spec: str, url: str, strict: bool = False) -> bool:
    """``domain:HOST`` / ``domain:*.HOST`` against the host httpx connects to (one
    normaliser, :func:`nb_tools.permissions._hosts.url_host`, shared with ``web_fetch``);
    any other specifier is a glob on the URL, as written and as the client sends it (the
    host normalised, percent-escapes decoded): an allow rule must match every form, a
    deny or ask rule any."""
    if not spec.startswith("domain:"):
        forms = _url_forms(url)
        hits = [fnmatch.fnmatchcase(f, spec) for f in forms]
        return all(hits) if strict else any(hits)
    try:
        host = url_host(url)
    except HostError:
        return False
    return domain_matches(spec[len("domain:") :], host)


def _url_forms(url: str) -> list[str]:
    """``url`` as written, and as ``web_fetch`` connects (see :func:`_match_domain`)."""
    from urllib.parse import unquote

    import httpx

    forms = [url]
    try:
        parsed = httpx.URL(url.strip())
        canonical = str(parsed.copy_with(host=url_host(url)))
    except Exception:  # no URL web_fetch would fetch: the text as written is all there is
        return forms
    for form in (canonical, unquote(canonical)):
        if form not in forms:
            forms.append(form)
    return forms


def _match_path(
    spec: str, path: str, root: Path, strict: bool = False, *, below: bool = False
) -> bool:
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
    if below and any(_may_hold(spec, f, root) for f in forms if f is not None):
        return True
    return any(_spec_matches(spec, f) for f in forms if f is not None)


_GLOB_CHARS = frozenset("*?[\\")
_WALK_LIMIT = 20_000  # entries looked at before a search is assumed to hold a match


def _may_hold(spec: str, rel: str, root: Path) -> bool:
    """Whether the folder ``rel`` (``""``: the root) holds a path the gitignore-style
    ``spec`` matches, so that a search there (``grep``, ``glob``) would read it. An
    anchored pattern is looked up by its literal folder (``secrets/**``: does ``secrets``
    exist under ``rel``?); any other is looked for under ``rel`` (fail closed: a folder
    too large to look through counts as holding one)."""
    text = spec.strip()
    literal: list[str] = []
    anchored = not text.startswith("!") and "/" in text.rstrip("/")
    if anchored:
        for part in text.strip("/").split("/"):
            if any(c in _GLOB_CHARS for c in part):
                break
            literal.append(part)
    prefix = "/".join(literal)
    if prefix:
        if rel == prefix or rel.startswith(prefix + "/"):
            return True
        if rel and not prefix.startswith(rel + "/"):
            return False
        return os.path.lexists(os.path.join(root, prefix))
    return _walk_finds(spec, rel, root)


def _walk_finds(spec: str, rel: str, root: Path) -> bool:
    top = os.path.join(root, rel) if rel else str(root)
    if not os.path.isdir(top):
        return False
    seen = 0
    for folder, dirs, files in os.walk(top):
        for name in (*dirs, *files):
            seen += 1
            if seen > _WALK_LIMIT:
                return True
            path = os.path.relpath(os.path.join(folder, name), root).replace(os.sep, "/")
            if _spec_matches(spec, path):
                return True
    return False


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

    matcher = _matcher(spec)
    return any(
        matcher.match_file(form or ".")
        for form in dict.fromkeys((rel, unicodedata.normalize("NFC", rel)))
    )


@lru_cache(maxsize=256)
def _matcher(spec: str) -> Any:
    import pathspec

    return pathspec.GitIgnoreSpec.from_lines([spec])


def rules_from(lines: Iterable[tuple[Action, str]]) -> PermissionRules:
    rules = PermissionRules()
    for action, text in lines:
        rules.add(action, text)
    return rules
