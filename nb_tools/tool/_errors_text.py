"""The short form of a ``SignatureError`` for notebooks (IPython's ``_render_traceback_``)."""

from __future__ import annotations

import traceback
from pathlib import Path
from typing import Any

_PACKAGE = str(Path(__file__).resolve().parents[1])


def user_frames(tb: Any) -> list[traceback.FrameSummary]:
    """The frames of ``tb`` outside nb_tools (the user's cell, their modules)."""
    return [
        f
        for f in traceback.extract_tb(tb)
        if not str(Path(f.filename).resolve()).startswith(_PACKAGE)
    ]


def signature_error_lines(error: Any) -> list[str]:
    """``SignatureError: f cannot be described to the model:`` then one line per problem
    and the user's line that raised it."""
    problems = getattr(error, "problems", None) or [str(error)]
    owner = getattr(error, "owner", "the function")
    lines = [f"SignatureError: {owner} cannot be described to the model:"]
    lines += [f"  - {p}" for p in problems]
    frames = user_frames(error.__traceback__)
    if frames:
        where = frames[-1]
        lines.append(f"  (at {where.filename}, line {where.lineno}: {(where.line or '').strip()})")
    return lines
