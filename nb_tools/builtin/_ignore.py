"""Listing files the way ripgrep does, in pure Python.

ripgrep (with ``--no-require-git``) skips hidden entries and whatever ``.gitignore``,
``.ignore``, ``.rgignore`` and ``.git/info/exclude`` exclude, reading those files in the
searched folder, below it and in every folder above it, whether or not it is a git
repository. This module mirrors the rules of ripgrep 14.1's ``ignore`` crate so that the
fallback and the ``rg`` path list the same files:

- a pattern without a slash matches at any depth (``**/`` is prepended); a leading slash
  or a slash in the middle anchors it to the folder of the ignore file; a trailing slash
  matches folders only; ``!`` re-includes; ``*``/``?``/``[...]`` never match ``/``;
  ``{a,b}`` alternates; the last matching line of a file decides;
- the deepest folder with a deciding line wins, and ``.rgignore`` beats ``.ignore`` beats
  ``.gitignore`` beats ``.git/info/exclude``;
- a hidden entry (name starting with ``.``) is skipped unless a ``!`` line re-includes it;
- symbolic links are not followed and not listed; ``.git`` is never entered.

pathspec is not used: its folder patterns also match the files below the folder and it
has no ``{a,b}``, both of which would make the fallback disagree with ``rg``. The user's
global git excludes file is ignored on both paths (``rg --no-ignore-global``).
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = [
    "TYPES",
    "IgnoreChecker",
    "PathFilter",
    "glob_regex",
    "recheck_paths",
    "rg_filter_args",
    "walk_files",
]

_IGNORE_FILES = (".rgignore", ".ignore", ".gitignore")  # precedence order
_EXCLUDE = os.path.join(".git", "info", "exclude")

# File types, as `rg --type-list` (ripgrep 14.1.0) defines them; matched on the file name.
TYPES: dict[str, str] = {
    "asm": "*.S *.asm *.s",
    "bat": "*.bat",
    "c": "*.[chH] *.[chH].in *.cats",
    "clojure": "*.clj *.cljc *.cljs *.cljx",
    "cmake": "*.cmake CMakeLists.txt",
    "config": "*.cfg *.conf *.config *.ini",
    "cpp": "*.[ChH] *.[ChH].in *.[ch]pp *.[ch]pp.in *.[ch]xx *.[ch]xx.in *.cc *.cc.in *.hh "
    "*.hh.in *.inl",
    "csharp": "*.cs",
    "css": "*.css *.scss",
    "csv": "*.csv",
    "cython": "*.pxd *.pxi *.pyx",
    "dart": "*.dart",
    "docker": "*Dockerfile*",
    "elixir": "*.eex *.ex *.exs *.heex *.leex *.livemd",
    "erlang": "*.erl *.hrl",
    "fish": "*.fish",
    "fortran": "*.F *.F77 *.F90 *.F95 *.f *.f77 *.f90 *.f95 *.pfo",
    "fsharp": "*.fs *.fsi *.fsx",
    "go": "*.go",
    "gradle": "*.gradle *.gradle.kts gradle-wrapper.* gradle.properties gradlew gradlew.bat",
    "graphql": "*.graphql *.graphqls",
    "groovy": "*.gradle *.groovy",
    "h": "*.h *.hh *.hpp",
    "haskell": "*.c2hs *.cpphs *.hs *.hsc *.lhs",
    "html": "*.ejs *.htm *.html",
    "java": "*.java *.jsp *.jspx *.properties",
    "js": "*.cjs *.js *.jsx *.mjs *.vue",
    "json": "*.json *.sarif composer.lock",
    "jsonl": "*.jsonl",
    "julia": "*.jl",
    "jupyter": "*.ipynb *.jpynb",
    "kotlin": "*.kt *.kts",
    "less": "*.less",
    "lua": "*.lua",
    "make": "*.mak *.mk [Gg][Nn][Uu]makefile [Gg][Nn][Uu]makefile.am [Gg][Nn][Uu]makefile.in "
    "[Mm]akefile [Mm]akefile.am [Mm]akefile.in",
    "markdown": "*.markdown *.md *.mdown *.mdwn *.mdx *.mkd *.mkdn",
    "matlab": "*.m",
    "md": "*.markdown *.md *.mdown *.mdwn *.mdx *.mkd *.mkdn",
    "nix": "*.nix",
    "objc": "*.h *.m",
    "ocaml": "*.ml *.mli *.mll *.mly",
    "perl": "*.PL *.perl *.pl *.plh *.plx *.pm *.t",
    "php": "*.php *.php3 *.php4 *.php5 *.php7 *.php8 *.pht *.phtml",
    "protobuf": "*.proto",
    "ps": "*.cdxml *.ps1 *.ps1xml *.psd1 *.psm1",
    "py": "*.py *.pyi",
    "r": "*.R *.Rmd *.Rnw *.r",
    "rst": "*.rst",
    "ruby": "*.gemspec *.rb *.rbw .irbrc Gemfile Rakefile config.ru",
    "rust": "*.rs",
    "sass": "*.sass *.scss",
    "scala": "*.sbt *.scala",
    "sh": "*.bash *.bashrc *.csh *.cshrc *.ksh *.kshrc *.sh *.tcsh *.zsh .bash_login "
    ".bash_logout .bash_profile .bashrc .cshrc .kshrc .login .logout .profile .tcshrc "
    ".zlogin .zlogout .zprofile .zshenv .zshrc bash_login bash_logout bash_profile bashrc "
    "profile zlogin zlogout zprofile zshenv zshrc",
    "sql": "*.psql *.sql",
    "svelte": "*.svelte",
    "svg": "*.svg",
    "swift": "*.swift",
    "tex": "*.bib *.cls *.dtx *.ins *.ltx *.sty *.tex",
    "toml": "*.toml Cargo.lock",
    "ts": "*.cts *.mts *.ts *.tsx",
    "txt": "*.txt",
    "typescript": "*.cts *.mts *.ts *.tsx",
    "vim": "*.vim .gvimrc .vimrc _gvimrc _vimrc gvimrc vimrc",
    "vue": "*.vue",
    "xml": "*.dtd *.rng *.sch *.xhtml *.xjb *.xml *.xml.dist *.xsd *.xsl *.xslt",
    "yaml": "*.yaml *.yml",
    "zig": "*.zig",
    "zsh": "*.zsh .zlogin .zlogout .zprofile .zshenv .zshrc zlogin zlogout zprofile zshenv zshrc",
}


# -- globs -------------------------------------------------------------------------------


MAX_GLOB_CHARS = 1000
"""The longest glob the ``glob`` and ``grep`` tools take (``check_glob``): turning a glob
into a regex looks ahead for each ``[`` and ``{``, and a glob of many thousands of them,
translated on the kernel's event loop, would hold the kernel for minutes."""


def check_glob(glob: str, tool: str) -> str | None:
    """Why ``tool`` refuses ``glob`` (too long), or ``None``."""
    if len(glob) <= MAX_GLOB_CHARS:
        return None
    return (
        f"{tool}: the glob is {len(glob):,} characters long; at most {MAX_GLOB_CHARS:,} are "
        "taken. Use a shorter pattern (a path and a few wildcards)"
    )


def glob_regex(glob: str) -> str:
    """The regex (to be full-matched) of a glob with globset's rules: ``*``, ``?`` and
    classes never match ``/``; ``**/``, ``/**/`` and ``/**`` cross folders; ``{a,b}``
    alternates; a backslash escapes."""
    return _translate(glob, top=True)


def _translate(glob: str, *, top: bool) -> str:
    out: list[str] = []
    i, n = 0, len(glob)
    while i < n:
        c = glob[i]
        if top and i == 0 and glob.startswith("**/"):
            out.append("(?:/?|.*/)")
            i += 3
        elif c == "/" and glob.startswith("/**", i) and (i + 3 == n or glob[i + 3] == "/"):
            if i + 3 == n:
                out.append("/.*")
                i += 3
            else:
                out.append("(?:/|/.*/)")
                i += 4
        elif c == "*":
            if glob.startswith("**", i) and i == 0 and n == 2 and top:
                out.append(".*")
                i += 2
                continue
            while i < n and glob[i] == "*":
                i += 1
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
            i += 1
        elif c == "[":
            end, cls = _class(glob, i)
            if end < 0:
                out.append(re.escape(c))
                i += 1
            else:
                out.append(cls)
                i = end
        elif c == "{":
            end, alts = _alternates(glob, i)
            if end < 0:
                out.append(re.escape(c))
                i += 1
            else:
                out.append("(?:" + "|".join(_translate(a, top=False) for a in alts) + ")")
                i = end
        elif c == "\\" and i + 1 < n:
            out.append(re.escape(glob[i + 1]))
            i += 2
        else:
            out.append(re.escape(c))
            i += 1
    return "".join(out)


def _class(glob: str, start: int) -> tuple[int, str]:
    """Parse ``[...]`` at ``start``; returns (index after it, regex) or (-1, "")."""
    if glob.rfind("]") <= start + 1:  # no `]` that could close it: a literal `[` (at once)
        return -1, ""
    i = start + 1
    negate = i < len(glob) and glob[i] in "!^"
    if negate:
        i += 1
    items: list[str] = []
    first = True
    while i < len(glob):
        c = glob[i]
        if c == "]" and not first:
            body = "".join(items)
            return i + 1, (f"[^/{body}]" if negate else f"[{body}]")
        first = False
        if c == "\\" and i + 1 < len(glob):
            c = glob[i + 1]
            i += 1
        if i + 2 < len(glob) and glob[i + 1] == "-" and glob[i + 2] != "]":
            items.append(f"{re.escape(c)}-{re.escape(glob[i + 2])}")
            i += 3
            continue
        items.append(re.escape(c))
        i += 1
    return -1, ""


def _alternates(glob: str, start: int) -> tuple[int, list[str]]:
    depth, i = 0, start
    parts: list[str] = []
    last = start + 1
    while i < len(glob):
        c = glob[i]
        if c == "\\":
            i += 2
            continue
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                parts.append(glob[last:i])
                return i + 1, parts
        elif c == "," and depth == 1:
            parts.append(glob[last:i])
            last = i + 1
        i += 1
    return -1, []


@dataclass(frozen=True)
class _Line:
    regex: str
    whitelist: bool
    dir_only: bool


def _parse_line(line: str) -> _Line | None:
    """One ignore-file line as the ``ignore`` crate reads it, or None (blank, comment)."""
    if line.startswith("#"):
        return None
    if not line.endswith("\\ "):
        line = line.rstrip()
    if not line:
        return None
    whitelist = anchored = False
    if line.startswith(("\\!", "\\#")):
        line = line[1:]
        anchored = line.startswith("/")
    else:
        if line.startswith("!"):
            whitelist = True
            line = line[1:]
        if line.startswith("/"):
            anchored = True
            line = line[1:]
    dir_only = False
    if line.endswith("/"):
        dir_only = True
        line = line[:-1]
        if line.endswith("\\"):
            line = line[:-1]
    if not line:
        return None
    if not anchored and "/" not in line and not line.startswith("**/"):
        line = "**/" + line
    if line.endswith("/**"):
        line += "/*"
    return _Line(glob_regex(line), whitelist, dir_only)


class Rules:
    """The lines of one ignore file (or of the user's globs), compiled into two combined
    regexes (for folders and for files) whose alternatives run last line first."""

    __slots__ = ("_dirs", "_files", "_white")

    def __init__(self, lines: Sequence[_Line]) -> None:
        self._white = [ln.whitelist for ln in lines]
        self._dirs = self._combine(lines, dirs=True)
        self._files = self._combine(lines, dirs=False)

    @staticmethod
    def _combine(lines: Sequence[_Line], *, dirs: bool) -> re.Pattern[str] | None:
        alts = [
            f"(?P<g{i}>{ln.regex})"
            for i, ln in reversed(list(enumerate(lines)))
            if dirs or not ln.dir_only
        ]
        return re.compile("(?s:" + "|".join(alts) + ")") if alts else None

    def match(self, path: str, is_dir: bool) -> int:
        """1: ignored, -1: re-included (whitelisted), 0: no line matches."""
        rx = self._dirs if is_dir else self._files
        if rx is None:
            return 0
        m = rx.fullmatch(path)
        if m is None:
            return 0
        return -1 if self._white[int(m.lastgroup[1:])] else 1  # type: ignore[index]


def _read_rules(path: str) -> Rules | None:
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return None
    lines = [p for p in map(_parse_line, data.decode("utf-8", "replace").splitlines()) if p]
    return Rules(lines) if lines else None


class _Dir:
    """The ignore files of one folder: rules by precedence, and how to turn a path
    relative to the search folder into a path relative to this folder."""

    __slots__ = ("prefix", "rules", "strip")

    def __init__(self, rules: tuple[Rules | None, ...], strip: int, prefix: str) -> None:
        self.rules = rules
        self.strip = strip
        self.prefix = prefix


def _load_dir(abs_dir: str, strip: int = 0, prefix: str = "") -> _Dir | None:
    found = tuple(_read_rules(os.path.join(abs_dir, name)) for name in _IGNORE_FILES)
    exclude = _read_rules(os.path.join(abs_dir, _EXCLUDE))
    rules = (*found, exclude)
    if not any(rules):
        return None
    return _Dir(rules, strip, prefix)


_Chain = tuple[_Dir, ...]  # deepest folder first


def _decide(chain: _Chain, rel: str, is_dir: bool) -> int:
    for kind in range(4):
        for d in chain:
            rules = d.rules[kind]
            if rules is not None:
                v = rules.match(d.prefix + rel[d.strip :], is_dir)
                if v:
                    return v
    return 0


def _ancestors(search_dir: str) -> _Chain:
    """Rules of the folders above ``search_dir`` (which rg reads too), deepest first."""
    chain: list[_Dir] = []
    child = search_dir
    parent = os.path.dirname(child)
    prefix = ""
    while parent != child:
        prefix = os.path.basename(child) + "/" + prefix
        d = _load_dir(parent, 0, prefix)
        if d is not None:
            chain.append(d)
        child, parent = parent, os.path.dirname(parent)
    return tuple(chain)


def _skip(chain: _Chain, rel: str, name: str, is_dir: bool) -> bool:
    if name == ".git":
        return True
    v = _decide(chain, rel, is_dir) if chain else 0
    return v > 0 or (v == 0 and name.startswith("."))


def walk_files(search_dir: str, stop: threading.Event | None = None) -> list[str]:
    """Every file ripgrep would search under ``search_dir`` (absolute), as paths relative
    to it with ``/`` separators, unsorted. Stops early (returning what it has) once
    ``stop`` is set."""
    base = _ancestors(search_dir)
    out: list[str] = []
    stack: list[tuple[str, str, _Chain]] = [("", search_dir, base)]
    while stack:
        if stop is not None and stop.is_set():
            break
        rel, abs_dir, chain = stack.pop()
        d = _load_dir(abs_dir, len(rel) + 1 if rel else 0)
        if d is not None:
            chain = (d, *chain)
        try:
            entries = os.scandir(abs_dir)
        except OSError:
            continue
        with entries:
            for e in entries:
                name = e.name
                try:
                    is_dir = e.is_dir(follow_symlinks=False)
                    if not is_dir and not e.is_file(follow_symlinks=False):
                        continue  # symlinks, FIFOs, sockets, devices
                except OSError:
                    continue
                r = f"{rel}/{name}" if rel else name
                if _skip(chain, r, name, is_dir):
                    continue
                if is_dir:
                    stack.append((r, e.path, chain))
                else:
                    out.append(r)
    return out


class IgnoreChecker:
    """Answers "would ripgrep list this file?" for paths under ``search_dir``; used to
    drop what a positive ``rg -g`` glob brings back (ignored or hidden files)."""

    def __init__(self, search_dir: str) -> None:
        self._root = search_dir
        self._chains: dict[str, _Chain | None] = {}

    def _chain(self, rel_dir: str) -> _Chain | None:
        cached = self._chains.get(rel_dir, False)
        if cached is not False:
            return cached  # type: ignore[return-value]
        chain: _Chain | None
        if not rel_dir:
            parent: _Chain | None = _ancestors(self._root)
        else:
            parent = self._chain(rel_dir.rpartition("/")[0])
        if parent is None or (rel_dir and _skip(parent, rel_dir, rel_dir.rpartition("/")[2], True)):
            chain = None
        else:
            strip = len(rel_dir) + 1 if rel_dir else 0
            d = _load_dir(os.path.join(self._root, rel_dir), strip)
            chain = (d, *parent) if d is not None else parent
        self._chains[rel_dir] = chain
        return chain

    def ignored(self, rel: str) -> bool:
        parent, _, name = rel.rpartition("/")
        chain = self._chain(parent)
        return chain is None or _skip(chain, rel, name, False)


class PathFilter:
    """The user's glob (ripgrep ``-g`` semantics: gitignore-style, matched against the path
    relative to the searched folder; ``!`` excludes) and file types (matched on the name).
    Files only: a glob that ends in ``/`` never matches a file."""

    def __init__(self, globs: Sequence[str] = (), types: Sequence[str] = ()) -> None:
        lines = [ln for ln in map(_parse_line, globs) if ln is not None]
        # rg's overrides invert gitignore meaning: a plain glob includes, "!glob" excludes.
        self._globs = Rules(lines) if lines else None
        self._has_globs = bool(lines)
        self._positives = len(lines) - sum(ln.whitelist for ln in lines)
        type_globs: list[str] = []
        for t in types:
            type_globs.extend(TYPES[t].split())
        self.type_globs = type_globs
        self._types = (
            re.compile("(?s:" + "|".join(map(glob_regex, type_globs)) + ")")
            if (type_globs)
            else None
        )

    @property
    def active(self) -> bool:
        return self._has_globs or self._types is not None

    def __call__(self, rel: str) -> bool:
        if self._globs is not None:
            v = self._globs.match(rel, False)
            if v == -1 or (v == 0 and self._positives):  # "!glob" matched, or no glob did
                return False
        if self._types is not None:
            return self._types.fullmatch(rel.rpartition("/")[2]) is not None
        return True


def rg_filter_args(globs: Sequence[str], types: Sequence[str]) -> tuple[list[str], str]:
    """ripgrep arguments that narrow a listing to the user's glob or type, and what the
    result then needs re-checked: "none", "hidden" or "full".

    A positive ``-g`` glob overrides the ignore rules, so it brings back ignored and hidden
    files ("full": every result goes through :class:`IgnoreChecker`). A file type only
    overrides the hidden rule, so a glob without a slash (which matches the file name, as a
    type does) goes in as a type of its own ("hidden": only dot-files need the check). The
    caller applies :class:`PathFilter` afterwards for the exact intersection of glob and
    type.
    """
    args: list[str] = []
    recheck = "none"
    if globs:
        for i, g in enumerate(globs):
            name = g
            while name.startswith("**/"):
                name = name[3:]  # "**/*.py" matches what "*.py" matches: any file name
            if g.startswith("!"):
                args += ["-g", g]
            elif name and "/" not in name and ":" not in name:
                args += ["--type-add", f"nbglob{i}:{name}", "-t", f"nbglob{i}"]
                recheck = "hidden" if recheck == "none" else recheck
            else:
                args += ["-g", g]
                recheck = "full"
    else:
        for t in types:
            for g in TYPES[t].split():
                args += ["--type-add", f"nbtype:{g}"]
            args += ["-t", "nbtype"]
            recheck = "hidden"
    return args, recheck


def recheck_paths(names: Sequence[str], search_dir: str, kind: str) -> list[str]:
    """Drop what a ripgrep filter let through that the ignore rules exclude
    (see :func:`rg_filter_args`)."""
    if kind == "none":
        return list(names)
    checker = IgnoreChecker(search_dir)
    if kind == "hidden":
        return [n for n in names if not n.rpartition("/")[2].startswith(".") or
                not checker.ignored(n)]  # fmt: skip
    return [n for n in names if not checker.ignored(n)]
