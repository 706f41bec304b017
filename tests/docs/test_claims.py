"""What the docs state as a number, a name or a list is the code's: each claim below is a
phrase built from the constant it states, and must appear on its page as written; the
environment variables, ``%%agent`` options, built-in tools and protected paths the pages
name are checked against the code that reads or declares them. Change a limit and this
fails until its page says the new one. (The decider order, the policy table and the
protection tables are generated: ``test_approval_docs.py``, ``test_protection_docs.py``.)"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DOCS = REPO / "docs"


def _page(name: str) -> str:
    path = REPO / name if name == "README.md" else DOCS / name
    return " ".join(path.read_text(encoding="utf-8").split())  # line breaks as spaces


def _n(value: float) -> str:
    """A number as the docs write it: 50,000; 3.5; 0.25."""
    return f"{int(value):,}" if float(value).is_integer() else str(value)


def _scan() -> list[tuple[str, str]]:
    from nb_tools.sandbox._scan import (
        _FEW_MASKS,
        FIRST_CALL_WAIT,
        MAX_SCAN_DEPTH,
        MAX_SCAN_ENTRIES,
        MAX_UNSCANNED_MASKS,
    )

    return [
        ("sandbox.md", f"more than {MAX_UNSCANNED_MASKS} of them and the call is refused"),
        ("sandbox.md", f"reads it itself for up to {_n(FIRST_CALL_WAIT * 1000)} ms"),
        ("sandbox.md", f"more than {_FEW_MASKS} of them, the workspace's top-level folders"),
        ("sandbox.md", f"unless more than {MAX_UNSCANNED_MASKS} masks would be needed"),
        ("sandbox.md", f"the scan stops at {MAX_SCAN_DEPTH} levels and {_n(MAX_SCAN_ENTRIES)} entries"),
        ("sandbox.md", f"at most {MAX_SCAN_DEPTH} levels and {_n(MAX_SCAN_ENTRIES)} entries; what it did not read"),
    ]  # fmt: skip


def _agent() -> list[tuple[str, str]]:
    from nb_tools.agent._output import DEFAULT_RETRIES
    from nb_tools.model import DEFAULT_MAX_TOKENS

    return [
        ("python-api.md", f"the provider's default: {DEFAULT_MAX_TOKENS} for Claude"),
        ("python-api.md", f"at most `output_retries` times (default {DEFAULT_RETRIES})"),
    ]


def _map() -> list[tuple[str, str]]:
    import inspect

    from nb_tools.agent import amap  # nb_tools.map passes its options on to amap

    poll = inspect.signature(amap).parameters["batch_poll_seconds"].default
    pytest.importorskip("IPython")
    from nb_tools.jupyter._map_magic import DEFAULT_VARIABLE

    return [
        ("map.md", f"every `batch_poll_seconds` (default {_n(poll)})"),
        ("map.md", f"default variable `{DEFAULT_VARIABLE}`"),
    ]


def _rules_walk() -> list[tuple[str, str]]:
    from nb_tools.permissions._unreadable import WALK_LIMIT

    return [("approvals.md", f"(over {_n(WALK_LIMIT)} entries) refuses the call instead")]


def _tokens() -> list[tuple[str, str]]:
    from nb_tools.model import CHARS_PER_TOKEN
    from nb_tools.model._tokens import PART_TOKENS

    per, part = _n(CHARS_PER_TOKEN), _n(PART_TOKENS)
    return [
        ("adding-a-provider.md", f"({per} characters a token, {part} tokens an image)"),
        ("jupyter.md", f"the request's text at {per} characters a token, {part}"),
        ("transcript.md", f"its text at {per} characters a token"),
    ]


def _transcript() -> list[tuple[str, str]]:
    from nb_tools.transcript._html import (
        FULL_RESULT_CHARS,
        PROGRESS_LINES,
        RESULT_PREVIEW_CHARS,
        RESULT_PREVIEW_LINES,
    )
    from nb_tools.transcript._recorder import PART_MAX_BYTES, PROGRESS_MAX_CHARS, RESULT_MAX_CHARS

    return [
        ("transcript.md", f"keeps head and tail of texts over {_n(RESULT_MAX_CHARS)} characters"),
        ("transcript.md", f"`progress` is the last {_n(PROGRESS_MAX_CHARS)} characters"),
        ("transcript.md", f"a part over {PART_MAX_BYTES // 1_000_000} MB is stored"),
        ("transcript.md", f"A result shows its first {RESULT_PREVIEW_LINES} lines (at most "
                          f"{_n(RESULT_PREVIEW_CHARS)} characters)"),
        ("transcript.md", f"toggle with up to {_n(FULL_RESULT_CHARS)}; progress shows its last "
                          f"{PROGRESS_LINES} lines"),
    ]  # fmt: skip


def _waits() -> list[tuple[str, str]]:
    from nb_tools.agent._map_gate import MAX_RATE_WAIT_SECONDS
    from nb_tools.tool._tasks import WAKE_SECONDS

    pytest.importorskip("IPython")
    from nb_tools.jupyter._live_notebook import HELLO_WAIT, PROTOCOL, TARGET

    return [
        ("comm.md", f"# The `{TARGET}` comm, protocol version {PROTOCOL}"),
        ("internals.md", f"The approval wait wakes every {_n(WAKE_SECONDS)} s"),
        ("comm.md", f"after {_n(HELLO_WAIT)} s the live tools say that no frontend"),
        ("map.md", f"it fails after {_n(MAX_RATE_WAIT_SECONDS / 60)} minutes of refusals"),
    ]


def _notebook() -> list[tuple[str, str]]:
    from nb_tools.agent._instructions import MAX_BYTES

    pytest.importorskip("IPython")
    from nb_tools.jupyter._python_tool import MAX_MODEL_CHARS
    from nb_tools.jupyter._trim import DEFAULT_RESULT_LIMIT
    from nb_tools.sandbox import PIECE

    return [
        ("jupyter.md", f"nor more than {MAX_BYTES // 1024} KiB of one"),
        ("jupyter.md", f"head + tail within {_n(MAX_MODEL_CHARS)} characters"),
        ("jupyter.md", f"or any piece of {PIECE} characters of one"),
        ("configuration.md", f"head and tail (default {DEFAULT_RESULT_LIMIT})"),
    ]


def _messages() -> list[tuple[str, str]]:
    from nb_tools.agent._context import (
        CLEAR_KEEP_LAST,
        CLEAR_MIN_CHARS,
        MANY_IMAGES,
        MAX_IMAGE_BYTES,
        MAX_IMAGE_SIDE,
        MAX_IMAGE_SIDE_MANY,
    )

    words = {3: "three", 2: "two", 4: "four", 5: "five"}
    return [
        ("messages.md", f"older ones have results over {_n(CLEAR_MIN_CHARS)} characters, "
                        f"older than the last {words[CLEAR_KEEP_LAST]} result messages"),
        ("messages.md", f"({MAX_IMAGE_BYTES // (1024 * 1024)} MB, {MAX_IMAGE_SIDE} px a side, "
                        f"{MAX_IMAGE_SIDE_MANY} px when a request holds more than {MANY_IMAGES})"),
    ]  # fmt: skip


def _memory_limits() -> list[tuple[str, str]]:
    from nb_tools.builtin._grep import MAX_COLLECTED_BYTES, MAX_COLUMNS
    from nb_tools.builtin._grep_python import MAX_SEARCH_BYTES
    from nb_tools.sandbox._bwrap import READ_ONLY_TMPFS_BYTES

    return [
        ("sandbox.md", f"private empty `/tmp` and home (in memory: {READ_ONLY_TMPFS_BYTES >> 20} MB each"),
        ("sandbox.md", f"(up to {MAX_SEARCH_BYTES >> 20} MB; larger ones are skipped)"),
        ("sandbox.md", f"a line is kept up to {MAX_COLUMNS >> 10} KB, and the results up to {MAX_COLLECTED_BYTES >> 20} MB"),
    ]  # fmt: skip


def _bash() -> list[tuple[str, str]]:
    from nb_tools.builtin._bash import DRAIN_AFTER_EXIT

    return [("builtins.md", f"holds the call at most {_n(DRAIN_AFTER_EXIT)} s after bash exits")]


CLAIMS: list[Callable[[], list[tuple[str, str]]]] = [
    _scan,
    _memory_limits,
    _agent,
    _map,
    _rules_walk,
    _tokens,
    _transcript,
    _waits,
    _notebook,
    _messages,
    _bash,
]


@pytest.mark.parametrize("claims", CLAIMS, ids=lambda f: f.__name__.strip("_"))
def test_the_pages_numbers_are_the_codes(claims: Callable[[], list[tuple[str, str]]]) -> None:
    missing = [f"{page}: {phrase!r}" for page, phrase in claims() if phrase not in _page(page)]
    assert not missing, "a page no longer says what the code does:\n" + "\n".join(missing)


def test_the_notice_kinds_listed_are_the_codes() -> None:
    from typing import get_args

    from nb_tools.agent._notices import NoticeKind

    kinds = get_args(NoticeKind)
    listed = ", ".join(f"`{k}`" for k in kinds[:-1]) + f", `{kinds[-1]}`"
    assert f"A notice's kind is one of {listed}" in _page("transcript.md")


# -- names ------------------------------------------------------------------------------

PAGES = [*sorted(DOCS.glob("*.md")), REPO / "README.md"]
NOT_MODULES = {"nb_tools.notebook"}  # the comm's target name (checked above), not a module


def test_every_module_name_and_file_the_pages_name_exists() -> None:
    """``nb_tools.x.y`` resolves (a module, then attributes); ``nb_tools/...py``,
    ``scripts/...``, ``tests/...`` and the like are files of the repository."""
    import importlib

    bad = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        paths = r"(?<![\w/.])((?:nb_tools|scripts|benchmarks|tests|labextension)/[\w/.-]+\.(?:py|ts|json|md))"
        bad += [
            f"{page.name}: {p}" for p in set(re.findall(paths, text)) if not (REPO / p).exists()
        ]
        for dotted in set(re.findall(r"`(nb_tools(?:\.[A-Za-z_]\w*)+)", text)) - NOT_MODULES:
            parts = dotted.split(".")
            for i in range(len(parts), 0, -1):
                try:
                    obj = importlib.import_module(".".join(parts[:i]))
                    break
                except ImportError:
                    continue
            try:
                for attr in parts[i:]:
                    obj = getattr(obj, attr)
            except AttributeError:
                bad.append(f"{page.name}: {dotted}")
    assert not bad, "the pages name what does not exist:\n" + "\n".join(sorted(bad))


ENV = re.compile(r"\bNB_TOOLS_[A-Z_]+\b")
SOURCES = ("nb_tools", "tests", "scripts", "benchmarks")


def _read_in(root: Path) -> set[str]:
    return {
        m
        for d in SOURCES
        for p in (root / d).rglob("*.py")
        for m in ENV.findall(p.read_text(encoding="utf-8"))
    }


def test_every_documented_variable_is_read_and_every_one_read_is_documented() -> None:
    documented = {
        m for p in [*DOCS.glob("*.md"), REPO / "README.md"] for m in ENV.findall(p.read_text())
    }
    read = _read_in(REPO)
    assert documented <= read, f"documented but read nowhere: {sorted(documented - read)}"
    by_library = {m for p in (REPO / "nb_tools").rglob("*.py") for m in ENV.findall(p.read_text())}
    table = set(ENV.findall(_page("configuration.md")))
    assert by_library <= table, (
        f"read by nb_tools but not in docs/configuration.md: {sorted(by_library - table)}"
    )  # fmt: skip


def test_every_agent_option_the_pages_use_exists() -> None:
    """``%%agent --option`` in any page or the README: the magic's parser knows it (the
    full option table in jupyter.md is generated: test_agent_options.py)."""
    pytest.importorskip("IPython")
    from nb_tools.jupyter._magics import AgentMagics

    parser = AgentMagics.agent.parser  # type: ignore[attr-defined]
    options = {s for a in parser._actions for s in a.option_strings}
    used = {
        opt
        for p in [*DOCS.glob("*.md"), REPO / "README.md"]
        for span in re.findall(r"`%%?agent [^`]*`", p.read_text())
        for opt in re.findall(r"(?<![\w-])--[a-z][a-z-]*", span)
    }
    assert used, "no %%agent option found in the pages"
    assert used <= options, f"options the pages use that %%agent does not have: {used - options}"


def test_the_line_magics_the_pages_use_exist() -> None:
    """``%nbtools WORD``, ``%mcp WORD --option``, ``%tools --option`` and the sandbox modes
    the pages name are the magics' own."""
    pytest.importorskip("IPython")
    from nb_tools.jupyter._magics import AgentMagics
    from nb_tools.jupyter._rules_mcp import MCP_COMMANDS, RULE_COMMANDS, RulesMCPMagics
    from nb_tools.sandbox import SANDBOX_MODES

    def options(method: object) -> set[str]:
        """Its options, and those its help gives a sub-command (``code [--print]``)."""
        parser = method.parser  # type: ignore[attr-defined]
        named = {s for a in parser._actions for s in a.option_strings}
        return named | {o for a in parser._actions for o in re.findall(r"--[a-z-]+", a.help or "")}

    known = {
        "nbtools": (set(RULE_COMMANDS), options(RulesMCPMagics.nbtools)),
        "mcp": (set(MCP_COMMANDS), options(RulesMCPMagics.mcp)),
        "tools": (set(), options(AgentMagics.tools)),
    }
    bad = []
    for page in PAGES:
        for magic, rest in re.findall(r"`%(nbtools|mcp|tools)\b([^`]*)`", page.read_text()):
            commands, opts = known[magic]
            before_dashes = rest.split(" -- ")[0]
            words = [w for w in re.split(r"[\s|\[\]]+", before_dashes) if w]
            if words and commands and not words[0].isupper() and words[0] != "...":
                bad += [f"{page.name}: %{magic} {w}" for w in [words[0]] if w not in commands]
            bad += [
                f"{page.name}: %{magic} {w}" for w in words if w.startswith("--") and w not in opts
            ]
            if magic == "nbtools" and words[:1] == ["sandbox"]:
                bad += [f"{page.name}: sandbox {w}" for w in words[1:] if w not in SANDBOX_MODES]
    assert not bad, "the pages use what the magics do not have:\n" + "\n".join(bad)


def test_the_builtin_table_lists_the_builtin_tools(tmp_path: Path) -> None:
    from nb_tools.builtin import builtin_tools

    text = (DOCS / "builtins.md").read_text()
    table = text.split("| tool |", 1)[1].split("\n\n", 1)[0]
    listed = set(re.findall(r"^\| `([a-z_]+)`(?:, `([a-z_]+)`)?", table, re.M))
    names = {n for pair in listed for n in pair if n}
    assert names == {t.info().name for t in builtin_tools(tmp_path)}


@pytest.mark.parametrize(
    ("page", "phrase", "paths"),
    [
        ("builtins.md", "**Protected paths ask even under `auto`**",
         [".git/config", ".env", ".env.local", ".bashrc", ".ssh/config", ".nb_tools/settings.json"]),
        ("approvals.md", "calls that touch protected paths (`.git/`, `.env*`, the rules file",
         [".git/HEAD", ".env.production", ".nb_tools/settings.json"]),
    ],
)  # fmt: skip
def test_the_paths_named_protected_are(
    page: str, phrase: str, paths: list[str], tmp_path: Path
) -> None:
    from nb_tools.builtin import builtin_tools
    from nb_tools.tool._votes import is_protected_call

    assert phrase in _page(page)
    (write,) = builtin_tools(tmp_path, include=["write_file"])
    for path in paths:
        args = json.dumps({"file_path": path, "content": "x"})
        assert is_protected_call(write, args), f"{page} calls {path} protected; it is not"
