"""Private keys in a text, line for line: the part of ``_secrets`` (the one home of what
looks like a secret) that reads a text by its lines, so that a key's lines are hidden one
for one and line numbers still hold (``read_file``, ``grep``, ``bash``).

What counts as a private key: a PEM block whose label is not a public kind
(``PEM_SHOWN``), over lines or inside one line with escaped line breaks (a cloud
service-account key's ``"private_key"``); the lines of such a block without its BEGIN
line (base64 lines that end at an ``-----END ... PRIVATE KEY-----`` line), and two or
more lines in a row of exactly 64 or 70 base64 characters that look random (not all hex,
3+ digits, both cases) outside a public block; a PuTTY key's ``Private-Lines``.
:func:`redact_private_keys` hides them; :func:`holds_private_key` says whether a file's
bytes hold a BEGIN line of one.
"""

from __future__ import annotations

import os
import re

__all__ = ["KEY_HIDDEN", "PEM_SHOWN", "hidden_pem_kind", "holds_private_key", "redact_private_keys"]

PEM_SHOWN = ("CERTIFICATE", "PUBLIC KEY", "SIGNATURE", "PARAMETERS", "X509 CRL", "SIGNED MESSAGE")
"""PEM kinds that hold nothing secret (their label holds one of these and not
``PRIVATE``); every other block is hidden."""

KEY_HIDDEN = "<hidden: part of a private key>"
"""What stands for a line (or an escaped one-line block) of a private key."""

_WIDE = re.compile(r"[^\n]{64}")
"""A line as wide as a key's body (the loop below looks closer only at such lines)."""
_BEGIN = re.compile(r"-----BEGIN (?P<label>[A-Z0-9 ]{1,60})-----")
_END = re.compile(r"-----END (?P<label>[A-Z0-9 ]{1,60})-----")
# A block written on one line with escaped breaks (JSON, a repr): up to its END, or to
# where the base64 stops when it was cut.
_ONE_LINE = re.compile(
    r"-----BEGIN (?P<label>[A-Z0-9 ]{0,60}PRIVATE[A-Z0-9 ]{0,60})-----"
    # its first line: base64 or a header, after an escaped break (source naming it: none)
    r"(?=(?:\\[rn])+(?:[A-Za-z0-9+/]{16}|[A-Za-z][A-Za-z\-]*: ))"
    r"(?:\\[rn]|[A-Za-z0-9+/=]|[A-Za-z][A-Za-z\-]*: [^\\\"']{0,200}\\n)*"
    r"(?:-----END [A-Z0-9 ]{1,60}-----(?:\\[rn])*)?"
)
# A body line: what a prefix (grep's "file-", indentation, a quote) leaves of it.
_BODY = re.compile(
    r"^(?P<pre>(?:\S*?[:\-](?:\d+[:\-])?)?\s*[\"']?)(?P<b64>[A-Za-z0-9+/]+={0,2})[\s\"',]*$"
)
_HEX = re.compile(r"[0-9a-fA-F]+")
_HEADER = re.compile(r"^\s*[A-Za-z][A-Za-z\-]*: .*$")  # Proc-Type:, DEK-Info:, Comment:
_PUTTY = re.compile(r"^\s*Private-Lines:\s*(\d{1,4})\s*$")
_WIDTHS = (64, 70)
# A BEGIN line followed by a key's first line (base64, or a header such as Proc-Type:),
# over a real or an escaped line break: a program's source naming the marker is no key.
_FILE_MARK = re.compile(
    rb"(?:-----BEGIN [A-Z0-9 ]{0,60}PRIVATE[A-Z0-9 ]{0,60}-----|Private-Lines: *\d+)"
    rb"(?:\r?\n|(?:\\r)?\\n)[ \t\"']*(?:[A-Za-z0-9+/]{16}|[A-Za-z][A-Za-z\-]*: )"
)
_CHUNK = 1 << 20


def hidden_pem_kind(label: str) -> bool:
    """Whether a PEM block with this label is hidden: a private key, or any kind not
    known to be public (``PEM_SHOWN``)."""
    return "PRIVATE" in label or not any(kind in label for kind in PEM_SHOWN)


def _body(line: str) -> re.Match[str] | None:
    return _BODY.match(line)


def _random(b64: str) -> bool:
    """Whether a 64- or 70-character base64 line looks like a key's and not a word: not
    all hex (a hash), and with digits (3+) and both cases, as random base64 has (a long
    identifier such as ``DecisionInputAssistantMessageContentParts...`` has not)."""
    if _HEX.fullmatch(b64):
        return False
    digits = sum(c.isdigit() for c in b64)
    return digits >= 3 and any(c.islower() for c in b64) and any(c.isupper() for c in b64)


def _in_block(lines: list[str], j: int) -> bool:
    """Whether ``lines[j]``, after a private BEGIN line, is part of the key: a header, an
    empty line, or base64 that is long (16+), padded, or the last before an END line
    (a word such as ``pass`` in a program that names the marker is not)."""
    line = lines[j]
    if not line.strip() or _HEADER.match(line):
        return True
    m = _body(line)
    if m is None:
        return False
    b64 = m["b64"]
    return (
        len(b64) >= 16
        or b64.endswith("=")
        or (j + 1 < len(lines) and bool(_END.search(lines[j + 1])))
    )


def redact_private_keys(text: str) -> tuple[str, int]:
    """``text`` with every private key's lines hidden (see the module), and how many keys
    (blocks, runs) were hidden. Lines are kept one for one."""
    if not text:
        return text, 0
    found = 0
    if "PRIVATE" in text and "\\n" in text:

        def one(m: re.Match[str]) -> str:
            nonlocal found
            found += 1
            return f"-----BEGIN {m['label']}----- {KEY_HIDDEN}"

        text = _ONE_LINE.sub(one, text)
    one_line = found
    if "-----" not in text and "Private-Lines" not in text and not _WIDE.search(text):
        return text, found  # every line is the common line of the loop below: at C speed
    lines = text.split("\n")
    hide = [False] * len(lines)
    i, n = 0, len(lines)
    shown_block = False  # inside a block that is not private (a certificate)
    run: list[int] = []

    def close_run() -> None:
        nonlocal found
        if len(run) >= 2:
            found += 1
            for k in run:
                hide[k] = True
        run.clear()

    while i < n:
        line = lines[i]
        if not run and len(line) < 64 and "-----" not in line and "Private-Lines" not in line:
            i += 1  # neither a marker nor as wide as a key's body: the common line, fast
            continue
        if KEY_HIDDEN in line:  # a one-line block hidden above
            close_run()
            i += 1
            continue
        begin = _BEGIN.search(line)
        end = _END.search(line)
        if begin is not None:
            close_run()
            alone = not line[begin.end() :].strip()  # `b"-----BEGIN ...-----"`: source
            if hidden_pem_kind(begin["label"]) and end is None and alone:
                found += 1
                j = i + 1
                while j < n:
                    if _END.search(lines[j]):
                        break
                    if not _in_block(lines, j):
                        j -= 1  # the block was cut here: what follows is other text
                        break
                    hide[j] = True
                    j += 1
                i = j + 1
                continue
            shown_block = end is None
            i += 1
            continue
        if end is not None:
            if hidden_pem_kind(end["label"]) and not shown_block:
                # the lines before it, back to what is not base64: a block without its BEGIN
                k = i - 1
                hit = False
                while k >= 0 and not hide[k] and _body(lines[k]) is not None:
                    hide[k] = True
                    hit = True
                    k -= 1
                run.clear()
                found += hit
            shown_block = False
            i += 1
            continue
        putty = _PUTTY.match(line)
        if putty is not None:
            close_run()
            found += 1
            for k in range(i + 1, min(n, i + 1 + int(putty.group(1)))):
                hide[k] = True
            i += 1 + int(putty.group(1))
            continue
        m = _body(line) if not shown_block else None
        b64 = m["b64"] if m is not None else ""
        if len(b64) in _WIDTHS and _random(b64):
            run.append(i)
        elif b64 and run and len(b64) < max(_WIDTHS):  # a short last line ends the body
            run.append(i)
            close_run()
        else:
            close_run()
        i += 1
    close_run()
    if not any(hide):
        return text, one_line
    out = []
    for line, h in zip(lines, hide, strict=True):
        if not h:
            out.append(line)
            continue
        m = _body(line)
        out.append((m["pre"] if m is not None else "") + KEY_HIDDEN)
    return "\n".join(out), found


def holds_private_key(path: str | os.PathLike[str], *, limit: int = 8 << 20) -> bool:
    """Whether the file at ``path`` holds a private key's BEGIN line followed by its
    first line (or a PuTTY key's ``Private-Lines``) in its first ``limit`` bytes;
    ``False`` when it cannot be read. Never follows a final symlink or blocks on a FIFO."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return False
    try:
        tail = b""
        read = 0
        while read < limit:
            chunk = os.read(fd, _CHUNK)
            if not chunk:
                return False
            read += len(chunk)
            if _FILE_MARK.search(tail + chunk):
                return True
            tail = chunk[-160:]
        return False
    except OSError:
        return False
    finally:
        os.close(fd)
