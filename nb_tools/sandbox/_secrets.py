"""Secrets recognised by their text and by their names: the one home of what looks like a
secret, for every channel through which text reaches the model, or the person, without a
click (``bash`` output and its progress lines, ``read_file``, ``grep``, the notebook tools
on disk and live, ``list_variables`` and ``describe``) and for the environment the sandbox
withholds. Its parts: names in ``_secret_names``, private keys line for line in
``_secret_keys``, programs' formats and encoded copies in ``_secret_formats``; this module
is the one the others import.

Names (:func:`secret_name`): a word such as token, secret, password, credential, cookie or
auth, or a key of a secret kind (``api_key``, ``AWS_SECRET_ACCESS_KEY``, ``privateKey``);
``sort_key`` and ``monkey`` are not. An environment variable (:func:`secret_env_name`) is
judged more widely, since ``*_KEY`` there is almost always a credential: a secret name, a
word ``key`` or ``session`` in it, a last word ending in ``key``, or a prefix of a
credential-holding program (``ENV_PREFIXES``: ``AWS_``, ``JUPYTER_``...).

Text (:func:`redact_secret_text`, the one function the channels call), in this order:

1. private keys, line for line (:func:`redact_private_keys`, from ``_secret_keys``): a
   PEM block whose label is not a public kind (``PEM_SHOWN``: certificates, public keys,
   signatures, parameters), its base64 lines cut from their BEGIN line, 64/70-wide
   random base64 runs, a PuTTY key's ``Private-Lines``; each line reads ``KEY_HIDDEN``,
   so line numbers still hold;
2. secrets by their shape (:func:`redact_shapes`): a URL's userinfo password (or the
   whole userinfo when it is one long token); the value in ``NAME=value``,
   ``export NAME=value``, ``"name": "value"``, ``name: value`` when the name is a secret
   name and the value is a literal (quoted, or one word that is not code: an identifier
   without digits, a call, an attribute, ``$VAR`` or ``{var}`` stays); the token shapes
   of ``TOKEN_SHAPES`` (their issuers' documented prefixes) under any name; a
   ``Bearer``/``Basic`` credential; each becomes ``SECRET_HIDDEN``;
3. the value of every secret-named variable of this process's environment, and every
   password in its URLs, wherever it was copied (:func:`hide_environment_values`).

A person's click on a call shows them its text: ``approved=True`` hides private keys only
(the model never needs a private key's bytes).
"""

from __future__ import annotations

import functools
import os
import re
from dataclasses import dataclass

from nb_tools.sandbox._secret_formats import (
    ENCODINGS,
    SCREENS,
    encodings,
    redact_line_formats,
    redact_text_formats,
)
from nb_tools.sandbox._secret_keys import (
    KEY_HIDDEN,
    PEM_SHOWN,
    hidden_pem_kind,
    holds_private_key,
    redact_private_keys,
)
from nb_tools.sandbox._secret_names import (
    ENV_PREFIXES,
    NAME_HIDDEN,
    SCREEN,
    SECRET_HIDDEN,
    SECRET_WORDS,
    may_hold_secret_names,
    secret_env_name,
    secret_label,
    secret_name,
    words_of,
)

__all__ = [
    "ENCODINGS",
    "ENV_PREFIXES",
    "KEY_HIDDEN",
    "NAME_HIDDEN",
    "PEM_SHOWN",
    "PIECE",
    "SECRET_HIDDEN",
    "SECRET_WORDS",
    "TOKEN_SHAPES",
    "SecretStream",
    "TokenShape",
    "hide_environment_values",
    "holds_private_key",
    "may_hold_secret_names",
    "redact_ends",
    "redact_private_keys",
    "redact_secret_text",
    "redact_shapes",
    "secret_env_name",
    "secret_label",
    "secret_name",
    "secret_values",
]


# -- secrets found by their shape ------------------------------------------------------


@dataclass(frozen=True)
class TokenShape:
    """An API key or token known by its issuer's documented shape: ``what`` it is,
    ``shape`` as the docs show it, ``regex``, and ``sample``, a made-up value of that
    shape for the tests (built, so this source holds no token a scanner would flag)."""

    what: str
    shape: str
    regex: str
    sample: str


_R = "Xq7Zr2Kp9Lm4Nw8Bt3Vy6Hc1Df5Gs0Ja"  # 32 made-up characters for the samples
TOKEN_SHAPES = (
    TokenShape(
        "Anthropic API key", "sk-ant-…", r"sk-ant-[A-Za-z0-9_\-]{20,}", "sk-ant-api03-" + _R
    ),
    TokenShape(
        "OpenAI API key",
        "sk-… (32+), sk-proj-…",
        r"sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{32,}",
        "sk-proj-" + _R,
    ),
    TokenShape(
        "AWS access key id",
        "AKIA…, ASIA… (16)",
        r"(?:AKIA|ASIA)[0-9A-Z]{16}",
        "AKIA" + _R.upper()[:16],
    ),
    TokenShape(
        "GitHub token",
        "ghp_…, gho_…, ghu_…, ghs_…, ghr_…, github_pat_…",
        r"gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,}",
        "ghp_" + _R,
    ),
    TokenShape("GitLab token", "glpat-…", r"glpat-[A-Za-z0-9_\-]{20,}", "glpat-" + _R[:20]),
    TokenShape(
        "Slack token",
        "xoxb-…, xoxp-… (xox[abeprs]-)",
        r"xox[abeprs]-[A-Za-z0-9\-]{10,}",
        "xoxb-1234567890-" + _R[:12],
    ),
    TokenShape("Hugging Face token", "hf_…", r"hf_[A-Za-z0-9]{30,}", "hf_" + _R),
    TokenShape("Google API key", "AIza… (39)", r"AIza[0-9A-Za-z_\-]{35}", "AIza" + _R + "abc"),
    TokenShape(
        "Stripe key", "sk_live_…, rk_live_…", r"[sr]k_live_[0-9A-Za-z]{20,}", "sk_live_" + _R
    ),
    TokenShape("npm token", "npm_… (36)", r"npm_[A-Za-z0-9]{36}", "npm_" + _R + "abcd"),
    TokenShape("PyPI token", "pypi-AgE…", r"pypi-AgE[A-Za-z0-9_\-]{40,}", "pypi-AgE" + _R + _R[:8]),
    TokenShape(
        "JSON Web Token",
        "eyJ….eyJ….…",
        r"eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}",
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0." + _R,
    ),
    TokenShape(
        "Slack webhook path",
        "hooks.slack.com/services/…",
        r"(?<=hooks\.slack\.com/)(?:services|workflows|triggers)/[A-Za-z0-9/_\-]{20,}",
        "https://hooks.slack.com/services/T0000/B0000/" + _R,
    ),
    TokenShape(
        "Discord webhook path",
        "/api/webhooks/<id>/…",
        r"(?<=/api/webhooks/)[0-9]{10,}/[A-Za-z0-9_\-]{20,}",
        "https://discord.com/api/webhooks/1234567890123/" + _R,
    ),
)
"""Tokens hidden by their shape under whatever name they are kept (docs/sandbox.md)."""
_TOKENS = re.compile(
    r"(?<![A-Za-z0-9_\-])(?:" + "|".join(f"(?:{t.regex})" for t in TOKEN_SHAPES) + r")"
)

_CUT = r"(?:\.\.\.|…)"
"""Where pandas or a repr cut a text: the secret's end (its ``@``, its quote) may be gone."""
_URL_USERINFO = re.compile(
    r"(?P<scheme>\b[A-Za-z][A-Za-z0-9+.\-]*://)(?P<user>[^\s:@/'\"<>\\]*)"
    r"(?::(?P<pw>[^\s@'\"<>\\]+?))?(?:@|(?P<cut>" + _CUT + "))"
)
_NEWLINES = r"(?:\\[rn]|[\r\n])"
_PEM = re.compile(
    r"-----BEGIN (?P<label>[A-Z0-9 ]{1,60})-----"
    # base64 and header lines, each ending where a line, a cut, the END line or the text does
    r"(?:(?:"
    + _NEWLINES
    + r"|"
    + _CUT
    + r")+(?:[A-Za-z0-9+/=]{1,100}|[A-Za-z][A-Za-z\-]*: [^\r\n\\]{0,200})"
    r"(?=" + _NEWLINES + r"|" + _CUT + r"|-----|['\"]|$))*"
    r"(?:" + _CUT + r")?(?:" + _NEWLINES + r"*-----END [A-Z0-9 ]{1,60}-----)?"
)
"""A PEM block written with escaped line breaks or cut by a repr (real lines are hidden
line for line above)."""
_NAME = r"(?:(?<![\w.\-\\])|(?<=\\[nrt]))[A-Za-z_][\w.\-]{0,100}"
"""An unquoted name: not the ``n`` of an escaped line break (``\\npassword``)."""
_ASSIGNED = re.compile(
    r"(?P<name>"
    + _NAME
    + r"|\"[^\"\n]{1,100}\"\]?|'[^'\n]{1,100}'\]?)"  # a quoted key: JSON, env["KEY"] =
    # `=`, `=>` (Ruby, PHP), `:=` (Go), `"key" : "v"` with any spacing
    r"(?P<sep>[ \t]*(?:=>?|:=)[ \t]*|(?<=[\"'])[ \t]*:[ \t]*)"
    r"(?!<hidden)(?P<value>"
    # JSON escaped inside a string (a log line, JSON in JSON): \"value\", \\\"value\\\"
    r"(?P<esc>\\+)\"[^\"\\\n]*(?:(?P=esc)\"|" + _CUT + r"|(?=\n)|$)"
    # a quoted value up to its quote, or up to a cut or the line's end when it was cut
    r"|\"(?:[^\"\\\n]|\\.)*?(?:\"|" + _CUT + r"|(?=\n)|$)"
    r"|'(?:[^'\\\n]|\\.)*?(?:'|" + _CUT + r"|(?=\n)|$)"
    r"|[^\s&;,'\"}\]\\(]+)"
)
_COLON = re.compile(
    r"(?P<name>" + _NAME + r")(?P<sep>:[ \t]+)(?!<hidden)"
    r"(?P<value>\"[^\"\r\n\\]*\"|'[^'\r\n\\]*'|[^\s'\"\\]+)"
    r"(?=[ \t]*(?:#[^\r\n]*)?(?:$|\\[rn]|[\r\n]|['\"]))",
    re.MULTILINE,
)
"""``name: value`` as the line's one word or quoted text (a YAML line, an HTTP header,
``X-Api-Key: ...``); a type annotation (``api_key: str = ""``) is code."""
_BEARER = re.compile(r"(?i)\b((?:bearer|basic)\s+)(?!<hidden)([A-Za-z0-9._~+/=\-]{8,})")
_AUTHORIZATION = re.compile(
    r"(?i)(\bauthorization\b[\"']?[ \t]*[:=][ \t]*[\"']?[A-Za-z][\w\-]*[ \t]+)"
    r"(?!<hidden)([^\s'\"]{8,})"
)
"""``Authorization: <scheme> <credential>`` for any scheme (``token``, ``Digest``, ``AWS4-...``)."""
_CODE = re.compile(r"[A-Za-z_]+|[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+")
"""An unquoted value that is code, not a secret: an identifier without digits, or a
dotted name (``password = getpass``, ``token = self.token``, ``api_key: str``)."""
_SHORTEST = 6
"""An unquoted value shorter than this is a flag or a setting (``1``, ``true``, ``off``)."""
_STRING_PREFIXES = frozenset(["f", "b", "r", "u", "rb", "br", "fr", "rf"])
_KEYWORDS = frozenset(["None", "True", "False", "null", "true", "false", "nil", "undefined"])
_TEMPLATE = ("{", "$", "<hidden", "%")
"""A URL password that is a placeholder: ``f"{user}:{password}@"``, ``$PASS``."""
_TOKEN_USER = 16
"""A URL's userinfo without a password is hidden from this length on (a token, not a
user name)."""


_TOKEN_TRIGGERS = (
    "sk-", "k_live_", "akia", "asia", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_",
    "glpat-", "xox", "hf_", "aiza", "npm_", "pypi-", "eyj", "/api/webhooks/", "hooks.slack",
)  # fmt: skip
"""What a line (lowered) holds when it may hold one of ``TOKEN_SHAPES``."""
_TRIGGERS = ("://", "bearer", "basic", *_TOKEN_TRIGGERS, *SCREEN, *SCREENS)
"""What a line (lowered) must hold to be searched for shapes: a scheme, a token's prefix,
a secret word; the other lines are skipped at C speed."""


def _triggered(lowered: str) -> bool:
    return any(word in lowered for word in _TRIGGERS)


_ABOUT = frozenset([
    "name", "names", "id", "ids", "type", "kind", "path", "file", "filename", "dir", "url",
    "uri", "endpoint", "field", "header", "env", "var", "length", "len", "count", "min", "max",
    "policy", "prompt", "label", "format", "regex", "pattern", "hint", "help", "prefix",
    "suffix", "style", "version", "expiry", "expires", "ttl", "timeout", "scope", "scopes",
    "mode", "provider", "source", "location", "arn", "store", "manager", "reset", "required",
    "enabled", "stdin", "resource", "scheme", "method", "methods", "class", "handler",
    "backend", "flow", "level", "strategy", "service", "error", "exception", "vars",
])  # fmt: skip
"""A name whose last word is one of these is about a secret, not one (``secret_name``,
``token_type``, ``password_file``, ``--password-stdin``): its text value is shown."""
_TYPES = frozenset([
    "str", "bytes", "int", "float", "bool", "dict", "list", "tuple", "set", "object", "any",
    "none", "optional", "string", "number", "boolean", "integer", "text",
])  # fmt: skip
"""A one-word value of ``name: value`` that is a type (``api_key: str``), not a secret."""
_PLACEHOLDER = re.compile(r"(?i)(.)\1{2,}|<[^<>]*>|your[ _\-][\w \-]*|…")
"""A quoted value that stands for a secret to fill in (``"xxx"``, ``"***"``,
``"<your key>"``, ``"your-api-key"``); ``"changeme"`` may be the password in use: hidden."""


def _echoes(inner: str, name: str) -> bool:
    """Whether a quoted value only repeats its name or a secret word: a constant naming
    a kind of secret (``GRANT_TYPE_REFRESH_TOKEN = "refresh_token"``,
    ``auth_scheme_default = "token"``), not a secret."""
    word = inner.lower().replace("-", "_")
    return word in SECRET_WORDS or word == "authorization" or ("_" in word and word in name.lower())


def _tokenish(value: str) -> bool:
    """Whether the word after ``Bearer``/``Basic`` is a credential, not prose
    (``Basic authentication``, ``jwt-bearer exchange``): a digit, a capital after its
    first letter, or a character of base64 or a token (``+/=._~-``)."""
    value = value.rstrip(".,;:)")  # the end of a sentence
    return (
        any(c.isdigit() for c in value)
        or any(c.isupper() for c in value[1:])
        or any(c in "+/=._~-" for c in value)
    )


_COUNTS = frozenset(["max", "min", "num", "n", "total", "count"])
"""A name whose first word is one of these counts secrets (``max_tokens``), holds none."""
_TEMPLATE_REF = re.compile(r"\{[A-Za-z_][\w.]*\}")
_NOT_A_VALUE = re.compile(
    r"\{[A-Za-z_][\w.]*\}|\A[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\Z|\Aurn:[a-z0-9\-]+:"
)
"""A quoted text that is a template (``"{auth_scheme} {auth_token}"``), the name of an
environment variable (``ENV_API_KEY = "ANTHROPIC_API_KEY"``) or a URN, not a secret."""


def _text_name(name: str) -> bool:
    """A name in a text whose value is a secret: a :func:`secret_name` whose last word
    does not make it a name about a secret (``_ABOUT``)."""
    if not secret_name(name):
        return False
    words = words_of(name)
    return not (len(words) > 1 and (words[-1] in _ABOUT or words[0] in _COUNTS))


def _literal(value: str, after: str, *, data: bool = False, name: str = "") -> bool:
    """Whether an assigned ``value`` (followed by ``after``) is a secret literal and not
    code, a reference or a placeholder. ``data``: the line is data, not code (a YAML
    ``name: value``, a shell or ``.env`` ``NAME=value``), where a bare word is a value."""
    if value[:1] in "\"'\\":
        inner = value.strip("\"'\\")
        return (
            any(c.isalnum() for c in inner)  # not ", " or "/"
            and not inner.startswith(("<hidden", "${", "{{"))
            and not inner.endswith(" ")  # "token " + value: a prefix
            and not _PLACEHOLDER.fullmatch(inner)
            and not _NOT_A_VALUE.search(inner)
            and not (name and _echoes(inner, name))
        )
    value = value.rstrip(",;:)`")  # the end of a call's argument, of a quote in a docstring
    if _TEMPLATE_REF.search(value):
        return False  # cookie={user_cookie}
    if len(value) < _SHORTEST or value in _KEYWORDS or value.startswith(("$", "%", "{", "<")):
        return False  # a flag or a number (TOKEN = 1), a reference, a placeholder
    if "[" in value or after[:1] in ("(", "["):
        return False  # a call, a subscript
    if after[:1] in ("'", '"') and value.lower() in _STRING_PREFIXES:
        return False  # password = f"{...}"
    if data and value.isalpha() and value.lower() not in _TYPES and not value[0].isupper():
        return True  # password: changeme, DB_PASSWORD=correcthorse (no code there)
    return not (_CODE.fullmatch(value) and ("." in value or len(value) < 24))


def redact_shapes(text: str, known: dict[str, str] | None = None) -> tuple[str, int]:
    """``text`` with the secrets found by their shape hidden (the module's step 2), and
    how many; a secret that is the value of an environment variable (``known``: value ->
    name) is named after it."""
    known = known or {}
    found = 0

    def mark(value: str) -> str:
        nonlocal found
        found += 1
        name = known.get(value.strip("\"'\\"))
        return f"<hidden: the value of ${name}>" if name else SECRET_HIDDEN

    def url(m: re.Match[str]) -> str:
        user, pw, end = m["user"], m["pw"], m["cut"] or "@"
        if pw is not None:
            if pw.startswith(_TEMPLATE):
                return m[0]  # a template: f"{user}:{password}@"
            return f"{m['scheme']}{user}:{mark(pw)}{end}"
        if m["cut"] is None and len(user) >= _TOKEN_USER and not user.startswith(("{", "$")):
            return f"{m['scheme']}{mark(user)}@"
        return m[0]

    def pem(m: re.Match[str]) -> str:
        if (
            not hidden_pem_kind(m["label"])
            or "\n" in m[0]
            or m.end() - m.start() <= len(m["label"]) + 16
        ):
            return m[0]  # public, or real lines (hidden line for line), or no body
        return f"-----BEGIN {m['label']}----- {mark('')}"

    def assigned(m: re.Match[str], *, colon: bool = False) -> str:
        name = m["name"].strip("\"'\\]")
        if not _text_name(name):
            value = m["value"]
            # a JSON text escaped in this string, or pairs inside a quoted value (a
            # connection string assigned in code: conn = "Server=h;Password=x;")
            if not colon and ("\\" in value or (value[:1] in "\"'" and "=" in value[1:])):
                return m[0][: m.start("value") - m.start()] + _ASSIGNED.sub(assigned, value)
            return m[0]
        before = m.string[m.string.rfind("\n", 0, m.start()) + 1 : m.start()].strip()
        data = (colon and before in ("", "-")) or (
            m["sep"] == "=" and name.isupper() and name == m["name"]
        )
        if not _literal(m["value"], m.string[m.end() : m.end() + 1], data=data, name=name):
            return m[0]
        return f"{m['name']}{m['sep']}{mark(m['value'])}"

    def flag_value(value: str) -> bool:
        return _literal(value, "", data=True)

    def line(text: str) -> str:
        lowered = text.lower()
        if "://" in text:
            text = _URL_USERINFO.sub(url, text)
        if any(word in lowered for word in SCREEN):
            if "=" in text or ":" in text:
                text = _ASSIGNED.sub(assigned, text)
            if ":" in text:
                text = _COLON.sub(lambda m: assigned(m, colon=True), text)
            text = redact_line_formats(text, lowered, mark, _text_name, flag_value)
        elif any(word in lowered for word in SCREENS):
            text = redact_line_formats(text, lowered, mark, _text_name, flag_value)
        if any(word in lowered for word in _TOKEN_TRIGGERS):
            text = _TOKENS.sub(lambda m: mark(m[0]), text)
        if "authorization" in lowered:
            text = _AUTHORIZATION.sub(
                lambda m: m[1] + mark(m[2]) if _tokenish(m[2]) else m[0], text
            )
        if "bearer" in lowered or "basic" in lowered:
            text = _BEARER.sub(lambda m: m[1] + mark(m[2]) if _tokenish(m[2]) else m[0], text)
        return text

    if "-----BEGIN " in text:
        text = _PEM.sub(pem, text)
    lowered = text.lower()
    formatted = redact_text_formats(text, lowered, mark)
    if formatted is not text:
        text, lowered = formatted, formatted.lower()
    if len(lowered) != len(text):  # a letter whose lower case is longer: no offsets
        lines = text.split("\n")
        return "\n".join(line(x) if _triggered(x.lower()) else x for x in lines), found
    starts = set()  # the lines that hold a trigger: the others are skipped at C speed
    for word in _TRIGGERS:
        i = lowered.find(word)
        while i >= 0:
            start = text.rfind("\n", 0, i) + 1
            starts.add(start)
            end = text.find("\n", i)
            i = -1 if end < 0 else lowered.find(word, end)
    out: list[str] = []
    done = 0
    for start in sorted(starts):
        end = text.find("\n", start)
        end = len(text) if end < 0 else end
        out += [text[done:start], line(text[start:end])]
        done = end
    out.append(text[done:])
    return "".join(out), found


# -- the environment's secrets, wherever they were copied ------------------------------

MIN_LENGTH = 8
"""Shorter values (``1``, ``true``) are flags, not secrets: hiding them would hide text."""
PIECE = 12
"""A secret value is hidden in pieces of this length too (a cut repr shows part of it)."""
_NOT_SECRETS = frozenset(("PWD", "OLDPWD"))


def _passwords(value: str) -> list[str]:
    """The passwords a value holds: a URL's userinfo password (or token user), and the
    values of ``name=value`` pairs with a secret name (a libpq DSN's ``password=``)."""
    found = []
    for m in _URL_USERINFO.finditer(value):
        if m["pw"] is not None:
            if not m["pw"].startswith(_TEMPLATE):
                found.append(m["pw"])
        elif len(m["user"]) >= _TOKEN_USER:
            found.append(m["user"])
    for m in _ASSIGNED.finditer(value):
        after = value[m.end() : m.end() + 1]
        if secret_name(m["name"].strip("\"']")) and _literal(m["value"], after):
            found.append(m["value"].strip("\"'"))
    return found


@functools.cache
def _start_environment() -> tuple[tuple[str, str], ...]:
    """The environment the process started with, as the kernel got it (Linux:
    ``/proc/self/environ``, which ``os.environ.pop`` and ``del`` do not change)."""
    try:
        with open("/proc/self/environ", "rb") as f:
            raw = f.read()
    except OSError:
        return ()
    pairs = (entry.partition(b"=") for entry in raw.split(b"\0") if b"=" in entry)
    return tuple((os.fsdecode(k), os.fsdecode(v)) for k, _, v in pairs)


def _environments() -> list[tuple[str, str]]:
    """The variables of ``os.environ`` and of the environment the process started with: a
    key the user took out of ``os.environ`` into a variable
    (``pw = os.environ.pop("PGPASSWORD")``) is still a secret."""
    return list(dict.fromkeys([*os.environ.items(), *_start_environment()]))


_seen: tuple[int, list[tuple[str, str]]] = (0, [])


def secret_values() -> list[tuple[str, str]]:
    """``(name, value)`` of the secrets this process's environment holds, now or when it
    started (``_environments``): the values of secret-named variables
    (:func:`secret_env_name`), and the passwords in any variable's URLs or ``password=``
    pairs; longest value first. Kept while the environment is unchanged."""
    global _seen
    key = hash(frozenset(os.environ.items()))
    if _seen[0] != key or not key:
        _seen = (key, _secret_values())
    return list(_seen[1])


def _secret_values() -> list[tuple[str, str]]:
    found = []
    for name, value in _environments():
        if name in _NOT_SECRETS:
            continue
        if secret_env_name(name):
            if len(value) >= MIN_LENGTH and not os.path.exists(value):
                found.append((name, value))  # a path (a credentials FILE's name) is not
            continue
        if "@" in value or "=" in value:
            for pw in _passwords(value):
                if len(pw) >= MIN_LENGTH:
                    found.append((name, pw))
    return sorted(found, key=lambda nv: -len(nv[1]))


def _hide(text: str, name: str, value: str) -> tuple[str, int]:
    mark = f"<hidden: the value of ${name}>"
    if len(value) < PIECE:
        return text.replace(value, mark), text.count(value)
    pieces = {value[i : i + PIECE] for i in range(len(value) - PIECE + 1)}
    if not any(p in text for p in pieces):
        return text, 0
    out: list[str] = []
    found = 0
    i = 0
    while i < len(text):
        if text[i : i + PIECE] in pieces:
            j = i + PIECE
            while j < len(text) and text[i : j + 1] in value:
                j += 1
            out.append(mark)
            found += 1
            i = j
        else:
            out.append(text[i])
            i += 1
    return "".join(out), found


def hide_environment_values(
    text: str, found: list[tuple[str, str]] | None = None
) -> tuple[str, int]:
    """``text`` with the environment's secret values (:func:`secret_values`, or ``found``)
    and any piece of ``PIECE`` characters of one, each named ``<hidden: the value of
    $NAME>``; and how many."""
    total = 0
    for name, value in secret_values() if found is None else found:
        text, n = _hide(text, name, value)
        total += n
        for how, encoded in encodings(value, MIN_LENGTH):
            if encoded in text:
                total += text.count(encoded)
                text = text.replace(encoded, f"<hidden: the value of ${name}, {how}>")
    return text, total


# -- the one function the channels call -------------------------------------------------


def redact_secret_text(text: str, *, approved: bool = False) -> tuple[str, int]:
    """``text`` with every secret the module lists hidden, and how many were. With
    ``approved`` (a person clicked this very call, to see its text), only private keys
    are hidden. Line breaks are kept one for one."""
    if not text:
        return text, 0
    text, found = redact_private_keys(text)
    if approved:
        return text, found
    env = secret_values()
    text, shaped = redact_shapes(text, {value: name for name, value in reversed(env)})
    text, copied = hide_environment_values(text, env)
    return text, found + shaped + copied


def redact_ends(text: str, keep: int, margin: int = 4000) -> str:
    """The first and last ``keep`` characters of a long ``text``, each with the secrets
    found by shape hidden, read with ``margin`` characters of context: a repr cut in the
    middle must not show the part of a secret whose name or scheme fell in the cut."""
    head = redact_shapes(redact_private_keys(text[: keep + margin])[0])[0][:keep]
    tail = redact_shapes(redact_private_keys(text[-(keep + margin) :])[0])[0][-keep:]
    return head + tail


class SecretStream:
    """Redaction of a text that arrives in chunks (a streaming call's progress): a line
    is searched only once it is whole, so a secret cut at a chunk's edge is seen whole.
    :meth:`feed` returns what can be shown now (the whole lines so far, redacted) and
    keeps the unfinished last line, up to ``hold`` characters (a longer one is shown,
    redacted as it is); ``cut=True`` says the chunk starts after a gap (its first line
    lost its beginning, and with it maybe a secret's name): that line is not shown.
    :meth:`finish` returns the rest."""

    def __init__(self, *, approved: bool = False, hold: int = 4000) -> None:
        self.approved = approved
        self.hold = hold
        self._held = ""

    def feed(self, text: str, *, cut: bool = False) -> str:
        if cut:
            self._held = ""
            end = text.find("\n")
            text = "… [a line cut by the gap not shown]\n" + text[end + 1 :] if end >= 0 else ""
        text = self._held + text
        end = max(text.rfind("\n"), text.rfind("\r")) + 1
        if len(text) - end > self.hold:
            end = len(text)
        self._held = text[end:]
        return redact_secret_text(text[:end], approved=self.approved)[0] if end else ""

    def finish(self) -> str:
        text, self._held = self._held, ""
        return redact_secret_text(text, approved=self.approved)[0] if text else ""
