"""Patch headers mean one thing: the permission rules read an ``apply_patch`` input's
paths with the parser's own line split, so a header cut by a Unicode line boundary
(U+2028 and the others Python's ``str.splitlines`` splits on) cannot pass a path rule and
write elsewhere. Header paths holding such a character are refused; hunk lines keep
them as text."""

from __future__ import annotations

from pathlib import Path

import pytest
from files_attack import args_json, fingerprint, make_world, tools

from nb_tools.builtin._patch_parse import ParseError, parse_patch, patch_lines, patch_paths
from nb_tools.permissions import PermissionRules


def _patch_tool() -> object:
    from nb_tools.builtin import ApplyPatchTool, ReadState, Workspace

    return ApplyPatchTool(Workspace("."), ReadState())


def _patch_paths(text: str) -> list[str]:
    """The paths a rule reads from a patch: what ``apply_patch`` declares (``Info.subject``)."""
    from nb_tools.builtin import ApplyPatchTool, ReadState, Workspace

    subject = ApplyPatchTool(Workspace("."), ReadState()).info().subject
    assert subject is not None and subject.paths is not None
    return subject.paths(text)


# Every character str.splitlines() treats as a line boundary, except "\n" itself, plus
# the Unicode separators; "\r" alone is one too (only "\r\n" is a line end in a patch).
BOUNDARIES = {
    "VT": "\x0b",
    "FF": "\x0c",
    "CR": "\r",
    "FS": "\x1c",
    "GS": "\x1d",
    "RS": "\x1e",
    "NEL": "\x85",
    "LS": "\u2028",
    "PS": "\u2029",
}


@pytest.fixture
def world(tmp_path: Path) -> Path:
    w = make_world(tmp_path)
    (w / "root" / "notes").mkdir()
    (w / "root" / "secrets").mkdir()
    return w


def smuggle(sep: str, header: str = "*** Add File: ") -> str:
    """A header that a splitlines() reader sees as ``notes/a`` (allowed) and that a
    file system would take as ``secrets/x``."""
    return "\n".join(
        ["*** Begin Patch", f"{header}notes/a{sep}/../../secrets/x", "+pwned", "*** End Patch"]
    )


@pytest.mark.parametrize("sep", list(BOUNDARIES))
def test_rules_and_parser_read_the_same_paths(sep: str) -> None:
    text = smuggle(BOUNDARIES[sep])
    assert "notes/a" not in _patch_paths(text)  # the old split would have said notes/a
    assert _patch_paths(text) == patch_paths(text)
    with pytest.raises(ParseError, match="line breaks or control characters"):
        parse_patch(text)


@pytest.mark.parametrize("header", ["*** Add File: ", "*** Update File: ", "*** Delete File: "])
@pytest.mark.parametrize("sep", list(BOUNDARIES))
async def test_a_smuggled_header_writes_nothing_and_no_allow_rule_covers_it(
    world: Path, sep: str, header: str
) -> None:
    root = world / "root"
    rules = PermissionRules(root=root)
    rules.allow("apply_patch(notes/**)")
    text = smuggle(BOUNDARIES[sep], header)
    if header != "*** Add File: ":
        text = text.replace("\n+pwned", "\n@@\n-x\n+pwned" if "Update" in header else "")
    match = rules.check("apply_patch", {"input": text}, _patch_tool())
    assert match is None or match.action != "allow"
    t = tools(root)
    before = fingerprint(world)
    result = await t["apply_patch"].call(args_json({"input": text}))
    assert result.is_error
    assert fingerprint(world) == before
    assert not (root / "secrets" / "x").exists()


@pytest.mark.parametrize("sep", list(BOUNDARIES))
async def test_move_to_smuggled_by_a_separator_is_refused(world: Path, sep: str) -> None:
    root = world / "root"
    rules = PermissionRules(root=root)
    rules.allow("apply_patch(**)")
    rules.deny("apply_patch(secrets/**)")
    s = BOUNDARIES[sep]
    text = "\n".join(
        [
            "*** Begin Patch",
            "*** Update File: a.txt",
            f"*** Move to: notes/b{s}/../../secrets/y",
            "@@",
            "-secret a",
            "+moved",
            "*** End Patch",
        ]
    )
    match = rules.check("apply_patch", {"input": text}, _patch_tool())
    assert match is not None and match.action == "deny", match
    before = fingerprint(world)
    result = await tools(root)["apply_patch"].call(args_json({"input": text}))
    assert result.is_error
    assert fingerprint(world) == before


@pytest.mark.parametrize("sep", [s for s in BOUNDARIES if s != "CR"])
async def test_separators_inside_hunk_lines_are_text(world: Path, sep: str) -> None:
    """A form feed in C source or U+2028 in a JS string is content: the added file has
    the character inside its one line, and an update matches a line that holds it."""
    root = world / "root"
    s = BOUNDARIES[sep]
    t = tools(root)
    add = f"*** Begin Patch\n*** Add File: notes/n.txt\n+left{s}right\n+end\n*** End Patch"
    result = await t["apply_patch"].call(args_json({"input": add}))
    assert not result.is_error, result.content
    assert (root / "notes" / "n.txt").read_bytes().decode() == f"left{s}right\nend\n"
    upd = (
        "*** Begin Patch\n*** Update File: notes/n.txt\n@@\n"
        f"-left{s}right\n+left{s}RIGHT\n end\n*** End Patch"
    )
    result = await t["apply_patch"].call(args_json({"input": upd}))
    assert not result.is_error, result.content
    assert (root / "notes" / "n.txt").read_bytes().decode() == f"left{s}RIGHT\nend\n"


def test_crlf_patches_still_split_on_crlf() -> None:
    text = "*** Begin Patch\r\n*** Add File: notes/a.txt\r\n+x\r\n*** End Patch\r\n"
    assert patch_lines(text) == [
        "*** Begin Patch",
        "*** Add File: notes/a.txt",
        "+x",
        "*** End Patch",
    ]
    assert patch_paths(text) == ["notes/a.txt"] == _patch_paths(text)


def test_an_unparsable_patch_still_names_every_header_path() -> None:
    """The fallback scan (a patch the parser refuses) uses the same split and may name
    more paths, never fewer: a deny rule still sees the real target."""
    text = "*** Begin Patch\n*** Add File: secrets/x\n+a\n*** Update File: notes/y\ngarbage"
    assert set(_patch_paths(text)) >= {"secrets/x", "notes/y"}
    rules = PermissionRules(root=Path("/r"))
    rules.deny("apply_patch(secrets/**)")
    match = rules.check("apply_patch", {"input": text}, _patch_tool())
    assert match is not None and match.action == "deny"
