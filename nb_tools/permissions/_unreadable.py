"""The paths a process must not see because the rules say the model does not read them.

A ``read_file`` deny rule (``deny read_file(secrets/**)``) covers every tool that reads
contents, and a shell command reads too: ``cat secrets/db.txt`` is a read-only command that
runs without a click. String matching cannot find every way a script names a file, so the
``bash`` tool hides these paths in its sandbox instead (``SandboxPolicy.hidden``): the
rule is kept by the operating system, whatever the command says.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

__all__ = ["UnreadableError", "matching_paths"]

WALK_LIMIT = 100_000  # entries looked at; past it the answer is unknown (fail closed)


class UnreadableError(ValueError):
    """The paths the rules name could not all be found (a tree too large to look through)."""


def matching_paths(
    top: Path, rules_root: Path, matches: Callable[[str], bool], *, limit: int | None = None
) -> tuple[Path, ...]:
    """Every file or folder under ``top`` whose path relative to ``rules_root`` ``matches``
    (a folder's also with a final ``/``; ``""`` is the root itself), outermost only: a
    matching folder is hidden whole, so nothing below it is looked at. Symbolic links are
    not followed; what one points to is hidden on its own account. Raises
    :class:`UnreadableError` past ``limit`` entries (default :data:`WALK_LIMIT`)."""
    limit = WALK_LIMIT if limit is None else limit
    root = os.path.realpath(rules_root)
    start = os.path.realpath(top)
    rel = os.path.relpath(start, root)
    if rel == os.curdir:
        rel = ""
    if rel.startswith(os.pardir) or os.path.isabs(rel):
        return ()  # outside the rules' root: relative rules name nothing there
    rel = rel.replace(os.sep, "/")
    if matches(rel):
        return (Path(start),)
    found: list[Path] = []
    seen = 0
    stack = [(start, rel)]
    while stack:
        folder, rel_folder = stack.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            seen += 1
            if seen > limit:
                raise UnreadableError(
                    f"more than {limit:,} files and folders under {start}: cannot find "
                    "everything the read_file rules name"
                )
            rel_entry = f"{rel_folder}/{entry.name}" if rel_folder else entry.name
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                is_dir = False
            # a folder is also asked for with its slash: "secrets/**" names the folder
            if matches(rel_entry) or (is_dir and matches(rel_entry + "/")):
                found.append(Path(entry.path))
            elif is_dir:
                stack.append((entry.path, rel_entry))
    return tuple(sorted(found))
