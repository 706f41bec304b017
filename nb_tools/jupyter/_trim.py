"""What the model sees of a long tool result: head and tail within a limit the user can
change (``%%agent --result-limit N``, ``$NB_TOOLS_RESULT_LIMIT``), while the call's card keeps
the whole text and says how much of it the model saw."""

from __future__ import annotations

import os

from nb_tools.tool import Middleware, truncate_output

RESULT_LIMIT_ENV = "NB_TOOLS_RESULT_LIMIT"
DEFAULT_RESULT_LIMIT = 30_000
"""Bytes of a result the model gets by default (about 7,500 tokens)."""


def default_result_limit() -> int:
    raw = os.environ.get(RESULT_LIMIT_ENV, "").strip()
    if not raw:
        return DEFAULT_RESULT_LIMIT
    try:
        value = int(raw.replace("_", "").replace(",", ""))
    except ValueError:
        raise ValueError(
            f"{RESULT_LIMIT_ENV}={raw!r} is not a whole number of bytes; set it to e.g. "
            "50000 or unset it"
        ) from None
    if value < 200:
        raise ValueError(f"{RESULT_LIMIT_ENV} must be at least 200 bytes, got {value}")
    return value


def trim_for_model(limit: int) -> Middleware:
    """Give the model at most ``limit`` UTF-8 bytes of each result (head + tail); keep the
    whole text in ``metadata["full_content"]`` and ``[seen, total]`` bytes in
    ``metadata["model_saw"]`` for the card."""
    return truncate_output(limit, keep_full=True)
