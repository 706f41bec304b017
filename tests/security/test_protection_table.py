"""The protection table, walked: for every entry, ``write_file`` and a bash write under
``auto`` (real bubblewrap, ``workspace-write``) get the same answer (the file is unchanged,
a new one does not stay), and a no-click ``read_file``, the ``grep`` tool and bash ``cat``
(with or without a click) keep every secret's content from the model.

Each entry's ``example`` is placed under ``a/b/`` (no home folder's default deny helps
there), so an entry that stops working fails its own case. The attacks of the issue that
led to the table are listed by hand in ``test_protection_attacks.py``, so that an entry
dropped from the table fails there too.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from approvals_helpers import Approver, call, drive, workspace_tools
from sandbox_helpers import require_sandbox, run

from nb_tools.sandbox import TABLE, Entry, is_secret, protection_of

ORIGINAL = "ORIGINAL-4d1e\n"
PREFIX = "a/b/"
ENTRIES = {e.pattern: e for e in TABLE}
SECRET_ENTRIES = [e for e in TABLE if e.secret]


def _example(e: Entry) -> str:
    return PREFIX + e.example


def _secret_text(e: Entry) -> str:
    return f"SECRET-{TABLE.index(e):03d}-9b7c"


def test_every_example_is_protected_by_the_table() -> None:
    paths = [_example(e) for e in TABLE]
    assert len(set(paths)) == len(paths)
    for p in paths:  # one example is not the folder of another (they are made as files)
        assert not any(q.startswith(p + "/") for q in paths), p
    for e in TABLE:
        assert protection_of(_example(e).split("/")) is not None, e.pattern
        assert is_secret(_example(e).split("/")) or not e.secret, e.pattern


def _plant(root: Path, entries: list[Entry], text: object) -> None:
    for e in entries:
        p = root / _example(e)
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text(e) if callable(text) else str(text))


def _bash_write(paths: list[str]) -> str:
    """Overwrite, or remove and make again, each path (making its folder)."""
    lines = []
    for p in paths:
        q = json.dumps(p)
        lines.append(
            f'mkdir -p "$(dirname {q})" 2>/dev/null; printf PWNED > {q} 2>/dev/null || '
            f"{{ rm -f {q} 2>/dev/null; printf PWNED > {q} 2>/dev/null; }}"
        )
    return "\n".join(lines) + "\ntrue"


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, str, list[str]]:
    """Two workspaces: ``old`` holds every example (ORIGINAL), ``new`` none; in each one
    bash call under ``auto`` writes every example; then ``write_file`` tries them all."""
    require_sandbox()
    old = tmp_path_factory.mktemp("old")
    new = tmp_path_factory.mktemp("new")
    _plant(old, list(TABLE), ORIGINAL)
    paths = [_example(e) for e in TABLE]

    async def go() -> tuple[str, list[str]]:
        out_old = await drive(
            [call("bash", command=_bash_write(paths), timeout=120_000, id="b")],
            tools=workspace_tools(old, "bash"),
            approval="auto",
        )
        await drive(
            [call("bash", command=_bash_write(paths), timeout=120_000, id="b")],
            tools=workspace_tools(new, "bash"),
            approval="auto",
        )
        asked: list[str] = []
        for root in (old, new):
            approver = Approver()
            calls = [
                call("write_file", file_path=p, content="PWNED", id=f"w{i}")
                for i, p in enumerate(paths)
            ]
            await drive(
                calls,
                tools=workspace_tools(root, "write_file"),
                approval="auto",
                approver=approver,
            )
            asked += approver.asked
        return out_old.result("b")[0], asked

    text, asked = asyncio.run(go())
    return old, new, text, asked


@pytest.mark.parametrize("pattern", list(ENTRIES))
def test_bash_and_write_file_leave_an_existing_entry_unchanged(
    written: tuple[Path, Path, str, list[str]], pattern: str
) -> None:
    old, _, _, asked = written
    e = ENTRIES[pattern]
    i = TABLE.index(e)
    assert (old / _example(e)).read_text() == ORIGINAL, f"bash changed {e.example}"
    assert asked.count(f"w{i}") == 2, "write_file did not ask for it"


# A new `.git` is a new repository: kept, its hooks and config defused after the call
# (test_sandbox_escape.py); every other entry a call creates is removed.
@pytest.mark.parametrize(
    "pattern", [e.pattern for e in TABLE if e.removes_new and e.pattern != ".git"]
)
def test_bash_and_write_file_leave_no_new_entry(
    written: tuple[Path, Path, str, list[str]], pattern: str
) -> None:
    _, new, _, _ = written
    e = ENTRIES[pattern]
    assert not (new / _example(e)).exists(), f"bash made {e.example} and it stayed"


@pytest.fixture(scope="module")
def secrets_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    require_sandbox()
    root = tmp_path_factory.mktemp("secrets")
    _plant(root, SECRET_ENTRIES, _secret_text)
    (root / ".ignore").write_text("!.*\n!**/.*\n")  # text a repository controls
    (root / "a" / "b" / "plain.txt").write_text("SECRET-none\n")  # the control
    return root


@pytest.fixture(scope="module")
def model_saw(secrets_root: Path) -> str:
    """Everything the model read from no-click ``read_file`` and ``grep`` calls, and from
    bash ``cat``/``grep -r`` without a click (read-only sandbox) and with one (``auto``)."""
    root = secrets_root
    paths = [_example(e) for e in SECRET_ENTRIES]
    cat = "cat " + " ".join(json.dumps(p) for p in paths) + " 2>&1; grep -ra SECRET- . 2>&1; true"

    async def go() -> str:
        calls = [call("read_file", file_path=p, id=f"r{i}") for i, p in enumerate(paths)]
        calls += [
            call("grep", pattern="SECRET-", output_mode="content", id="g1"),
            call("grep", pattern="SECRET-", output_mode="files_with_matches", id="g2"),
            call("grep", pattern="SECRET-", output_mode="count", path="a", id="g3"),
            call("bash", command=cat, timeout=120_000, id="b1"),
        ]
        out = await drive(
            calls,
            tools=workspace_tools(root, "read_file", "grep", "bash"),
            approval="auto",
            approver=Approver(),
        )
        texts = [out.result(c.id)[0] for c in calls]
        unapproved = await run(root, cat, approved=False, timeout_ms=120_000)
        return "\n".join([*texts, str(unapproved.content)])

    return asyncio.run(go())


def test_control_the_reads_ran(model_saw: str) -> None:
    assert "SECRET-none" in model_saw


@pytest.mark.parametrize("pattern", [e.pattern for e in SECRET_ENTRIES])
def test_no_secret_reaches_the_model(model_saw: str, pattern: str) -> None:
    e = ENTRIES[pattern]
    if e.build:  # an approved call (auto) sees it outside a home: only no-click reads count
        return
    assert _secret_text(e) not in model_saw, e.example


@pytest.mark.parametrize("pattern", [e.pattern for e in SECRET_ENTRIES if e.build])
async def test_a_build_setting_is_hidden_from_no_click_calls(
    secrets_root: Path, pattern: str
) -> None:
    e = ENTRIES[pattern]
    out = await drive(
        [
            call("read_file", file_path=_example(e), id="r"),
            call("grep", pattern="SECRET-", output_mode="content", id="g"),
        ],
        tools=workspace_tools(secrets_root, "read_file", "grep"),
        approval="auto",
        approver=Approver(),
    )
    shell = await run(secrets_root, f"cat {json.dumps(_example(e))}; grep -ra SECRET- .; true",
                      approved=False)  # fmt: skip
    seen = out.result("r")[0] + out.result("g")[0] + str(shell.content)
    assert _secret_text(e) not in seen


# -- the interpreter's own folders: entries derived at run time ----------------------------

PREFIX_EXAMPLES = (
    ".venv/bin/python",
    ".venv/bin/rg",
    ".venv/lib/python3/site-packages/evil.pth",
    ".venv/lib/python3/site-packages/pandas/__init__.py",
    "usersite/lib/python3/site-packages/helper.py",
)


async def test_bash_and_write_file_agree_on_the_kernels_prefix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The kernel's ``sys.prefix``/``sys.exec_prefix`` and user site, when they lie in the
    workspace: a bash write under ``auto`` changes nothing and ``write_file`` asks, for
    every path; a read of a library's source there asks nothing."""
    require_sandbox()
    import site
    import sys

    venv = tmp_path / ".venv"
    monkeypatch.setattr(sys, "prefix", str(venv))
    monkeypatch.setattr(sys, "exec_prefix", str(venv))
    monkeypatch.setattr(site, "USER_SITE", str(tmp_path / "usersite/lib/python3/site-packages"))
    for rel in PREFIX_EXAMPLES:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(ORIGINAL)
    (tmp_path / "control.txt").write_text(ORIGINAL)
    paths = [*PREFIX_EXAMPLES, "control.txt"]
    await drive(
        [call("bash", command=_bash_write(paths), timeout=120_000, id="b")],
        tools=workspace_tools(tmp_path, "bash"),
        approval="auto",
    )
    assert (tmp_path / "control.txt").read_text() == "PWNED"  # the call did write
    for rel in PREFIX_EXAMPLES:
        assert (tmp_path / rel).read_text() == ORIGINAL, f"bash changed {rel}"
    approver = Approver()
    calls = [
        call("write_file", file_path=p, content="PWNED", id=f"w{i}")
        for i, p in enumerate(PREFIX_EXAMPLES)
    ]
    calls.append(call("read_file", file_path=PREFIX_EXAMPLES[3], id="r"))
    out = await drive(
        calls, tools=workspace_tools(tmp_path, "write_file", "read_file"), approval="auto",
        approver=approver,
    )  # fmt: skip
    assert approver.asked == [f"w{i}" for i in range(len(PREFIX_EXAMPLES))]
    assert ORIGINAL.strip() in out.result("r")[0]
    for rel in PREFIX_EXAMPLES:
        assert (tmp_path / rel).read_text() == ORIGINAL, f"write_file changed {rel}"
