"""grep: ripgrep and the pure-Python engine give the same output on the same tree, and that
output is right (ignore rules, hidden, binary, unicode, modes, paging, errors)."""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest
from search_tree import make_tree

from nb_tools.builtin import _grep
from nb_tools.builtin._grep import GrepTool
from nb_tools.builtin._rg import find_rg
from nb_tools.builtin._workspace import Workspace
from nb_tools.tool._progress import bind_call, progress_sink

RG = find_rg()
needs_rg = pytest.mark.skipif(RG is None, reason="the ripgrep wheel is not installed")


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_tree(tmp_path_factory.mktemp("grep"))


@pytest.fixture(scope="module")
def engines(root: Path) -> tuple[GrepTool, GrepTool]:
    ws = Workspace(root)
    return GrepTool(ws, rg=RG), GrepTool(ws, rg=None)


def run(tool: GrepTool, **args: Any) -> Any:
    return asyncio.run(tool.call(json.dumps(args)))


PATTERNS = [
    "hello",
    "^h",
    "o$",
    r"hel+o\s",
    "w\u00f6rld",
    r"\bx\b",
    "ab\nab",
    "zzz-none",
    "",
    "[[:upper:]]{2}",
    "(?<word>h)ello",
]
OPTIONS: list[dict[str, Any]] = [
    {},
    {"output_mode": "content"},
    {"output_mode": "count"},
    {"-i": True, "output_mode": "content"},
    {"output_mode": "content", "-C": 1},
    {"output_mode": "content", "-A": 2, "-B": 1, "-n": False},
    {"glob": "*.py"},
    {"glob": "**/*.txt", "output_mode": "content"},
    {"glob": "!*.txt"},
    {"glob": "*.{py,md}", "output_mode": "count"},
    {"glob": "*.log"},
    {"glob": ".hidden*"},
    {"glob": "*.md", "path": "sub"},
    {"type": "py", "output_mode": "content"},
    {"path": "sub", "output_mode": "content"},
    {"path": "nested"},
    {"path": "a.py", "output_mode": "content"},
    {"path": "build", "output_mode": "content"},
    {"multiline": True, "output_mode": "content"},
    {"multiline": True, "output_mode": "count"},
    {"head_limit": 3, "offset": 2},
    {"output_mode": "content", "head_limit": 0},
]


@needs_rg
@pytest.mark.parametrize(
    ("pattern", "options"),
    list(itertools.product(PATTERNS, OPTIONS)),
    ids=lambda v: json.dumps(v, ensure_ascii=True) if isinstance(v, dict) else repr(v),
)
def test_rg_and_python_agree(
    engines: tuple[GrepTool, GrepTool], pattern: str, options: dict[str, Any]
) -> None:
    rg, py = engines
    a = run(rg, pattern=pattern, **options)
    b = run(py, pattern=pattern, **options)
    assert a.metadata.get("engine", "rg") == "rg"
    assert b.metadata.get("engine", "python") == "python"
    assert (a.is_error, a.content) == (b.is_error, b.content)


@pytest.fixture(scope="module", params=["rg", "python"])
def tool(request: pytest.FixtureRequest, engines: tuple[GrepTool, GrepTool]) -> GrepTool:
    if request.param == "rg" and RG is None:
        pytest.skip("the ripgrep wheel is not installed")
    return engines[0] if request.param == "rg" else engines[1]


def test_files_with_matches_honours_ignore_rules(tool: GrepTool) -> None:
    r = run(tool, pattern="hello")
    expected = sorted(
        [
            ".github/workflow.yml",  # hidden, but re-included by "!.github/"
            "a.py",
            "b.txt",
            "crlf.txt",
            "keep.log",  # *.log is ignored, "!keep.log" re-includes it
            "long.txt",
            "nested/kept.txt",  # nested repo: its info/exclude and the parent rules apply
            "noeol.txt",
            "sub/README.md",
            "sub/anchored.txt",  # "/anchored.txt" is anchored to the root
            "sub/deep/c.py",
            "uni/\u00fcn\u00ef.txt",
        ]
    )
    assert r.content == "\n".join(["Found 12 files", *expected])


def test_content_mode_lines_and_context(tool: GrepTool) -> None:
    r = run(tool, pattern="hello", output_mode="content", glob="b.txt", **{"-i": True})
    assert r.content == "b.txt:1:Hello\nb.txt:2:hello\nb.txt:3:HELLO there"
    r = run(tool, pattern="print", output_mode="content", **{"-C": 1})
    assert r.content == "a.py-3-def main():\na.py:4:    print('hello world')\na.py-5-    return 0"
    r = run(tool, pattern="^(ab|foo)", output_mode="content", path="multi.txt", **{"-A": 1})
    assert r.content == (
        "multi.txt:1:ab\nmulti.txt:2:ab\nmulti.txt:3:ab\nmulti.txt-4-xx\n"
        "multi.txt:5:foo foo\nmulti.txt:6:foo\nmulti.txt-7-bar"
    )
    r = run(tool, pattern="^xx", output_mode="content", path="multi.txt", **{"-n": False})
    assert r.content == "multi.txt:xx"


def test_context_groups_are_separated(tool: GrepTool) -> None:
    r = run(tool, pattern="^(ab|bar)$", output_mode="content", path="multi.txt", **{"-C": 0})
    assert r.content == "multi.txt:1:ab\nmulti.txt:2:ab\nmulti.txt:3:ab\nmulti.txt:7:bar"
    r = run(tool, pattern="hello", output_mode="content", glob="{a.py,noeol.txt}", **{"-B": 1})
    assert r.content == (
        "a.py-3-def main():\na.py:4:    print('hello world')\n--\nnoeol.txt:1:last hello"
    )


def test_count_mode(tool: GrepTool) -> None:
    r = run(tool, pattern="foo", output_mode="count", path="multi.txt")
    assert r.content == "multi.txt:2\n\nFound 2 matching lines in 1 file"
    r = run(tool, pattern="b\na", output_mode="count", path="multi.txt", multiline=True)
    assert r.content == "multi.txt:2\n\nFound 2 matching lines in 1 file"


def test_multiline_reports_every_spanned_line(tool: GrepTool) -> None:
    r = run(tool, pattern="foo\nbar", output_mode="content", multiline=True)
    assert r.content == "multi.txt:6:foo\nmulti.txt:7:bar"
    r = run(tool, pattern="xx.foo", output_mode="content", multiline=True)
    assert r.content == "multi.txt:4:xx\nmulti.txt:5:foo foo"


def test_unicode_crlf_and_long_lines(tool: GrepTool) -> None:
    r = run(tool, pattern="\u03c7\u03b1", output_mode="content")
    assert r.content == "uni/\u00fcn\u00ef.txt:2:\u03c7\u03b1\u03af\u03c1\u03b5\u03c4\u03b5 hello"
    r = run(tool, pattern="^world", output_mode="content")
    assert r.content == "crlf.txt:2:world\r"
    r = run(tool, pattern="^hello x", output_mode="content")
    assert r.content == "long.txt:1:hello " + "x" * 494 + " [... 506 more characters]"


def test_binary_files_are_skipped_and_refused_by_name(tool: GrepTool) -> None:
    assert "bin.dat" not in run(tool, pattern="world").content
    r = run(tool, pattern="world", path="bin.dat")
    assert r.is_error
    assert "'bin.dat' is a binary file" in r.content


def test_explicit_path_inside_an_ignored_folder_is_searched(tool: GrepTool) -> None:
    r = run(tool, pattern="hello", path="build", output_mode="content")
    assert r.content == "build/out.txt:1:hello build"
    r = run(tool, pattern="hello", path="debug.log", output_mode="content")
    assert r.content == "debug.log:1:hello from debug"


def test_positive_glob_does_not_bring_back_ignored_or_hidden_files(tool: GrepTool) -> None:
    assert run(tool, pattern="hello", glob="*.log").content == "Found 1 file\nkeep.log"
    assert run(tool, pattern="hello", glob=".hidden*").content == "No files found"
    assert run(tool, pattern="hello", glob="secret*").content == "No files found"
    assert run(tool, pattern="hello", glob="**/HEAD").content == "No files found"


def test_glob_is_relative_to_the_searched_folder(tool: GrepTool) -> None:
    assert run(tool, pattern="hello", glob="deep/*.py", path="sub").content == (
        "Found 1 file\nsub/deep/c.py"
    )
    assert run(tool, pattern="hello", glob="/anchored.txt", path="sub").content == (
        "Found 1 file\nsub/anchored.txt"
    )


def test_type_filter(tool: GrepTool) -> None:
    assert run(tool, pattern="hello", type="py").content == ("Found 2 files\na.py\nsub/deep/c.py")
    r = run(tool, pattern="hello", type="klingon")
    assert r.is_error and "unknown file type 'klingon'" in r.content


def test_paging(tool: GrepTool) -> None:
    r = run(tool, pattern="hello", head_limit=2, offset=1)
    assert r.content == (
        "Found 12 files (showing files 2-3 of 12; pass offset=3 to see more)\na.py\nb.txt"
    )
    r = run(tool, pattern="hello", head_limit=2, offset=50)
    assert r.content.startswith("Found 12 files (offset 50 is past the end")


@pytest.mark.parametrize(
    ("pattern", "message"),
    [
        ("foo(?=bar)", "uses look-around ((?=...)"),
        ("(?<!a)b", "uses look-around ((?<!...)"),
        (r"(a)\1", r"uses a backreference (\1)"),
    ],
)
def test_unsupported_syntax_is_a_clear_error(tool: GrepTool, pattern: str, message: str) -> None:
    r = run(tool, pattern=pattern)
    assert r.is_error
    assert message in r.content
    assert "no PCRE2" in r.content or "backreference" in r.content


def test_escaped_backslash_is_not_a_backreference(tool: GrepTool) -> None:
    assert not run(tool, pattern=r"\\1").is_error


def test_invalid_pattern_is_an_error(tool: GrepTool) -> None:
    r = run(tool, pattern="a(")
    assert r.is_error and "a(" in r.content


def test_paths_outside_the_root_are_refused(tool: GrepTool) -> None:
    r = run(tool, pattern="x", path="../")
    assert r.is_error and "outside the workspace" in r.content
    r = run(tool, pattern="x", path="missing")
    assert r.is_error and "'missing' does not exist" in r.content


# -- cancellation and progress (a stand-in rg that is slow) -------------------------------


def _fake_rg(tmp_path: Path, body: str) -> str:
    """A fake rg that writes its pid to ``tmp_path/rg.pid``; it lies outside the workspace
    (``tmp_path/ws``): one inside would run in the read-only sandbox."""
    script = tmp_path / "slow-rg"
    script.write_text(f"#!/bin/bash\necho $$ > {tmp_path}/rg.pid\n{body}\n")
    (tmp_path / "ws").mkdir(exist_ok=True)
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return str(script)


async def test_cancel_kills_rg_and_returns_partial_results(tmp_path: Path) -> None:
    rg = _fake_rg(tmp_path, "printf 'a.py\\0'; exec sleep 30")
    (tmp_path / "ws" / "a.py").write_text("x\n")
    tool = GrepTool(Workspace(tmp_path / "ws"), rg=rg)
    task = asyncio.ensure_future(tool.call(json.dumps({"pattern": "x"})))
    while not (tmp_path / "rg.pid").exists():
        await asyncio.sleep(0.02)
    await asyncio.sleep(0.3)
    task.cancel()
    r = await task
    assert r.content == (
        "Found 1 file\na.py\n\n(search cut off: cancelled before it finished; results are partial)"
    )
    pid = int((tmp_path / "rg.pid").read_text())
    for _ in range(100):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        await asyncio.sleep(0.05)
    else:
        pytest.fail("the rg process survived the cancellation")


async def test_progress_reports_results_so_far(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_grep, "PROGRESS_EVERY", 0.05)
    rg = _fake_rg(tmp_path, 'for f in a b c; do printf "$f.py\\0"; sleep 0.2; done')
    for name in "abc":
        (tmp_path / "ws" / f"{name}.py").write_text("x\n")
    tool = GrepTool(Workspace(tmp_path / "ws"), rg=rg)
    seen: list[str] = []
    with progress_sink(lambda cid, p: seen.append(p.text)), bind_call("c1"):
        r = await tool.call(json.dumps({"pattern": "x"}))
    assert r.content == "Found 3 files\na.py\nb.py\nc.py"
    assert seen and all(s.startswith("grep: ") and s.endswith(" results so far\n") for s in seen)


async def test_python_engine_stops_when_cancelled(tmp_path: Path) -> None:
    for i in range(300):
        (tmp_path / f"f{i:03}.txt").write_text("hello\n" * 2000)
    tool = GrepTool(Workspace(tmp_path), rg=None)
    task = asyncio.ensure_future(
        tool.call(json.dumps({"pattern": "hel+o", "output_mode": "count"}))
    )
    await asyncio.sleep(0.05)
    task.cancel()
    r = await task
    assert r.metadata["cut_off"]
    assert r.content.endswith("(search cut off: cancelled before it finished; results are partial)")


def test_info() -> None:
    info = GrepTool(Workspace(".")).info()
    assert info.name == "grep" and info.read_only and not info.requires_approval
    assert info.parameters is not None
    props = info.parameters.to_dict()["properties"]
    assert list(props) == [
        "pattern", "path", "glob", "type", "output_mode", "-i", "-n", "-A", "-B", "-C",
        "multiline", "head_limit", "offset",
    ]  # fmt: skip


def test_line_break_needs_multiline(tool: GrepTool) -> None:
    r = run(tool, pattern="foo\\nbar")
    assert r.is_error and "pass multiline: true" in r.content
    assert not run(tool, pattern="[^\\n]+x").is_error


def test_find_rg_honours_the_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("NB_TOOLS_RG", "none")
    assert find_rg() is None
    fake = _fake_rg(tmp_path, "exit 1")
    monkeypatch.setenv("NB_TOOLS_RG", fake)
    assert find_rg() == fake
    monkeypatch.setenv("NB_TOOLS_RG", str(tmp_path / "nothing-here"))
    with pytest.raises(FileNotFoundError, match="NB_TOOLS_RG="):
        find_rg()


@needs_rg
def test_default_rg_is_the_wheels(monkeypatch: pytest.MonkeyPatch) -> None:
    import sysconfig

    monkeypatch.delenv("NB_TOOLS_RG", raising=False)
    assert find_rg() == os.path.join(sysconfig.get_path("scripts"), "rg")


def test_an_rg_that_cannot_start_falls_back_to_python(root: Path) -> None:
    tool = GrepTool(Workspace(root), rg=str(root / "no-such-rg"))
    r = run(tool, pattern="hello", path="sub")
    assert r.metadata["engine"] == "python"
    assert r.content == "Found 3 files\nsub/README.md\nsub/anchored.txt\nsub/deep/c.py"


def test_protected_paths_ask(root: Path) -> None:
    tool = GrepTool(Workspace(root))
    assert tool.requires_approval_for(json.dumps({"pattern": "x", "path": ".git"}))
    assert tool.requires_approval_for(json.dumps({"pattern": "x", "path": ".env"}))
    assert not tool.requires_approval_for(json.dumps({"pattern": "x", "path": "sub"}))
    assert not tool.requires_approval_for(json.dumps({"pattern": "x"}))


def test_too_many_results_stop_the_search(tool: GrepTool, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_grep, "MAX_COLLECTED_LINES", 3)
    r = run(tool, pattern="hello", output_mode="content")
    assert r.content.endswith(
        "(stopped after collecting 3 result lines: the list is incomplete; narrow the "
        "pattern, path or glob)"
    )


@pytest.mark.parametrize("engine", ["rg", "python"])
def test_many_results_check_protection_only_for_the_page(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, engine: str
) -> None:
    """Past ``LAZY_ABOVE`` files the protection check stops once the page is full (the
    total then reads "more than"), and a protected file is still never shown."""
    if engine == "rg" and RG is None:
        pytest.skip("no rg")
    monkeypatch.setattr(_grep, "LAZY_ABOVE", 2)
    for name in ("a.txt", "b.txt", "sitecustomize.py", "t.txt", "u.txt"):
        (tmp_path / name).write_text("needle\n")
    tool = GrepTool(Workspace(tmp_path), rg=RG if engine == "rg" else None)
    r = run(tool, pattern="needle", head_limit=3)
    assert r.content == (
        "Found more than 3 files (showing files 1-3; pass offset=3 to see more)\na.txt\nb.txt\nt.txt"
    )
    r = run(tool, pattern="needle", head_limit=3, offset=3)
    assert r.content == "Found 4 files (showing files 4-4 of 4)\nu.txt"
    r = run(tool, pattern="needle", output_mode="content", head_limit=2)
    assert r.content == (
        "a.txt:1:needle\nb.txt:1:needle\n\n(showing lines 1-2; pass offset=2 to see more)"
    )
    r = run(tool, pattern="needle", output_mode="count", head_limit=0)
    assert "sitecustomize" not in r.content and r.content.endswith(
        "Found 4 matching lines in 4 files"
    )
