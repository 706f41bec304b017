"""The kernel's side of the ``nb_tools.notebook`` comm (docs/comm.md) and the live
``notebook_read`` / ``notebook_edit`` tools on the open notebook.

The first live call of each ``%%agent`` run opens the comm (closing the previous one), so
a frontend that connected or reloaded since still answers; a run that uses no live tool
sends nothing. Every frontend with the extension answers
``hello``; the first one becomes the leader and is the only one that applies edits, so two
windows on one notebook apply an edit once. Requests are awaited (the agent loop runs in an
awaiting cell, and ipykernel >= 7.4 handles comm messages while a cell awaits) through the
one wake loop (``wait_waking``), so an Interrupt acts fast. Nothing here writes to disk:
the frontend edits its document model in one transaction per run, and the user saves.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import time
from collections.abc import Mapping
from typing import Any

from nb_tools.sandbox import redact_secret_text
from nb_tools.tool import Change, Info, Result, Schema, Subject, Tool
from nb_tools.tool._tasks import wait_waking
from nb_tools.tool._votes import is_protected_call, needs_approval, preview_changes

__all__ = ["PROTOCOL", "TARGET", "LiveNotebook", "live", "live_tools"]

TARGET = "nb_tools.notebook"
PROTOCOL = 1
HELLO_WAIT = 2.0
"""How long a first request waits for a frontend's ``hello`` before saying none is there."""
REQUEST_TIMEOUT = 15.0
HELLO_POLL = 0.05
MAX_READ_CHARS = 60_000
MAX_OUTPUT_CHARS = 2_000

NO_FRONTEND = (
    "{tool}: no JupyterLab or Notebook 7 window with the nb_tools extension is connected to "
    "this kernel (the notebook may be run by nbclient, papermill or VS Code, or the "
    "extension is not installed), so the open notebook cannot be {what}. Use python to "
    "compute, or the disk tools (--builtins) on other notebooks."
)


class FrontendError(RuntimeError):
    pass


class LiveNotebook:
    """The comm to the frontends of this kernel's notebook."""

    def __init__(self) -> None:
        self.comm: Any = None
        self.clients: dict[str, dict[str, Any]] = {}
        self.leader: str | None = None
        self.opened_at = 0.0
        self.snapshot: dict[str, Any] | None = None  # the last one received
        self.snapshot_at = 0.0
        self.turn: str = ""  # the run the edits belong to (one undo step)
        self.comm_turn: str | None = None  # the run the comm was opened in
        self._pending: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self._next = 0
        self._loop: asyncio.AbstractEventLoop | None = None

    # -- connection ----------------------------------------------------------------------

    def open(self, turn: str = "") -> None:
        """Open (or re-open) the comm; frontends answer with ``hello``."""
        from comm import create_comm

        if self.comm is not None:
            with contextlib.suppress(Exception):  # closed or broken: a new one replaces it
                self.comm.close()
        self.clients.clear()
        self.leader = None
        try:
            self._loop = asyncio.get_running_loop()
        except RuntimeError:
            self._loop = None
        if turn:
            self.turn = turn
        self.comm_turn = self.turn
        self.comm = create_comm(target_name=TARGET, data={"protocol": PROTOCOL})
        self.comm.on_msg(self._on_msg)
        self.opened_at = time.monotonic()

    @property
    def connected(self) -> bool:
        return self.leader is not None

    def _on_msg(self, msg: Mapping[str, Any]) -> None:
        data = msg.get("content", {}).get("data", {})
        if not isinstance(data, dict):
            return
        kind = data.get("type")
        if kind == "hello":
            client = str(data.get("client", ""))
            self.clients[client] = data
            if self.leader is None:
                self.leader = client
        elif kind == "snapshot":  # pushed by the frontend before an agent cell runs
            self.take_snapshot(data.get("snapshot"))
        elif kind == "reply":
            fut = self._pending.pop(int(data.get("id", -1)), None)
            if fut is not None and not fut.done():
                loop = fut.get_loop()
                loop.call_soon_threadsafe(_resolve, fut, data)

    def take_snapshot(self, snap: Any) -> None:
        """Keep ``snap`` (the frontend's notebook, with its cells) as the latest snapshot."""
        if isinstance(snap, dict) and isinstance(snap.get("cells"), list):
            self.snapshot = snap
            self.snapshot_at = time.monotonic()

    def new_run(self) -> None:
        """A new ``%%agent`` run: its edits are a new undo step, and its first live call
        re-opens the comm (a window that connected or reloaded since answers too). Runs
        that use no live tool send nothing."""
        self.turn = f"{time.time():.6f}"

    async def wait_for_frontend(self, timeout: float = HELLO_WAIT) -> bool:
        if self.comm is None or self.comm_turn != self.turn:
            self.open()
        deadline = self.opened_at + timeout
        while self.leader is None and time.monotonic() < deadline:
            await asyncio.sleep(HELLO_POLL)
        return self.leader is not None

    async def request(
        self, op: str, timeout: float = REQUEST_TIMEOUT, **fields: Any
    ) -> dict[str, Any]:
        """Send ``op`` to the leader and await its reply; raises ``FrontendError``."""
        if not await self.wait_for_frontend():
            raise FrontendError("no frontend")
        loop = asyncio.get_running_loop()
        self._next += 1
        rid = self._next
        fut: asyncio.Future[dict[str, Any]] = loop.create_future()
        self._pending[rid] = fut
        self.comm.send({"type": "request", "id": rid, "leader": self.leader, "op": op, **fields})
        try:
            reply = await wait_waking(fut, timeout=timeout)
        except TimeoutError:
            gone = self.leader
            self.clients.pop(gone or "", None)
            self.leader = next(iter(self.clients), None)
            raise FrontendError(
                f"the notebook's frontend did not answer {op!r} in {timeout:.0f} s "
                "(was its window closed?)"
            ) from None
        finally:
            self._pending.pop(rid, None)
        if not reply.get("ok"):
            raise FrontendError(str(reply.get("error") or f"{op} failed"))
        return reply

    async def read(self) -> dict[str, Any]:
        reply = await self.request("snapshot")
        self.take_snapshot(reply.get("snapshot"))
        if self.snapshot is None:
            raise FrontendError("the frontend sent no snapshot")
        return self.snapshot


def _resolve(fut: asyncio.Future[dict[str, Any]], data: dict[str, Any]) -> None:
    if not fut.done():
        fut.set_result(data)


_live: LiveNotebook | None = None


def live() -> LiveNotebook:
    global _live
    if _live is None:
        _live = LiveNotebook()
    return _live


# -- rendering the snapshot for the model ------------------------------------------------


def _text(value: Any) -> str:
    return "".join(value) if isinstance(value, list) else str(value or "")


def _cut(text: str, limit: int = MAX_OUTPUT_CHARS) -> str:
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… [output cut: {len(text):,} characters, first {limit:,} shown]"


def output_text(out: Mapping[str, Any]) -> str:
    kind = out.get("output_type", "?")
    if kind == "stream":
        return (
            f'<output type="stream" name="{out.get("name", "stdout")}">\n'
            + _cut(_text(out.get("text")).rstrip("\n"))
            + "\n</output>"
        )
    if kind == "error":
        import re

        tb = re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", "\n".join(out.get("traceback") or []))
        return (
            f'<output type="error" ename="{out.get("ename", "")}">\n'
            f"{out.get('ename', '')}: {out.get('evalue', '')}\n{_cut(tb)}\n</output>"
        )
    data = out.get("data") or {}
    if "application/vnd.jupyter.widget-view+json" in data:
        return f'<output type="{kind}">\n[a live widget]\n</output>'
    body = [f"[{m} output]" for m in data if m.startswith("image/")]
    if "text/plain" in data:
        body.append(_cut(_text(data["text/plain"])))
    other = [m for m in data if m != "text/plain" and not m.startswith("image/")]
    if other:
        body.append(f"[also: {', '.join(other)}]")
    return f'<output type="{kind}">\n' + "\n".join(body) + "\n</output>"


def cell_text(cell: Mapping[str, Any], index: int) -> str:
    kind = cell.get("cell_type", "code")
    attrs = f'id="{cell.get("id")}" type="{kind}" index="{index}"'
    if kind == "code" and cell.get("execution_count") is not None:
        attrs += f' execution_count="{cell["execution_count"]}"'
    lines = [f"<cell {attrs}>", _text(cell.get("source"))]
    lines += [output_text(o) for o in cell.get("outputs") or [] if kind == "code"]
    lines.append("</cell>")
    return "\n".join(lines)


def render(snap: Mapping[str, Any], cell_id: str | None = None) -> str:
    cells = list(snap.get("cells") or [])
    path = snap.get("path") or "the open notebook"
    dirty = " (unsaved changes)" if snap.get("dirty") else ""
    if cell_id is not None:
        for i, c in enumerate(cells):
            if c.get("id") == cell_id:
                return f"Open notebook {path}{dirty}, cell {cell_id} of {len(cells)}:\n" + (
                    cell_text(c, i)
                )
        raise KeyError(cell_id)
    head = f"Open notebook {path}{dirty}: {len(cells)} cells (live: what the user sees now)"
    blocks = [head]
    size = len(head)
    for i, c in enumerate(cells):
        block = cell_text(c, i)
        if size + len(block) > MAX_READ_CHARS and len(blocks) > 1:
            rest = ", ".join(str(x.get("id")) for x in cells[i:])
            blocks.append(f"(Size limit reached: cells {i}-{len(cells) - 1} not shown: {rest})")
            break
        blocks.append(block)
        size += len(block) + 2
    return "\n\n".join(blocks)


def _parse(args: str | bytes | Mapping[str, Any]) -> dict[str, Any]:
    return dict(args) if isinstance(args, Mapping) else json.loads(args or "{}")


def _is_other_notebook(path: str | None, snap_path: str | None) -> bool:
    if not path:
        return False
    if snap_path and (
        os.path.normpath(path) == os.path.normpath(snap_path)
        or os.path.basename(path) == os.path.basename(snap_path)
    ):
        return False
    name = os.environ.get("JPY_SESSION_NAME") or ""
    return not (name and os.path.realpath(path) == os.path.realpath(name))


# -- the tools -----------------------------------------------------------------------------


class LiveNotebookRead:
    """``notebook_read`` on the open document (unsaved edits included)."""

    def __init__(self, notebook: LiveNotebook, disk: Tool | None = None) -> None:
        self.nb = notebook
        self.disk = disk

    def info(self) -> Info:
        return Info(
            name="notebook_read",
            description=(
                "Read the notebook open in the user's browser, live (unsaved edits "
                "included): every cell with its id, type, source, outputs as text and "
                "execution count. Pass cell_id for one cell. Read it before notebook_edit."
            ),
            parameters=Schema.object(
                {
                    "notebook_path": Schema.string(
                        "Leave out for the open notebook; another path reads that file"
                    ),
                    "cell_id": Schema.string("Only this cell"),
                }
            ),
            read_only=True,
            concurrent=True,
            subject=Subject(arg="notebook_path", kind="path", reads_files=True),
        )

    # Another notebook is the disk tool's call: the pipeline gets the disk tool's votes
    # (a protected notebook asks, as the disk tool's own call would).
    def is_protected_call(self, args: str | bytes) -> bool:
        disk = _disk_for(self.disk, self.nb, args)
        return disk is not None and is_protected_call(disk, args)

    def requires_approval_for(self, args: str | bytes) -> bool:
        disk = _disk_for(self.disk, self.nb, args)
        return disk is not None and needs_approval(disk, args)

    async def call(self, args: str | bytes) -> Result:
        parsed = _parse(args)
        snap_path = (self.nb.snapshot or {}).get("path")
        other = _other_notebook(self.disk, parsed, snap_path, "notebook_read")
        if other is not None:
            return await other
        try:
            snap = await self.nb.read()
        except FrontendError as exc:
            if str(exc) == "no frontend":
                return Result.error(NO_FRONTEND.format(tool="notebook_read", what="read live"))
            return Result.error(f"notebook_read: {exc}")
        cell_id = parsed.get("cell_id")
        try:
            text = render(snap, cell_id)
        except KeyError:
            ids = ", ".join(str(c.get("id")) for c in snap["cells"][:30])
            return Result.error(
                f"notebook_read: the open notebook has no cell {cell_id!r} (its cells: {ids})"
            )
        meta = {"path": snap.get("path"), "cells": len(snap["cells"]), "live": True}
        # a cell's output may hold what it printed (os.environ): no secret without a click
        return Result(content=redact_secret_text(text)[0], metadata=meta)


def _disk_for(disk: Tool | None, nb: LiveNotebook, args: str | bytes) -> Tool | None:
    """The disk tool a call goes to (``notebook_path`` names another notebook than the
    open one), or ``None``: the open notebook, or no disk tool (the call refuses). A call
    whose arguments do not parse is the disk tool's too, when there is one (fail closed:
    its votes are asked)."""
    if disk is None:
        return None
    try:
        parsed = _parse(args)
    except (ValueError, TypeError):
        return disk
    if not isinstance(parsed, dict):
        return disk
    path = parsed.get("notebook_path")
    if path is not None and not isinstance(path, str):
        return disk
    return disk if _is_other_notebook(path, (nb.snapshot or {}).get("path")) else None


def _other_notebook(
    disk: Tool | None, parsed: Mapping[str, Any], snap_path: str | None, name: str
) -> Any:
    """The disk tool's call (a coroutine) when ``notebook_path`` names another notebook
    than the open one, an error when there is no disk tool, ``None`` for the open one."""
    path = parsed.get("notebook_path")
    if not _is_other_notebook(path, snap_path):
        return None
    if disk is not None:
        return _call(disk, parsed)

    async def refuse() -> Result:
        return Result.error(
            f"{name}: {path} is not the notebook open in this kernel's window"
            f"{f' ({snap_path})' if snap_path else ''}; only the open notebook is live. "
            "Leave notebook_path out for it, or run %%agent --builtins to work on other "
            "notebooks on disk."
        )

    return refuse()


async def _call(tool: Tool, parsed: Mapping[str, Any]) -> Result:
    value = tool.call(json.dumps(dict(parsed)))
    if asyncio.iscoroutine(value) or isinstance(value, asyncio.Future):
        value = await value
    return value if isinstance(value, Result) else Result(content=str(value))


class LiveNotebookEdit:
    """``notebook_edit`` on the open document: one transaction per ``%%agent`` run."""

    preview_language = "python"

    def __init__(self, notebook: LiveNotebook, disk: Tool | None = None) -> None:
        self.nb = notebook
        self.disk = disk
        # args -> the cell source the card showed (its preview's "before"): the edit
        # expects it, so a cell changed since the card (a live edit the model's own
        # notebook_read then picked up) is refused by the frontend, never overwritten.
        self._shown: dict[str, str] = {}

    def info(self) -> Info:
        return Info(
            name="notebook_edit",
            description=(
                "Change the notebook open in the user's browser, live (nothing is saved: "
                "the user saves). edit_mode=replace (default) sets the source of cell_id; "
                "insert adds a new cell after cell_id (at the top without it; cell_type "
                "required); delete removes cell_id; move puts cell_id after after_cell_id "
                "(at the top without it). run=true runs a code cell in the kernel after the "
                "edit and puts its outputs in the cell. Read the notebook first. The user "
                "approves each edit and can undo all of this run's edits with one undo."
            ),
            parameters=Schema.object(
                {
                    "notebook_path": Schema.string(
                        "Leave out for the open notebook; another path edits that file"
                    ),
                    "cell_id": Schema.string(
                        "The cell to replace, delete or move, or to insert after"
                    ),
                    "new_source": Schema.string("The new source of the cell"),
                    "cell_type": Schema(
                        type="string", enum=["code", "markdown"], description="The cell's type"
                    ),
                    "edit_mode": Schema(
                        type="string",
                        enum=["replace", "insert", "delete", "move"],
                        default="replace",
                        description="What to do",
                    ),
                    "after_cell_id": Schema.string("move: the cell to put it after"),
                    "run": Schema.boolean("Run the (code) cell after the edit"),
                }
            ),
            requires_approval=True,
            subject=Subject(arg="notebook_path", kind="path", runs_code=_runs),
        )

    # -- the plan: preview and call share it --------------------------------------------

    def _plan(self, parsed: Mapping[str, Any]) -> tuple[dict[str, Any], Change, str]:
        snap = self.nb.snapshot
        if snap is None:
            raise ValueError(
                "notebook_edit: read the open notebook with notebook_read first (the edit "
                "needs its cell ids)"
            )
        cells = snap["cells"]
        ids = [str(c.get("id")) for c in cells]
        mode = parsed.get("edit_mode") or "replace"
        cell_id = parsed.get("cell_id")
        source = parsed.get("new_source")
        kind = parsed.get("cell_type")
        path = snap.get("path") or "notebook"

        def index_of(cid: Any) -> int:
            if cid not in ids:
                some = ", ".join(ids[:30])
                raise ValueError(
                    f"notebook_edit: the open notebook has no cell {cid!r} (its cells: "
                    f"{some}); notebook_read shows the current ids"
                )
            return ids.index(cid)

        if mode != "delete" and mode != "move" and source is None:
            raise ValueError(f"notebook_edit: new_source is required for edit_mode={mode}")
        if mode == "insert":
            if kind is None:
                raise ValueError("notebook_edit: cell_type (code or markdown) is required")
            after = None if cell_id is None else ids[index_of(cell_id)]
            new_id = _new_id(ids, parsed)
            edit = {
                "action": "insert",
                "after": after,
                "cell": {"id": new_id, "cell_type": kind, "source": source},
            }
            where = f"after cell {after}" if after else "at the top"
            label = f"insert {kind} cell {new_id} {where}"
            return (
                edit,
                Change(path=f"{path}#{new_id}", before=None, after=source, label=label),
                (f"Inserted {kind} cell {new_id} {where} in the open notebook"),
            )
        if cell_id is None:
            raise ValueError(f"notebook_edit: cell_id is required for edit_mode={mode}")
        i = index_of(cell_id)
        before = _text(cells[i].get("source"))
        if mode == "delete":
            edit = {"action": "delete", "cell_id": cell_id, "expect": before}
            label = f"delete cell {cell_id}"
            change = Change(path=f"{path}#{cell_id}", before=before, after=None, label=label)
            return edit, change, f"Deleted cell {cell_id} from the open notebook"
        if mode == "move":
            after = parsed.get("after_cell_id")
            if after is not None:
                index_of(after)
            edit = {"action": "move", "cell_id": cell_id, "after": after}
            where = f"after cell {after}" if after else "to the top"
            label = f"move cell {cell_id} {where}"
            change = Change(path=f"{path}#{cell_id}", before=before, after=before, label=label)
            return edit, change, f"Moved cell {cell_id} {where}"
        edit = {
            "action": "replace",
            "cell_id": cell_id,
            "source": source,
            "cell_type": kind,
            "expect": before,
        }
        change = Change(path=f"{path}#{cell_id}", before=before, after=source)
        return edit, change, f"Replaced the source of cell {cell_id} in the open notebook"

    def is_protected_call(self, args: str | bytes) -> bool:
        disk = _disk_for(self.disk, self.nb, args)
        return disk is not None and is_protected_call(disk, args)

    def preview(self, args: str | bytes) -> Change:
        disk = _disk_for(self.disk, self.nb, args)
        if disk is not None:  # the card shows the file that is written, not the open one
            changes = preview_changes(disk, args)
            if not changes:
                raise ValueError("notebook_edit: no preview of the other notebook")
            return changes[0]
        edit, change, _ = self._plan(_parse(args))
        if "expect" in edit:
            if len(self._shown) > 256:  # previews of calls that never ran
                self._shown.clear()
            self._shown[_key(args)] = edit["expect"]
        return change

    async def call(self, args: str | bytes) -> Result:
        parsed = _parse(args)
        snap_path = (self.nb.snapshot or {}).get("path")
        other = _other_notebook(self.disk, parsed, snap_path, "notebook_edit")
        if other is not None:
            return await other
        if not await self.nb.wait_for_frontend():
            return Result.error(NO_FRONTEND.format(tool="notebook_edit", what="edited"))
        try:
            edit, change, summary = self._plan(parsed)
        except ValueError as exc:
            return Result.error(str(exc))
        shown = self._shown.pop(_key(args), None)
        if shown is not None and "expect" in edit:
            edit["expect"] = shown  # what the card showed, not a newer snapshot's text
            change = Change(path=change.path, before=shown, after=change.after, label=change.label)
        meta: dict[str, Any] = {"live": True, "edit": edit}
        run = bool(parsed.get("run"))
        cell = edit.get("cell") or {}
        target = cell.get("id") or edit.get("cell_id")
        kind = cell.get("cell_type") or edit.get("cell_type")
        if run and edit["action"] in ("insert", "replace"):
            if kind is None:
                kind = _cell_type(self.nb.snapshot, target)
            if kind != "code":
                return Result.error("notebook_edit: run=true needs a code cell")
        text = summary
        parts: list[Any] = []
        if run and edit["action"] in ("insert", "replace"):
            from nb_tools.jupyter._kernel_tools import _shell
            from nb_tools.jupyter._python_tool import for_model, run_code

            ip = _shell()
            code = str(parsed.get("new_source") or "")
            count = _count_as_cell(ip)
            outputs, _, interrupted = await run_code(ip, code)
            outputs = _for_notebook(outputs, count)
            seen, parts, counts = for_model(outputs)
            edit["outputs"] = outputs
            edit["execution_count"] = count
            meta.update(outputs=outputs, **counts)
            text += f"; ran it as [{count}]"
            text += ":\n" + seen if seen else ", no output"
            if interrupted:
                text += "\nInterrupted by the user (KeyboardInterrupt)."
        try:
            reply = await self.nb.request("edit", turn=self.nb.turn, edits=[edit])
        except FrontendError as exc:
            if str(exc) == "no frontend":
                return Result.error(NO_FRONTEND.format(tool="notebook_edit", what="edited"))
            return Result.error(f"notebook_edit: the open notebook was not changed: {exc}")
        self.nb.take_snapshot(reply.get("snapshot"))
        meta["changes"] = [change]
        if edit["action"] in ("delete", "move"):
            meta["undo_note"] = (
                f"{edit['action']} of cell {edit.get('cell_id')}: one z in the notebook takes "
                "it back (the run's edits are one undo step)"
            )
        if edit["action"] in ("insert", "replace") and target:
            from nb_tools.jupyter._cell_undo import CellUndo

            meta["undo"] = CellUndo(
                path=change.path,
                kind=f"{edit['action']} cell",
                cell_id=str(target),
                before=change.before,
                after=str(change.after or ""),
                notebook=self.nb,
            )
        return Result(content=text, parts=parts, metadata=meta)


def _runs(args: Mapping[str, Any]) -> bool:
    """``run=true`` makes an edit run the new source in the kernel (``Subject.runs_code``)."""
    return args.get("run") is not False and args.get("run") is not None


def _key(args: str | bytes) -> str:
    return args.decode("utf-8", "replace") if isinstance(args, bytes) else str(args)


def _cell_type(snap: Mapping[str, Any] | None, cell_id: Any) -> str | None:
    for c in (snap or {}).get("cells", []):
        if c.get("id") == cell_id:
            return str(c.get("cell_type"))
    return None


def _count_as_cell(ip: Any) -> int:
    """The execution count of a cell the agent runs: a number of its own. While a cell
    runs, IPython already holds the next count and ipykernel answers the cell with
    ``execution_count - 1`` when it ends; the agent's cell takes that number and the
    counter moves on, so the ``%%agent`` cell ends with the next one (it finishes last) and
    the cell after it with the one after."""
    count = max(int(ip.execution_count) - 1, 1)
    ip.execution_count = count + 2
    return count


def _for_notebook(outputs: list[dict[str, Any]], count: int) -> list[dict[str, Any]]:
    """The captured outputs as a notebook cell holds them (execute_result numbered)."""
    out = []
    for o in outputs:
        o = dict(o)
        if o["output_type"] == "execute_result":
            o["execution_count"] = count
        out.append(o)
    return out


def _new_id(taken: list[str], parsed: Mapping[str, Any]) -> str:
    """An id shaped like nbformat's (8 hex digits), derived from the document's ids and the
    call, so that the card's preview and the edit name the same new cell."""
    import hashlib

    seed = json.dumps([taken, dict(parsed)], sort_keys=True, default=str).encode()
    digest = hashlib.sha256(seed).hexdigest()
    for i in range(len(digest) - 8):
        if digest[i : i + 8] not in taken:
            return digest[i : i + 8]
    return hashlib.sha256(digest.encode()).hexdigest()[:8]  # pragma: no cover


def live_tools(disk: Mapping[str, Tool] | None = None) -> list[Tool]:
    """The live ``notebook_read``/``notebook_edit`` (they say so when no frontend is
    connected); ``disk``: the disk tools they hand other notebooks to."""
    nb = live()
    disk = disk or {}
    return [
        LiveNotebookRead(nb, disk.get("notebook_read")),
        LiveNotebookEdit(nb, disk.get("notebook_edit")),
    ]
