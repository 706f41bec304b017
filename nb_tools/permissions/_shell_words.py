"""Words as bash gives them (quote removal, ``$'..'``, escapes), and the commands that
wrappers run (``env rm``, ``timeout 5 rm``, ``xargs rm``, ``find -exec rm``).

Checked against GNU bash 5.2 with tree-sitter-bash 0.25.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from nb_tools.permissions._shell import Redirect, Word

__all__ = [
    "EXEC_WRAPPERS",
    "WRAPPERS",
    "WordInfo",
    "assignment_code",
    "code_strings",
    "inner_commands",
    "is_wrapper",
    "literal",
    "word_info",
]


@dataclass(frozen=True)
class WordInfo:
    value: str | None
    glob: bool
    features: frozenset[str]


def _t(node: Any) -> str:
    return str(node.text.decode("utf-8", "surrogatepass"))


def word_info(node: Any) -> WordInfo:
    """The literal value of a word node (``None`` when bash would expand something in it),
    whether it holds an unquoted glob, and which constructs it uses."""
    feats: set[str] = set()
    pieces: list[tuple[str, bool]] = []  # (text, quoted)
    value = _value(node, feats, pieces)
    skeleton = "".join(text if not quoted else "_" for text, quoted in pieces)
    glob = False
    if _has_glob(skeleton):
        glob = True
        feats.add("glob")
    if _has_brace(skeleton):
        feats.add("brace")
        value = None
    if pieces and not pieces[0][1] and pieces[0][0].startswith("~"):
        feats.add("tilde")
        value = None
    if value is not None and "\x00" in value:
        value = value.split("\x00", 1)[0]
    return WordInfo(value=value, glob=glob, features=frozenset(feats))


def literal(node: Any) -> str | None:
    return word_info(node).value


def _value(node: Any, feats: set[str], pieces: list[tuple[str, bool]]) -> str | None:
    t = node.type
    if t == "word":
        text = _t(node)
        if "\n" in text:
            feats.add("newline_in_word")  # tree-sitter joined two lines; bash never does
        pieces.append((text, False))
        return _unescape_unquoted(text)
    if t == "number":
        pieces.append((_t(node), False))
        return _t(node)
    if t == "raw_string":
        pieces.append((_t(node), True))
        feats.add("quoted")
        return _t(node)[1:-1]
    if t == "ansi_c_string":
        pieces.append((_t(node), True))
        feats.add("ansi_c")
        return decode_ansi_c(_t(node)[2:-1])
    if t == "string":
        pieces.append((_t(node), True))
        feats.add("quoted")
        parts: list[str] = []
        ok = True
        for c in node.children:
            if c.type == "string_content":
                parts.append(_unescape_double(_t(c)))
            elif c.is_named:
                ok = False
            elif c.type == "$":
                ok = False
                feats.add("locale_string")
        return "".join(parts) if ok else None
    if t == "concatenation":
        values = [_value(c, feats, pieces) for c in node.children]
        if any(v is None for v in values):
            return None
        return "".join(v for v in values if v is not None)
    if t in ("test_operator", "regex", "extglob_pattern"):
        pieces.append((_t(node), True))
        return _t(node)
    if t == "variable_assignment":  # in declarations: NAME=VALUE
        pieces.append((_t(node), True))
        return None
    pieces.append((_t(node), True))
    if t == "translated_string":
        feats.add("locale_string")
    return None


def _unescape_unquoted(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text, flags=re.DOTALL)


def _unescape_double(text: str) -> str:
    # Inside "..", a backslash only escapes $ ` " \ and newline.
    return re.sub(r'\\([$`"\\\n])', lambda m: "" if m.group(1) == "\n" else m.group(1), text)


_ANSI = {"a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b", "f": "\f", "n": "\n", "r": "\r",
         "t": "\t", "v": "\v", "\\": "\\", "'": "'", '"': '"', "?": "?"}  # fmt: skip


def decode_ansi_c(body: str) -> str:
    """Decode the inside of ``$'..'`` as bash does (a NUL ends the string)."""
    out: list[str] = []
    i, n = 0, len(body)
    while i < n:
        c = body[i]
        if c != "\\" or i + 1 >= n:
            out.append(c)
            i += 1
            continue
        e = body[i + 1]
        if e in _ANSI:
            out.append(_ANSI[e])
            i += 2
        elif e in "01234567":
            m = re.match(r"[0-7]{1,3}", body[i + 1 :])
            assert m is not None
            out.append(chr(int(m.group(), 8) & 0xFF))
            i += 1 + len(m.group())
        elif e in "xuU":
            width = {"x": 2, "u": 4, "U": 8}[e]
            m = re.match(f"[0-9a-fA-F]{{1,{width}}}", body[i + 2 :])
            if m is None:
                out.append("\\" + e)
                i += 2
            else:
                code = int(m.group(), 16)
                out.append(chr(code) if code < 0x110000 else "\ufffd")
                i += 2 + len(m.group())
        elif e == "c" and i + 2 < n:
            out.append(chr(ord(body[i + 2]) & 0x1F))
            i += 3
        else:
            out.append("\\" + e)
            i += 2
    s = "".join(out)
    return s.split("\x00", 1)[0]


def _unescaped(skeleton: str) -> Iterator[tuple[int, str]]:
    i = 0
    while i < len(skeleton):
        if skeleton[i] == "\\":
            i += 2
            continue
        yield i, skeleton[i]
        i += 1


def _has_glob(skeleton: str) -> bool:
    chars = [c for _, c in _unescaped(skeleton)]
    if "*" in chars or "?" in chars:
        return True
    return "[" in chars and "]" in chars[chars.index("[") :]


def _has_brace(skeleton: str) -> bool:
    """An unquoted ``{..,..}`` or ``{a..b}``: bash expands it into several words."""
    chars = "".join(c for _, c in _unescaped(skeleton))
    depth_starts: list[int] = []
    for i, c in enumerate(chars):
        if c == "{":
            depth_starts.append(i)
        elif c == "}" and depth_starts:
            inner = chars[depth_starts.pop() + 1 : i]
            if "," in inner or ".." in inner:
                return True
    return False


# -- wrappers ----------------------------------------------------------------------------

# Programs that run (part of) their arguments as a command. For deny rules every suffix
# of the arguments that does not start with "-" is a candidate command: that over-matches
# (``timeout 5 rm`` yields ``5 rm`` and ``rm``) rather than miss an option syntax.
EXEC_WRAPPERS = frozenset(
    [
        "env", "nice", "timeout", "command", "builtin", "exec", "xargs", "time", "nohup",
        "stdbuf", "ionice", "chrt", "taskset", "sudo", "doas", "setsid", "unshare",
        "nsenter", "flock", "chroot", "strace", "ltrace", "coproc", "runuser", "caffeinate",
        "fakeroot", "firejail", "torsocks", "proxychains", "proxychains4", "valgrind",
        "systemd-run", "bwrap", "dbus-run-session", "xvfb-run", "sg", "pkexec", "unbuffer",
        "chpst", "setpriv", "prlimit", "numactl", "cgexec", "trickle", "entr", "npx",
        "bunx", "uvx", "pipx", "busybox", "parallel", "watch", "script",
        # run their operands as a program too (red team: each let a denied command by)
        "setarch", "linux32", "linux64", "i386", "x86_64", "uname26", "toybox",
        "eatmydata", "faketime", "chronic", "ifne", "catchsegv", "runcon", "ld.so",
        "nohup", "setlock", "envdir", "softlimit", "setuidgid", "daemonize", "tini",
        "dumb-init", "gosu", "su-exec", "rlwrap", "sem", "tsp", "with-lock-ex",
    ]
)  # fmt: skip
_RUN_SUBCOMMANDS = {
    "uv": ("run", "tool"), "poetry": ("run",), "pipenv": ("run",), "conda": ("run",),
    "pixi": ("run", "exec"), "hatch": ("run",), "pdm": ("run",), "rye": ("run",),
    "npm": ("exec", "x"), "pnpm": ("exec", "dlx"), "yarn": ("exec", "dlx"),
    "bundle": ("exec",), "mamba": ("run",), "micromamba": ("run",), "nix-shell": ("--run",),
}  # fmt: skip
WRAPPERS = EXEC_WRAPPERS | frozenset(_RUN_SUBCOMMANDS)

# The dynamic loader runs the program named by its first operand (``/lib64/ld-linux-x86-64.so.2
# /usr/bin/rm x``).
_LOADER = re.compile(r"ld(-linux[\w.-]*|-musl[\w.-]*|64)?\.so(\.[0-9]+)*")


def is_wrapper(name: str) -> bool:
    """Whether the program ``name`` (a basename) runs (part of) its arguments as a command."""
    return name in WRAPPERS or _LOADER.fullmatch(name) is not None


def inner_commands(words: tuple[Word, ...]) -> Iterator[tuple[Word, ...]]:
    """Every argument list that ``words`` may run as a command (see ``EXEC_WRAPPERS``)."""

    name = (words[0].value or "").rsplit("/", 1)[-1]
    if name == "find":
        i = 1
        while i < len(words):
            if words[i].value in ("-exec", "-execdir", "-ok", "-okdir"):
                j = i + 1
                while j < len(words) and words[j].value not in (";", "+"):
                    j += 1
                if j > i + 1:
                    yield words[i + 1 : j]
                i = j
            i += 1
        return
    start = 1
    if name in _RUN_SUBCOMMANDS:
        if len(words) < 2 or words[1].value not in _RUN_SUBCOMMANDS[name]:
            return
        start = 2
    for k in range(start, len(words)):
        w = words[k]
        v = w.value
        if v is None:
            yield words[k:]
            return  # what follows a computed word is unknowable
        if name == "env" and v.startswith("-") and v != "-":
            split = _env_split(words, k)
            if split is not None:
                yield from split
                return
        if not v.startswith("-") and v:
            yield words[k:]


_ENV_FLAGS = "iv0"  # GNU env's short options without a value (-C, -u, -S take one)


def _env_split(words: tuple[Word, ...], k: int) -> list[tuple[Word, ...]] | None:
    """What ``env`` runs when ``words[k]`` holds ``-S``/``--split-string`` (clustered as in
    ``-iS'rm x'``, abbreviated as in ``--spl='rm x'``): the split string's words read as
    env's own arguments again (they may hold options), or ``None`` when the word is not
    ``-S``. A string env itself expands (``${VAR}``, ``\\_``, ``#``) is unknowable."""
    from nb_tools.permissions._shell import Word

    v = words[k].value or ""
    text: str | None = None
    if v.startswith("--"):
        opt, eq, val = v[2:].partition("=")
        if not opt or not "split-string".startswith(opt):
            return None
        text = val if eq else None
        nxt = k + 2 if not eq else k + 1
    else:
        j = 1
        while j < len(v) and v[j] in _ENV_FLAGS:
            j += 1
        if j >= len(v) or v[j] != "S":
            return None
        text = v[j + 1 :] or None
        nxt = k + 2 if text is None else k + 1
    if text is None:  # the string is the next word
        if k + 1 >= len(words):
            return []
        text = words[k + 1].value
        if text is None:
            return [(words[k + 1],)]
    if re.search(r"[$\\#]", text):
        return [(Word(text=text, value=None),)]
    try:
        split = shlex.split(text)
    except ValueError:
        return [(Word(text=text, value=None),)]
    again = (words[0], *(Word(text=s, value=s) for s in split), *words[nxt:])
    return list(inner_commands(again))


_SHELLS = frozenset(["sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "rbash", "posh", "yash"])


def code_strings(
    words: list[Word], redirects: list[Redirect], features: set[str]
) -> list[tuple[str | None, str]]:
    """Code that this command runs from strings: ``sh -c STR``, ``eval``, ``trap``,
    ``alias``, ``source``; ``None`` for code that cannot be read."""
    name = (words[0].value or "").rsplit("/", 1)[-1]
    args = [w.value for w in words[1:]]
    if name in _SHELLS or (name == "busybox" and args[:1] == ["sh"]):
        if name == "busybox":
            args = args[1:]
        i = 0
        has_c = False
        while i < len(args):
            a = args[i]
            if a is None:
                return [(None, f"{name} with a computed option")]
            if a == "--" or a == "-":
                i += 1
                break
            if a in ("-o", "+o", "-O", "+O", "--rcfile", "--init-file"):
                i += 2
                continue
            if a.startswith("--"):
                i += 1
                continue
            if a[:1] in "-+" and len(a) > 1:
                has_c = has_c or "c" in a[1:]
                i += 1
                continue
            break
        rest = args[i:]
        if has_c:
            return [(rest[0] if rest else "", f"{name} -c")]
        if rest:
            return [(None, f"{name} running the script file {rest[0]!r}")]
        for r in redirects:
            if r.op == "<<<" and r.target is not None:
                return [(r.target, f"{name} <<<")]
        return [(None, f"{name} reading a script from its input")]
    if name == "eval":
        vals = [a for a in args if a != "--"]
        if any(a is None for a in vals):
            return [(None, "eval")]
        return [(" ".join(a for a in vals if a is not None), "eval")]
    if name in ("source", "."):
        return [(None, f"{name} {args[0] if args else ''}".strip())]
    if name == "trap":
        if args[:1] == ["--"]:  # `trap -- 'cmd' EXIT`
            args = args[1:]
        if args and args[0] not in ("-p", "-l", "-", "--") and args[0] is not None:
            return [(args[0], "trap")]
        if args and args[0] is None:
            return [(None, "trap")]
    if name in ("compgen", "complete"):  # -C runs a command to list the completions
        for i, a in enumerate(args):
            if a is None:
                return [(None, name)]
            if a.startswith("-") and not a.startswith("--") and "C" in a[1:]:
                rest = a[a.index("C", 1) + 1 :]
                code = rest or (args[i + 1] if i + 1 < len(args) else "")
                return [(code, f"{name} -C")]
    if name == "alias":
        features.add("alias")
        out: list[tuple[str | None, str]] = []
        for a in args:
            if a is None:
                out.append((None, "alias"))
            elif "=" in a:
                out.append((a.split("=", 1)[1], "alias"))
        return out
    if name in ("mapfile", "readarray"):
        for i, a in enumerate(args):
            if a == "-C":
                return [(args[i + 1] if i + 1 < len(args) else "", f"{name} -C")]
            if a is None:
                return [(None, name)]
    if name in ("su", "runuser", "flock", "script"):
        for i, a in enumerate(args):
            if a is None:
                return [(None, name)]
            if a in ("-c", "--command") and i + 1 < len(args):
                return [(args[i + 1], f"{name} -c")]
            if a.startswith("--command="):
                return [(a.split("=", 1)[1], f"{name} -c")]
            if a.startswith("-") and not a.startswith("--") and "c" in a[1:]:
                rest = a[a.index("c", 1) + 1 :]  # -qc 'cmd', -c'cmd'
                code = rest or (args[i + 1] if i + 1 < len(args) else "")
                return [(code, f"{name} -c")]
    if name == "watch":
        if None in args:
            return [(None, "watch")]
        return [(" ".join(a for a in args if a is not None and not a.startswith("-")), "watch")]
    if name == "hash" and any(a is None or a.startswith("-p") for a in args):
        return [(None, "hash -p maps a command name to another program")]
    if name == "enable" and any(a is None or a.startswith("-f") for a in args):
        return [(None, "enable -f loads code")]
    return []


# Variables whose value names a file of code that bash, the loader or an interpreter runs,
# or that change how every later command runs: setting one hides code from the parse.
_FILE_VARS = re.compile(
    r"BASH_ENV|ENV|LD_[A-Z_]+|GCONV_PATH|NODE_OPTIONS|PERL5OPT|PERL5LIB|PERLLIB|RUBYOPT|"
    r"RUBYLIB|PYTHONSTARTUP|PYTHONPATH|PYTHONHOME|SHELLOPTS|BASHOPTS|GIT_CONFIG\w*|"
    r"GIT_EXEC_PATH|GIT_DIR|GIT_TEMPLATE_DIR|LESSOPEN|LESSCLOSE|BASH_LOADABLES_PATH"
)
# Variables whose value is a command line that programs hand to a shell (git, man, less...).
_CODE_VARS = re.compile(
    r"PAGER|\w+_PAGER|EDITOR|VISUAL|\w+_EDITOR|GIT_EXTERNAL_DIFF|GIT_SSH|GIT_SSH_COMMAND|"
    r"\w*ASKPASS|GIT_PROXY_COMMAND|PROMPT_COMMAND|PS[0-4]|BROWSER|\w+_COMMAND"
)


def assignment_code(name: str, value: str | None) -> tuple[str | None, str] | None:
    """What setting ``name`` to ``value`` may run: ``(code, via)`` for a command line read
    by programs (``GIT_PAGER='rm x'``; code ``None`` when the value is not literal), or
    ``(None, reason)`` for a variable that loads code from a file (``BASH_ENV=f``,
    ``LD_PRELOAD=x.so``); ``None`` when it runs nothing."""
    if _FILE_VARS.fullmatch(name):
        return (None, f"setting {name} loads code the parse cannot see")
    if _CODE_VARS.fullmatch(name):
        return (value, f"{name}=")
    return None
