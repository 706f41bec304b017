"""What ``glob`` and ``grep`` share: a read-only ``Info``, approval for a protected search
path, which ``rg`` binary to run, and how a searched folder prefixes the paths found."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from nb_tools.builtin._common import ToolError, parse_args
from nb_tools.builtin._rg import find_rg
from nb_tools.builtin._workspace import Workspace
from nb_tools.sandbox import hard_linked
from nb_tools.tool import Headline, Info, Schema, Subject

__all__ = ["SearchTool"]

_AUTO: Any = object()


class SearchTool:
    """Base of the search tools. ``rg``: the binary to use, ``None`` for the pure-Python
    engine, or (default) whatever ``find_rg()`` finds."""

    name = ""
    description = ""
    parameters = Schema.object({})
    reads_files = False  # grep shows contents: a deny or ask rule for read_file covers it

    def __init__(self, workspace: Workspace, *, rg: str | None = _AUTO) -> None:
        self.workspace = workspace
        self._rg = rg
        self._info = Info(
            name=self.name,
            description=self.description,
            parameters=self.parameters,
            read_only=True,
            subject=Subject(arg="path", kind="path", reads_files=self.reads_files, searches=True),
            headline=Headline(arg="pattern", kind="text"),
        )

    def info(self) -> Info:
        return self._info

    def _parse(self, args: str | bytes) -> dict[str, Any]:
        return parse_args(self.name, self.parameters, args)

    def is_protected_call(self, args: str | bytes) -> bool:
        """Whether the call searches a protected path (``.git/``, ``.env*``, rc files,
        ``.ssh/``) or a file with several hard links explicitly; the walk itself never
        shows them (they are hidden)."""
        try:
            path = self._parse(args).get("path")
        except ToolError:
            return False
        if not isinstance(path, str) or not path:
            return False
        if self.workspace.is_protected(path, write=False):
            return True
        try:  # a file with several hard links: another name may be a secret elsewhere
            return hard_linked(self.workspace.resolve(path))
        except ValueError:
            return False

    def requires_approval_for(self, args: str | bytes) -> bool:
        return self.is_protected_call(args)

    def _prefix(self, folder: Path) -> str:
        """``folder`` as the model sees it, ready to stand before a path found in it:
        ``""`` for the workspace root, else ``"sub/dir/"``."""
        shown = self.workspace.display(folder)
        return "" if shown == "." else shown + "/"

    @property
    def rg(self) -> str | None:
        return find_rg() if self._rg is _AUTO else self._rg
