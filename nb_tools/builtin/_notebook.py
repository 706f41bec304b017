"""``notebook_read`` and ``notebook_edit``: Jupyter notebooks cell by cell, with nbformat.

Cells are named by their id. A notebook older than nbformat 4.5 has no ids: its cells are
shown as ``cell-0``, ``cell-1``, ... and an edit upgrades it to 4.5 with exactly those ids.
``notebook_edit`` previews the change as a cell diff (``Change.path`` is ``nb.ipynb#id``)
from the same plan the write applies; a new cell's id is derived from the notebook and the
call, so the preview and the write agree on it. Editing requires a full ``notebook_read``
(or ``read_file``) of the notebook first; a re-save that changes only outputs or metadata
does not count as a change.
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nb_tools.builtin._common import Args, ToolError, redact_output
from nb_tools.builtin._files import _FileTool, _Plan, _Writer
from nb_tools.builtin._readstate import ReadState
from nb_tools.builtin._textfile import TextFileError, load_text
from nb_tools.builtin._workspace import Workspace
from nb_tools.model import Part
from nb_tools.tool import Change, Info, Result, Schema

__all__ = ["NotebookEditTool", "NotebookReadTool"]


MAX_NOTEBOOK_BYTES = 50 * 1024 * 1024
MAX_OUTPUT_CHARS = 2000
MAX_NOTEBOOK_OUTPUT = 200_000
MAX_IMAGES = 4
MAX_IMAGE_BYTES = 5 * 1024 * 1024
_IMAGE_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def _source(cell: Mapping[str, Any]) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else str(src)


def _cut(text: str, limit: int = MAX_OUTPUT_CHARS) -> str:
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… [output cut: {len(text):,} characters, first {limit:,} shown]"


@dataclass
class _Notebook:
    path: Path
    shown: str
    data: bytes
    nb: Any  # nbformat.NotebookNode
    ids: list[str]

    def index_of(self, cell_id: str, tool: str) -> int:
        if cell_id in self.ids:
            return self.ids.index(cell_id)
        some = ", ".join(self.ids[:20]) + (", …" if len(self.ids) > 20 else "")
        raise ToolError(
            f"{tool}: {self.shown} has no cell with id {cell_id!r} (its cells: "
            f"{some or 'none'}); notebook_read lists the ids"
        )

    def fingerprint(self) -> str:
        return _fingerprint(self.nb, self.ids)


def _fingerprint(nb: Any, ids: list[str]) -> str:
    cells = [[i, c.get("cell_type"), _source(c)] for i, c in zip(ids, nb.cells, strict=True)]
    return hashlib.sha256(json.dumps(cells).encode()).hexdigest()


def _load(workspace: Workspace, raw: str, tool: str, *, for_write: bool = False) -> _Notebook:
    path = workspace.resolve(raw, for_write=for_write, tool=tool)
    shown = workspace.display(path)
    if path.suffix != ".ipynb":
        raise ToolError(f"{tool}: {shown} is not a notebook (.ipynb); use read_file/edit_file")
    try:
        tf = load_text(
            path,
            tool=tool,
            shown=shown,
            max_bytes=MAX_NOTEBOOK_BYTES,
            opener=workspace.opener(tool, write=for_write),
        )
    except FileNotFoundError:
        raise ToolError(f"{tool}: {shown} does not exist; use glob to find notebooks") from None
    try:
        raw_nb = json.loads(tf.text)
        import nbformat  # lazily: it imports jsonschema, which can take seconds

        nb = nbformat.from_dict(raw_nb)  # type: ignore[no-untyped-call]
        if nb.get("nbformat") != 4:
            nb = nbformat.convert(nb, 4)  # type: ignore[no-untyped-call]
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise ToolError(f"{tool}: {shown} is not a readable notebook: {exc}") from None
    if not isinstance(nb.get("cells"), list):
        raise ToolError(f"{tool}: {shown} is not a readable notebook: it has no cell list")
    ids = [str(c.get("id") or f"cell-{i}") for i, c in enumerate(nb.cells)]
    return _Notebook(path=path, shown=shown, data=tf.data, nb=nb, ids=ids)


class NotebookReadTool(_FileTool):
    """``notebook_read``: the cells of a notebook with ids, sources and output summaries."""

    name = "notebook_read"
    path_key = "notebook_path"
    reads_files = True

    def _make_info(self) -> Info:
        return Info(
            name=self.name,
            subject=self.subject,
            description=(
                "Read a Jupyter notebook (.ipynb) of the workspace: every cell with its id, "
                "type, source and a summary of its outputs (long text cut, images attached "
                "or noted). Pass cell_id to read one cell. Read the whole notebook before "
                "changing it with notebook_edit."
            ),
            parameters=Schema.object(
                {
                    "notebook_path": Schema.string(
                        "The notebook (relative to the workspace root, or absolute inside it)"
                    ),
                    "cell_id": Schema.string("Only this cell (an id from a full read)"),
                },
                "notebook_path",
            ),
            read_only=True,
            concurrent=True,
        )

    def _run(self, args: Args) -> Result:
        parsed = self._parse(args)
        raw = parsed["notebook_path"]
        nbk = _load(self.workspace, raw, self.name)
        cell_id = parsed.get("cell_id")
        indices = list(range(len(nbk.nb.cells)))
        if cell_id is not None:
            indices = [nbk.index_of(cell_id, self.name)]
        lang = nbk.nb.get("metadata", {}).get("language_info", {}).get("name") or (
            nbk.nb.get("metadata", {}).get("kernelspec", {}).get("language") or "unknown"
        )
        n = len(nbk.nb.cells)
        head = (
            f"Notebook {nbk.shown}: {n} cell{'s' if n != 1 else ''}, language {lang}"
            if cell_id is None
            else f"Notebook {nbk.shown}, cell {cell_id} of {n}:"
        )
        blocks = [head]
        parts: list[Part] = []
        size = len(head)
        cut_at: int | None = None
        for i in indices:
            block = self._cell(nbk.nb.cells[i], nbk.ids[i], i, parts)
            if len(blocks) > 1 and size + len(block) > MAX_NOTEBOOK_OUTPUT:
                cut_at = i
                break
            blocks.append(block)
            size += len(block) + 2
        meta: dict[str, Any] = {"path": nbk.shown, "cells": n}
        if self.workspace.is_protected(raw):
            meta["protected"] = True
        if cut_at is not None:
            rest = ", ".join(nbk.ids[cut_at:])
            blocks.append(
                f"(Output size limit reached: showing cells 0-{cut_at - 1} of {n}. Read the "
                f"others one at a time with cell_id: {rest})"
            )
            meta["partial"] = True
        elif cell_id is None:
            self.state.record(nbk.path, nbk.data, cells=nbk.fingerprint())
        text, hidden = redact_output("\n\n".join(blocks))  # sources and outputs alike
        if hidden:
            meta["secrets_hidden"] = hidden
        return Result(content=text, parts=parts, metadata=meta)

    def _cell(self, cell: Any, cell_id: str, index: int, parts: list[Part]) -> str:
        kind = cell.get("cell_type", "code")
        attrs = f'id="{cell_id}" type="{kind}" index="{index}"'
        if kind == "code" and cell.get("execution_count") is not None:
            attrs += f' execution_count="{cell["execution_count"]}"'
        lines = [f"<cell {attrs}>", _source(cell)]
        for out in cell.get("outputs", []) if kind == "code" else []:
            lines.append(self._output(out, parts))
        lines.append("</cell>")
        return "\n".join(lines)

    def _output(self, out: Any, parts: list[Part]) -> str:
        otype = out.get("output_type", "?")
        if otype == "stream":
            text = out.get("text", "")
            text = "".join(text) if isinstance(text, list) else str(text)
            text = text[:-1] if text.endswith("\n") else text
            return (
                f'<output type="stream" name="{out.get("name", "stdout")}">\n'
                f"{_cut(text)}\n</output>"
            )
        if otype == "error":
            tb = _ANSI.sub("", "\n".join(out.get("traceback", [])))
            return (
                f'<output type="error" ename="{out.get("ename", "")}">\n'
                f"{out.get('ename', '')}: {out.get('evalue', '')}\n{_cut(tb)}\n</output>"
            )
        data = out.get("data", {})
        body: list[str] = []
        for mime in _IMAGE_TYPES:
            if mime in data:
                body.append(self._image(mime, data[mime], parts))
                break
        else:
            if "image/svg+xml" in data:
                body.append("[image/svg+xml output]")
        if "text/plain" in data:
            text = data["text/plain"]
            body.append(_cut("".join(text) if isinstance(text, list) else str(text)))
        other = [m for m in data if m != "text/plain" and not m.startswith("image/")]
        if other:
            body.append(f"[also: {', '.join(other)}]")
        return f'<output type="{otype}">\n' + "\n".join(body) + "\n</output>"

    def _image(self, mime: str, b64: Any, parts: list[Part]) -> str:
        import base64
        import binascii

        text = "".join(b64) if isinstance(b64, list) else str(b64)
        try:
            data = base64.b64decode(text)
        except (binascii.Error, ValueError):
            return f"[{mime} output: unreadable base64]"
        if len(parts) >= MAX_IMAGES or len(data) > MAX_IMAGE_BYTES:
            return f"[{mime} output: {len(data):,} bytes, not attached]"
        parts.append(Part(kind="image", media_type=mime, data=data))
        return f"[{mime} output: attached as image {len(parts)}]"


class NotebookEditTool(_Writer):
    """``notebook_edit``: replace, insert or delete one cell."""

    name = "notebook_edit"
    path_key = "notebook_path"

    def __init__(
        self, workspace: Workspace, state: ReadState, *, current_notebook: Path | None = None
    ) -> None:
        super().__init__(workspace, state)
        self.current_notebook = current_notebook

    def _make_info(self) -> Info:
        return Info(
            name=self.name,
            subject=self.subject,
            description=(
                "Change one cell of a Jupyter notebook (.ipynb) in the workspace. "
                "edit_mode=replace (default) sets the source of cell_id (outputs of a code "
                "cell are cleared); insert adds a new cell after cell_id, or at the top "
                "without cell_id (cell_type is required); delete removes cell_id. Read the "
                "notebook with notebook_read first."
            ),
            parameters=Schema.object(
                {
                    "notebook_path": Schema.string(
                        "The notebook (relative to the workspace root, or absolute inside it)"
                    ),
                    "cell_id": Schema.string("The cell to replace or delete, or to insert after"),
                    "new_source": Schema.string("The new source of the cell"),
                    "cell_type": Schema(
                        type="string", enum=["code", "markdown"], description="The cell's type"
                    ),
                    "edit_mode": Schema(
                        type="string",
                        enum=["replace", "insert", "delete"],
                        default="replace",
                        description="What to do",
                    ),
                },
                "notebook_path",
            ),
            requires_approval=True,
        )

    def _is_current(self, path: Path) -> bool:
        current = self.current_notebook
        if current is None:
            name = os.environ.get("JPY_SESSION_NAME")
            if not name:
                return False
            cand = Path(name)
            if not cand.is_absolute():
                found = [p for p in (Path.cwd() / cand, Path.cwd() / cand.name) if p.exists()]
                if not found:
                    return False
                cand = found[0]
            current = cand
        return os.path.realpath(current) == os.path.realpath(path)

    def _plan(self, parsed: dict[str, Any]) -> _Plan:
        raw = parsed["notebook_path"]
        mode = parsed.get("edit_mode", "replace")
        cell_id: str | None = parsed.get("cell_id")
        source: str | None = parsed.get("new_source")
        cell_type: str | None = parsed.get("cell_type")
        try:
            nbk = _load(self.workspace, raw, self.name, for_write=True)
        except TextFileError as exc:
            raise ToolError(str(exc)) from None
        if self._is_current(nbk.path):
            raise ToolError(
                f"{self.name}: {nbk.shown} is the notebook this kernel runs in; its file on "
                "disk is not edited behind the open notebook (the user's next save would "
                "overwrite the change, or a revert would lose their unsaved work). Edit the "
                "open notebook with the live notebook tools (they need JupyterLab or "
                "Notebook 7 with the nb_tools extension), or edit another notebook."
            )
        problem = self.state.check(
            nbk.path,
            nbk.data,
            tool=self.name,
            shown=nbk.shown,
            cells=nbk.fingerprint(),
            reader="notebook_read",
        )
        if problem:
            raise ToolError(problem)
        nb = copy.deepcopy(nbk.nb)
        ids = list(nbk.ids)
        if mode != "delete" and source is None:
            raise ToolError(f"{self.name}: new_source is required for edit_mode={mode}")
        if mode == "insert":
            if cell_type is None:
                raise ToolError(
                    f"{self.name}: cell_type (code or markdown) is required for edit_mode=insert"
                )
            at = 0 if cell_id is None else nbk.index_of(cell_id, self.name) + 1
            new_id = _new_id(nbk.data, parsed, set(ids))
            import nbformat

            if cell_type == "code":
                cell = nbformat.v4.new_code_cell(source=source)  # type: ignore[no-untyped-call]
            else:
                cell = nbformat.v4.new_markdown_cell(source=source)  # type: ignore[no-untyped-call]
            cell["id"] = new_id
            nb.cells.insert(at, cell)
            ids.insert(at, new_id)
            before, after, target = None, source, new_id
            where = f"after cell {cell_id}" if cell_id else "at the top"
            summary = f"Inserted {cell_type} cell {new_id} {where} in {nbk.shown}"
        else:
            if cell_id is None:
                raise ToolError(f"{self.name}: cell_id is required for edit_mode={mode}")
            index = nbk.index_of(cell_id, self.name)
            target, before = cell_id, _source(nb.cells[index])
            if mode == "delete":
                del nb.cells[index]
                del ids[index]
                after = None
                summary = f"Deleted cell {cell_id} from {nbk.shown}"
            else:
                _replace(nb.cells[index], source or "", cell_type)
                after = source
                summary = f"Replaced the source of cell {cell_id} in {nbk.shown}"
        data = _serialise(nb, ids, self.name)
        return _Plan(
            path=nbk.path,
            shown=nbk.shown,
            data=data,
            summary=summary,
            change=Change(path=f"{nbk.shown}#{target}", before=before, after=after),
            cells=_fingerprint(nb, ids),
            protected=self.workspace.is_protected(raw),
        )


def _replace(cell: Any, source: str, cell_type: str | None) -> None:
    cell["source"] = source
    if cell_type is not None and cell_type != cell.get("cell_type"):
        cell["cell_type"] = cell_type
        if cell_type == "code":
            cell.pop("attachments", None)
        else:
            cell.pop("outputs", None)
            cell.pop("execution_count", None)
    if cell.get("cell_type") == "code":
        cell["outputs"] = []
        cell["execution_count"] = None


def _new_id(data: bytes, parsed: Mapping[str, Any], taken: set[str]) -> str:
    """An id shaped like nbformat's (8 hex digits), derived from the notebook and the call
    so that preview and write make the same one."""
    seed = hashlib.sha256(data + json.dumps(parsed, sort_keys=True).encode()).hexdigest()
    for i in range(0, len(seed) - 8):
        cand = seed[i : i + 8]
        if cand not in taken:
            return cand
    return hashlib.sha256(seed.encode()).hexdigest()[:8]  # pragma: no cover


def _serialise(nb: Any, ids: list[str], tool: str) -> bytes:
    if (nb.get("nbformat_minor") or 0) < 5:
        nb["nbformat_minor"] = 5
    for cell, cell_id in zip(nb.cells, ids, strict=True):
        cell["id"] = cell_id
    import nbformat

    try:
        nbformat.validate(nb)
    except nbformat.ValidationError as exc:
        raise ToolError(
            f"{tool}: the edited notebook would not be valid ({exc.message}); nothing was changed"
        ) from None
    text: str = nbformat.writes(nb)  # type: ignore[no-untyped-call]
    if not text.endswith("\n"):
        text += "\n"
    return text.encode("utf-8")
