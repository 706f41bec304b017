"""The Codex apply_patch scenarios and unit cases (shared/conformance/apply_patch/).

Each scenario's input/ is copied into a temp workspace, patch.txt goes in as the `input`
argument, and the resulting tree must equal expected/ exactly. Our one deliberate
difference: a patch is all or nothing, so 015 (a partial write in Codex) must leave the
tree exactly as it was.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from nb_tools.builtin._patch import ApplyPatchTool
from nb_tools.builtin._patch_parse import (
    AddFile,
    DeleteFile,
    Hunk,
    ParseError,
    UpdateFile,
    parse_one_hunk,
    parse_patch,
    parse_update_chunk,
    seek_sequence,
)
from nb_tools.builtin._readstate import ReadState
from nb_tools.builtin._workspace import Workspace

CONFORMANCE = Path(__file__).resolve().parents[2] / ".." / "shared" / "conformance" / "apply_patch"

if not (CONFORMANCE / "scenarios.json").is_file():
    pytest.skip(
        f"the conformance data is missing: expected {CONFORMANCE.resolve()} (the repository's "
        "sibling shared/ folder, which CI places beside the clone)",
        allow_module_level=True,
    )

SCENARIOS = json.loads((CONFORMANCE / "scenarios.json").read_text())["scenarios"]
UNIT = json.loads((CONFORMANCE / "unit_cases.json").read_text())
ALL_OR_NOTHING = {"015_failure_after_partial_success_leaves_changes"}

Snapshot = dict[str, bytes | str]


def snapshot(root: Path) -> Snapshot:
    out: Snapshot = {}
    if not root.exists():
        return out
    for p in sorted(root.rglob("*")):
        rel = p.relative_to(root).as_posix()
        out[rel] = "DIR" if p.is_dir() else p.read_bytes()
    return out


def test_every_scenario_folder_is_listed() -> None:
    folders = sorted(p.name for p in (CONFORMANCE / "scenarios").iterdir() if p.is_dir())
    assert folders == sorted(s["name"] for s in SCENARIOS)
    assert len(folders) == 23


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s["name"] for s in SCENARIOS])
async def test_scenario(scenario: dict[str, Any], tmp_path: Path) -> None:
    folder = CONFORMANCE / "scenarios" / scenario["name"]
    work = tmp_path / "work"
    if (folder / "input").is_dir():
        shutil.copytree(folder / "input", work)
    else:
        work.mkdir()
    before = snapshot(work)
    patch = (folder / "patch.txt").read_text()
    tool = ApplyPatchTool(Workspace(work), ReadState())
    result = await tool.call(json.dumps({"input": patch}))

    if scenario["name"] in ALL_OR_NOTHING:
        assert result.is_error
        assert snapshot(work) == before
    else:
        assert snapshot(work) == snapshot(folder / "expected")
    if scenario["outcome"] == "ok":
        assert not result.is_error, result.content
        assert result.content == scenario["stdout"]
    else:
        assert result.is_error
        want = scenario["stderr"].strip().replace("{CWD}/", "").replace(" (os error 2)", "")
        assert want in result.content
        assert (
            "Nothing was changed" in result.content
            or "nothing was changed" in result.content
            or want == "No files were modified."
        )


@pytest.mark.parametrize("case", UNIT["apply_cases"], ids=[c["name"] for c in UNIT["apply_cases"]])
async def test_apply_case(case: dict[str, Any], tmp_path: Path) -> None:
    for rel, text in case["files_before"].items():
        (tmp_path / rel).write_text(text)
    root = Workspace(tmp_path).root
    patch = case["patch"].replace("{CWD}", str(root))
    result = await ApplyPatchTool(Workspace(tmp_path), ReadState()).call({"input": patch})
    assert not result.is_error, result.content
    after = {p.name: p.read_text() for p in tmp_path.iterdir()}
    assert after == case["files_after"]
    if "stdout" in case:  # our summary names paths relative to the workspace
        assert result.content == case["stdout"].replace("{CWD}/", "")


def as_dict(h: Hunk) -> dict[str, Any]:
    if isinstance(h, AddFile):
        return {"type": "add", "path": h.path, "contents": h.contents}
    if isinstance(h, DeleteFile):
        return {"type": "delete", "path": h.path}
    assert isinstance(h, UpdateFile)
    return {
        "type": "update",
        "path": h.path,
        "move_path": h.move_path,
        "chunks": [
            {
                "change_context": c.change_context,
                "old_lines": c.old_lines,
                "new_lines": c.new_lines,
                "is_end_of_file": c.is_end_of_file,
            }
            for c in h.chunks
        ],
    }


@pytest.mark.parametrize("case", UNIT["parse_cases"], ids=[c["name"] for c in UNIT["parse_cases"]])
def test_parse_case(case: dict[str, Any]) -> None:
    lenient = case["mode"] == "lenient"
    if case["expect"] == "error":
        with pytest.raises(ParseError) as err:
            parse_patch(case["patch"], lenient=lenient)
        assert err.value.codex_display() == case["error"]
    else:
        hunks = parse_patch(case["patch"], lenient=lenient)
        assert [as_dict(h) for h in hunks] == case["hunks"]


@pytest.mark.parametrize("case", UNIT["chunk_cases"], ids=[c["name"] for c in UNIT["chunk_cases"]])
def test_chunk_case(case: dict[str, Any]) -> None:
    if case["name"].startswith("hunk_"):
        with pytest.raises(ParseError) as err:
            parse_one_hunk(case["lines"], case["line_number"])
        assert err.value.codex_display() == case["error"]
        return
    args = (case["lines"], case["line_number"], case["allow_missing_context"])
    if case["expect"] == "error":
        with pytest.raises(ParseError) as err:
            parse_update_chunk(*args)
        assert err.value.codex_display() == case["error"]
    else:
        chunk, used = parse_update_chunk(*args)
        assert used == case["lines_consumed"]
        got = {
            "change_context": chunk.change_context,
            "old_lines": chunk.old_lines,
            "new_lines": chunk.new_lines,
            "is_end_of_file": chunk.is_end_of_file,
        }
        assert got == case["chunk"]


@pytest.mark.parametrize("case", UNIT["seek_cases"], ids=[c["name"] for c in UNIT["seek_cases"]])
def test_seek_case(case: dict[str, Any]) -> None:
    found = seek_sequence(case["lines"], case["pattern"], case["start"], case["eof"])
    assert found == case["expect_index"]
