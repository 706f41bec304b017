"""Is a shell command read-only? A fail-closed vote on the parse of
:mod:`nb_tools.permissions._shell` (the same parse the ``bash(...)`` rules read).

A command line is read-only only if every simple command in it is a program of
``_bash_programs.PROGRAMS`` given only options from that program's allow-list, joined by
pipes, ``&&``, ``||``, ``;``, ``&``, subshells, ``{ }``, ``if``/``while``/``case``, and:

- every word is a literal: no expansion of any kind (``$x``, ``${..}``, ``$((..))``,
  ``${x@P}``, ``${!i}``), no command or process substitution, no brace expansion, no
  ``~``, no ``$".."``, no backslash-newline, no here-string; an unquoted glob only as an
  operand of a program whose every option is harmless (``cat``, ``ls``, ``wc``, ``grep``...,
  where a file named ``-x`` could become an option), never one that could match a dotfile;
- no assignment, no function, no alias, no ``[[ ]]``, no ``sh -c``/``eval``;
- redirections only to ``/dev/null``, fd duplications (``2>&1``), input from a workspace
  file and here-documents without expansions; nothing mentions ``/dev/tcp`` or ``/dev/udp``;
- every operand and option value that names a file stays in the workspace: not absolute,
  not ``~``, no ``..`` component, not a protected file (``.env*``, ``.git/config``,
  ``.ssh``...); ``cd`` only into a relative sub-folder, and no ``git`` after a ``cd``;
- only printable ASCII outside quotes; no NUL, CR or other control characters anywhere.

Decisions: ``env``, ``printenv``, ``ps`` are not read-only (they print secrets from the
environment, the kernel's included); ``sed`` and ``awk`` never (their scripts write and
run programs: ``w``, ``e``, ``system()``); the command name must be written plain
(``"ls"``, ``\\ls`` ask); ``git`` only listing
subcommands, and not when the repository's config or hooks could run a program
(``core.fsmonitor``, ``diff.external``, textconv and filter drivers, ``core.hooksPath``,
a ``post-index-change`` hook, includes, submodules). Recursive readers (``grep -r``,
``rg -u``) can still reach protected files and symlinks that lead outside the workspace:
the sandbox hides those; without a sandbox every bash call asks anyway.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Sequence
from pathlib import Path

from nb_tools.builtin._bash_programs import (
    PROGRAMS,
    find_check,
    git_check,
    jq_problem,
    parse,
    path_problem,
    xxd_check,
)
from nb_tools.permissions import Redirect, SimpleCommand, parse_script

__all__ = ["READ_ONLY_COMMANDS", "is_read_only", "read_only_problem"]

READ_ONLY_COMMANDS: frozenset[str] = frozenset(PROGRAMS) | {"find", "git", "xxd"}

# Constructs a read-only command may use; every other feature of the parse refuses.
_FEATURES = frozenset(
    ["quoted", "ansi_c", "glob", "redirect", "heredoc", "background", "pipe_stderr", "test",
     "for"]
)  # fmt: skip
_LOOP_VAR = re.compile(r"for_var:[a-z][a-z0-9_]{0,30}")
_PRINTABLE = re.compile(r"[\t\n\x20-\x7e]*")
_NO_OPTIONS = frozenset(["echo", "true", "false", "test", "[", "printf", "sleep", "type"])


def is_read_only(command: str, root: str | os.PathLike[str] | None = None) -> bool:
    """Whether ``bash -c command`` can neither write, run a program outside the list, open a
    connection nor read outside the workspace (fail closed). ``root``: the workspace, for
    the git config check (default: the current folder)."""
    return read_only_problem(command, root) is None


def read_only_problem(command: str, root: str | os.PathLike[str] | None = None) -> str | None:
    """``None`` when ``command`` is read-only, else the first reason it is not."""
    if not command.strip():
        return "the command is empty"
    if not _PRINTABLE.fullmatch(command):
        bad = next(ch for ch in command if not _PRINTABLE.fullmatch(ch))
        return f"the command holds U+{ord(bad):04X} (only printable ASCII is read-only)"
    if "/dev/tcp" in command or "/dev/udp" in command:
        return "the command mentions /dev/tcp or /dev/udp (a network connection)"
    script = parse_script(command)
    if script.hidden:
        return script.hidden[0]
    for f in sorted(script.features):
        if f not in _FEATURES and not _LOOP_VAR.fullmatch(f):
            return f"the command uses {f.replace('_', ' ')}"
    for r in script.redirects:
        problem = _redirect_problem(r)
        if problem:
            return problem
    cd_seen = False
    for cmd in script.commands:
        problem = _command_problem(cmd, cd_seen, root)
        if problem:
            return problem
        cd_seen = cd_seen or cmd.name == "cd"
    return None


def _redirect_problem(r: Redirect) -> str | None:
    if r.op == "<<":
        return None if r.target is not None else "a here-document with expansions"
    if r.op in (">&", "<&"):
        if r.target is not None and re.fullmatch(r"[0-9]+|-", r.target):
            return None
        return f"the redirection {r.text!r} writes a file"
    if r.op in (">", ">>", "&>", "&>>", ">|") and r.target == "/dev/null":
        return None
    if r.op == "<" and r.target is not None:
        return path_problem(r.target)
    return f"the redirection {r.text!r} is not read-only"


def _command_problem(cmd: SimpleCommand, cd_seen: bool, root: object) -> str | None:
    if cmd.kind == "test":
        return None if all(w.value is not None for w in cmd.words) else "a computed test"
    if cmd.kind != "command" or cmd.assignments:
        return f"{cmd.text!r} assigns variables"
    if not cmd.words or cmd.name is None:
        return "a computed command name"
    name = cmd.name
    if cmd.words[0].text != name:
        return f"the command name {cmd.words[0].text!r} is quoted or escaped"
    if name not in READ_ONLY_COMMANDS:
        return f"{name} is not on the read-only list"
    args: list[str] = []
    globs: list[str] = []
    for w in cmd.words[1:]:
        if w.value is None:
            return f"{w.text!r} is not a literal word"
        if w.glob:
            globs.append(w.value)
        args.append(w.value)
    opts = PROGRAMS.get(name)
    if globs and (opts is None or not opts.globs):
        return f"{name}: the glob {globs[0]!r} could expand to an option"
    for g in globs:
        if any(part.startswith((".", "[", "-")) for part in g.split("/")):
            return f"the glob {g!r} could match a hidden or protected file"
    if name == "git":
        if cd_seen:
            return "git after cd may read another repository's config"
        return git_check(args) or _git_config_problem(root)
    return _program_problem(name, args)


def _program_problem(name: str, args: Sequence[str]) -> str | None:
    paths: list[str] = []
    if name in _NO_OPTIONS:
        if name == "printf" and args and args[0].startswith("-v"):
            return "printf -v assigns a variable"
        if name in ("test", "["):
            paths = [a for a in args if "/" in a or a.startswith(".")]
    elif name == "find":
        problem, paths = find_check(args)
        if problem:
            return problem
    elif name == "xxd":
        problem, paths = xxd_check(args)
        if problem:
            return problem
    elif name == "jq":
        return _jq_problem(args)
    elif name == "cd":
        if len(args) != 1 or args[0] in ("-", "") or args[0].startswith("-"):
            return "cd without one relative folder goes home or back"
        if any(part.startswith(".") and part != "." for part in args[0].split("/")):
            return f"cd into {args[0]!r}: a hidden folder (.git, .ssh...) is not read-only"
        paths = list(args)
    else:
        opts = PROGRAMS[name]
        problem, operands, values = parse(name, opts, args)
        if problem:
            return problem
        if opts.pattern_first and operands and not _has_pattern_option(args):
            operands = operands[1:]
        if opts.paths:
            paths = operands + values
    for p in paths:
        problem = path_problem(p)
        if problem:
            return f"{name}: {problem}"
    return None


def _has_pattern_option(args: Sequence[str]) -> bool:
    return any(
        a in ("-e", "-f", "--regexp", "--file")
        or a.startswith(("--regexp=", "--file="))
        or re.fullmatch(r"-[a-zA-Z]*[ef].*", a)
        for a in args
    )


def _jq_problem(args: Sequence[str]) -> str | None:
    rest: list[str] = []
    paths: list[str] = []
    from_file = False
    i = 0
    while i < len(args):
        a = args[i]
        if a in ("--arg", "--argjson"):
            i += 3
            continue
        if a in ("--slurpfile", "--rawfile"):
            paths += args[i + 2 : i + 3]
            i += 3
            continue
        if a in ("-f", "--from-file", "-L"):
            paths += args[i + 1 : i + 2]
            from_file = from_file or a != "-L"
            i += 2
            continue
        rest.append(a)
        i += 1
    problem, operands, values = parse("jq", PROGRAMS["jq"], rest)
    if problem:
        return problem
    if not from_file and operands:
        problem = jq_problem(operands[0])
        if problem:
            return problem
        operands = operands[1:]
    for p in paths + operands + values:
        problem = path_problem(p)
        if problem:
            return f"jq: {problem}"
    return None


# -- git: a repository whose config or hooks run programs is not read-only ----------------

# A key that names a program, at the start of a line or right after a section header on
# the same line (``[core] fsmonitor = x`` is valid git config), with a value or alone (a
# bare key is boolean true).
_GIT_CONFIG_RUNS = re.compile(
    r"(?:^|\])\s*(fsmonitor|external|textconv|command|clean|smudge|process|pager|hookspath|"
    r"program|path|askpass|sshcommand|editor|attributesfile|excludesfile|worktree|"
    r"untrackedcache|alternaterefscommand|gitproxy|showsignature|helper|driver|"
    r"difffilter)\s*(?:=|[;#]|$)",
    re.IGNORECASE | re.MULTILINE,
)


def _git_config_problem(root: object) -> str | None:
    base = Path(os.fspath(root)) if isinstance(root, (str, os.PathLike)) else Path.cwd()
    try:
        top, dirs = _git_dirs(base.absolute())
        stamp = tuple(_mtime(f) for f in _git_read_files(top, dirs))
    except OSError as exc:
        return f"git: cannot read the repository config ({exc})"
    return _git_config_cached(str(top), tuple(map(str, dirs)), stamp)


def _git_dir(base: Path) -> tuple[Path, Path | None]:
    """(the work tree's top, its git folder) as git discovers them from ``base``: the
    first folder upwards holding a ``.git`` folder or file, or that is itself a bare
    repository; (``base``, ``None``) when there is none."""
    for d in (base, *base.parents):
        dot = d / ".git"
        if dot.is_dir():
            return d, dot
        if dot.is_file():
            m = re.match(r"gitdir:\s*(.+)", dot.read_text(errors="replace").strip())
            if m:
                g = Path(m.group(1))
                return d, g if g.is_absolute() else (d / g)
        if (d / "HEAD").is_file() and (d / "objects").is_dir() and (d / "refs").is_dir():
            return d, d
    return base, None


def _git_dirs(base: Path) -> tuple[Path, list[Path]]:
    """The work tree's top, and the repository's git folder with, for a linked worktree,
    its common folder."""
    top, d = _git_dir(base)
    if d is None:
        return top, []
    dirs = [d]
    common = d / "commondir"
    if common.is_file():
        c = Path(common.read_text().strip())
        dirs.append(c if c.is_absolute() else d / c)
    return top, dirs


def _git_read_files(top: Path, dirs: list[Path]) -> list[Path]:
    """Every file the check reads: a change to any of them must miss the cache."""
    files = [top / ".git", top / ".gitmodules"]
    for g in dirs:
        files += [g / "config", g / "config.worktree", g / "commondir", g / "hooks"]
    return files


def _mtime(f: Path) -> int:
    try:
        return f.stat().st_mtime_ns
    except FileNotFoundError:
        return 0


@functools.lru_cache(maxsize=32)
def _git_config_cached(top_s: str, dirs_s: tuple[str, ...], stamp: tuple[int, ...]) -> str | None:
    if (Path(top_s) / ".gitmodules").exists():
        return "git: the repository has submodules (their configs may run programs)"
    if not dirs_s:
        return None  # not a repository: git finds none
    try:
        for g in map(Path, dirs_s):
            text = "\n".join(
                cfg.read_text(errors="replace")
                for cfg in (g / "config", g / "config.worktree")
                if cfg.is_file()
            )
            m = _GIT_CONFIG_RUNS.search(text)
            if m or re.search(r"\[\s*include", text, re.IGNORECASE):
                key = m.group(1) if m else "include"
                return f"git: the repository config sets {key} (it could run a program)"
            hooks = g / "hooks"
            if hooks.is_dir() and any(not h.name.endswith(".sample") for h in hooks.iterdir()):
                return "git: the repository has hooks (git status may run them)"
    except OSError as exc:
        return f"git: cannot read the repository config ({exc})"
    return None
