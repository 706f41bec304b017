"""pandas objects shown by ``describe`` without running the user's code on their values.

pandas formats object values with their ``str``/``repr`` (``to_string``), and hashes and
compares them (``describe()``, ``value_counts``); ``isna`` asks them ``isinstance``
questions that read ``__class__``. A column, Series or axis whose values are not all
exact builtins (``_static_read.safe_values``) is shown through ``safe_repr`` instead and
left out of the statistics.
"""

from __future__ import annotations

from typing import Any

from nb_tools.jupyter._static_read import labels_safe, safe_values, trusted_type, type_name
from nb_tools.jupyter._static_repr import _NAME_KEYS, _VALUE_KEYS, safe_repr
from nb_tools.sandbox import NAME_HIDDEN as HIDDEN
from nb_tools.sandbox import may_hold_secret_names, secret_label, secret_name

__all__ = [
    "NOT_RUN",
    "hidden_axis",
    "hide_secrets",
    "holds_secrets",
    "null_count",
    "record_value_label",
    "relabel",
    "safe_head",
    "secret_levels",
    "secret_positions",
    "shown_positions",
]

NOT_RUN = (
    "objects of types other than builtins, shown with describe's own repr (their "
    "__repr__, __str__, __hash__ and __eq__ are not run)"
)


def _safe_labels(index: Any) -> Any:
    import numpy as np
    import pandas as pd

    values = np.asarray(index.to_numpy(), dtype=object)
    return pd.Index([safe_repr(v) for v in values], dtype=object)


def secret_levels(index: Any) -> list[int]:
    """The levels of a pandas axis whose name looks like a secret: their labels are the
    secrets (``df.set_index("password")``, a pivot's columns named ``token``)."""
    return [i for i, name in enumerate(index.names) if secret_label(name)]


def hidden_axis(index: Any) -> Any:
    """``index`` with the labels of its secret-named levels replaced by ``<hidden N>``
    and the other levels' unsafe labels by their safe reprs (names by their text); built
    from NumPy takes, so no label of the user's is hashed, compared or formatted."""
    import numpy as np
    import pandas as pd

    hide = set(secret_levels(index))
    names = [None if n is None else repr_name(n) for n in index.names]
    n = len(index)
    arrays: list[Any] = []
    is_multi = type_name(type(index)) == "pandas.MultiIndex"
    levels = list(index.levels) if is_multi else [index]
    for i, level in enumerate(levels):
        if i in hide:
            arrays.append([f"<hidden {j + 1}>" for j in range(n)])
            continue
        values = np.asarray(level.to_numpy(), dtype=object)
        if is_multi:
            codes = np.asarray(index.codes[i])
            values = np.where(codes >= 0, values.take(codes, mode="clip"), None)
        arrays.append(list(values) if labels_safe(level) else [safe_repr(v) for v in values])
    if not is_multi:
        return pd.Index(arrays[0], dtype=object, name=names[0])
    return pd.MultiIndex.from_arrays(arrays, names=names)


def relabel(obj: Any) -> tuple[Any, list[str]]:
    """``obj`` (a DataFrame or Series) with any axis that holds unsafe labels replaced by
    their safe reprs, and the labels of an axis level named like a secret hidden (a new
    object: the user's is not touched), and notes saying so."""
    notes: list[str] = []
    axes = [("index", 0, obj.index)]
    if _is_frame(obj):
        axes.append(("column", 1, obj.columns))
    for what, axis, index in axes:
        if secret_levels(index):
            obj = obj.set_axis(hidden_axis(index), axis=axis)
            names = ", ".join(repr_name(index.names[i]) for i in secret_levels(index))
            notes.append(f"note: the {what} labels named {names} are hidden: {HIDDEN[9:-1]}")
        elif not labels_safe(index):
            obj = obj.set_axis(_safe_labels(index), axis=axis)
            notes.append(f"note: the {what} labels are {NOT_RUN}")
    return obj, notes


def _is_frame(obj: Any) -> bool:
    return type_name(type(obj)) == "pandas.DataFrame"


def shown_positions(ncols: int, max_cols: int = 20) -> list[int]:
    """The column positions ``to_string(max_cols=max_cols)`` formats."""
    if ncols <= max_cols:
        return list(range(ncols))
    half = max_cols // 2
    return [*range(half), *range(ncols - half, ncols)]


def _as_text(col: Any) -> list[str]:
    """The values of an unsafe column as safe reprs (a foreign extension array's values
    are not even read: iterating it is its code)."""
    import numpy as np

    dtype = col.dtype
    if not issubclass(type(dtype), np.dtype) and not trusted_type(type(dtype)):
        return [f"<{type_name(type(dtype))} value>"] * len(col)
    return [safe_repr(v) for v in np.asarray(col.array, dtype=object)]


def safe_head(obj: Any, rows: int) -> tuple[Any, list[str]]:
    """``obj.head(rows)`` with unsafe columns (among those shown) as safe reprs, and the
    labels of those columns."""
    import pandas as pd

    head = obj.head(rows)
    if not _is_frame(head):
        if safe_values(head):
            return head, []
        return pd.Series(_as_text(head), index=head.index, dtype=object), [repr_name(head.name)]
    unsafe: list[str] = []
    for pos in shown_positions(head.shape[1]):
        col = head.iloc[:, pos]
        if not safe_values(col):
            head.isetitem(pos, _as_text(col))
            unsafe.append(repr_name(head.columns[pos]))
    return head, unsafe


def repr_name(label: Any) -> str:
    return label if type(label) is str else safe_repr(label)


def null_count(col: Any) -> int:
    """Missing values of a column or Series: pandas' ``isna`` when its values are safe,
    else counted here by identity and ``float`` NaN only."""
    import numpy as np
    import pandas as pd

    if safe_values(col):
        return int(col.isna().sum())
    dtype = col.dtype
    if not issubclass(type(dtype), np.dtype) and not trusted_type(type(dtype)):
        return 0
    na, nat = pd.NA, pd.NaT
    return sum(
        1
        for v in np.asarray(col.array, dtype=object)
        if v is None or v is na or v is nat or (type(v) is float and v != v)
    )


def secret_positions(index: Any) -> list[int]:
    """Positions of the secret-looking labels of a pandas axis (``password``,
    ``("db", "api_key")``); an axis of numbers or dates holds none."""
    import numpy as np

    dtype = index.dtype
    if issubclass(type(dtype), np.dtype) and dtype.kind in "biufcmM":
        return []
    labels = index.tolist()
    plain = all(type(label) is str for label in labels)
    if plain and not may_hold_secret_names("\n".join(labels)):  # the common case
        return []
    return [i for i, label in enumerate(labels) if secret_label(label)]


def holds_secrets(obj: Any) -> bool:
    """A DataFrame or Series whose name, columns or row labels look like secrets, or a
    frame of name/value records with a secret-looking name."""
    if not _is_frame(obj):
        return secret_label(obj.name) or bool(secret_positions(obj.index))
    return bool(secret_positions(obj.columns) or secret_positions(obj.index) or _record_rows(obj))


def record_value_label(frame: Any) -> Any:
    """The label of the value column of a frame of name/value records that hides some of
    its values (``None`` for other frames)."""
    pairs = _record_rows(frame) if _is_frame(frame) else None
    return frame.columns[pairs[0]] if pairs else None


def _record_rows(frame: Any) -> tuple[int, list[int]] | None:
    """A frame of name/value records (``pd.DataFrame(task["environment"])``): the
    position of its value column and the rows whose name looks like a secret."""
    labels = [label.lower() if type(label) is str else None for label in frame.columns]
    names = [i for i, label in enumerate(labels) if label in _NAME_KEYS]
    values = [i for i, label in enumerate(labels) if label in _VALUE_KEYS]
    if len(names) != 1 or len(values) != 1 or not safe_values(frame.iloc[:, names[0]]):
        return None
    rows = [
        i
        for i, v in enumerate(frame.iloc[:, names[0]].tolist())
        if type(v) is str and (secret_name(v) or any(secret_name(p) for p in v.split("/")))
    ]
    return (values[0], rows) if rows else None


def hide_secrets(obj: Any) -> tuple[Any, list[str]]:
    """``obj`` with the values under secret-looking labels replaced by ``HIDDEN`` (a new
    object: the user's is not touched): a Series by its name, a DataFrame's columns by
    their labels, and rows by their index labels; and notes saying so."""
    import pandas as pd

    rows = secret_positions(obj.index)
    if not _is_frame(obj):
        if secret_label(obj.name):
            hidden = pd.Series([HIDDEN] * len(obj), index=obj.index, name=obj.name, dtype=object)
            return hidden, [f"note: its values are hidden: {HIDDEN[9:-1]}"]
        if not rows:
            return obj, []
        obj = obj.astype(object)
        obj.iloc[rows] = HIDDEN
        return obj, [f"note: {len(rows)} value(s) hidden: their labels look like secrets"]
    cols = secret_positions(obj.columns)
    pairs = _record_rows(obj)
    if not cols and not rows and not pairs:
        return obj, []
    notes = []
    obj = obj.copy(deep=False)
    if pairs:
        value_col, hidden_rows = pairs
        obj = obj.astype({obj.columns[value_col]: object})
        obj.iloc[hidden_rows, value_col] = HIDDEN
        notes.append(
            f"note: {len(hidden_rows)} value(s) of column {repr_name(obj.columns[value_col])} "
            "hidden: the name beside them looks like a secret"
        )
    if cols:
        for pos in cols:
            obj.isetitem(pos, [HIDDEN] * len(obj))
        names = ", ".join(repr_name(obj.columns[pos]) for pos in cols)
        notes.append(f"note: the values of column(s) {names} are hidden: {HIDDEN[9:-1]}")
    if rows:
        obj = obj.astype(object)
        obj.iloc[rows, :] = HIDDEN
        notes.append(f"note: {len(rows)} row(s) hidden: their labels look like secrets")
    return obj, notes
