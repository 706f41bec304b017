"""``glob``: find files by name pattern, newest first.

Files are listed with ripgrep's rules (``rg --files --no-require-git`` when ``rg`` is
there, the pure-Python walker of ``_ignore`` otherwise: the same list), then the pattern
is applied (ripgrep ``-g`` semantics, relative to the searched folder), then the matches
are sorted by modification time, newest first (as Claude Code's Glob does: recently
touched files are the likely ones), ties by path.

A call without a click lists no name of a secret: what the protection table calls a
secret (credentials, secret stores) and a dot-entry of a home folder inside the workspace
(the default deny), which ``grep`` does not show either. The walk skips hidden files, but
an ignore file's ``!`` line (text the repository controls) brings them back, and most
secrets' names do not start with a dot (``terraform.tfstate``,
``my-service-account.json``, ``kaggle.json``). The answer says how many were left out and
why; a name is no oracle of content, so saying so costs nothing (``grep`` says nothing).
A ``path`` that names a protected folder asks the user, and then shows everything.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Callable
from pathlib import Path

from nb_tools.builtin._common import ToolError
from nb_tools.builtin._ignore import (
    PathFilter,
    check_glob,
    recheck_paths,
    rg_filter_args,
    walk_files,
)
from nb_tools.builtin._rg import RgUnavailable, run_rg
from nb_tools.builtin._searchtool import SearchTool
from nb_tools.builtin._workspace import Workspace, WorkspaceError
from nb_tools.sandbox import home_dot_reason, homes_in, is_secret
from nb_tools.tool import Result, Schema

__all__ = ["GlobTool", "hidden_note", "name_visible"]

_DESCRIPTION = """\
Find files by name with a glob pattern ("**/*.py", "src/**/*.{ts,tsx}", "*.md"; a pattern \
without "/" matches the file name at any depth). Honours .gitignore/.ignore and skips \
hidden files. Returns paths relative to the workspace root, most recently modified first; \
at most `limit` (default 100)."""

PARAMETERS = Schema.object(
    {
        "pattern": Schema.string("The glob to match file paths against."),
        "path": Schema.string("Folder to search in (default: the workspace root)."),
        "limit": Schema(
            type="integer", minimum=1, description="Return at most this many paths (100)."
        ),
    },
    "pattern",
)


class GlobTool(SearchTool):
    """The ``glob`` tool (``rg=None``: the Python walker)."""

    name = "glob"
    description = _DESCRIPTION
    parameters = PARAMETERS

    async def call(self, args: str | bytes) -> Result:
        try:
            a = self._parse(args)
            pattern = a["pattern"].strip()
            if not pattern:
                raise ToolError("glob: the pattern is empty; pass e.g. '**/*.py'")
            too_long = check_glob(pattern, "glob")
            if too_long:
                raise ToolError(too_long)
            target = self.workspace.resolve(a.get("path") or ".", tool="glob")
            if not target.is_dir():
                what = "does not exist" if not target.exists() else "is a file, not a folder"
                raise ToolError(f"glob: {a.get('path')!r} {what}; pass a folder as path")
        except (ToolError, WorkspaceError) as exc:
            return Result.error(str(exc))
        limit = a.get("limit", 100)
        prefix = str(target).rstrip("/") + "/"
        if pattern.startswith(prefix):  # an absolute pattern inside the searched folder
            pattern = "/" + pattern[len(prefix) :]
        search_dir = str(target)
        try:
            rg = self.rg
            if rg is not None:
                names, cut_off = await _list_rg(rg, search_dir, pattern, str(self.workspace.root))
        except (RgUnavailable, FileNotFoundError):
            rg = None  # fall back to the Python walker, same list
        if rg is None:
            names, cut_off = await _list_python(search_dir, pattern)
        base = self._prefix(target)
        hidden = 0
        if not self.is_protected_call(args):  # a protected path asked; nothing else did
            keep = _visible(search_dir, self.workspace)
            shown_names = [n for n in names if keep(n)]
            hidden = len(names) - len(shown_names)
            names = shown_names
        ordered = await asyncio.to_thread(_by_mtime, search_dir, names)
        total = len(ordered)
        shown = [base + n for n in ordered[:limit]]
        text = "\n".join(shown) if shown else "No files found"
        notes = []
        if total > limit:
            notes.append(
                f"(showing the {limit} most recently modified of {total} matching files; "
                f"narrow the pattern or path, or pass a larger limit)"
            )
        if hidden:
            note = hidden_note(hidden, "matching file", "matching files")
            notes.append(f"({note}; a glob whose path is a protected folder asks the user first)")
        if cut_off:
            notes.append("(listing cut off: cancelled before it finished; results are partial)")
        if notes:
            text += "\n\n" + "\n".join(notes)
        return Result(
            content=text,
            metadata={
                "engine": "rg" if rg else "python",
                "total": total,
                "cut_off": cut_off,
                "hidden": hidden,
            },
        )


def name_visible(workspace: Workspace) -> Callable[[Path], bool]:
    """Whether a name found (an absolute path) may be listed without a click: not a secret
    of the protection table, not a dot-entry of a home folder in the workspace. ``glob``
    and the text editor's folder view list through it."""
    homes = homes_in(workspace.root)

    def keep(path: Path) -> bool:
        if is_secret(path.parts):
            return False
        return home_dot_reason(path, homes, workspace.root) is None

    return keep


def hidden_note(n: int, one_name: str, many_names: str) -> str:
    """Why ``n`` names were left out, for the answer."""
    one = n == 1
    return (
        f"{n} {one_name if one else many_names} not shown: "
        f"{'its name says it holds' if one else 'their names say they hold'} credentials or "
        f"secrets, or {'it is' if one else 'they are'} in a home folder's settings (the "
        f"protection table)"
    )


def _visible(search_dir: str, workspace: Workspace) -> Callable[[str], bool]:
    base = Path(search_dir)
    keep = name_visible(workspace)
    return lambda rel: keep(base / rel)


def _by_mtime(search_dir: str, names: list[str]) -> list[str]:
    keyed = []
    for n in names:
        try:
            mtime = os.stat(os.path.join(search_dir, n)).st_mtime_ns
        except OSError:
            continue  # gone since it was listed
        keyed.append((-mtime, n))
    keyed.sort()
    return [n for _, n in keyed]


async def _list_rg(
    rg: str, search_dir: str, pattern: str, workspace: str
) -> tuple[list[str], bool]:
    narrow, recheck = rg_filter_args([pattern], ())
    argv = [
        rg, "--files", "--no-config", "--no-require-git", "--no-ignore-global", "--null",
        *narrow, "-g", "!.git",
    ]  # fmt: skip
    data, _err, _code, cut_off = await run_rg(argv, search_dir, workspace=workspace)
    parts = data.split(b"\0")
    parts.pop()  # after the last NUL: empty, or a partial name when cut off
    keep = PathFilter([pattern])
    names = [n for n in (p.decode("utf-8", "surrogateescape") for p in parts) if keep(n)]
    return recheck_paths(names, search_dir, recheck), cut_off


async def _list_python(search_dir: str, pattern: str) -> tuple[list[str], bool]:
    stop = threading.Event()
    keep = PathFilter([pattern])
    box: list[str] = []

    def work() -> None:
        box.extend(n for n in walk_files(search_dir, stop) if keep(n))

    task = asyncio.ensure_future(asyncio.to_thread(work))
    try:
        await asyncio.shield(task)
    except asyncio.CancelledError:
        stop.set()
        return list(box), True
    return box, False
