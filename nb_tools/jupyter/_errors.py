"""Errors a developer reads in the notebook without our internals: a ``SignatureError``
(a ``@tool`` whose type hints cannot be described to a model) shows its problems and the
user's own line, not the ~50 lines of nb_tools frames it was raised through."""

from __future__ import annotations

import traceback
from pathlib import Path
from types import TracebackType
from typing import Any

import nb_tools

_PACKAGE = str(Path(nb_tools.__file__).resolve().parent)


def user_frames(tb: TracebackType | None) -> list[traceback.FrameSummary]:
    """The frames of ``tb`` outside nb_tools (the user's cell, their modules)."""
    return [
        f
        for f in traceback.extract_tb(tb)
        if not str(Path(f.filename).resolve()).startswith(_PACKAGE)
    ]


def signature_error_lines(value: BaseException, tb: TracebackType | None) -> list[str]:
    problems = getattr(value, "problems", None) or [str(value)]
    owner = getattr(value, "owner", "the function")
    lines = [f"SignatureError: {owner} cannot be described to the model:"]
    lines += [f"  - {p}" for p in problems]
    frames = user_frames(tb)
    if frames:
        where = frames[-1]
        lines.append(f"  (at {where.filename}, line {where.lineno}: {(where.line or '').strip()})")
    return lines


def _handler(
    shell: Any, etype: type, value: BaseException, tb: TracebackType | None, tb_offset: Any = None
) -> list[str]:
    # IPython discards what a custom handler returns; ``_showtraceback`` is the hook that
    # shows a structured traceback (ipykernel sends it as the cell's error output).
    stb = signature_error_lines(value, tb)
    shell._showtraceback(etype, value, stb)
    return stb


def install(shell: Any) -> None:
    """Show SignatureErrors briefly in ``shell`` (leaves another custom handler alone)."""
    from nb_tools.tool._derive import SignatureError

    if getattr(shell, "custom_exceptions", ()) in ((), (SignatureError,)):
        shell.set_custom_exc((SignatureError,), _handler)
