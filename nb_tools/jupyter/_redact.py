"""Secrets kept out of what the no-click kernel tools return: the one home of what looks
like a secret (``secret_name``, ``secret_label``) and of the text redaction every answer
of ``list_variables`` and ``describe`` goes through (``redact_secrets``; the live
``notebook_read`` uses its environment part).

Values under secret-looking names are hidden where they are read (dict keys, attributes,
``os.environ``, DataFrame columns and rows, Series names: ``HIDDEN``). But a copy carries
no such name (``list(os.environ.values())``, ``f"{k}={v}"`` lines, a connection string),
so the final text is also searched for:

- the value of every environment variable whose NAME looks secret (``ANTHROPIC_API_KEY``,
  ``GITHUB_TOKEN``, ``STRIPE_KEY``: ``secret_env_name``), and the password of every URL
  or ``password=`` pair in any environment variable (``DATABASE_URL``, ``HTTPS_PROXY``,
  ``PIP_INDEX_URL``): each value, and any piece of it of ``PIECE`` characters or more (a
  cut repr shows part of a long string), becomes ``<hidden: the value of $NAME>``;
- the password of a URL's userinfo (``postgres://u:pw@h/db``, ``redis://:pw@h``), or the
  whole userinfo when it is one long token (``https://ghp_...@github.com``);
- a PEM block other than a certificate or a public key (``-----BEGIN ... PRIVATE KEY-----``
  up to its END line, or up to where the text stops being base64 when it was cut);
- the value in ``NAME=value``, ``"name": value`` and ``'name'=value`` when the name looks
  like a secret (``NAME_SECRET_KEY=...`` lines, query strings, libpq DSNs, JSON);
- a ``Bearer`` token.
"""

from __future__ import annotations

import functools
import os
import re

__all__ = [
    "HIDDEN",
    "may_hold_secret_names",
    "redact_ends",
    "redact_secrets",
    "secret_env_name",
    "secret_label",
    "secret_name",
    "secret_values",
]

HIDDEN = "<hidden: the name looks like a secret>"
"""What stands for a value kept under a secret-looking name (``api_key``, ``*_TOKEN``...)."""
REDACTED = "<hidden: looks like a secret>"
"""What stands for a secret found in text by its shape (a URL password, a PEM block...)."""

_SECRET_WORDS = frozenset(
    [
        "token",
        "tokens",
        "secret",
        "secrets",
        "password",
        "passwords",
        "passwd",
        "pwd",
        "passphrase",
        "credential",
        "credentials",
        "cookie",
        "cookies",
        "apikey",
        "auth",
        "authorization",
        "bearer",
    ]
)
_KEY_KINDS = frozenset(
    ["api", "access", "secret", "private", "auth", "signing", "encryption", "client"]
)
_WORDS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")


def secret_name(key: object) -> bool:
    """Whether ``key`` (a str, or bytes as ``os.environ`` keeps them) names a secret: a
    word such as token, secret, password, credential, cookie or auth, or a key of a secret
    kind (``api_key``, ``AWS_SECRET_ACCESS_KEY``, ``privateKey``). The model is not shown
    such values without the user's approval; ``sort_key`` or ``monkey`` are not secrets."""
    if issubclass(type(key), bytes):
        key = bytes.decode(key, "latin-1")
    elif issubclass(type(key), str):
        key = str.__getitem__(key, slice(None))  # a subclass's text, by str's own code
    if type(key) is not str or len(key) > 200:
        return False
    words = [w.lower() for w in _WORDS.findall(key)]
    if any(w in _SECRET_WORDS for w in words):
        return True
    if _JOINED.search("".join(words)) or (len(words) > 1 and words[-1] == "pass"):
        return True  # dbpassword, PassWord, authtoken, DB_PASS
    return any(w == "key" and i and words[i - 1] in _KEY_KINDS for i, w in enumerate(words))


_JOINED = re.compile(r"password|passwd|passphrase|secret(?!ar)|credential|apikey|tokens?$")
"""Secret words inside a name written without separators (``dbpassword``, ``mysecret``,
``authtoken``; ``PassWord`` splits into two words), and ``pass`` as a name's last word
after another (``db_pass``, ``SMTP_PASS``); not ``tokenizer`` or ``secretary``."""


_SCREEN = tuple(
    w
    for w in _SECRET_WORDS | {"key", "pass", "credential"}
    if not any(o != w and o in w for o in _SECRET_WORDS | {"key", "pass", "credential"})
)
"""The secret words (and ``key``) that contain no other: one substring search each."""


def may_hold_secret_names(text: str) -> bool:
    """A quick screen: ``False`` when no part of ``text`` can make a secret name (none of
    the secret words nor ``key`` occurs in it), so a million labels are screened at once."""
    lowered = text.lower()
    return any(w in lowered for w in _SCREEN)


def secret_env_name(name: object) -> bool:
    """An environment variable whose value is a secret: a ``secret_name``, or one the
    sandbox withholds from the processes it starts (``STRIPE_KEY``, ``AWS_*``,
    ``JUPYTER_*``: ``nb_tools.sandbox.is_secret_name``)."""
    from nb_tools.sandbox import is_secret_name

    if type(name) is bytes:
        name = name.decode("latin-1")
    return type(name) is str and (secret_name(name) or is_secret_name(name))


def secret_label(label: object) -> bool:
    """A DataFrame column or row label, or a Series name, that names a secret: a secret
    name, or a tuple (a MultiIndex label) with one among its parts."""
    if type(label) is tuple:
        return any(secret_name(part) for part in label)
    return secret_name(label)


# -- secrets found by their shape ------------------------------------------------------

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
_PEM_SHOWN = ("CERTIFICATE", "PUBLIC KEY")
_NAME = r"(?:(?<![\w.\-\\])|(?<=\\[nrt]))[A-Za-z_][\w.\-]{0,100}"
"""An unquoted name: not the ``n`` of an escaped line break (``\\npassword``)."""
_ASSIGNED = re.compile(
    r"(?P<name>"
    + _NAME
    + r"|\"[^\"\n]{1,100}\"\]?|'[^'\n]{1,100}'\]?)"  # a quoted key: JSON, env["KEY"] =
    r"(?P<sep>[ \t]*(?:=|(?<=[\"']):)[ \t]*)"
    r"(?!<hidden)(?P<value>"
    # a quoted value up to its quote, or up to a cut or the line's end when it was cut
    r"\"(?:[^\"\\\n]|\\.)*?(?:\"|" + _CUT + r"|(?=\n)|$)"
    r"|'(?:[^'\\\n]|\\.)*?(?:'|" + _CUT + r"|(?=\n)|$)"
    r"|[^\s&;,'\"}\]\\]+)"
)
_COLON = re.compile(
    r"(?P<name>" + _NAME + r")(?P<sep>:[ \t]+)(?![^\r\n]*<hidden)(?P<value>[^\r\n\\'\"]+)"
)
"""``name: value`` to the line's end (a YAML line, an HTTP header, ``X-Api-Key: ...``);
not a line that already shows a hidden value (``api_key: str <hidden: ...>``)."""
_TOKENS = re.compile(
    r"(?<![A-Za-z0-9_\-])(?:"
    r"sk-ant-[A-Za-z0-9_\-]{20,}"  # Anthropic
    r"|sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{32,}"  # OpenAI
    r"|gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,}"  # GitHub
    r"|glpat-[A-Za-z0-9_\-]{20,}"  # GitLab
    r"|xox[abeprs]-[A-Za-z0-9\-]{10,}"  # Slack
    r"|hf_[A-Za-z0-9]{30,}"  # Hugging Face
    r"|AIza[0-9A-Za-z_\-]{35}"  # Google
    r"|[sr]k_live_[0-9A-Za-z]{20,}"  # Stripe
    r"|npm_[A-Za-z0-9]{36}|pypi-AgE[A-Za-z0-9_\-]{40,}"  # npm, PyPI
    r"|eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"  # a JWT
    r"|(?<=hooks\.slack\.com/)(?:services|workflows|triggers)/[A-Za-z0-9/_\-]{20,}"
    r"|(?<=/api/webhooks/)[0-9]{10,}/[A-Za-z0-9_\-]{20,}"  # Discord
    r")"
)
"""API keys and tokens known by their shape (their issuers' documented prefixes), under
whatever name they are kept, and the secret part of a Slack or Discord webhook URL."""
_BEARER = re.compile(r"(?i)\b(bearer\s+)(?!<hidden)[A-Za-z0-9._~+/=\-]{8,}")
_TOKEN_USER = 16
"""A URL's userinfo without a password is hidden from this length on (a token, not a
user name)."""


def _by_shape(text: str, known: dict[str, str]) -> str:
    """``text`` with the secrets found by their shape hidden; a secret that is the value
    of an environment variable (``known``: value -> name) is named after it."""

    def mark(value: str) -> str:
        name = known.get(value.strip("\"'"))
        return f"<hidden: the value of ${name}>" if name else REDACTED

    def url(m: re.Match[str]) -> str:
        user, pw, end = m["user"], m["pw"], m["cut"] or "@"
        if pw is not None:
            return f"{m['scheme']}{user}:{mark(pw)}{end}"
        if m["cut"] is None and len(user) >= _TOKEN_USER:
            return f"{m['scheme']}{mark(user)}@"
        return m[0]

    def pem(m: re.Match[str]) -> str:
        if any(kind in m["label"] for kind in _PEM_SHOWN) and "PRIVATE" not in m["label"]:
            return m[0]
        return f"-----BEGIN {m['label']}----- {REDACTED}"

    def assigned(m: re.Match[str]) -> str:
        if not secret_name(m["name"].strip("\"']")):
            return m[0]
        return f"{m['name']}{m['sep']}{mark(m['value'])}"

    if "-----BEGIN " in text:
        text = _PEM.sub(pem, text)
    if "://" in text:
        text = _URL_USERINFO.sub(url, text)
    text = _ASSIGNED.sub(assigned, text)
    if ":" in text:
        text = _COLON.sub(assigned, text)
    text = _TOKENS.sub(lambda m: mark(m[0]), text)
    return _BEARER.sub(lambda m: m[1] + mark(m[0][len(m[1]) :]), text)


# -- the environment's secrets, wherever they were copied ------------------------------

MIN_LENGTH = 8
"""Shorter values (``1``, ``true``) are flags, not secrets: hiding them would hide text."""
PIECE = 12
_NOT_SECRETS = frozenset(("PWD", "OLDPWD"))


def _passwords(value: str) -> list[str]:
    """The passwords a value holds: a URL's userinfo password (or token user), and the
    values of ``name=value`` pairs with a secret name (a libpq DSN's ``password=``)."""
    found = []
    for m in _URL_USERINFO.finditer(value):
        if m["pw"] is not None:
            found.append(m["pw"])
        elif len(m["user"]) >= _TOKEN_USER:
            found.append(m["user"])
    for m in _ASSIGNED.finditer(value):
        if secret_name(m["name"].strip("\"']")):
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
    return [*os.environ.items(), *_start_environment()]


def secret_values() -> list[tuple[str, str]]:
    """``(name, value)`` of the secrets the environment holds, now or when the process
    started (``_environments``): the values of secret-named variables, and the passwords
    in any variable's URLs or ``password=`` pairs; longest value first."""
    found = []
    for name, value in dict.fromkeys(_environments()):
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


def _hide(text: str, name: str, value: str) -> str:
    mark = f"<hidden: the value of ${name}>"
    if len(value) < PIECE:
        return text.replace(value, mark)
    pieces = {value[i : i + PIECE] for i in range(len(value) - PIECE + 1)}
    if not any(p in text for p in pieces):
        return text
    out: list[str] = []
    i = 0
    while i < len(text):
        if text[i : i + PIECE] in pieces:
            j = i + PIECE
            while j < len(text) and text[i : j + 1] in value:
                j += 1
            out.append(mark)
            i = j
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def redact_ends(text: str, keep: int, margin: int = 4000) -> str:
    """The first and last ``keep`` characters of a long ``text``, each with the secrets
    found by shape hidden, read with ``margin`` characters of context: a repr cut in the
    middle must not show the part of a secret whose name or scheme fell in the cut."""
    head = _by_shape(text[: keep + margin], {})[:keep]
    tail = _by_shape(text[-(keep + margin) :], {})[-keep:]
    return head + tail


def redact_secrets(text: str, *, shapes: bool = True) -> str:
    """``text`` with every secret the module docstring lists hidden; ``shapes=False``: the
    environment's secret values only (the live ``notebook_read``, whose text is the user's
    own source that the model edits by exact match)."""
    found = secret_values()
    if shapes:
        text = _by_shape(text, {value: name for name, value in reversed(found)})
    for name, value in found:
        text = _hide(text, name, value)
    return text
