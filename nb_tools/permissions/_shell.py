"""Read a ``bash -c`` script as bash does: one parse (tree-sitter-bash) for the read-only
vote and for ``bash(...)`` permission rules.

``parse_script(command)`` returns a :class:`Script`: every simple command anywhere in it
(pipelines, lists, groups, subshells, ``if``/``while``/``for``/``case`` bodies, function
bodies, command and process substitutions in arguments, redirects, assignments and
here-doc bodies, and the scripts handed to ``sh -c``/``bash -c``/``eval``/``trap``/``alias``
when those are literal), each with its words as bash would give them (quotes removed,
``$'..'`` decoded, ``\\x`` unescaped) or ``None`` where a word is not a literal (``$x``,
``$(..)``, globs, brace expansion, ``~``).

``Script.hidden`` lists what may run code that the parse cannot see: a command name that is
not a literal word, ``eval``/``sh -c`` of a non-literal string, ``source`` of a file, a shell
reading a script from a pipe, arithmetic and complex parameter expansions (bash evaluates
``a[$(..)]`` subscripts in variable values there), ``test -v``/``printf -v`` on a computed
name, syntax errors, and characters bash and the parser may split differently (NUL, CR,
Unicode spaces and format characters). ``Script.features`` names every construct used, for
the read-only vote, which refuses all but a few.

The parser and language objects are built once and cached. Where tree-sitter and bash
disagree (tree-sitter treats a backslash-newline as a word break, bash as nothing at all;
it treats CR as a blank) the script is first rewritten the way bash reads it (line
continuations removed outside single quotes, ``$'..'``, comments and quoted here-docs) or
marked hidden.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Any

from nb_tools.permissions._shell_source import (
    heredoc_delimiter,
    join_continuations,
    live_expansion,
    odd_chars,
    parser,
    quoted_heredoc,
)
from nb_tools.permissions._shell_words import (
    assignment_code,
    code_strings,
    inner_commands,
    is_wrapper,
    literal,
    word_info,
)

__all__ = [
    "Redirect",
    "Script",
    "SimpleCommand",
    "Word",
    "parse_script",
]


@dataclass(frozen=True, kw_only=True)
class Word:
    """One word as written (``text``) and its value when bash gives exactly this one literal
    word (``value``), else ``None`` (an expansion, a substitution, a glob, a brace, ``~``)."""

    text: str
    value: str | None
    glob: bool = False  # unquoted * ? [ : the value is a pattern


@dataclass(frozen=True, kw_only=True)
class Redirect:
    """``op`` as written (``>``, ``2>&1`` is op ``>&`` with fd ``2``), its literal target."""

    op: str
    fd: str | None
    target: str | None
    text: str


@dataclass(frozen=True, kw_only=True)
class SimpleCommand:
    """A simple command: ``words`` (name first) after its prefix assignments.

    ``kind`` is ``command``, ``declaration`` (declare/export/local...), ``unset``,
    ``test`` (``[[ ]]``), or ``assignment`` (a statement that only assigns). ``via`` says how
    it was reached when not written directly (``sh -c``, ``eval``, ``xargs``...), and
    ``runs`` lists the argument lists of the commands it runs through wrappers (``env rm``,
    ``timeout 5 rm``, ``find -exec rm``): every candidate, for deny rules."""

    words: tuple[Word, ...]
    assignments: tuple[str, ...] = ()
    redirects: tuple[Redirect, ...] = ()
    kind: str = "command"
    text: str = ""
    via: str = ""
    runs: tuple[tuple[Word, ...], ...] = ()

    @property
    def argv(self) -> tuple[str | None, ...]:
        return tuple(w.value for w in self.words)

    @property
    def name(self) -> str | None:
        return self.words[0].value if self.words else None


@dataclass(frozen=True, kw_only=True)
class Script:
    """What ``bash -c source`` runs, as far as a parse can tell (see the module doc)."""

    source: str
    commands: tuple[SimpleCommand, ...]
    redirects: tuple[Redirect, ...]
    hidden: tuple[str, ...]
    features: frozenset[str]

    @property
    def unresolved(self) -> bool:
        """True when some command position or code string could not be read."""
        return bool(self.hidden)


_MAX_DEPTH = 8


@functools.lru_cache(maxsize=256)
def parse_script(command: str) -> Script:
    """Parse ``command`` as ``bash -c`` would read it (see :class:`Script`). Cached: the
    vote and every rule of a check read the same parse."""
    return _parse(command, 0, "")


def _parse(command: str, _depth: int, _via: str) -> Script:
    walker = _Walker(_depth, _via)
    odd = odd_chars(command)
    if odd:
        walker.hide(odd)
    if _depth > _MAX_DEPTH:
        walker.hide("scripts nested too deep")
        return walker.script(command)
    if "\\\n" in command and re.search(r"<<(?!<)", command):
        walker.hide("a here-document and a backslash-newline (bash may end it elsewhere)")
    if "\\\n" in command:
        walker.features.add("backslash_newline")
    source = join_continuations(command)
    data = source.encode("utf-8", "surrogatepass")
    try:
        tree = parser().parse(data)
    except Exception as exc:  # a parser failure is a script we cannot read
        walker.hide(f"parser failed: {exc}")
        return walker.script(command)
    walker.data = data
    if tree.root_node.has_error:
        walker.hide("the parser found a syntax error or a missing part")
    try:
        walker.walk(tree.root_node)
    except RecursionError:  # `((((..))))` thousands deep: unreadable, so unsure
        walker.hide("the script is nested too deep to read")
    return walker.script(command)


def _t(node: Any) -> str:
    return str(node.text.decode("utf-8", "surrogatepass"))


_STRUCTURE = frozenset(
    [
        "program", "list", "pipeline", "redirected_statement", "subshell",
        "compound_statement", "if_statement", "elif_clause", "else_clause",
        "while_statement", "do_group", "negated_command", "case_statement", "case_item",
        "heredoc_body", "heredoc_content", "heredoc_start", "heredoc_end",
        "string", "concatenation", "command_name", "array",
    ]
)  # fmt: skip
_ARITH = frozenset(
    [
        "arithmetic_expansion", "binary_expression", "unary_expression",
        "postfix_expression", "ternary_expression", "parenthesized_expression", "subscript",
    ]
)  # fmt: skip
_LEAVES = frozenset(
    ["word", "number", "raw_string", "ansi_c_string", "string_content", "variable_name",
     "special_variable_name", "test_operator", "regex", "extglob_pattern", "file_descriptor"]
)  # fmt: skip
_WORD_LISTS = frozenset(["command", "concatenation", "declaration_command", "unset_command",
                         "for_statement", "case_statement", "case_item", "string"])  # fmt: skip
_TEST_WORDS = frozenset(
    ["word", "string", "raw_string", "number", "concatenation", "ansi_c_string",
     "simple_expansion", "expansion", "command_substitution", "test_operator", "regex",
     "extglob_pattern", "process_substitution", "arithmetic_expansion", "translated_string"]
)  # fmt: skip
_REDIRECT_FEATURE = {
    "file_redirect": "redirect",
    "heredoc_redirect": "heredoc",
    "herestring_redirect": "herestring",
}
_VAR_NAME_BUILTINS = frozenset(
    ["read", "mapfile", "readarray", "declare", "typeset", "local", "export", "readonly",
     "unset", "let", "getopts", "wait", "printf", "test", "[", "[["]
)  # fmt: skip


class _Walker:
    def __init__(self, depth: int, via: str) -> None:
        self.depth = depth
        self.via = via
        self.data = b""
        self.commands: list[SimpleCommand] = []
        self.redirects: list[Redirect] = []
        self.hidden: list[str] = []
        self.features: set[str] = set()

    def hide(self, reason: str) -> None:
        if reason not in self.hidden:
            self.hidden.append(reason)

    def script(self, source: str) -> Script:
        return Script(
            source=source,
            commands=tuple(self.commands),
            redirects=tuple(self.redirects),
            hidden=tuple(self.hidden),
            features=frozenset(self.features),
        )

    # -- the tree ----------------------------------------------------------------------

    def walk(self, node: Any) -> None:
        t = node.type
        if node.is_missing:
            self.hide("the script is incomplete (missing " + t + ")")
            return
        if t == "ERROR":
            self.hide("a syntax error at " + repr(_t(node)[:40]))
            self.features.add("error")
            for c in node.children:
                self.walk(c)
            return
        if not node.is_named:
            tok = t
            if tok in ("((", "))", "let"):
                self.features.add("arithmetic")
            elif tok == "$" and node.parent is not None and node.parent.type in _WORD_LISTS:
                self.features.add("locale_string")
            elif tok in ("|&",):
                self.features.add("pipe_stderr")
            elif tok == "&":
                self.features.add("background")
            return
        if t == "comment":
            return
        if t == "command":
            self.command(node)
            return
        if t in ("declaration_command", "unset_command"):
            self.declaration(node)
            return
        if t == "test_command":
            self.test(node)
            return
        if t == "variable_assignments":
            for c in node.children:
                self.walk(c)
            return
        if t == "variable_assignment":
            self.features.add("assignment")
            self.commands.append(
                SimpleCommand(words=(), assignments=(_t(node),), kind="assignment",
                              text=_t(node), via=self.via)
            )  # fmt: skip
            self.scan_assignment(node)
            return
        if t in _REDIRECT_FEATURE:
            self.redirects.append(self.redirect(node))
            return
        if t == "redirected_statement":
            body = node.child_by_field_name("body")
            redirects = [self.redirect(r) for r in node.children_by_field_name("redirect")]
            self.redirects.extend(redirects)
            if body is not None and body.type == "command":
                self.command(body, redirects)
            elif body is not None:
                self.walk(body)
            return
        if t == "function_definition":
            self.features.add("function")
        elif t == "for_statement":
            var = node.child_by_field_name("variable")
            self.features.add("for")
            self.features.add("for_var:" + (_t(var) if var is not None else ""))
        elif t == "c_style_for_statement":
            self.features.add("arithmetic")
            self.hide("arithmetic evaluates code hidden in variable values")
        elif t in ("command_substitution", "process_substitution"):
            self.features.add(t)
        elif t in _ARITH or (t == "compound_statement" and _t(node).startswith("((")):
            self.features.add("arithmetic")
            if _has_name(node):
                self.hide("arithmetic evaluates code hidden in variable values")
        elif t in ("simple_expansion", "expansion"):
            if self.expansion(node):
                return
        elif t in ("brace_expression",):
            self.features.add("brace")
        elif t in ("translated_string",):
            self.features.add("locale_string")
        elif t in _LEAVES:
            return
        elif t not in _STRUCTURE:
            self.features.add("node:" + t)
        for c in node.children:
            self.walk(c)

    def expansion(self, node: Any) -> bool:
        """Note an expansion; True when there is nothing inside to walk."""
        if node.type == "simple_expansion":
            self.features.add("expansion")
            return True
        kids = node.children
        plain = (
            len(kids) == 3
            and kids[1].type in ("variable_name", "special_variable_name")
            and _t(kids[0]) == "${"
        )
        self.features.add("expansion" if plain else "complex_expansion")
        if not plain:
            self.hide(f"the expansion {_t(node)[:40]} may evaluate code")
        return plain

    def scan_assignment(self, node: Any) -> None:
        name = ""
        value: str | None = None
        for c in node.children:
            if c.type == "variable_name":
                name = _t(c)
            elif c.type == "subscript":
                self.features.add("arithmetic")
                self.hide("an array subscript is evaluated as arithmetic")
            elif c.is_named:
                value = literal(c)
            self.walk(c) if c.type != "variable_name" else None
        self.assigned(name, value if node.named_child_count > 1 else "")

    def assigned(self, name: str, value: str | None) -> None:
        """``name=value`` may run code later (``GIT_PAGER=..``, ``BASH_ENV=..``)."""
        effect = assignment_code(name, value)
        if effect is None:
            return
        code, via = effect
        if code is None and not via.endswith("="):
            self.hide(via)
        else:
            self.nested(code, via)

    def word(self, node: Any) -> Word:
        """The word, and a walk of what it holds (substitutions, expansions)."""
        info = word_info(node)
        self.features |= info.features
        if "newline_in_word" in info.features:
            self.hide("the parser read a newline inside a word")
        self.walk(node)
        return Word(text=_t(node), value=info.value, glob=info.glob)

    def redirect(self, node: Any) -> Redirect:
        t = node.type
        self.features.add(_REDIRECT_FEATURE[t])
        fd = None
        op = ""
        target: str | None = None
        for c in node.children:
            if c.type == "file_descriptor":
                fd = _t(c)
            elif not c.is_named:
                if not op:
                    op = _t(c)
                else:
                    self.walk(c)
            elif c.type in ("heredoc_start", "heredoc_end"):
                continue
            elif c.type == "heredoc_body":
                target = self.heredoc_body(c)
            elif target is None and t != "heredoc_redirect":
                target = self.word(c).value
            else:
                self.walk(c)
        if t == "heredoc_redirect":
            self.check_heredoc(node, op)
        return Redirect(op=op, fd=fd, target=target, text=_t(node))

    def command(self, node: Any, extra: list[Redirect] | None = None) -> None:
        words: list[Word] = []
        assigns: list[str] = []
        redirects: list[Redirect] = list(extra or [])
        for c in node.children:
            if not c.is_named:
                self.walk(c)
                continue
            if c.type == "variable_assignment":
                self.features.add("assignment")
                assigns.append(_t(c))
                self.scan_assignment(c)
            elif c.type in ("file_redirect", "heredoc_redirect", "herestring_redirect"):
                r = self.redirect(c)
                redirects.append(r)
                self.redirects.append(r)
            elif c.type == "command_name":
                inner = c.named_children
                if len(inner) != 1:
                    self.hide("a command name that is not one word")
                    words.append(Word(text=_t(c), value=None))
                    for cc in inner:
                        self.walk(cc)
                else:
                    words.append(self.word(inner[0]))
            elif c.type == "comment":
                continue
            else:
                words.append(self.word(c))
        self.check_gaps(node)
        self.add(words, assigns, redirects, _t(node), "command")

    def check_gaps(self, node: Any) -> None:
        """tree-sitter sometimes reads a newline as a blank inside a command (after
        ``a#``, after ``time``); bash ends the command there. Such a parse is not bash's."""
        prev = None
        for c in node.children:
            if c.type in ("file_redirect", "heredoc_redirect", "herestring_redirect"):
                prev = None
                continue
            if prev is not None and b"\n" in self.data[prev.end_byte : c.start_byte]:
                self.hide("the parser read a newline inside a command")
            if c.type == "word" and "\n" in _t(c):
                self.hide("the parser read a newline inside a word")
            prev = c

    def declaration(self, node: Any) -> None:
        words: list[Word] = []
        for c in node.children:
            if not c.is_named:
                words.append(Word(text=_t(c), value=_t(c)))
            elif c.type == "variable_assignment":
                self.features.add("assignment")
                self.scan_assignment(c)
                words.append(Word(text=_t(c), value=literal(c)))
            elif c.type == "variable_name":
                words.append(Word(text=_t(c), value=_t(c)))
            else:
                words.append(self.word(c))
        self.features.add("declaration")
        flags = [w.value for w in words[1:] if w.value and re.fullmatch(r"[-+][a-zA-Z]+", w.value)]
        if any("i" in f for f in flags):  # every later assignment to it is arithmetic
            self.hide("declare -i makes later assignments evaluate subscripts as arithmetic")
        kind = "unset" if node.type == "unset_command" else "declaration"
        self.add(words, [], [], _t(node), kind)

    def test(self, node: Any) -> None:
        text = _t(node)
        extended = text.startswith("[[")
        self.features.add("test_extended" if extended else "test")
        words = [Word(text="[[" if extended else "[", value="[[" if extended else "[")]
        self.test_words(node, words)
        if extended and re.search(r"-(eq|ne|lt|le|gt|ge|v|R)\b", text):
            self.features.add("arithmetic")
            self.hide("[[ ]] evaluates arithmetic and subscripts")
        elif any(w.value in ("-v", "-R") for w in words):
            self.hide("test -v evaluates subscripts")
        self.add(words, [], [], text, "test")

    def test_words(self, node: Any, out: list[Word]) -> None:
        for c in node.children:
            if not c.is_named:
                if c.type not in ("[", "]", "[[", "]]"):
                    out.append(Word(text=_t(c), value=_t(c)))
            elif c.type in _TEST_WORDS:
                out.append(self.word(c))
            else:
                self.test_words(c, out)

    def add(
        self,
        words: list[Word],
        assigns: list[str],
        redirects: list[Redirect],
        text: str,
        kind: str,
    ) -> None:
        runs: tuple[tuple[Word, ...], ...] = ()
        if words:
            first = words[0]
            if first.value is None or first.glob:
                self.hide(f"the command name {first.text!r} is not a literal word")
            else:
                name = first.value.rsplit("/", 1)[-1]
                if name == "env":
                    for w in words[1:]:
                        m = re.fullmatch(r"([A-Za-z_][A-Za-z0-9_]*)=(.*)", w.value or "", re.S)
                        if m:
                            self.assigned(m.group(1), m.group(2))
                        elif w.value is not None and not w.value.startswith("-"):
                            break
                if name in _VAR_NAME_BUILTINS and kind != "test":
                    self.var_name_builtin(name, words)
                for code, via in code_strings(words, redirects, self.features):
                    self.nested(code, via)
                if is_wrapper(name) or name == "find":
                    runs = tuple(inner_commands(tuple(words)))
                    for run in runs:
                        if run and (run[0].value is None or run[0].glob):
                            self.hide(f"{name} runs a command that is not a literal word")
                        elif run:
                            for code, via in code_strings(list(run), [], self.features):
                                self.nested(code, via)
        self.commands.append(
            SimpleCommand(
                words=tuple(words),
                assignments=tuple(assigns),
                redirects=tuple(redirects),
                kind=kind,
                text=text,
                via=self.via,
                runs=runs,
            )
        )

    def var_name_builtin(self, name: str, words: list[Word]) -> None:
        args = words[1:]
        if name in ("printf", "test", "[") and not any(w.value in ("-v", "-R") for w in args):
            return
        for w in args:
            if w.value is None:
                self.hide(f"{name} with a computed variable name may evaluate a subscript")
            elif "[" in w.value and re.search(r"[$`]", w.value):
                self.hide(f"{name} evaluates the subscript in {w.value!r}")

    def check_heredoc(self, node: Any, op: str) -> None:
        """Hide the script when bash would end this here-document elsewhere than the parse:
        tree-sitter compares the delimiter as written, bash after quote removal."""
        kids = {c.type: c for c in node.children}
        start, end = kids.get("heredoc_start"), kids.get("heredoc_end")
        if start is None or end is None or end.is_missing:
            self.hide("a here-document without its end")
            return
        delim = heredoc_delimiter(_t(start))
        body = _t(kids["heredoc_body"]) if "heredoc_body" in kids else ""
        lines = body.split("\n")
        tabs = "\t" if op.startswith("<<-") else ""
        ended_early = any(line.lstrip(tabs) == delim for line in lines[:-1])
        if ended_early or (lines[-1] + _t(end)).lstrip(tabs) != delim:
            self.hide(f"the here-document delimiter {_t(start)!r} is read differently")

    def heredoc_body(self, body: Any) -> str | None:
        """The body as the command reads it, or None when bash expands something in it.

        tree-sitter misses substitutions in some bodies (one starting with a tab, after
        ``<<-``), so an unquoted body is read again here: as the inside of a
        double-quoted word, which is how bash expands it."""
        text = _t(body)
        if quoted_heredoc(body):
            return text
        if not live_expansion(text):
            return re.sub(r"\\([$`\\])", r"\1", text)
        self.features.add("heredoc_expansion")
        inner = _parse(': "' + text.replace('"', '\\"') + '"', self.depth + 1, self.via)
        self.commands.extend(inner.commands[:-1])  # the last one is the ":" wrapper
        for h in inner.hidden:
            self.hide(f"here-document: {h}")
        self.features |= inner.features
        return None

    def nested(self, code: str | None, via: str) -> None:
        if code is None:
            self.hide(f"{via} runs code that is not a literal string")
            return
        inner = _parse(code, self.depth + 1, via)
        self.commands.extend(inner.commands)
        for h in inner.hidden:
            self.hide(f"{via}: {h}")
        self.features |= {f"nested:{f}" for f in inner.features}
        self.features.add("nested")


def _has_name(node: Any) -> bool:
    if node.type in ("variable_name", "simple_expansion", "expansion", "word", "subscript"):
        return True
    return any(_has_name(c) for c in node.named_children)
