"""Is a shell command read-only? A fail-closed classifier on the tree-sitter-bash parse.

A command line is read-only only if every simple command in it is on the read-only list
below (with its argument checks), joined by pipes, ``&&``, ``||``, ``;``, ``&``,
subshells, ``{ }``, ``if``/``while``/``case``; it has no redirection to a file (``2>&1``
and ``>/dev/null`` are fine), no command or process substitution, no arithmetic
(``$((..))``, ``[[ ]]``: bash evaluates ``$(..)`` inside array subscripts there), no
assignment (``FOO=1 ls``, ``x=1``, ``export``), no function definition, and the command
name is a literal word (not ``$CMD``, not a path). Commands whose safety depends on their
options (``find``, ``git``, ``sort``...) need literal arguments: no ``$x``, no unquoted
glob (a file named ``-delete`` would become an option). Anything the parser marks as an
error or missing, or any construct not listed, is not read-only.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

__all__ = ["READ_ONLY_COMMANDS", "is_read_only"]

# -- the list ----------------------------------------------------------------------------

# Commands that cannot write or run anything whatever their arguments.
_ANY_ARGS = frozenset(
    [
        "cat",
        "ls",
        "head",
        "tail",
        "wc",
        "grep",
        "egrep",
        "fgrep",
        "pwd",
        "echo",
        "which",
        "type",
        "file",
        "stat",
        "du",
        "df",
        "cut",
        "tr",
        "basename",
        "dirname",
        "realpath",
        "readlink",
        "nl",
        "tac",
        "rev",
        "cmp",
        "diff",
        "comm",
        "strings",
        "od",
        "hexdump",
        "md5sum",
        "sha1sum",
        "sha224sum",
        "sha256sum",
        "sha384sum",
        "sha512sum",
        "b2sum",
        "cksum",
        "true",
        "false",
        "test",
        "[",
        "cd",
        "whoami",
        "id",
        "uname",
        "sleep",
        "seq",
        "column",
        "jq",
        "ps",
        "printenv",
        "nproc",
        "locale",
        "groups",
        "tty",
        "arch",
    ]
)

Check = Callable[[Sequence[str]], bool]


def _no_options(*forbidden: str) -> Check:
    """Refuse the given options, in any spelling getopt accepts: ``-o``, ``-o=x``,
    ``-ox``, clustered short flags (``-no``), and unambiguous long prefixes (``--out``)."""
    shorts = {f[1] for f in forbidden if len(f) == 2}
    longs = [f for f in forbidden if f.startswith("--")]

    def check(args: Sequence[str]) -> bool:
        for a in args:
            if a == "--":
                return True
            if a.startswith("--"):
                name = a.split("=", 1)[0]
                if len(name) > 2 and any(f.startswith(name) for f in longs):
                    return False
            elif a.startswith("-") and len(a) > 1 and shorts & set(a[1:]):
                return False
        return True

    return check


def _find(args: Sequence[str]) -> bool:
    bad = {"-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf",
           "-fls"}  # fmt: skip
    return not any(a in bad for a in args)


def _at_most_positional(n: int, *also: Check) -> Check:
    def check(args: Sequence[str]) -> bool:
        positional = [a for a in args if not a.startswith("-") or a == "-"]
        return len(positional) <= n and all(c(args) for c in also)

    return check


_GIT_READ = frozenset(
    [
        "status",
        "log",
        "diff",
        "show",
        "rev-parse",
        "ls-files",
        "ls-tree",
        "blame",
        "shortlog",
        "describe",
        "cat-file",
        "show-ref",
        "grep",
        "merge-base",
        "name-rev",
        "rev-list",
        "count-objects",
        "whatchanged",
    ]
)
_GIT_FORBIDDEN = _no_options("--output", "--ext-diff", "--open-files-in-pager", "-O")
_GIT_BRANCH_FLAGS = frozenset(
    [
        "-a",
        "-r",
        "-v",
        "-vv",
        "-l",
        "--all",
        "--remotes",
        "--list",
        "--verbose",
        "--show-current",
        "--no-color",
        "--color",
        "--no-abbrev",
    ]
)


def _git(args: Sequence[str]) -> bool:
    i = 0
    while i < len(args) and args[i].startswith("-"):
        a = args[i]
        if a == "-C":
            i += 2
            continue
        if a in ("--no-pager", "--bare", "--no-replace-objects", "--literal-pathspecs"):
            i += 1
            continue
        if a.startswith(("--git-dir=", "--work-tree=")):
            i += 1
            continue
        return False  # -c, --config-env, --exec-path, -p/--paginate, anything unknown
    if i >= len(args):
        return True  # bare `git` prints help
    sub, rest = args[i], args[i + 1 :]
    if sub == "branch":
        return all(a in _GIT_BRANCH_FLAGS for a in rest)
    if sub in ("remote", "tag") and not rest:
        return True
    if sub == "remote":
        return rest in (["-v"], ["--verbose"])
    if sub == "tag":
        return all(a in ("-l", "--list", "-n") for a in rest)
    if sub == "stash":
        return rest[:1] == ["list"] and _GIT_FORBIDDEN(rest)
    return sub in _GIT_READ and _GIT_FORBIDDEN(rest)


_CHECKED: dict[str, Check] = {
    "find": _find,
    "git": _git,
    "sort": _no_options("-o", "--output", "--compress-program"),
    "uniq": _at_most_positional(1),
    "rg": _no_options("--pre", "--pre-glob"),
    "date": _no_options("-s", "--set"),
    "tree": _no_options("-o"),
    "file": _no_options("-C", "--compile"),
    "printf": _no_options("-v"),
    "hostname": _at_most_positional(0, _no_options("-F", "--file", "-b", "--boot")),
    "env": lambda args: not args,
}

READ_ONLY_COMMANDS: frozenset[str] = _ANY_ARGS | frozenset(_CHECKED)

# -- the walk ----------------------------------------------------------------------------

_STRUCTURE = frozenset(
    [
        "program",
        "list",
        "pipeline",
        "redirected_statement",
        "subshell",
        "compound_statement",
        "if_statement",
        "elif_clause",
        "else_clause",
        "while_statement",
        "do_group",
        "negated_command",
        "case_statement",
        "case_item",
        "comment",
        "heredoc_redirect",
        "herestring_redirect",
        "heredoc_body",
        "heredoc_content",
        "heredoc_start",
        "heredoc_end",
    ]
)
_VALUES = frozenset(
    [
        "word",
        "number",
        "string",
        "string_content",
        "raw_string",
        "concatenation",
        "simple_expansion",
        "expansion",
        "variable_name",
        "special_variable_name",
        "ansi_c_string",
        "extglob_pattern",
    ]
)
_DEV_NULL_OPS = frozenset({">", ">>", "&>", "&>>", ">|", "1>", "2>"})


@functools.lru_cache(maxsize=1)
def _parser() -> Any:
    import tree_sitter_bash
    from tree_sitter import Language, Parser  # lazy: import cost

    return Parser(Language(tree_sitter_bash.language()))


def is_read_only(command: str) -> bool:
    """Whether running ``command`` with ``bash -c`` can neither write nor run anything
    outside the read-only list (fail closed: anything unclear is not read-only)."""
    if not command.strip() or "\x00" in command:
        return False
    try:
        tree = _parser().parse(command.encode("utf-8", "surrogatepass"))
    except Exception:
        return False
    root = tree.root_node
    if root.has_error or _has_missing(root):
        return False
    return _ok(root)


def _has_missing(node: Any) -> bool:
    return node.is_missing or any(_has_missing(c) for c in node.children)


def _ok(node: Any) -> bool:
    if not node.is_named:
        return True  # punctuation and keywords: && || | ; & then fi ...
    t = node.type
    if t == "command":
        return _command_ok(node)
    if t == "file_redirect":
        return _redirect_ok(node)
    if t == "for_statement":
        var = node.child_by_field_name("variable")
        # The loop variable is assigned: never PATH, IFS, LD_PRELOAD and friends.
        if var is None or not _text(var).islower():
            return False
        return all(_ok(c) for c in node.children)
    if t in _STRUCTURE or t in _VALUES:
        return all(_ok(c) for c in node.children)
    return False  # substitutions, arithmetic, [[ ]], assignments, functions, unknown


def _text(node: Any) -> str:
    return node.text.decode("utf-8", "surrogateescape")


def _command_ok(node: Any) -> bool:
    name_node = None
    args: list[Any] = []
    for c in node.children:
        if not c.is_named:
            continue
        if c.type == "command_name":
            name_node = c
        elif c.type == "variable_assignment":
            return False  # FOO=1 ls
        elif c.type in ("file_redirect", "herestring_redirect"):
            if not _ok(c):
                return False
        elif name_node is None:
            return False
        else:
            args.append(c)
    if name_node is None or name_node.named_child_count != 1:
        return False
    word = name_node.named_children[0]
    if word.type != "word":
        return False  # $CMD, "ls", `a`
    name = _literal(word)
    if name is None or "/" in name:
        return False
    if not all(_ok(a) for a in args):
        return False
    if name in _ANY_ARGS:
        return True
    check = _CHECKED.get(name)
    if check is None:
        return False
    literals = []
    for a in args:
        value = _literal(a)
        if value is None or (a.type == "word" and any(ch in _text(a) for ch in "*?[")):
            return False  # an expansion or glob could turn into an option
        literals.append(value)
    return check(literals)


def _redirect_ok(node: Any) -> bool:
    op = None
    target = None
    for c in node.children:
        if c.type == "file_descriptor":
            continue
        if not c.is_named and op is None:
            op = _text(c)
        elif c.is_named:
            target = c
    if target is None or op is None:
        return False
    if op in (">&", "<&"):
        value = _literal(target)
        return value is not None and (value.isdigit() or value == "-")
    if op == "<":
        return _ok(target)
    if op in _DEV_NULL_OPS:
        return _literal(target) == "/dev/null"
    return False  # <> opens read-write (and creates), anything unknown


def _unescape(text: str) -> str:
    out, i = [], 0
    while i < len(text):
        if text[i] == "\\" and i + 1 < len(text):
            i += 1
        out.append(text[i])
        i += 1
    return "".join(out)


def _literal(node: Any) -> str | None:
    """The value bash gives a word that holds no expansion, or None."""
    t = node.type
    if t == "word":
        return _unescape(_text(node))
    if t == "number":
        return _text(node)
    if t == "raw_string":
        return _text(node)[1:-1]
    if t == "string":
        parts = []
        for c in node.named_children:
            if c.type != "string_content":
                return None
            parts.append(_unescape(_text(c)))
        return "".join(parts)
    if t == "concatenation":
        values = [_literal(c) for c in node.named_children]
        if any(v is None for v in values):
            return None
        return "".join(v for v in values if v is not None)
    return None
