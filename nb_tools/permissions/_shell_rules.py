"""``bash(...)`` rules on the parse of :mod:`nb_tools.permissions._shell`.

A specifier is words, with ``:*`` for "these words, then anything": ``bash(git log:*)``
matches ``git log`` and ``git log --oneline`` (whole words: not ``git logx``);
``bash(npm test)`` matches exactly ``npm test``. Words compare after bash's quote removal,
so ``bash(git log:*)`` also matches ``\\git 'log'``.

- **deny and ask** rules match if ANY simple command anywhere in the script matches:
  inside substitutions, groups, function bodies, ``sh -c``/``eval`` strings, and through
  wrappers (``env``, ``timeout``, ``xargs``, ``sudo``, ``find -exec``...: every argument
  suffix that could be the command). The program compares by basename and
  case-insensitively (``/bin/rm``, ``./RM`` are ``rm``), and the following words may come
  after global options (``git -C x push`` matches ``git push:*``). A program the parse
  does not know to be text-only with the denied name among its operands
  (``setarch x86_64 rm``, ``make rm``) is "maybe". The answer is
  "maybe" when a word the rule needs is not literal (``git $(echo push)``) or when the
  script runs code the parse cannot see (``$CMD``, ``eval "$x"``, ``bash script.sh``,
  arithmetic on variables): fail closed, the caller turns "maybe" into ask.
- **allow** rules apply only when EVERY simple command is matched by some allow rule as
  written (the program word compares exactly: ``/usr/bin/git`` is not ``git``; a wrapper
  is itself the command, so ``timeout 5 git log`` needs a rule for ``timeout``) and the
  script has nothing the parse cannot see, no assignment (``PAGER=x git log``,
  ``PATH=.:$PATH; git log``), and no redirection other than to ``/dev/null``, fd
  duplication and here-documents.

Programs that interpret strings as code other than shells (``python -c``, ``git -c
alias.x=!cmd``, ``awk 'BEGIN{system(..)}'``) are beyond what a shell parse can see: rules
are a convenience over the shell layer, the sandbox is the boundary.
"""

from __future__ import annotations

import functools
import re
import shlex
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal, TypeAlias

from nb_tools.permissions._shell import Script, SimpleCommand, Word, parse_script

__all__ = [
    "Spec",
    "allow_blockers",
    "bash_rule_for",
    "bash_rules_for",
    "covers",
    "deny_match",
    "parse_spec",
]

Verdict: TypeAlias = Literal["yes", "maybe", "no"]


@dataclass(frozen=True)
class Spec:
    words: tuple[str, ...]
    prefix: bool


@functools.lru_cache(maxsize=512)
def parse_spec(spec: str) -> Spec:
    """``git log:*`` -> words ``("git", "log")``, prefix; quoting as in bash."""
    spec = spec.strip()
    prefix = spec.endswith(":*")
    body = spec[:-2].strip() if prefix else spec
    script = parse_script(body) if body else None
    words: tuple[str, ...] | None = None
    if script is not None and len(script.commands) == 1 and not script.hidden:
        cmd = script.commands[0]
        argv = cmd.argv
        if cmd.kind != "assignment" and all(v is not None for v in argv):
            words = tuple(v for v in argv if v is not None)
    if words is None:
        try:
            words = tuple(shlex.split(body))
        except ValueError:
            words = tuple(body.split())
    return Spec(words=words, prefix=prefix)


def _base(name: str) -> str:
    return name.rstrip("/").rsplit("/", 1)[-1].casefold()


def _lit(w: Word) -> str | None:
    return None if w.value is None or w.glob else w.value


def _compare(want: Sequence[str], got: Sequence[Word], exact_end: bool) -> Verdict:
    if len(got) < len(want):
        return "no" if all(_lit(w) is not None for w in got) else "maybe"
    verdict: Verdict = "yes"
    for a, w in zip(want, got, strict=False):
        v = _lit(w)
        if v is None:
            verdict = "maybe"
        elif v != a:
            return "no"
    if exact_end and len(got) != len(want):
        rest = got[len(want) :]
        return "maybe" if any(_lit(w) is None for w in rest) else "no"
    return verdict


def _deny_argv(spec: Spec, argv: Sequence[Word]) -> Verdict:
    if not spec.words:
        return "yes"
    if not argv:
        return "no"
    name = _lit(argv[0])
    if name is None:
        return "maybe"
    if _base(name) != _base(spec.words[0]):
        return "no"
    want = spec.words[1:]
    args = argv[1:]
    if not want:
        return "yes" if spec.prefix else _compare((), args, True)
    if _base(name) == "git" and _git_defines_alias(args):
        return "maybe"  # `git -c alias.p=push p` runs push under another name
    # The words may follow global options: try each place a subcommand could start.
    best: Verdict = "no"
    i = 0
    while i <= len(args):
        v = _compare(want, args[i:], not spec.prefix)
        if v == "yes":
            return "yes"
        if v == "maybe":
            best = "maybe"
        if i >= len(args):
            break
        word = _lit(args[i])
        if word is None:
            return "maybe"
        after_option = i > 0 and (_lit(args[i - 1]) or "").startswith("-")
        if not word.startswith("-") and not after_option:
            break
        i += 1
    return best


# Programs known not to run their operands as a command: a denied program's name among
# their operands (``echo rm``, ``grep rm f``) is only text.
_TEXT_ONLY = frozenset(
    ["echo", "printf", "cat", "ls", "grep", "egrep", "fgrep", "rg", "git", "head", "tail",
     "wc", "sort", "uniq", "cut", "tr", "diff", "jq", "file", "stat", "du", "tree", "which",
     "type", "man", "help", "whatis", "apropos", "touch", "mkdir", "rmdir", "rm", "cp",
     "mv", "ln", "chmod", "chown", "test", "[", "[[", "basename", "dirname", "realpath",
     "readlink", "seq", "date", "id", "whereis", "command_not_found_handle", "hash"]
)  # fmt: skip


def _operand_may_run(spec: Spec, cmd: SimpleCommand) -> bool:
    """A program the parse does not know (``ld.so /bin/rm``, ``setarch x86_64 rm``) with
    the denied program's name among its operands may run it: unsure, so ask."""
    if not spec.words or cmd.runs or cmd.kind != "command" or not cmd.words:
        return False
    name = _lit(cmd.words[0])
    if name is None or _base(name) in _TEXT_ONLY:
        return False
    want = _base(spec.words[0])
    return any((v := _lit(w)) is not None and _base(v) == want for w in cmd.words[1:])


_GIT_ALIAS_CONFIG = re.compile(r"(alias|include|includeif)\b", re.IGNORECASE)


def _git_defines_alias(args: Sequence[Word]) -> bool:
    """Whether git's own options define a subcommand alias (or include a config file that
    may): ``-c alias.p=push``, ``-calias.p=push``, ``--config-env=alias.p=VAR``, ``-c
    include.path=f``. A computed ``-c`` value counts."""
    for i, w in enumerate(args):
        v = _lit(w)
        if v is None:
            continue
        value: str | None = None
        if v in ("-c", "--config-env") and i + 1 < len(args):
            value = _lit(args[i + 1])
            if value is None:
                return True
        elif v.startswith("--config-env="):
            value = v.split("=", 1)[1]
        elif v.startswith("-c") and not v.startswith("--"):
            value = v[2:]
        if value is not None and _GIT_ALIAS_CONFIG.match(value):
            return True
    return False


def deny_match(spec_text: str, script: Script) -> Verdict:
    """Does a deny/ask rule match any command of ``script`` (see the module doc)?"""
    spec = parse_spec(spec_text)
    best: Verdict = "no"
    for cmd in script.commands:
        for argv in (cmd.words, *cmd.runs):
            v = _deny_argv(spec, argv)
            if v == "yes":
                return "yes"
            if v == "maybe":
                best = "maybe"
        if best == "no" and _operand_may_run(spec, cmd):
            best = "maybe"
    if script.hidden:
        return "maybe"
    return best


def _allow_argv(spec: Spec, argv: Sequence[Word]) -> bool:
    if not spec.words:
        return True
    if len(argv) < len(spec.words) or (not spec.prefix and len(argv) != len(spec.words)):
        return False
    if not spec.prefix and any(_lit(w) is None for w in argv):
        return False
    return all(_lit(w) == a for a, w in zip(spec.words, argv, strict=False))


_SAFE_DUP = re.compile(r"^(?:[0-9]+|-)$")
_LOOP_VAR = re.compile(r"^[a-z][a-z0-9_]{0,30}$")


def allow_blockers(script: Script) -> list[str]:
    """Why no allow rule may cover ``script`` (empty when rules may)."""
    out = list(script.hidden)
    for cmd in script.commands:
        if cmd.kind == "assignment" or cmd.assignments:
            out.append(f"it assigns variables ({(cmd.assignments or (cmd.text,))[0]})")
    for f in script.features:
        if f.startswith("for_var:") and (
            not _LOOP_VAR.match(f[8:]) or "proxy" in f or f[8:] in ("histchars", "auto_resume")
        ):
            out.append(f"the for loop assigns {f[8:]}")
    for r in script.redirects:
        if not _safe_redirect(r.op, r.target):
            out.append(f"it redirects {r.text!r}")
    if not [c for c in script.commands if c.kind != "assignment"]:
        out.append("it runs no command")
    return out


def _safe_redirect(op: str, target: str | None) -> bool:
    if op in ("<<", "<<-", "<<<"):
        return True
    if op in (">&", "<&"):
        return target is not None and bool(_SAFE_DUP.match(target))
    return op in (">", ">>", "&>", "&>>", ">|", "<") and target == "/dev/null"


def covers(specs: Iterable[str], script: Script) -> list[str] | None:
    """The specifiers that together allow every command of ``script``, or None."""
    specs = list(specs)
    if allow_blockers(script):
        return None
    used: list[str] = []
    for cmd in script.commands:
        if cmd.kind == "assignment":
            continue
        hit = next((s for s in specs if _allow_argv(parse_spec(s), cmd.words)), None)
        if hit is None:
            return None
        if hit not in used:
            used.append(hit)
    return used


# -- the narrowest rule for a call -----------------------------------------------------------

# Programs whose first argument picks what they do: the rule keeps it (`git log:*`).
_SUBCOMMANDS = frozenset(
    ["git", "npm", "pnpm", "yarn", "cargo", "go", "docker", "podman", "kubectl", "pip",
     "pip3", "uv", "poetry", "conda", "mamba", "brew", "apt", "apt-get", "make", "gh",
     "hatch", "pdm", "rustup", "dotnet", "helm", "terraform", "jupyter", "systemctl",
     "bundle", "gem", "mvn", "gradle", "pytest", "ruff", "mypy", "tox", "nox", "just"]
)  # fmt: skip
# Programs that run, delete or move whatever their arguments say: only the exact command.
_EXACT_ONLY = frozenset(
    ["rm", "rmdir", "mv", "cp", "dd", "chmod", "chown", "chgrp", "ln", "truncate", "shred",
     "sh", "bash", "dash", "zsh", "ksh", "eval", "exec", "source", ".", "python",
     "python3", "node", "perl", "ruby", "php", "deno", "bun", "lua", "awk", "gawk", "sed",
     "curl", "wget", "ssh", "scp", "rsync", "nc", "ncat", "socat", "tee", "install",
     "kill", "pkill", "killall", "trap", "alias", "find", "xargs", "sudo", "su", "doas",
     "crontab", "at", "mkfs", "mount", "umount", "git-shell", "open", "xdg-open"]
)  # fmt: skip


def _quote(words: Iterable[str]) -> str:
    return " ".join(shlex.quote(w) for w in words)


def _rule_for_command(cmd: SimpleCommand) -> str | None:
    argv = [_lit(w) for w in cmd.words]
    if not argv or any(v is None for v in argv):
        return None
    words = [v for v in argv if v is not None]
    name = words[0]
    from nb_tools.permissions._shell_words import EXEC_WRAPPERS

    exact = f"bash({_quote(words)})"
    if "/" in name or name in _EXACT_ONLY or name in EXEC_WRAPPERS or cmd.runs:
        return exact
    if name in _SUBCOMMANDS:
        if len(words) > 1 and not words[1].startswith("-"):
            return f"bash({_quote(words[:2])}:*)"
        return exact
    return f"bash({_quote(words[:1])}:*)"


def bash_rules_for(command: str) -> list[str] | None:
    """The narrowest allow rules that together cover ``command`` (one per distinct
    program), or None when no rule can (unseen code, assignments, file redirections)."""
    script = parse_script(command)
    if allow_blockers(script):
        return None
    rules: list[str] = []
    for cmd in script.commands:
        rule = _rule_for_command(cmd)
        if rule is None:
            return None
        if rule not in rules:
            rules.append(rule)
    # The rules must read back as covering the call (quoting round trip).
    specs = [r[5:-1] for r in rules]
    return rules if covers(specs, script) is not None else None


def bash_rule_for(command: str) -> str | None:
    """The narrowest single allow rule covering ``command``: ``bash(git log:*)`` for
    ``git log --oneline -5``; None when it takes more than one rule or none can."""
    rules = bash_rules_for(command)
    return rules[0] if rules is not None and len(rules) == 1 else None
