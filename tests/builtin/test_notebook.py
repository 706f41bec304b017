"""notebook_read and notebook_edit on real nbformat notebooks."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import nbformat
import pytest

from nb_tools.builtin._notebook import NotebookEditTool, NotebookReadTool
from nb_tools.builtin._readstate import ReadState
from nb_tools.builtin._workspace import Workspace
from nb_tools.tool import Change

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)


@pytest.fixture
def reader(ws: Workspace, state: ReadState) -> NotebookReadTool:
    return NotebookReadTool(ws, state)


@pytest.fixture
def editor(ws: Workspace, state: ReadState) -> NotebookEditTool:
    return NotebookEditTool(ws, state)


def make_notebook(path: Path) -> None:
    nb = nbformat.v4.new_notebook()
    nb.metadata["language_info"] = {"name": "python"}
    md = nbformat.v4.new_markdown_cell("# Title")
    md["id"] = "intro"
    code = nbformat.v4.new_code_cell("print('hi')\n1 + 1", execution_count=3)
    code["id"] = "calc"
    code.outputs = [
        nbformat.v4.new_output("stream", name="stdout", text="hi\n"),
        nbformat.v4.new_output("execute_result", data={"text/plain": "2"}, execution_count=3),
    ]
    plot = nbformat.v4.new_code_cell("plot()", execution_count=4)
    plot["id"] = "plot"
    plot.outputs = [
        nbformat.v4.new_output(
            "display_data",
            data={"image/png": base64.b64encode(PNG).decode(), "text/plain": "<Figure>"},
        ),
        nbformat.v4.new_output(
            "error", ename="ValueError", evalue="bad", traceback=["\x1b[31mValueError\x1b[0m: bad"]
        ),
    ]
    nb.cells = [md, code, plot]
    nbformat.write(nb, path)


async def test_read_whole_notebook(reader: NotebookReadTool, root: Path, state: ReadState) -> None:
    make_notebook(root / "nb.ipynb")
    result = await reader.call({"notebook_path": "nb.ipynb"})
    assert not result.is_error, result.content
    assert result.content == "\n\n".join(
        [
            "Notebook nb.ipynb: 3 cells, language python",
            '<cell id="intro" type="markdown" index="0">\n# Title\n</cell>',
            '<cell id="calc" type="code" index="1" execution_count="3">\n'
            "print('hi')\n1 + 1\n"
            '<output type="stream" name="stdout">\nhi\n</output>\n'
            '<output type="execute_result">\n2\n</output>\n</cell>',
            '<cell id="plot" type="code" index="2" execution_count="4">\nplot()\n'
            '<output type="display_data">\n[image/png output: attached as image 1]\n<Figure>\n'
            "</output>\n"
            '<output type="error" ename="ValueError">\nValueError: bad\nValueError: bad\n'
            "</output>\n</cell>",
        ]
    )
    assert [(p.kind, p.media_type, p.data) for p in result.parts] == [("image", "image/png", PNG)]
    assert state.has_read(Workspace(root).root / "nb.ipynb")


async def test_read_one_cell_and_unknown_id(
    reader: NotebookReadTool, root: Path, state: ReadState
) -> None:
    make_notebook(root / "nb.ipynb")
    one = await reader.call({"notebook_path": "nb.ipynb", "cell_id": "intro"})
    assert one.content == (
        'Notebook nb.ipynb, cell intro of 3:\n\n<cell id="intro" type="markdown" index="0">\n'
        "# Title\n</cell>"
    )
    assert not state.has_read(Workspace(root).root / "nb.ipynb")
    bad = await reader.call({"notebook_path": "nb.ipynb", "cell_id": "nope"})
    assert bad.content == (
        "notebook_read: nb.ipynb has no cell with id 'nope' (its cells: intro, calc, plot); "
        "notebook_read lists the ids"
    )


async def test_long_output_is_cut(reader: NotebookReadTool, root: Path) -> None:
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("x")
    cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text="y" * 5000)]
    nb.cells = [cell]
    nbformat.write(nb, root / "long.ipynb")
    result = await reader.call({"notebook_path": "long.ipynb"})
    assert "y" * 2000 + "… [output cut: 5,000 characters, first 2,000 shown]" in result.content


async def test_not_a_notebook(reader: NotebookReadTool, root: Path) -> None:
    (root / "a.txt").write_text("x")
    (root / "broken.ipynb").write_text("{not json")
    assert (await reader.call({"notebook_path": "a.txt"})).content == (
        "notebook_read: a.txt is not a notebook (.ipynb); use read_file/edit_file"
    )
    broken = await reader.call({"notebook_path": "broken.ipynb"})
    assert broken.content.startswith("notebook_read: broken.ipynb is not a readable notebook")


async def test_edit_requires_read(editor: NotebookEditTool, root: Path) -> None:
    make_notebook(root / "nb.ipynb")
    result = await editor.call({"notebook_path": "nb.ipynb", "cell_id": "calc", "new_source": "x"})
    assert result.content == (
        "notebook_edit: nb.ipynb has not been read yet; read it first with notebook_read (the "
        "whole file), then retry"
    )


async def test_replace_clears_outputs_and_keeps_ids(
    reader: NotebookReadTool, editor: NotebookEditTool, root: Path
) -> None:
    make_notebook(root / "nb.ipynb")
    await reader.call({"notebook_path": "nb.ipynb"})
    args = {"notebook_path": "nb.ipynb", "cell_id": "calc", "new_source": "2 + 2"}
    change = editor.preview(args)
    assert change == Change(path="nb.ipynb#calc", before="print('hi')\n1 + 1", after="2 + 2")
    result = await editor.call(args)
    assert result.content == "Replaced the source of cell calc in nb.ipynb"
    nb = nbformat.read(root / "nb.ipynb", as_version=4)
    nbformat.validate(nb)
    assert [c.id for c in nb.cells] == ["intro", "calc", "plot"]
    assert nb.cells[1].source == "2 + 2"
    assert nb.cells[1].outputs == [] and nb.cells[1].execution_count is None
    assert len(nb.cells[2].outputs) == 2  # other cells untouched


async def test_insert_and_delete(
    reader: NotebookReadTool, editor: NotebookEditTool, root: Path
) -> None:
    make_notebook(root / "nb.ipynb")
    await reader.call({"notebook_path": "nb.ipynb"})
    args = {
        "notebook_path": "nb.ipynb",
        "cell_id": "intro",
        "new_source": "import os",
        "cell_type": "code",
        "edit_mode": "insert",
    }
    preview = editor.preview(args)
    result = await editor.call(args)
    nb = nbformat.read(root / "nb.ipynb", as_version=4)
    new_id = nb.cells[1].id
    assert preview.path == f"nb.ipynb#{new_id}" and preview.kind == "create"
    assert result.content == f"Inserted code cell {new_id} after cell intro in nb.ipynb"
    assert [c.id for c in nb.cells] == ["intro", new_id, "calc", "plot"]
    top = await editor.call(
        {
            "notebook_path": "nb.ipynb",
            "new_source": "# top",
            "cell_type": "markdown",
            "edit_mode": "insert",
        }
    )
    assert "at the top" in top.content
    deleted = await editor.call(
        {"notebook_path": "nb.ipynb", "cell_id": "plot", "edit_mode": "delete"}
    )
    assert deleted.content == "Deleted cell plot from nb.ipynb"
    nb = nbformat.read(root / "nb.ipynb", as_version=4)
    nbformat.validate(nb)
    assert [c.source for c in nb.cells] == ["# top", "# Title", "import os", "print('hi')\n1 + 1"]
    need_type = await editor.call(
        {"notebook_path": "nb.ipynb", "new_source": "x", "edit_mode": "insert"}
    )
    assert need_type.content == (
        "notebook_edit: cell_type (code or markdown) is required for edit_mode=insert"
    )


async def test_change_cell_type(
    reader: NotebookReadTool, editor: NotebookEditTool, root: Path
) -> None:
    make_notebook(root / "nb.ipynb")
    await reader.call({"notebook_path": "nb.ipynb"})
    await editor.call(
        {
            "notebook_path": "nb.ipynb",
            "cell_id": "calc",
            "new_source": "text",
            "cell_type": "markdown",
        }
    )
    nb = nbformat.read(root / "nb.ipynb", as_version=4)
    nbformat.validate(nb)
    assert nb.cells[1].cell_type == "markdown" and "outputs" not in nb.cells[1]


async def test_resave_of_outputs_only_needs_no_reread(
    reader: NotebookReadTool, editor: NotebookEditTool, root: Path
) -> None:
    make_notebook(root / "nb.ipynb")
    await reader.call({"notebook_path": "nb.ipynb"})
    nb = nbformat.read(root / "nb.ipynb", as_version=4)
    nb.cells[1].outputs = []
    nb.metadata["touched"] = True
    nbformat.write(nb, root / "nb.ipynb")
    ok = await editor.call({"notebook_path": "nb.ipynb", "cell_id": "intro", "new_source": "#"})
    assert not ok.is_error, ok.content
    nb = nbformat.read(root / "nb.ipynb", as_version=4)
    nb.cells[0].source = "changed by the user"
    nbformat.write(nb, root / "nb.ipynb")
    refused = await editor.call(
        {"notebook_path": "nb.ipynb", "cell_id": "intro", "new_source": "#"}
    )
    assert "has changed since you read it" in refused.content


async def test_old_notebook_without_ids(
    reader: NotebookReadTool, editor: NotebookEditTool, root: Path
) -> None:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("a"), nbformat.v4.new_code_cell("b")]
    d = json.loads(nbformat.writes(nb))
    d["nbformat_minor"] = 4
    for c in d["cells"]:
        del c["id"]
    (root / "old.ipynb").write_text(json.dumps(d))
    shown = await reader.call({"notebook_path": "old.ipynb"})
    assert '<cell id="cell-1" type="code" index="1">' in shown.content
    await editor.call({"notebook_path": "old.ipynb", "cell_id": "cell-1", "new_source": "c"})
    nb = nbformat.read(root / "old.ipynb", as_version=4)
    nbformat.validate(nb)
    assert nb.nbformat_minor == 5
    assert [(c.id, c.source) for c in nb.cells] == [("cell-0", "a"), ("cell-1", "c")]


async def test_refuses_the_kernels_own_notebook(
    root: Path, ws: Workspace, state: ReadState
) -> None:
    make_notebook(root / "nb.ipynb")
    before = (root / "nb.ipynb").read_bytes()
    await NotebookReadTool(ws, state).call({"notebook_path": "nb.ipynb"})
    editor = NotebookEditTool(ws, state, current_notebook=root / "nb.ipynb")
    result = await editor.call(
        {"notebook_path": "nb.ipynb", "cell_id": "intro", "new_source": "# New"}
    )
    assert result.is_error
    assert "nb.ipynb is the notebook this kernel runs in" in result.content
    assert "live notebook tools" in result.content
    assert (root / "nb.ipynb").read_bytes() == before
    other = NotebookEditTool(ws, state, current_notebook=root / "other.ipynb")
    result = await other.call(
        {"notebook_path": "nb.ipynb", "cell_id": "intro", "new_source": "# Newer"}
    )
    assert not result.is_error
    assert "# Newer" in (root / "nb.ipynb").read_text()


def test_schemas(reader: NotebookReadTool, editor: NotebookEditTool) -> None:
    assert reader.info().read_only and not reader.info().requires_approval
    info = editor.info()
    assert info.requires_approval and not info.read_only
    assert info.parameters is not None
    props = info.parameters.to_dict()["properties"]
    assert props["edit_mode"]["enum"] == ["replace", "insert", "delete"]
    assert props["cell_type"]["enum"] == ["code", "markdown"]
    assert info.parameters.to_dict()["required"] == ["notebook_path"]


async def test_huge_notebook_is_shown_in_part(
    reader: NotebookReadTool, root: Path, state: ReadState
) -> None:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("z" * 90_000) for _ in range(4)]
    for i, cell in enumerate(nb.cells):
        cell["id"] = f"m{i}"
    nbformat.write(nb, root / "huge.ipynb")
    result = await reader.call({"notebook_path": "huge.ipynb"})
    assert result.content.endswith(
        "(Output size limit reached: showing cells 0-1 of 4. Read the others one at a time "
        "with cell_id: m2, m3)"
    )
    assert result.metadata["partial"] is True
    assert not state.has_read(Workspace(root).root / "huge.ipynb")


def test_nbformat_is_imported_only_when_used() -> None:
    """nbformat imports jsonschema (seconds on some machines): not at import time."""
    import subprocess
    import sys

    code = "import sys, nb_tools.builtin._notebook; print('nbformat' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


async def test_current_notebook_from_jpy_session_name(
    root: Path, state: ReadState, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_notebook(root / "nb.ipynb")
    before = (root / "nb.ipynb").read_bytes()
    ws = Workspace(root)
    await NotebookReadTool(ws, state).call({"notebook_path": "nb.ipynb"})
    monkeypatch.setenv("JPY_SESSION_NAME", str(root / "nb.ipynb"))
    result = await NotebookEditTool(ws, state).call(
        {"notebook_path": "nb.ipynb", "cell_id": "intro", "new_source": "# From env"}
    )
    assert result.is_error and "this kernel runs in" in result.content
    assert (root / "nb.ipynb").read_bytes() == before
    monkeypatch.setenv("JPY_SESSION_NAME", str(root / "elsewhere.ipynb"))
    result = await NotebookEditTool(ws, state).call(
        {"notebook_path": "nb.ipynb", "cell_id": "intro", "new_source": "# Again"}
    )
    assert not result.is_error and "# Again" in (root / "nb.ipynb").read_text()
