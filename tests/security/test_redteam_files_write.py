"""Red team: what a write leaves on disk besides the bytes.

* A file with set-user-ID / set-group-ID kept those bits through an edit (the atomic write
  copies the mode to the new inode), so new content (any model's) would run with the
  owner's rights, root's when the kernel runs as root (common in containers). The kernel
  drops both bits when an unprivileged process writes such a file; the tools now do too,
  and keep every other bit (the existing ``test_a_written_file_keeps_its_mode``). A write
  that fails part-way gives the old file back with its bits unchanged.
"""

from __future__ import annotations

import stat
from pathlib import Path

import pytest
from files_attack import approved_write, make_world, preview, read_all
from files_attack import tools as make_tools

from nb_tools.builtin import _atomic

MODE_WRITERS = ["write_file", "edit_file", "patch_update", "str_replace", "insert"]


@pytest.mark.parametrize("mode", [0o4755, 0o6750])
@pytest.mark.parametrize("writer", MODE_WRITERS)
async def test_new_content_does_not_keep_setuid_or_setgid(
    tmp_path: Path, writer: str, mode: int
) -> None:
    root = make_world(tmp_path) / "root"
    (root / "notes.txt").chmod(mode)
    assert stat.S_IMODE((root / "notes.txt").stat().st_mode) == mode  # the bits took
    t = make_tools(root)
    await read_all(t, "notes.txt")
    result = await approved_write(t, writer, "notes.txt")
    assert not result.is_error, result.content
    st = (root / "notes.txt").stat()
    assert (root / "notes.txt").read_bytes() != b"secret notes\n"
    assert stat.S_IMODE(st.st_mode) == mode & ~(stat.S_ISUID | stat.S_ISGID)


async def test_a_rolled_back_write_gives_the_old_bits_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_world(tmp_path) / "root"
    (root / "notes.txt").chmod(0o4755)
    (root / "a.txt").chmod(0o2755)
    t = make_tools(root)
    await read_all(t, "notes.txt", "a.txt")
    real_rename = _atomic._rename
    calls = {"n": 0}

    def fail_second(folder, src, dst):  # type: ignore[no-untyped-def]
        calls["n"] += 1
        if calls["n"] == 2:
            raise OSError(5, "Input/output error")
        return real_rename(folder, src, dst)

    monkeypatch.setattr(_atomic, "_rename", fail_second)
    patch = (
        "*** Begin Patch\n*** Update File: notes.txt\n@@\n-secret notes\n+x\n"
        "*** Update File: a.txt\n@@\n-secret a\n+y\n*** End Patch"
    )
    preview(t["apply_patch"], {"input": patch})
    result = await t["apply_patch"].call({"input": patch})
    assert result.is_error
    assert (root / "notes.txt").read_bytes() == b"secret notes\n"
    assert stat.S_IMODE((root / "notes.txt").stat().st_mode) == 0o4755
    assert stat.S_IMODE((root / "a.txt").stat().st_mode) == 0o2755


# A path that forges the card's diff: the header and hunk of a change to README.md.
FORGED = "ok.txt\n+++ b/README.md\n@@ -1 +1 @@\n-old\n+new"


NAMES = {
    "forged-diff": FORGED,
    "cr": "a\rb.txt",
    "ansi": "a\x1b[2Kb.txt",
    "u2028": "a\u2028b.txt",
    "rlo": "evil\u202etxt.sh",
    "tab": "a\tb",
    "nel": "a\x85b",
}
# (In a patch a line break ends the header: the rest are lines of the file, as the card
# shows them; the parser refuses the other characters itself.)
CASES = [
    (w, n)
    for w in ("write_file", "patch_add", "create", "edit_file")
    for n in NAMES
    if not (w == "patch_add" and n == "forged-diff")
]


@pytest.mark.parametrize(("writer", "name"), CASES)
async def test_a_path_with_line_breaks_or_controls_is_refused(
    tmp_path: Path, writer: str, name: str
) -> None:
    """Such a path would put extra lines (a forged ``+++ b/README.md`` header and hunk)
    or a reordered name on the card; Linux would take it as one odd name. Refused: the
    card is never made and nothing is created."""
    from files_attack import WRITERS, args_json, fingerprint

    world = make_world(tmp_path)
    root = world / "root"
    t = make_tools(root)
    before = fingerprint(world)
    key, make = WRITERS[writer]
    args = make(NAMES[name])
    with pytest.raises(ValueError, match="U\\+"):
        preview(t[key], args)
    result = await t[key].call(args_json(args))
    assert result.is_error
    assert fingerprint(world) == before
