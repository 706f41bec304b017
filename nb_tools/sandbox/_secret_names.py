"""Secrets by their names: the part of ``_secrets`` (the one home of what looks like a
secret) that judges a name, a variable's, a column's or an environment variable's.

A name (:func:`secret_name`) is secret with a word such as token, secret, password,
credential, cookie or auth, or a key of a secret kind (``api_key``,
``AWS_SECRET_ACCESS_KEY``, ``privateKey``); ``sort_key`` and ``monkey`` are not. An
environment variable (:func:`secret_env_name`) is judged more widely, since ``*_KEY``
there is almost always a credential.
"""

from __future__ import annotations

import re

__all__ = [
    "ENV_PREFIXES",
    "NAME_HIDDEN",
    "SCREEN",
    "SECRET_HIDDEN",
    "SECRET_WORDS",
    "may_hold_secret_names",
    "secret_env_name",
    "secret_label",
    "secret_name",
    "words_of",
]

NAME_HIDDEN = "<hidden: the name looks like a secret>"
"""What stands for a value kept under a secret-looking name (``api_key``, ``*_TOKEN``...)."""
SECRET_HIDDEN = "<hidden: looks like a secret>"
"""What stands for a secret found in text by its shape (a URL password, a token...)."""

SECRET_WORDS = frozenset(
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
"""A name holding one of these words names a secret."""
_KEY_KINDS = frozenset(
    ["api", "access", "secret", "private", "auth", "signing", "encryption", "client"]
)
"""``<kind>_key`` names a secret for these kinds (``api_key``); ``sort_key`` does not."""
_WORDS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")
_JOINED = re.compile(r"password|passwd|passphrase|secret(?!ar)|credential|apikey|tokens?$")
"""Secret words inside a name written without separators (``dbpassword``, ``mysecret``,
``authtoken``); not ``tokenizer`` or ``secretary``."""

ENV_PREFIXES = (
    "ANTHROPIC_",
    "OPENAI_",
    "JPY_",
    "JUPYTER_",
    "AWS_",
    "GOOGLE_",
    "AZURE_",
    "GITHUB_",
    "SSH_",
    "GPG_",
)
"""Environment variables of programs that keep credentials (or point at them) under
ordinary names (``AWS_PROFILE``, ``JPY_SESSION_NAME``, ``SSH_AUTH_SOCK``)."""
_ENV_WORDS = frozenset(["key", "session", "oauth", "sessionid"])
"""Words that make an environment variable secret though not a Python name (``STRIPE_KEY``,
``MY_SESSION``)."""


def _text_of(key: object) -> str | None:
    if issubclass(type(key), bytes):
        key = bytes.decode(key, "latin-1")  # type: ignore[arg-type]
    elif issubclass(type(key), str):
        key = str.__getitem__(key, slice(None))  # a subclass's text, by str's own code
    return key if type(key) is str and len(key) <= 200 else None


def words_of(name: str) -> list[str]:
    """The lower-case words of a name (``dbPassword``: ``db``, ``password``)."""
    return [w.lower() for w in _WORDS.findall(name)]


def secret_name(key: object) -> bool:
    """Whether ``key`` (a str, or bytes as ``os.environ`` keeps them) names a secret: a
    word of ``SECRET_WORDS``, or a key of a secret kind (``api_key``,
    ``AWS_SECRET_ACCESS_KEY``, ``privateKey``); ``sort_key`` or ``monkey`` are not."""
    name = _text_of(key)
    if name is None:
        return False
    words = words_of(name)
    if any(w in SECRET_WORDS for w in words):
        return True
    if _JOINED.search("".join(words)) or (len(words) > 1 and words[-1] == "pass"):
        return True  # dbpassword, PassWord, authtoken, DB_PASS
    return any(w == "key" and i and words[i - 1] in _KEY_KINDS for i, w in enumerate(words))


def secret_env_name(name: object) -> bool:
    """Whether the environment variable ``name`` holds a secret: a :func:`secret_name`, a
    word of ``_ENV_WORDS`` (``STRIPE_KEY``), a last word ending in ``key`` (``MYKEY``),
    or a name under ``ENV_PREFIXES``. The sandbox never passes such a variable on, and
    the kernel tools hide its value."""
    text = _text_of(name)
    if text is None:
        return False
    if secret_name(text) or text.upper().startswith(ENV_PREFIXES):
        return True
    words = words_of(text)
    return any(w in _ENV_WORDS for w in words) or bool(words and words[-1].endswith("key"))


def secret_label(label: object) -> bool:
    """A DataFrame column or row label, or a Series name, that names a secret: a secret
    name, or a tuple (a MultiIndex label) with one among its parts."""
    if type(label) is tuple:
        return any(secret_name(part) for part in label)
    return secret_name(label)


SCREEN = tuple(
    w
    for w in SECRET_WORDS | {"key", "pass", "credential"}
    if not any(o != w and o in w for o in SECRET_WORDS | {"key", "pass", "credential"})
)
"""The secret words (and ``key``) that contain no other: one substring search each."""


def may_hold_secret_names(text: str) -> bool:
    """A quick screen: ``False`` when no part of ``text`` can make a secret name (none of
    the secret words nor ``key`` occurs in it), so a million labels are screened at once."""
    lowered = text.lower()
    return any(w in lowered for w in SCREEN)
