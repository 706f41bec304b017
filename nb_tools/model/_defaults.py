"""Which model to use when none is named, and the guard that keeps tests off the real API."""

from __future__ import annotations

import functools
import ipaddress
import os
import re
import typing
from collections.abc import Iterable
from urllib.parse import urlsplit

from nb_tools.model._pricing import model_version

# Used only when the installed SDK's model list cannot be read.
FALLBACK_MODEL = "claude-sonnet-4-6"

MODEL_ENV = "NB_TOOLS_MODEL"
BLOCK_ENV = "NB_TOOLS_BLOCK_REAL_MODELS"

_DATE = re.compile(r"^\d{8}$")


def default_model() -> str:
    """``$NB_TOOLS_MODEL`` if set, else the newest Sonnet the installed SDK knows (and does
    not mark deprecated)."""
    return os.environ.get(MODEL_ENV, "").strip() or _newest_sdk_sonnet()


@functools.cache
def _newest_sdk_sonnet() -> str:
    try:
        from anthropic.types.model_param import ModelParam
    except ImportError:
        return FALLBACK_MODEL
    names = set(_literal_strings(ModelParam)) - _deprecated_models()
    return newest_model(names, "sonnet") or FALLBACK_MODEL


def _deprecated_models() -> set[str]:
    # The SDK's own deprecation table is private (anthropic._data, checked against 2.14);
    # without it we simply do not filter.
    try:
        from anthropic._data import DEPRECATED_MODELS
    except ImportError:
        return set()
    return set(DEPRECATED_MODELS)


def newest_model(names: Iterable[str], family: str) -> str | None:
    """The newest name of ``family`` by the version numbers in it; an alias without a
    date suffix wins over the dated snapshot of the same version."""
    best: tuple[tuple[int, ...], int, str] | None = None
    for name in names:
        parts = name.split("-")
        if family not in parts:
            continue
        version = model_version(name)
        undated = 0 if any(_DATE.match(p) for p in parts) else 1
        key = (version, undated, name)
        if best is None or key[:2] > best[:2]:
            best = key
    return best[2] if best else None


def _literal_strings(tp: object) -> list[str]:
    """Every string inside a (possibly nested) ``Union``/``Literal`` type."""
    out: list[str] = []
    for arg in typing.get_args(tp):
        if isinstance(arg, str):
            out.append(arg)
        else:
            out.extend(_literal_strings(arg))
    return out


def real_requests_blocked() -> bool:
    return os.environ.get(BLOCK_ENV, "") not in ("", "0")


def is_loopback_url(url: str) -> bool:
    host = urlsplit(url).hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
