"""Project instructions: ``AGENTS.md``, ``CLAUDE.md`` and ``.nb_tools/instructions.md`` in
the notebook's folder and its parents up to the workspace root, read into the system prompt.

Outermost first, so the instructions nearest the notebook come last and win where two
disagree (the order AGENTS.md readers use). A file is read only when it is a regular file
reached without a symbolic link, with one name (a hard link could make any file of the
machine look like project instructions), and is cut at :data:`MAX_BYTES`; what was skipped
is said in :attr:`ProjectInstructions.skipped` so the person learns why a file was not used.
The agent's writes to these names are refused like the rules file (the protection table).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "INSTRUCTION_FILES",
    "MAX_BYTES",
    "Instructions",
    "ProjectInstructions",
    "find_instructions",
    "instructions_note",
    "system_with",
]

INSTRUCTION_FILES = ("AGENTS.md", "CLAUDE.md", ".nb_tools/instructions.md")
"""The names read in each folder, in this order."""

MAX_BYTES = 32 * 1024
"""Per file; longer files are cut there (with a note the model reads)."""


@dataclass(frozen=True, kw_only=True)
class Instructions:
    """One file's instructions: ``path`` relative to the workspace root (as shown)."""

    path: str
    text: str
    truncated: bool = False


@dataclass(frozen=True, kw_only=True)
class ProjectInstructions:
    """What was found for one run: the files used, in order, and those skipped with why."""

    files: tuple[Instructions, ...] = ()
    skipped: tuple[tuple[str, str], ...] = ()

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(f.path for f in self.files)

    def block(self) -> str:
        """The system prompt's section, each file under its own heading; "" when none."""
        if not self.files:
            return ""
        parts = [
            "# Project instructions\n\nThe project's instruction files, outermost folder "
            "first; where two disagree, the later (nearer the notebook) wins."
        ]
        for f in self.files:
            cut = f"\n[cut at {MAX_BYTES} bytes]" if f.truncated else ""
            parts.append(f"## {f.path}\n\n{f.text.rstrip()}{cut}")
        return "\n\n".join(parts)


def _folders(folder: Path, root: Path) -> list[Path]:
    """``root`` down to ``folder``; just ``folder`` when it is not inside ``root``."""
    try:
        rel = folder.relative_to(root)
    except ValueError:
        return [folder]
    out = [root]
    for part in rel.parts:
        out.append(out[-1] / part)
    return out


def _read(path: Path) -> tuple[str, bool] | str:
    """(text, truncated), or why the file is not used."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        for parent in path.parents:  # a linked folder could lead out of the project
            if parent.is_symlink():
                return f"{parent.name} is a symbolic link"
        fd = os.open(path, flags)
    except FileNotFoundError:
        return ""
    except OSError as exc:
        if path.is_symlink():
            return "a symbolic link (instructions must be a file of the project)"
        return f"cannot be read ({exc.strerror})"
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return "not a regular file"
        if st.st_nlink > 1:
            return "a hard link (instructions must be a file of the project)"
        data = os.read(fd, MAX_BYTES + 1)
    finally:
        os.close(fd)
    truncated = len(data) > MAX_BYTES
    text = data[:MAX_BYTES].decode("utf-8", errors="replace")
    return text, truncated


def find_instructions(
    folder: str | os.PathLike[str], root: str | os.PathLike[str] | None = None
) -> ProjectInstructions:
    """The instruction files of ``folder`` (the notebook's) and its parents up to ``root``
    (the workspace; default ``folder``), outermost first."""
    here = Path(os.path.abspath(folder))
    top = Path(os.path.abspath(root)) if root is not None else here
    files: list[Instructions] = []
    skipped: list[tuple[str, str]] = []
    for directory in _folders(here, top):
        for name in INSTRUCTION_FILES:
            path = directory / name
            try:
                shown = str(path.relative_to(top))
            except ValueError:
                shown = str(path)
            got = _read(path)
            if isinstance(got, str):
                if got:
                    skipped.append((shown, got))
                continue
            text, truncated = got
            if text.strip():
                files.append(Instructions(path=shown, text=text, truncated=truncated))
    return ProjectInstructions(files=tuple(files), skipped=tuple(skipped))


def system_with(system: str | None, sections: Sequence[str]) -> str:
    """The system prompt sent: the user's, then each non-empty section."""
    parts = [p for p in (system or "", *sections) if p and p.strip()]
    return "\n\n".join(parts)


def instructions_note(found: ProjectInstructions) -> str:
    """What the transcript says about the files: those read, then those skipped and why."""
    parts = []
    if found.files:
        parts.append("project instructions read: " + ", ".join(found.names))
    for path, why in found.skipped:
        parts.append(f"{path} not read: {why}")
    return "; ".join(parts)
