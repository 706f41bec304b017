"""``list_variables`` / ``describe`` and the ``python`` tool's model view, in process (no
kernel): what is listed, what is never evaluated, and the caps."""

from __future__ import annotations

import base64
import json
import sys
import types
from typing import ClassVar

import numpy as np
import pandas as pd
import pytest

from nb_tools.jupyter._kernel_tools import (
    MAX_DESCRIBE_CHARS,
    MAX_LIST_CHARS,
    DescribeTool,
    PathError,
    describe_value,
    list_user,
    resolve_path,
)
from nb_tools.jupyter._python_tool import _compile, for_model


class Watched:
    """Counts every repr/str and attribute read, to prove the listing does neither."""

    touched: ClassVar[list[str]] = []

    def __repr__(self) -> str:
        Watched.touched.append("repr")
        return "Watched()"

    def __str__(self) -> str:
        Watched.touched.append("str")
        return "Watched"


def test_only_user_variables_are_listed_and_nothing_is_repred() -> None:
    hidden = {"In": [], "Out": {}, "exit": object(), "get_ipython": lambda: None}
    ns = {
        **hidden,
        "_": 1,
        "__": 2,
        "_i3": "x",
        "_oh": {},
        "np": np,
        "helper": lambda: None,
        "Model": type("Model", (), {}),
        "json": types.ModuleType("json"),
        "frame": pd.DataFrame({"a": [1, 2], "b": ["x", None]}),
        "arr": np.zeros((3, 4), dtype="float32"),
        "n": 7,
        "name": "sales",
        "rows": [1, 2, 3],
        "thing": Watched(),
    }
    Watched.touched.clear()
    text = list_user(ns, hidden)
    frame_bytes = int(ns["frame"].memory_usage(deep=False).sum())  # type: ignore[attr-defined]
    assert text.splitlines() == [
        text.splitlines()[0],
        f"frame: DataFrame 2x2 [a:int64, b:{ns['frame'].dtypes['b']}] {frame_bytes} B",
        "arr: ndarray 3x4 float32 48 B",
        "n: int = 7",
        "name: str len 5 = 'sales'",
        f"rows: list len 3 {sys.getsizeof(ns['rows'])} B",
        "thing: test_kernel_views.Watched",
    ]
    assert text.startswith("6 user variables, ")
    assert Watched.touched == []
    assert list_user(ns, hidden, pattern="zzz") == "No user variables matching 'zzz' in the kernel."


def test_the_list_is_capped() -> None:
    ns = {f"variable_with_a_long_name_{i}": "x" * 30 for i in range(2000)}
    text = list_user(ns, {})
    assert len(text) < MAX_LIST_CHARS + 200
    assert text.splitlines()[-1].endswith(
        "more not shown (output cap); pass pattern= to narrow the list"
    )


def test_paths_take_literal_keys_only() -> None:
    ns = {"d": {"key": [10, 20]}, "m": types.SimpleNamespace(coef_=np.array([1.0, 2.0]))}
    assert resolve_path('d["key"][1]', ns) == 20
    assert resolve_path("m.coef_", ns).tolist() == [1.0, 2.0]
    for bad in ("d.pop('key')", "d[k]", "d['key'][0:1]", "__import__('os')", "1 + 1"):
        with pytest.raises(PathError, match=r"not evaluated|not a variable name"):
            resolve_path(bad, ns)
    assert ns["d"] == {"key": [10, 20]}
    with pytest.raises(PathError, match="no variable 'nope'"):
        resolve_path("nope", ns)
    with pytest.raises(PathError, match=r"d\['key'\] has no item 5"):
        resolve_path('d["key"][5]', ns)


def test_describe_a_big_frame_is_capped_and_summarised() -> None:
    n = 200_000
    df = pd.DataFrame({f"c{i}": np.arange(n) * i for i in range(80)} | {"text": ["row"] * n})
    text = describe_value("df", df)
    assert text.startswith("df: DataFrame, 200000 rows x 81 columns")
    assert "  … 21 more columns" in text
    result = DescribeTool(types.SimpleNamespace(user_ns={"df": df})).call('{"name": "df"}')
    assert len(result.content) <= MAX_DESCRIBE_CHARS + 200
    assert (
        result.content.endswith(f"of {len(text):,} characters]") or len(text) <= MAX_DESCRIBE_CHARS
    )


def test_describe_other_objects_and_errors() -> None:
    tool = DescribeTool(types.SimpleNamespace(user_ns={"xs": list(range(1000))}))
    text = tool.call('{"name": "xs"}').content
    assert text.startswith("xs: builtins.list, len 1000\n[0, 1, 2")
    assert len(text) < 400
    missing = tool.call('{"name": "ys"}')
    assert missing.is_error and "list_variables lists them" in missing.content


def test_last_expression_is_evaluated_apart_like_ipython() -> None:
    _, last, is_async = _compile("a = 1\na + 1", "<t>")
    assert last is not None and not is_async
    assert _compile("a = 1\na + 1;", "<t>")[1] is None  # a trailing ; hides the value
    assert _compile("import asyncio\nawait asyncio.sleep(0)", "<t>")[2] is True


def test_model_view_caps_text_and_attaches_images() -> None:
    png = base64.b64encode(b"\x89PNG fake").decode()
    outputs = [
        {"output_type": "stream", "name": "stdout", "text": "a" * 50_000},
        {"output_type": "display_data", "data": {"image/png": png, "text/plain": "<Figure>"}},
        {"output_type": "execute_result", "data": {"text/plain": "42"}, "execution_count": None},
    ]
    text, parts, seen = for_model(outputs, limit=1000)
    assert [p.media_type for p in parts] == ["image/png"] and parts[0].data == b"\x89PNG fake"
    full = "a" * 50_000 + "\n[image/png: image 1 attached]\nOut: 42"
    assert seen == {"total_chars": len(full), "model_saw": 1000}
    assert text.endswith(f"Out: 42\n[the model saw 1,000 of {len(full):,} characters]")


def test_live_edit_preview_names_the_cell_the_edit_inserts() -> None:
    from nb_tools.jupyter._live_notebook import LiveNotebook, LiveNotebookEdit

    nb = LiveNotebook()
    nb.take_snapshot({"path": "a.ipynb", "cells": [{"id": "c1", "cell_type": "code"}]})
    tool = LiveNotebookEdit(nb)
    args = '{"cell_id": "c1", "edit_mode": "insert", "cell_type": "code", "new_source": "1"}'
    change = tool.preview(args)
    edit, _, summary = tool._plan(json.loads(args))
    assert change.path == f"a.ipynb#{edit['cell']['id']}"
    assert summary.startswith(f"Inserted code cell {edit['cell']['id']} after cell c1")
    assert tool.preview(args) == change
    # the card says what it is, not "create a.ipynb#id" with a /dev/null header
    assert change.label == f"insert code cell {edit['cell']['id']} after cell c1"
    assert change.diff() == "@@ -0,0 +1 @@\n+1\n\\ No newline at end of file\n"


def test_the_python_card_shows_its_code_once_not_as_a_new_file() -> None:
    from nb_tools.jupyter._python_tool import PythonTool
    from nb_tools.tool._votes import preview_changes
    from nb_tools.transcript._html import tool_item_html

    args = json.dumps({"code": "total = 41 + 1"})
    assert preview_changes(PythonTool(), args) is None  # the code in its arguments is what runs
    html = tool_item_html(
        {"kind": "tool", "id": "c", "name": "python", "arguments": args, "status": "pending"}
    )
    assert html.count("total") == 1 and "python.py" not in html
