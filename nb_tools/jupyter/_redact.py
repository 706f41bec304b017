"""The values of the kernel's secret environment variables, kept out of what the no-click
tools return.

``describe`` and ``list_variables`` hide a value kept under a secret-looking name, but a
user's copy carries no such name: ``list(os.environ.values())``, ``f"{k}={v}"`` lines, a
connection string, a DataFrame column. So the text these tools return (and the live
``notebook_read``, whose cell outputs may hold what a cell printed) is also searched for
the values of the environment variables whose NAMES look secret (``ANTHROPIC_API_KEY``,
``GITHUB_TOKEN``, ...): each value, and any piece of it of ``PIECE`` characters or more (a
cut repr shows the start of a long string), is replaced by ``<hidden: the value of $NAME>``.
"""

from __future__ import annotations

import os

from nb_tools.jupyter._static_repr import secret_name

__all__ = ["redact_secrets", "secret_values"]

MIN_LENGTH = 8
"""Shorter values (``1``, ``true``) are flags, not secrets: hiding them would hide text."""
PIECE = 12
_NOT_SECRETS = frozenset(("PWD", "OLDPWD"))


def secret_values() -> list[tuple[str, str]]:
    """``(name, value)`` of the secret-named environment variables, longest value first."""
    found = []
    for name, value in os.environ.items():
        if name in _NOT_SECRETS or not secret_name(name) or len(value) < MIN_LENGTH:
            continue
        if os.path.exists(value):  # a path (a credentials FILE's name) is not the secret
            continue
        found.append((name, value))
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


def redact_secrets(text: str) -> str:
    """``text`` with every secret environment value (or piece of one) hidden."""
    for name, value in secret_values():
        text = _hide(text, name, value)
    return text
