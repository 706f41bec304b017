"""glob: ripgrep's listing rules (with rg and with the Python walker: the same list), the
pattern applied after listing, newest first, the limit said."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import pytest
from search_tree import VISIBLE, make_tree

from nb_tools.builtin._glob import GlobTool
from nb_tools.builtin._ignore import glob_regex, walk_files
from nb_tools.builtin._rg import find_rg
from nb_tools.builtin._workspace import Workspace

RG = find_rg()


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = make_tree(tmp_path_factory.mktemp("glob"))
    # Distinct modification times: VISIBLE[i] is i hours old.
    now = 1_700_000_000
    for i, rel in enumerate(VISIBLE):
        os.utime(root / rel, (now - 3600 * i, now - 3600 * i))
    return root


@pytest.fixture(scope="module", params=["rg", "python"])
def tool(request: pytest.FixtureRequest, root: Path) -> GlobTool:
    if request.param == "rg" and RG is None:
        pytest.skip("the ripgrep wheel is not installed")
    return GlobTool(Workspace(root), rg=RG if request.param == "rg" else None)


def run(tool: GlobTool, **args: Any) -> Any:
    return asyncio.run(tool.call(json.dumps(args)))


def test_walker_lists_what_rg_lists(root: Path) -> None:
    assert sorted(walk_files(str(root))) == VISIBLE


def test_everything_newest_first(tool: GlobTool) -> None:
    r = run(tool, pattern="**/*")
    assert r.content == "\n".join(VISIBLE)
    assert r.metadata["total"] == len(VISIBLE)


def test_pattern_without_slash_matches_names_at_any_depth(tool: GlobTool) -> None:
    assert run(tool, pattern="*.py").content == "a.py\nsub/deep/c.py"
    assert run(tool, pattern="*.{md,yml}").content == ".github/workflow.yml\nsub/README.md"


def test_anchored_patterns(tool: GlobTool) -> None:
    assert run(tool, pattern="sub/**").content == ("sub/README.md\nsub/anchored.txt\nsub/deep/c.py")
    assert run(tool, pattern="sub/*.txt").content == "sub/anchored.txt"
    assert run(tool, pattern="/a.py").content == "a.py"


def test_path_narrows_and_results_stay_relative_to_the_root(tool: GlobTool) -> None:
    assert run(tool, pattern="deep/*", path="sub").content == "sub/deep/c.py"
    assert run(tool, pattern="*", path="nested").content == "nested/kept.txt"


def test_ignored_and_hidden_files_stay_out(tool: GlobTool) -> None:
    for pattern in ["*.log", ".hidden*", "**/x.txt", "secret*", "**/HEAD", "*.md", "link*"]:
        listed = run(tool, pattern=pattern).content.splitlines()
        assert set(listed) <= set(VISIBLE) | {"No files found"}, pattern
    assert run(tool, pattern="*.log").content == "keep.log"


def test_negated_pattern(tool: GlobTool) -> None:
    listed = run(tool, pattern="!*.txt").content.splitlines()
    assert listed == [p for p in VISIBLE if not p.endswith(".txt")]


def test_limit_is_said(tool: GlobTool) -> None:
    r = run(tool, pattern="**/*", limit=3)
    assert r.content == "\n".join(
        [
            *VISIBLE[:3],
            "",
            f"(showing the 3 most recently modified of {len(VISIBLE)} matching files; "
            "narrow the pattern or path, or pass a larger limit)",
        ]
    )


def test_no_match(tool: GlobTool) -> None:
    assert run(tool, pattern="*.nothing").content == "No files found"


def test_bad_paths(tool: GlobTool) -> None:
    r = run(tool, pattern="*", path="a.py")
    assert r.is_error and "is a file, not a folder" in r.content
    r = run(tool, pattern="*", path="missing")
    assert r.is_error and "does not exist" in r.content
    r = run(tool, pattern="*", path="..")
    assert r.is_error and "outside the workspace" in r.content
    r = run(tool, pattern="  ")
    assert r.is_error and "pattern is empty" in r.content


@pytest.mark.parametrize(
    ("glob", "path", "matches"),
    [
        ("*.py", "a.py", True),
        ("*.py", "a/b.py", False),
        ("**/*.py", "a/b/c.py", True),
        ("**/*.py", "c.py", True),
        ("a/**", "a/b/c", True),
        ("a/**", "a", False),
        ("a/**/c", "a/c", True),
        ("a/**/c", "a/x/y/c", True),
        ("{x,y}.txt", "y.txt", True),
        ("[!a]b", "cb", True),
        ("[!a]b", "ab", False),
        ("[a-c]?", "bz", True),
        ("?", "/", False),
        ("\\*", "*", True),
        ("\\*", "a", False),
    ],
)
def test_glob_regex(glob: str, path: str, matches: bool) -> None:
    import re

    assert (re.fullmatch(glob_regex(glob), path, re.S) is not None) is matches


def test_info() -> None:
    info = GlobTool(Workspace(".")).info()
    assert info.name == "glob" and info.read_only and not info.requires_approval
    assert info.parameters is not None
    assert list(info.parameters.to_dict()["properties"]) == ["pattern", "path", "limit"]


def test_absolute_pattern_inside_the_folder(tool: GlobTool, root: Path) -> None:
    assert run(tool, pattern=f"{root}/sub/**/*.py").content == "sub/deep/c.py"


def test_protected_paths_ask(root: Path) -> None:
    tool = GlobTool(Workspace(root))
    assert tool.requires_approval_for(json.dumps({"pattern": "*", "path": ".git"}))
    assert not tool.requires_approval_for(json.dumps({"pattern": "*", "path": "sub"}))
    assert not tool.requires_approval_for(json.dumps({"pattern": "*"}))
