"""The paths ``describe`` takes (``name``, ``name.attr``, ``name["key"]``, ``name[0]`` and
chains of them): parsed, never evaluated, each step read through ``_static_read``; a step
whose name looks like a secret, or a step into the values of a pandas container that
holds secret-labelled values (or of a NumPy structured array or record with a field named
like a secret), is refused."""

from __future__ import annotations

import ast
import sys
from collections.abc import Mapping
from typing import Any

from nb_tools.jupyter._static_frames import holds_secrets, record_value_label, secret_levels
from nb_tools.jupyter._static_pandas import field_names, pandas_kind, plain_dtype, unreadable
from nb_tools.jupyter._static_read import (
    StaticReadError,
    _lookup,
    read_attr,
    read_item,
    trusted_type,
)
from nb_tools.jupyter._static_repr import secret_record_value
from nb_tools.sandbox import secret_name

__all__ = ["PathError", "last_name", "resolve_path", "secret_path"]


class PathError(ValueError):
    pass


def last_name(path: str) -> str:
    """The last name of a describe path: ``cfg`` in ``cfg``, ``key`` in ``a.key`` and in
    ``a["key"]`` ("" when it is not a name)."""
    try:
        node = ast.parse(path.strip(), mode="eval").body
    except SyntaxError:
        return ""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
        key = node.slice.value
        return (
            key if isinstance(key, str) else key.decode("latin-1") if isinstance(key, bytes) else ""
        )
    return ""


def resolve_path(path: str, ns: Mapping[str, Any]) -> Any:
    """``name``, ``name.attr``, ``name["key"]``, ``name[0]`` and chains of them; literal
    keys only, nothing is called or evaluated."""
    try:
        tree = ast.parse(path.strip(), mode="eval").body
    except SyntaxError:
        raise PathError(
            f"describe: {path!r} is not a variable name or path (use name, name.attr, "
            'name["key"] or name[0])'
        ) from None
    steps: list[tuple[str, Any]] = []
    node = tree
    while not isinstance(node, ast.Name):
        if isinstance(node, ast.Attribute):
            steps.append(("attr", node.attr))
            node = node.value
        elif isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
            steps.append(("item", node.slice.value))
            node = node.value
        else:
            raise PathError(
                f"describe: {path!r} has a part that is not an attribute or a literal key "
                "(calls, slices and expressions are not evaluated); use the python tool"
            )
    if node.id not in ns:
        raise PathError(
            f"describe: no variable {node.id!r} in the kernel; list_variables lists them"
        )
    value = ns[node.id]
    done = node.id
    for kind, key in reversed(steps):
        if secret_name(last_name(done)):  # a part of a secret is a secret: d["api_key"][0]
            raise PathError(secret_path(done))
        _check_step(value, done, key)
        try:
            value = read_attr(value, key, done) if kind == "attr" else read_item(value, key, done)
        except StaticReadError as exc:
            raise PathError(f"describe: {exc}") from None
        done += f".{key}" if kind == "attr" else f"[{key!r}]"
    return value


_LABEL_STEPS = frozenset(
    {"shape", "dtypes", "dtype", "ndim", "size", "empty", "index", "columns", "name", "names"}
)
"""What ``describe`` reads of a DataFrame or Series that holds values under secret-looking
labels, besides other labels: its structure, never its values by position or in bulk
(``values``, ``iloc``, ``T``, ``to_numpy``...)."""


def _field_name(value: Any, key: Any) -> str | None:
    """The field an integer index reads of a namedtuple (its class's ``_fields``)."""
    if not issubclass(type(value), tuple) or type(key) is not int:
        return None
    found = _lookup(type(value), "_fields")
    fields = found[1] if found is not None else None
    if type(fields) is not tuple or not -len(fields) <= key < len(fields):
        return None
    name = fields[key]
    return name if type(name) is str else None


_AXIS_STEPS = frozenset({"shape", "dtype", "dtypes", "ndim", "size", "empty", "name", "names"})
"""What ``describe`` reads of an axis named like a secret: its structure, not its labels."""


def _secret_fields(value: Any) -> list[str]:
    """The secret-looking field names (nested too) of a NumPy structured array or of one
    of its records (``numpy.void``), NumPy's own types only."""
    np = sys.modules.get("numpy")
    t = type(value)
    if np is None or not issubclass(t, (np.ndarray, np.void)) or not trusted_type(t):
        return []
    dtype = value.dtype
    if not plain_dtype(dtype) or not dtype.names:
        return []
    return [f for f in field_names(dtype) if secret_name(f)]


def secret_path(path: str) -> str:
    """Why ``describe`` does not show ``path``: its name looks like a secret."""
    return (
        f"describe: {path.strip()} is not shown: its name looks like a secret (an API key, a "
        "token, a password); the python tool can read it once the user approves"
    )


def _check_step(value: Any, done: str, key: Any) -> None:
    """On a pandas container that holds values under secret-looking labels, refuse any
    step but another label or its structure."""
    if secret_record_value(value, key):  # env[0]["value"] of {"name": "DB_PASSWORD", ...}
        raise PathError(secret_path(f"{done}[{key!r}] (the value of a secret-named entry)"))
    field = _field_name(value, key)
    if field is not None and secret_name(field):  # creds[1] of a namedtuple's token
        raise PathError(secret_path(f"{done}[{key!r}] (the field {field})"))
    secret_fields = _secret_fields(value)
    if secret_fields:
        names = value.dtype.names or ()
        if key in _AXIS_STEPS or (type(key) is str and key in names and not secret_name(key)):
            return
        raise PathError(
            f"describe: {done} has fields named like secrets ({', '.join(secret_fields)}); "
            "describe reads its other fields by name and its structure, but nothing by "
            "position (the python tool can, once the user approves)"
        )
    kind = pandas_kind(value)
    if kind == "Index" and not unreadable(value) and secret_levels(value):
        if key in _AXIS_STEPS:
            return
        raise PathError(
            f"describe: {done} is an axis named like a secret, so its labels are secrets; "
            "describe reads its structure only (the python tool can read it once the user "
            "approves)"
        )
    if kind not in ("DataFrame", "Series") or unreadable(value):
        return
    if key in _LABEL_STEPS or not holds_secrets(value):
        return
    labels = value.columns if pandas_kind(value) == "DataFrame" else value.index
    hidden = record_value_label(value)
    if type(key) is str and key != hidden and any(type(lb) is str and lb == key for lb in labels):
        return
    raise PathError(
        f"describe: {done} holds values under labels that look like secrets; describe "
        "reads its other columns and rows by label, and its structure, but nothing by "
        "position or in bulk (the python tool can, once the user approves)"
    )
