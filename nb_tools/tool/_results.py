"""Turn whatever a tool function returned into a ``Result``.

- ``str`` is the content; a ``Result`` is used as is; ``None`` is empty content (the call
  succeeded and had nothing to say: "" reads better to a model than "null").
- A ``Part`` (or a list of them) is sent as parts.
- ``bytes``: a recognised image (PNG, JPEG, GIF, WebP) or PDF becomes a part; valid UTF-8
  becomes text; anything else is described by its size (raw bytes mean nothing to a model).
- Rich objects, found by duck typing so nothing here imports matplotlib, PIL, pandas or
  IPython: a matplotlib figure (an Axes stands for its figure) or a PIL image becomes a
  PNG part, an object with ``_repr_png_``/``_repr_jpeg_`` an image part, a pandas
  DataFrame/Series a text table, ``_repr_markdown_`` Markdown text, ``_repr_html_`` HTML.
- Anything else is JSON (dataclasses, pydantic models, enums, sets, tuples, datetimes,
  paths, numpy values), or ``repr()`` when it cannot be encoded.

For every value that is not text, a ``Result`` or ``None``, the original object stays in
``metadata["value"]`` so the notebook can display it.
"""

from __future__ import annotations

import base64
import contextlib
import dataclasses
import datetime
import enum
import io
import json
import sys
from collections.abc import Callable
from typing import Any

from nb_tools.model import Part
from nb_tools.tool._types import Result

TABLE_MAX_ROWS = 60
TABLE_MAX_COLS = 20

_MAGIC: tuple[tuple[bytes, str, str], ...] = (
    (b"\x89PNG\r\n\x1a\n", "image", "image/png"),
    (b"\xff\xd8\xff", "image", "image/jpeg"),
    (b"GIF87a", "image", "image/gif"),
    (b"GIF89a", "image", "image/gif"),
    (b"%PDF-", "document", "application/pdf"),
)


def to_result(value: Any) -> Result:
    """The ``Result`` for a tool function's return value (see the module doc)."""
    if type(value) is str:
        return Result(content=value)
    if isinstance(value, Result):
        return value
    if value is None:
        return Result()
    if isinstance(value, str):
        return Result(content=str(value))
    if isinstance(value, Part):
        return Result(parts=[value], metadata={"value": value})
    if isinstance(value, list | tuple) and value and all(isinstance(p, Part) for p in value):
        return Result(parts=list(value), metadata={"value": value})
    if isinstance(value, dict | list | int | float | bool):
        return _json_result(value)
    if isinstance(value, bytes | bytearray | memoryview):
        return _bytes_result(bytes(value), value)
    for convert in _RICH:
        result = convert(value)
        if result is not None:
            result.metadata["value"] = value
            return result
    return _json_result(value)


def _image(data: bytes, media_type: str = "image/png") -> Result:
    return Result(parts=[Part(kind="image", media_type=media_type, data=data)])


def _bytes_result(data: bytes, value: Any) -> Result:
    for magic, kind, media_type in _MAGIC:
        if data.startswith(magic):
            return Result(
                parts=[Part(kind=kind, media_type=media_type, data=data)],  # type: ignore[arg-type]
                metadata={"value": value},
            )
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return Result(
            parts=[Part(kind="image", media_type="image/webp", data=data)],
            metadata={"value": value},
        )
    try:
        return Result(content=data.decode("utf-8"), metadata={"value": value})
    except UnicodeDecodeError:
        return Result(
            content=f"<{len(data)} bytes of binary data, not shown>",
            metadata={"value": value},
        )


# -- rich objects ------------------------------------------------------------------------


def _matplotlib_figure(value: Any) -> Result | None:
    if not (hasattr(value, "savefig") and hasattr(value, "canvas")):
        # An Axes (what plotting helpers often return) stands for its whole figure.
        figure = getattr(value, "figure", None)
        if not (hasattr(value, "plot") and hasattr(figure, "savefig")):
            return None
        value = figure
    buf = io.BytesIO()
    value.savefig(buf, format="png", bbox_inches="tight")
    return _image(buf.getvalue())


_PNG_MODES = frozenset({"1", "L", "LA", "I", "P", "RGB", "RGBA"})


def _pil_image(value: Any) -> Result | None:
    if not (hasattr(value, "save") and hasattr(value, "mode") and hasattr(value, "size")):
        return None
    image = value if value.mode in _PNG_MODES else value.convert("RGBA")
    buf = io.BytesIO()
    image.save(buf, format="PNG")
    return _image(buf.getvalue())


def _repr_bytes(data: Any) -> bytes | None:
    if isinstance(data, tuple):  # IPython allows (data, metadata)
        data = data[0] if data else None
    if isinstance(data, str):
        return base64.b64decode(data)
    if isinstance(data, bytes | bytearray):
        return bytes(data)
    return None


def _repr_image(value: Any) -> Result | None:
    for method, media_type in (("_repr_png_", "image/png"), ("_repr_jpeg_", "image/jpeg")):
        fn = getattr(value, method, None)
        if callable(fn):
            data = _repr_bytes(fn())
            if data:
                return _image(data, media_type)
    return None


def _table(value: Any) -> Result | None:
    if not (hasattr(value, "to_string") and hasattr(value, "to_csv") and hasattr(value, "shape")):
        return None
    try:
        text = value.to_string(max_rows=TABLE_MAX_ROWS, max_cols=TABLE_MAX_COLS)
    except TypeError:  # a Series has no max_cols
        text = value.to_string(max_rows=TABLE_MAX_ROWS)
    shape = "x".join(str(n) for n in value.shape)
    return Result(content=f"{text}\n[{type(value).__name__} {shape}]")


def _repr_text(value: Any) -> Result | None:
    for method in ("_repr_markdown_", "_repr_html_"):
        fn = getattr(value, method, None)
        if callable(fn):
            text = fn()
            if isinstance(text, tuple):
                text = text[0] if text else None
            if isinstance(text, str):
                return Result(content=text)
    return None


_RICH: tuple[Callable[[Any], Result | None], ...] = (
    _matplotlib_figure,
    _pil_image,
    _repr_image,
    _table,
    _repr_text,
)


# -- JSON --------------------------------------------------------------------------------


def _default(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
    dump = getattr(value, "model_dump", None)  # pydantic v2
    if callable(dump):
        return dump(mode="json")
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, set | frozenset):
        items = list(value)
        with contextlib.suppress(TypeError):
            items.sort()
        return items
    if isinstance(value, tuple):
        return list(value)
    if isinstance(value, datetime.date | datetime.time):
        return value.isoformat()
    if isinstance(value, datetime.timedelta):
        return value.total_seconds()
    if any(_is_instance(value, *where) for where in _STR_TYPES):
        return str(value)
    if isinstance(value, bytes | bytearray):
        return base64.b64encode(value).decode("ascii")
    tolist = getattr(value, "tolist", None)  # numpy arrays and scalars
    if callable(tolist):
        return tolist()
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")


_STR_TYPES = (("decimal", "Decimal"), ("uuid", "UUID"), ("pathlib", "PurePath"))


def _is_instance(value: Any, module: str, name: str) -> bool:
    """``isinstance(value, module.name)`` without importing ``module``: if it is not
    loaded, ``value`` cannot be one of its instances."""
    cls = getattr(sys.modules.get(module), name, None)  # None while another thread imports it
    return isinstance(cls, type) and isinstance(value, cls)


def to_json(value: Any) -> str:
    """``value`` as JSON text; raises ``TypeError``/``ValueError`` if it cannot be encoded."""
    return json.dumps(value, default=_default, ensure_ascii=False)


def _json_result(value: Any) -> Result:
    try:
        return Result(content=to_json(value), metadata={"value": value})
    except (TypeError, ValueError, RecursionError) as exc:
        return Result(
            content=repr(value),
            metadata={"value": value, "note": f"shown with repr(): not JSON ({exc})"},
        )
