"""``apply_patch``: the Codex patch format, applied all or nothing inside the workspace.

Differences from Codex, on purpose:

* All or nothing. The patch is applied in memory, operation after operation (so an Update
  of a file an earlier Add created works), every file is checked, and only then is anything
  written, as one transaction (``_atomic.write_files``). A failing hunk, a missing file or
  a path outside the workspace leaves the workspace exactly as it was (Codex's scenario 015
  expects a partial write; ours expects none).
* Paths are confined to the workspace (absolute paths inside it are accepted); messages
  name paths relative to the root.
* No earlier ``read_file`` is required: the context lines of each hunk prove what the
  model knows of the file, and a hunk that does not fit is refused anyway. After the write,
  files the model knew in full (it read them, or the patch added them) are recorded in the
  read state, so a following ``edit_file`` works without a re-read.
* A file whose line breaks are all CRLF keeps them (Codex drops ``\\r`` on touched lines);
  files keep their encoding and BOM. ``*** Move to:`` the file's own path is a plain update
  (Codex would delete the file).
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nb_tools.builtin._atomic import write_files
from nb_tools.builtin._binding import Bindings, Target, card_digest, verify
from nb_tools.builtin._common import Args, ToolError, guarded, parse_args
from nb_tools.builtin._patch_parse import (
    AddFile,
    DeleteFile,
    Hunk,
    ParseError,
    PatchApplyError,
    UpdateFile,
    apply_chunks,
    hunk_paths,
    parse_patch,
    patch_paths,
)
from nb_tools.builtin._readstate import ReadState
from nb_tools.builtin._textfile import TextFile, TextFileError, load_text
from nb_tools.builtin._undo import undo_for, written_before
from nb_tools.builtin._workspace import Workspace
from nb_tools.model import ToolGrammar
from nb_tools.tool import Change, Headline, Info, Result, Schema, Subject

__all__ = ["ApplyPatchTool"]


# Codex's freeform grammar for apply_patch (tool_apply_patch.lark), for providers that take one.
GRAMMAR = r"""start: begin_patch hunk+ end_patch
begin_patch: "*** Begin Patch" LF
end_patch: "*** End Patch" LF?

hunk: add_hunk | delete_hunk | update_hunk
add_hunk: "*** Add File: " filename LF add_line+
delete_hunk: "*** Delete File: " filename LF
update_hunk: "*** Update File: " filename LF change_move? change?

filename: /(.+)/
add_line: "+" /(.*)/ LF -> line

change_move: "*** Move to: " filename LF
change: (change_context | change_line)+ eof_line?
change_context: ("@@" | "@@ " /(.+)/) LF
change_line: ("+" | "-" | " ") /(.*)/ LF
eof_line: "*** End of File" LF

%import common.LF
"""

DESCRIPTION = """Edit files with a patch: add, delete, update or move files in one call.
The patch is all or nothing: if any part fails, no file is changed. Format:

*** Begin Patch
*** Add File: path/new.py
+every line of the new file, each prefixed with +
*** Delete File: path/old.py
*** Update File: path/app.py
*** Move to: path/renamed.py        (optional)
@@ def handler():                   (optional: a line just above the change, to locate it)
 context line (space prefix), about 3 before and after each change
-removed line
+added line
*** End of File                     (optional: the change is at the end of the file)
*** End Patch

Paths are relative to the workspace root. Start each further change in a file with @@."""


@dataclass
class _Entry:
    """One path's state during in-memory application."""

    path: Path
    shown: str
    original: TextFile | None  # on disk before the patch
    text: str | None  # current content (LF endings for files that were CRLF), None: absent
    codec: TextFile | None = None  # whose encoding and BOM the new bytes take
    crlf: bool = False
    unreadable: str | None = None  # holds bytes that are not text (binary, too big): why
    unshown: str | None = None  # why its content on disk cannot be shown (kept once replaced)
    was_on_disk: bool = False
    known: bool = False  # the model knows all of it (read it, or added it)


@dataclass
class _Plan:
    targets: tuple[Target, ...] = ()  # every header path, as written and as resolved
    entries: dict[Path, _Entry] = field(default_factory=dict)
    added: list[str] = field(default_factory=list)
    modified: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)


class ApplyPatchTool:
    """``apply_patch``: the Codex patch format, all or nothing."""

    name = "apply_patch"

    def __init__(self, workspace: Workspace, state: ReadState) -> None:
        self.workspace = workspace
        self.state = state
        self.bindings = Bindings()
        self._info = Info(
            name=self.name,
            description=DESCRIPTION,
            parameters=Schema.object(
                {"input": Schema.string("The whole patch, from *** Begin Patch to *** End Patch")},
                "input",
            ),
            requires_approval=True,
            grammar=ToolGrammar(syntax="lark", definition=GRAMMAR),
            subject=Subject(arg="input", kind="path", paths=patch_paths),
            headline=Headline(arg="input", kind="code"),
            eager_input_streaming=True,
        )

    def info(self) -> Info:
        return self._info

    def _patch_text(self, args: Args) -> str:
        # A freeform (grammar) call sends the patch itself rather than {"input": ...}.
        if isinstance(args, bytes | str):
            text = args.decode("utf-8", "replace") if isinstance(args, bytes) else args
            head = text.lstrip()
            if head.startswith(("*** Begin Patch", "<<")):
                return text
        schema = self._info.parameters
        if schema is None:  # pragma: no cover - set in __init__
            raise ToolError("apply_patch: no parameters schema")
        return str(parse_args(self.name, schema, args)["input"])

    # -- the shared plan -------------------------------------------------------------------

    def _plan(self, args: Args) -> _Plan:
        text = self._patch_text(args)
        try:
            hunks = parse_patch(text)
        except ParseError as exc:
            raise ToolError(f"apply_patch: {exc}; nothing was changed") from None
        if not hunks:
            raise ToolError(
                "apply_patch: No files were modified. The patch has no *** Add File, "
                "*** Delete File or *** Update File section."
            )
        plan = _Plan(targets=self._targets(hunks))
        for hunk in hunks:
            try:
                self._apply_hunk(plan, hunk)
            except (PatchApplyError, TextFileError) as exc:
                raise ToolError(
                    f"apply_patch: {exc}\nNothing was changed (a patch applies all or "
                    f"nothing); fix this part and send the whole patch again."
                ) from None
        # The card binds what it shows: a call whose files changed since must not apply
        # its hunks wherever they now fit (``_binding.verify``).
        card = card_digest(_change(e) for e in plan.entries.values() if _touched(e))
        plan.targets = tuple(dataclasses.replace(t, card=card) for t in plan.targets)
        return plan

    def _targets(self, hunks: list[Hunk]) -> tuple[Target, ...]:
        """Each header path (Move to included) as written, as resolved now, protected or
        not; raises ``WorkspaceError`` for a path outside the workspace."""
        out: dict[str, Target] = {}
        for raw in hunk_paths(hunks):
            if raw not in out:
                path = self.workspace.resolve(raw, tool=self.name)
                out[raw] = Target(raw=raw, path=path, protected=self.workspace.is_protected(raw))
        return tuple(out.values())

    def _entry(self, plan: _Plan, raw: str, *, for_write: bool) -> _Entry:
        path = self.workspace.resolve(raw, tool=self.name)
        if path in plan.entries:
            return plan.entries[path]
        if for_write:
            self.workspace.resolve(raw, for_write=True, tool=self.name)
        shown = self.workspace.display(path)
        original, unreadable = None, None
        if not path.is_dir():
            try:
                original = load_text(
                    path,
                    tool=self.name,
                    shown=shown,
                    opener=self.workspace.opener(self.name, write=True),
                )
            except FileNotFoundError:
                original = None
            except TextFileError as exc:
                if not path.is_file():
                    raise
                unreadable = str(exc).removeprefix(f"{self.name}: ")  # may still be replaced
        entry = _Entry(
            path=path,
            shown=shown,
            original=original,
            text=None,
            unreadable=unreadable,
            unshown=unreadable,
            was_on_disk=original is not None or unreadable is not None,
        )
        if original is not None:
            entry.codec = original
            entry.crlf = original.crlf
            entry.text = original.text.replace("\r\n", "\n") if entry.crlf else original.text
            stamp = self.state.get(path)
            entry.known = (
                stamp is not None
                and self.state.check(path, original.data, tool=self.name, shown=shown) is None
            )
        plan.entries[path] = entry
        return entry

    def _apply_hunk(self, plan: _Plan, hunk: Hunk) -> None:
        if isinstance(hunk, AddFile):
            entry = self._entry(plan, hunk.path, for_write=True)
            entry.text, entry.known, entry.unreadable = hunk.contents, True, None
            entry.codec, entry.crlf = None, False  # written as the patch spells it, UTF-8
            plan.added.append(entry.shown)
        elif isinstance(hunk, DeleteFile):
            path = self.workspace.resolve(hunk.path, tool=self.name)
            shown = self.workspace.display(path)
            if path.is_dir():
                raise PatchApplyError(f"Failed to delete file {shown}: it is a directory")
            entry = self._entry(plan, hunk.path, for_write=False)
            if entry.text is None and entry.unreadable is None:
                raise PatchApplyError(f"Failed to delete file {shown}: No such file or directory")
            entry.text, entry.known, entry.unreadable = None, False, None
            plan.deleted.append(entry.shown)
        else:
            self._apply_update(plan, hunk)

    def _apply_update(self, plan: _Plan, hunk: UpdateFile) -> None:
        path = self.workspace.resolve(hunk.path, tool=self.name)
        shown = self.workspace.display(path)
        if path.is_dir():
            raise PatchApplyError(f"Failed to read file to update {shown}: Is a directory")
        src = self._entry(plan, hunk.path, for_write=True)
        if src.text is None and src.unreadable is not None:
            raise PatchApplyError(f"Failed to read file to update {shown}: {src.unreadable}")
        if src.text is None:
            raise PatchApplyError(
                f"Failed to read file to update {shown}: No such file or directory"
            )
        new_text = apply_chunks(src.text, hunk.chunks, shown)
        dest = src
        if hunk.move_path is not None:
            dest = self._entry(plan, hunk.move_path, for_write=True)
        if dest is not src:  # a moved file keeps its line endings, encoding and BOM
            dest.crlf, dest.codec, dest.known = src.crlf, src.codec, src.known
            src.text, src.known = None, False
        dest.text, dest.unreadable = new_text, None
        plan.modified.append(dest.shown)

    # -- protocols -------------------------------------------------------------------------

    def preview_files(self, args: Args) -> list[Change]:
        plan = self._plan(args)
        self.bindings.bind(self._key(args), plan.targets, replace=True)
        return [_change(e) for e in plan.entries.values() if _touched(e)]

    def _key(self, args: Args) -> str:
        return f"{self.name}:{self._patch_text(args)}"

    def is_protected_call(self, args: Args) -> bool:
        """Whether the patch names a protected path (``.git/``, ``.nb_tools/``, IPython
        start-up files, ``.env*``, rc files, ...; Move to included), as written or as
        resolved. Binds the resolved paths if no preview did (``_binding``); a path that
        no longer resolves where its binding says counts as protected."""
        try:
            hunks = parse_patch(self._patch_text(args))
        except ValueError:
            return False
        paths = [p for p in hunk_paths(hunks) if p]
        if any(self.workspace.is_protected(p) for p in paths):
            return True
        try:
            now = self._targets(hunks)
        except ValueError:
            return False  # the call will refuse the path itself
        bound = {t.raw: t for t in self.bindings.bind(self._key(args), now)}
        return any(
            t.raw not in bound or bound[t.raw].path != t.path or bound[t.raw].protected for t in now
        )

    def requires_approval_for(self, args: Args) -> bool:
        return True

    async def call(self, args: Args) -> Result:
        return await asyncio.to_thread(guarded, self.name, lambda: self._write(args))

    def _write(self, args: Args) -> Result:
        bound = self.bindings.take(self._key(args))
        if bound is not None:  # before reading any file through a changed path
            try:
                hunks = parse_patch(self._patch_text(args))
            except ParseError:
                hunks = []  # _plan reports it
            verify(self.name, bound, self._targets(hunks), self.workspace.display)
        plan = self._plan(args)
        verify(self.name, bound, plan.targets, self.workspace.display)
        ops: list[tuple[Path, bytes | None]] = []
        written: list[tuple[_Entry, bytes]] = []
        for entry in plan.entries.values():
            if not _touched(entry):
                continue
            if entry.text is None:
                ops.append((entry.path, None))
                continue
            data = _encode(entry)
            ops.append((entry.path, data))
            written.append((entry, data))
        befores = [written_before(path) for path, _ in ops]
        write_files(ops, workspace=self.workspace, tool=self.name)
        undos = [
            undo_for(self.workspace, self.name, self.workspace.display(path), path, before, data)
            for (path, data), before in zip(ops, befores, strict=True)
        ]
        for entry in plan.entries.values():
            if entry.text is None:
                self.state.forget(entry.path)
        for entry, data in written:
            if entry.known:
                self.state.record(entry.path, data)
            else:
                self.state.forget(entry.path)
        lines = ["Success. Updated the following files:"]
        lines += [f"A {p}" for p in plan.added]
        lines += [f"M {p}" for p in plan.modified]
        lines += [f"D {p}" for p in plan.deleted]
        meta: dict[str, Any] = {
            "added": plan.added,
            "modified": plan.modified,
            "deleted": plan.deleted,
            "undo": [u for u in undos if u is not None],
        }
        if self.is_protected_call(args):
            meta["protected"] = True
        return Result(content="\n".join(lines) + "\n", metadata=meta)


def _final_text(entry: _Entry) -> str | None:
    if entry.text is None:
        return None
    return entry.text.replace("\n", "\r\n") if entry.crlf else entry.text


def _touched(entry: _Entry) -> bool:
    """Whether the entry differs from disk (an Add then Delete of a new file does not)."""
    return entry.was_on_disk or entry.text is not None


def _change(entry: _Entry) -> Change:
    if entry.original is None and entry.was_on_disk:  # binary or too big to show
        after = _final_text(entry)
        if after is None:
            return Change(path=entry.shown, before="", after=None, binary=True)
        # Text replaces it (an Add over it, a Move onto it): the card shows every new line;
        # the old content stands as one line saying why it is not shown.
        return Change(
            path=entry.shown, before=f"[old content not shown: {_why(entry)}]\n", after=after
        )
    before = entry.original.text if entry.original is not None else None
    return Change(path=entry.shown, before=before, after=_final_text(entry))


def _why(entry: _Entry) -> str:
    """Why the old content of ``entry`` cannot be shown, in a few words."""
    reason = entry.unshown or ""
    if "binary" in reason:
        return "a binary file"
    if "limit" in reason:
        return "over the size limit"
    return "not a text file"


def _encode(entry: _Entry) -> bytes:
    text = _final_text(entry) or ""
    tf = entry.codec
    try:
        return tf.encode(text) if tf is not None else text.encode("utf-8")
    except UnicodeEncodeError:
        enc = tf.encoding if tf else "utf-8"
        raise ToolError(
            f"apply_patch: the new text of {entry.shown} cannot be encoded as {enc} (the "
            f"file's encoding); nothing was changed"
        ) from None


def dumps_args(patch: str) -> str:
    """The JSON arguments of an ``apply_patch`` call (for tests and adapters)."""
    return json.dumps({"input": patch})
