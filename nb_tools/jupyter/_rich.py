"""Show a tool's rich return value (a matplotlib figure, a PIL image, a DataFrame, anything
with ``_repr_*_``) in its call's card. The model got its converted form (an image part or a text
table, see ``nb_tools.tool._results``); the original object is in ``metadata["value"]``."""

from __future__ import annotations

import contextlib
import sys
from typing import Any

from IPython import get_ipython
from IPython.display import Image

from nb_tools.model import ToolResult

_REPR_METHODS = (
    "_repr_mimebundle_",
    "_repr_html_",
    "_repr_markdown_",
    "_repr_svg_",
    "_repr_png_",
    "_repr_jpeg_",
    "_repr_latex_",
)


def is_figure(value: Any) -> bool:
    return hasattr(value, "savefig") and hasattr(value, "canvas")


def is_rich(value: Any) -> bool:
    """Whether ``value`` has a display richer than its text (plain data does not)."""
    if value is None or isinstance(value, str | bytes | int | float | bool | dict | list | tuple):
        return False
    if isinstance(value, type):
        return False
    return is_figure(value) or any(callable(getattr(value, m, None)) for m in _REPR_METHODS)


def rich_bundle(result: ToolResult) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """The ``(data, metadata)`` display bundle of the rich value behind ``result``, or
    ``None`` when there is nothing richer than the text the model got. A matplotlib figure
    is shown from the PNG the model got (whatever the backend) and closed, so the inline
    backend does not show it a second time at the end of the cell."""
    value = result.metadata.get("value") if result.metadata else None
    if not is_rich(value):
        return None
    if is_figure(value):
        png = next((p.data for p in result.parts if p.media_type == "image/png"), None)
        if png is None:
            return None
        pyplot = sys.modules.get("matplotlib.pyplot")
        if pyplot is not None:
            with contextlib.suppress(Exception):  # a figure not managed by pyplot
                pyplot.close(value)
        value = Image(data=png)
    shell = get_ipython()  # type: ignore[no-untyped-call]
    if shell is None:
        return None
    data, metadata = shell.display_formatter.format(value)
    return (data, metadata) if data else None


CARD_MIMES = ("text/html", "image/png", "image/jpeg")
CARD_MAX_BYTES = 400_000
"""A rich value's display larger than this stays out of the card (and the notebook)."""


def card_display(result: ToolResult) -> dict[str, str] | None:
    """The display of a tool's rich value (a DataFrame's HTML table, a PNG) to show inside
    its call's card, live and in the transcript; ``None`` when there is none beyond what
    the card already shows (a figure is already the image part the model got)."""
    value = result.metadata.get("value") if result.metadata else None
    if is_figure(value):
        pyplot = sys.modules.get("matplotlib.pyplot")
        if pyplot is not None:  # else the inline backend shows it again at the cell's end
            with contextlib.suppress(Exception):
                pyplot.close(value)
        return None
    if not is_rich(value):
        return None
    bundle = rich_bundle(result)
    if bundle is None:
        return None
    data, _metadata = bundle
    for mime in CARD_MIMES:
        shown = data.get(mime)
        if isinstance(shown, str) and len(shown) <= CARD_MAX_BYTES:
            return {mime: shown}
    return None
