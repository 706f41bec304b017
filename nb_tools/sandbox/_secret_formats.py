"""Secrets in the formats of particular programs, for ``_secrets`` (the one home of what
looks like a secret): the parts of :func:`~nb_tools.sandbox._secrets.redact_shapes` that
read a text as a ``.netrc``, a ``.pgpass`` line, a Kubernetes Secret's ``data:``, an XML
element, or a command line that passes a password (``curl -u user:pass``,
``--password=...``, ``mysql -pPASS``, ``sshpass -p``, ``redis-cli -a``).

Each pass is screened by a substring search first, so a text without the format's marks
costs one search; the value found is handed to ``mark`` (which counts it and names the
replacement); ``is_name(name)`` says whether a flag's or an element's name is secret.
"""

from __future__ import annotations

import base64
import functools
import re
import urllib.parse
from collections.abc import Callable

__all__ = [
    "COMMANDS",
    "ENCODINGS",
    "SCREENS",
    "encodings",
    "redact_line_formats",
    "redact_text_formats",
]

Mark = Callable[[str], str]

_VALUE = r"(?P<value>\"[^\"\n]*\"|'[^'\n]*'|[^\s'\"<>|;&]+)"
COMMANDS: tuple[tuple[str, str, str], ...] = (
    (
        "curl, wget, httpie: a user and password",
        "curl",
        r"\bcurl\b[^\n|;&]*?\s(?:-u|--user|-U|--proxy-user)(?:[ \t]+|=)?['\"]?[^\s:'\"]*:"
        r"(?P<value>[^\s'\"]+)",
    ),
    (
        "MySQL's password glued to -p",
        "mysql",
        r"\bmysql(?:dump|admin|import|sh)?\b[^\n|;&]*?\s-p(?P<value>[^\s'\"]+)",
    ),
    ("sshpass -p", "sshpass", r"\bsshpass\b[^\n|;&]*?\s-p[ \t]*" + _VALUE),
    ("redis-cli -a", "redis-cli", r"\bredis-cli\b[^\n|;&]*?\s-a[ \t]+" + _VALUE),
)
"""Command lines that carry a password under a short flag: (what, screen, regex)."""
_COMMANDS = [(screen, re.compile(rx)) for _what, screen, rx in COMMANDS]
SCREENS = tuple(screen for _what, screen, _rx in COMMANDS)
"""What a line (lowered) holds when one of ``COMMANDS`` may match in it."""

_FLAG = re.compile(
    r"(?<![\w\-])--?(?P<name>[A-Za-z][\w\-]{1,60})(?:=|[ \t]+)(?!-|<hidden)" + _VALUE
)
"""``--password=x``, ``--api-key x``, ``-password x`` (a flag whose name is secret)."""
_NETRC = re.compile(
    r"(?:\bmachine[ \t\n]+\S+|\bdefault\b)(?:[ \t\n]+(?:login|account|port)[ \t\n]+\S+)*"
    r"[ \t\n]+(?:password|passwd)[ \t\n]+(?P<value>(?!<hidden)\S+)"
)
_NETRC_SCREENS = tuple(
    re.compile(word + r"[ \t\n]+(?:\S+[ \t\n]+)?(?:login|account|port|password|passwd)[ \t\n]")
    for word in ("machine", "default")
)
"""Where a ``.netrc`` entry starts: each search starts with its literal word (fast)."""
_PGPASS = re.compile(
    r"^(?:[A-Za-z0-9.\-\[\]*]+|/\S*):(?:\d{2,5}|\*):[^:\s]+:[^:\s]+:(?P<value>[^\s]+)$",
    re.MULTILINE,
)
"""``host:port:database:user:password``, a line of ``.pgpass``."""
_PGPASS_SCREEN = re.compile(r":(?:\d{2,5}|\*):[^:\s]+:[^:\s]+:\S")
"""A ``.pgpass`` line's port and what follows: a search that starts at a colon (fast)."""
_XML = re.compile(r"<(?P<name>[A-Za-z_][\w.\-]{0,60})>(?P<value>[^<>\n]{1,500})</(?P=name)>")
_K8S_KIND = re.compile(r"kind:[ \t]*Secret[ \t]*$", re.MULTILINE)
"""A manifest's ``kind: Secret`` line: a search that starts with its literal (fast)."""
_K8S_DATA = re.compile(
    r"(?m)^(?P<indent>[ \t]*)(?:data|stringData):[ \t]*\n"
    r"(?P<body>(?:(?P=indent)[ \t]+\S[^\n]*\n?)+)"
)
_K8S_ENTRY = re.compile(
    r"(?m)^(?P<pre>[ \t]+[\"']?[\w.\-]+[\"']?:[ \t]*)"
    r"(?!<hidden|[|>][-+]?[ \t]*$)(?P<value>\S[^\n]*)$"
)


def _sub(rx: re.Pattern[str], text: str, mark: Mark) -> str:
    def one(m: re.Match[str]) -> str:
        s, e = m.span("value")
        return m[0][: s - m.start()] + mark(m["value"]) + m[0][e - m.start() :]

    return rx.sub(one, text)


def redact_line_formats(
    text: str,
    lowered: str,
    mark: Mark,
    is_name: Callable[[str], bool],
    literal: Callable[[str], bool],
) -> str:
    """One line ``text`` (``lowered`` its lower case) with the passwords of ``COMMANDS``,
    of a flag with a secret name (``is_name``) and a literal value (``literal``), and of
    an XML element with a secret name handed to ``mark``."""
    for screen, rx in _COMMANDS:
        if screen in lowered:
            text = _sub(rx, text, mark)
    if "-" in text:

        def flag(m: re.Match[str]) -> str:
            if not is_name(m["name"]) or not literal(m["value"]):
                return m[0]
            s = m.start("value") - m.start()
            return m[0][:s] + mark(m["value"])

        text = _FLAG.sub(flag, text)
    if "</" in text:

        def xml(m: re.Match[str]) -> str:
            if not is_name(m["name"]) or not m["value"].strip():
                return m[0]
            return f"<{m['name']}>{mark(m['value'])}</{m['name']}>"

        text = _XML.sub(xml, text)
    return text


def redact_text_formats(text: str, lowered: str, mark: Mark) -> str:
    """The whole ``text`` (``lowered`` its lower case) with the passwords of a
    ``.netrc``, of ``.pgpass`` lines and of a Kubernetes Secret's ``data:`` handed to
    ``mark``."""
    if "pass" in lowered and any(rx.search(text) for rx in _NETRC_SCREENS):
        text = _sub(_NETRC, text, mark)
    if _PGPASS_SCREEN.search(text):
        text = _sub(_PGPASS, text, mark)
    if "kind:" in text and any(
        m.start() == 0 or text[m.start() - 1] == "\n" for m in _K8S_KIND.finditer(text)
    ):

        def data(m: re.Match[str]) -> str:
            body = _K8S_ENTRY.sub(lambda e: e["pre"] + mark(e["value"]), m["body"])
            return m[0][: m.start("body") - m.start()] + body

        text = _K8S_DATA.sub(data, text)
    return text


ENCODINGS = ("base64", "base64url", "hex", "URL-encoded", "reversed")
"""The copies of a kernel's secret value that are hidden whole, as cheap to look for as
the value itself (a ``str.find`` each); other encodings (gzip, rot13, a few characters
at a time) are not."""


@functools.lru_cache(maxsize=256)
def encodings(value: str, shortest: int) -> tuple[tuple[str, str], ...]:
    """``(how, text)`` for each of ``ENCODINGS`` of ``value``: base64 at each of the three
    alignments it can have inside a longer encoded text (the characters its bytes alone
    decide, ``shortest`` characters or more), hex in both cases, URL-encoding, the value
    reversed."""
    data = value.encode()
    found: dict[str, str] = {}
    for k in range(3):
        enc = base64.b64encode(b"\0" * k + data).decode()
        start = 4 if k else 0
        end = len(enc) if (len(data) + k) % 3 == 0 else len(enc) - 4
        core = enc[start:end]
        if len(core) >= shortest:
            found.setdefault(core, "base64")
            found.setdefault(core.translate(_URLSAFE), "base64url")
    found.setdefault(data.hex(), "hex")
    found.setdefault(data.hex().upper(), "hex")
    for quoted in (urllib.parse.quote(value, safe=""), urllib.parse.quote_plus(value)):
        found.setdefault(quoted, "URL-encoded")
    found.setdefault(value[::-1], "reversed")
    found.pop(value, None)  # hidden as itself
    return tuple((how, text) for text, how in found.items())


_URLSAFE = str.maketrans("+/", "-_")
