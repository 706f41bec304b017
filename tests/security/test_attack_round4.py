"""Attack round 4, the file/shell side: new cases, each one attack through the real tools
(``Agent`` with the built-in tools, real bubblewrap, real ``rg``) under the policy a user
picks (``ask`` with a person who says no, ``read-only``, ``auto`` where it claims to
protect), checking an effect: the file that must not appear, the secret that must not
reach the model, the kernel's memory that must stay bounded.

Round 3 (``test_attack_round3*.py``) holds the earlier cases; nothing here repeats them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest
from approvals_helpers import Approver, call, drive, workspace_tools
from sandbox_helpers import require_sandbox, run

SECRET = "RT4-SECRET-3b9e51"


def _say(out: Any, cid: str) -> str:
    return out.result(cid)[0]  # type: ignore[no-any-return]


async def _bash(ws: Path, command: str, approval: str) -> str:
    out = await drive(
        [call("bash", command=command, timeout=60_000, id="b")],
        tools=workspace_tools(ws, "bash"),
        approval=approval,
        approver=Approver(),
    )
    return _say(out, "b")


# -- check then use: a path swapped after the decision, before the run -------------------


async def test_01_a_path_swapped_after_the_decision_reads_no_secret(ws: Path) -> None:
    """The decision sees ``a.txt`` and ``notes/`` as plain (no click); before the tools
    run, ``a.txt`` becomes a link to ``.env`` and ``notes/b.txt`` a link to ``.env``
    (another program on the machine, a concurrent job). The read tools resolve again when
    they run: what they open must not be a protected file nobody said yes to."""
    (ws / ".env").write_text(f"API_KEY={SECRET}\n")
    (ws / "a.txt").write_text("plain\n")
    (ws / "notes").mkdir()
    (ws / "notes/b.txt").write_text("plain\n")
    (ws / "nb.ipynb").write_text(
        json.dumps({"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5})
    )
    (ws / ".env.ipynb").write_text(
        json.dumps(
            {
                "cells": [{"cell_type": "markdown", "id": "c1", "metadata": {}, "source": SECRET}],
                "metadata": {},
                "nbformat": 4,
                "nbformat_minor": 5,
            }
        )
    )

    def swap(call: Any, info: Any) -> None:
        """Runs after the protection decider said "not protected": the swap lands between
        the decision and the run."""
        if call.id == "n":  # the last call decided: every decision saw plain files
            for rel, to in (
                ("a.txt", ".env"),
                ("notes/b.txt", "../.env"),
                ("nb.ipynb", ".env.ipynb"),
            ):
                (ws / rel).unlink()
                (ws / rel).symlink_to(to)
        return None

    approver = Approver()
    out = await drive(
        [
            call("read_file", file_path="a.txt", id="r"),
            call("grep", pattern=SECRET, path="a.txt", output_mode="content", id="g1"),
            call("grep", pattern=SECRET, path="notes", output_mode="content", id="g2"),
            call("notebook_read", notebook_path="nb.ipynb", id="n"),
        ],
        tools=workspace_tools(ws, "read_file", "grep", "notebook_read"),
        approval="ask",
        approver=approver,
        permission=swap,
    )
    assert approver.asked == []  # nobody was asked: the decision saw plain files
    for cid in ("r", "g1", "g2", "n"):
        assert SECRET not in _say(out, cid), cid


async def test_01b_an_open_descriptor_of_the_kernel_reads_nothing(ws: Path, tmp_path: Path) -> None:
    """``/proc/self/fd/N`` is the kernel's own open file (a credentials file a library
    holds open), ``/proc/self/environ`` its environment at start: by name, or through a
    link in the workspace, a no-click read tool must not follow them."""
    outside = tmp_path / "held-open.txt"
    outside.write_text(f"TOKEN={SECRET}\n")
    with open(outside) as held:
        fd = held.fileno()
        (ws / "fdlink").symlink_to(f"/proc/self/fd/{fd}")
        (ws / "envlink").symlink_to("/proc/self/environ")
        (ws / "cwdlink").symlink_to("/proc/self/cwd")
        out = await drive(
            [
                call("read_file", file_path=f"/proc/self/fd/{fd}", id="a"),
                call("read_file", file_path="fdlink", id="b"),
                call("read_file", file_path="envlink", id="c"),
                call("grep", pattern="TOKEN", path="fdlink", output_mode="content", id="d"),
                call("grep", pattern="TOKEN", path="cwdlink", output_mode="content", id="e"),
                call("notebook_read", notebook_path="fdlink", id="f"),
            ],
            tools=workspace_tools(ws, "read_file", "grep", "notebook_read"),
            approver=Approver(),
        )
    for cid in "abcdef":
        assert SECRET not in _say(out, cid), cid


async def test_01c_dev_shm_is_not_the_kernels(ws: Path) -> None:
    """``/dev/shm`` is shared memory every process of the machine sees (multiprocessing,
    PyTorch's DataLoader and Jupyter extensions leave data there): a call reads none of
    the host's, and what an approved call leaves there is not the host's either."""
    require_sandbox()
    import uuid

    name = f"rt4-{uuid.uuid4().hex[:8]}"
    host = Path("/dev/shm") / name
    if not host.parent.is_dir():
        pytest.skip("no /dev/shm here")
    host.write_text(SECRET)
    try:
        for approved in (False, True):
            ran = await run(
                ws, f"cat /dev/shm/{name}; echo x > /dev/shm/{name}-w", approved=approved
            )
            assert SECRET not in str(ran.content)
            assert not (host.parent / f"{name}-w").exists()
    finally:
        host.unlink()
        (host.parent / f"{name}-w").unlink(missing_ok=True)


# -- denial of service: what a no-click call prints ------------------------------------

FLOOD = r"""
import asyncio, json, sys
sys.path[:0] = [{tests!r}, {top!r}]  # the helpers and the tests' own modules
from pathlib import Path
from sandbox_helpers import run
from nb_tools.builtin import builtin_tools
from nb_tools.tool._grant import Grant, granted

ws = Path({ws!r})

def peak_mb():
    # This program's own peak (VmHWM: since its exec). ru_maxrss would keep the peak of
    # the process it was forked from (the test run's, hundreds of MB), not this one's.
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) // 1024

async def main():
    # A no-click flood: 2 s of zeros, progress flushed only at the end.
    await run(ws, "cat /dev/zero", approved=False, timeout_ms=2000, progress_interval=60)
    after_bash = peak_mb()
    (grep,) = builtin_tools(ws, include=["grep"])
    with granted(Grant(approved=False)):
        r = await grep.call(json.dumps({{"pattern": "a", "output_mode": "content"}}))
    after_grep = peak_mb()
    print(json.dumps([after_bash, after_grep, len(str(r.content))]))

asyncio.run(main())
"""


def test_02_a_flood_of_output_does_not_fill_the_kernels_memory(ws: Path) -> None:
    """``cat /dev/zero`` (the vote passes it: no click) and a ``grep`` over a file with one
    50 MB line (a minified bundle, a one-line JSON): the model sees 30,000 characters and
    500 per line, so the kernel must not hold hundreds of MB to get there (a faster disk
    or CPU makes it GBs: the kernel is killed and the conversation lost)."""
    require_sandbox()
    (ws / "one-line.json").write_bytes(b"a" * 50_000_000 + b"\n")
    here = Path(__file__).parent
    script = FLOOD.format(tests=str(here), top=str(here.parent), ws=str(ws))
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=120,
        env=os.environ,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    after_bash, after_grep, shown = json.loads(done.stdout.strip().splitlines()[-1])
    assert after_bash < 200, f"a no-click bash flood took the process to {after_bash} MB"
    grew = after_grep - after_bash
    assert grew < 50, f"a grep over one 50 MB line took {grew} MB more ({after_grep} MB)"
    assert shown < 40_000


async def test_02b_a_no_click_call_cannot_fill_the_memory_through_tmp(ws: Path) -> None:
    """The read-only sandbox's private ``/tmp`` and home are tmpfs, in memory, and by
    default may take half of it: ``sort -S 1M`` of a big data file (the vote passes it)
    spills there, memory no process owns, so the OOM killer takes another (the kernel).
    A call without a click gets a bounded tmpfs (where bubblewrap can set its size)."""
    require_sandbox()
    from nb_tools.sandbox import sandbox_available
    from nb_tools.sandbox._bwrap import _tmpfs_size

    if not _tmpfs_size():
        pytest.skip(f"this bubblewrap ({sandbox_available().version}) cannot size a tmpfs")
    ran = await run(
        ws,
        "head -c 700M /dev/zero > /tmp/fill; stat -c %s /tmp/fill; "
        "head -c 700M /dev/zero > ~/fill; stat -c %s ~/fill",
        approved=False,
    )
    said = str(ran.content)
    assert "No space left on device" in said, said
    assert "734003200" not in said, said  # neither file got its 700 MB


@pytest.mark.parametrize("field", ["pattern", "glob"])
async def test_03_a_glob_built_to_backtrack_answers_quickly(ws: Path, field: str) -> None:
    """Globs become regexes in Python for the re-check after rg: ``*{,}`` stops the
    collapsing of runs of ``*``, so each star is its own ``[^/]*`` and a name that almost
    matches backtracks exponentially, holding the kernel (the GIL) with no way to stop."""
    (ws / ("x" * 60 + ".txt")).write_text("hit\n")
    (ws / ("x" * 60)).mkdir()
    (ws / ("x" * 60) / ("x" * 60 + ".py")).write_text("hit\n")
    evil = "*{,}" * 12 + "Z"
    start = time.monotonic()
    calls = (
        [call("glob", pattern=evil, id="c"), call("glob", pattern="**/" + evil, id="d")]
        if field == "pattern"
        else [
            call("grep", pattern="hit", glob=evil, id="c"),
            call("grep", pattern="hit", glob="**/" + evil, id="d"),
        ]
    )
    await drive(calls, tools=workspace_tools(ws, "glob", "grep"), approver=Approver())
    assert time.monotonic() - start < 10


@pytest.mark.parametrize("field", ["pattern", "glob"])
async def test_03b_a_long_glob_of_brackets_does_not_hold_the_kernel(ws: Path, field: str) -> None:
    """Turning a glob into a regex looked ahead to the end for each unclosed ``[``: a
    20,000-character glob of them took minutes of CPU on the kernel's event loop (the
    kernel answers nothing meanwhile), with no click. It answers in a moment, and a
    ``.gitignore`` line of them is no trap either."""
    (ws / "a.txt").write_text("a\n")
    (ws / ".gitignore").write_text("[" * 20_000 + "\n" + "[]" * 5_000 + "\n")
    start = time.monotonic()
    for evil in ("[" * 20_000, "[]" * 10_000, "{" * 3_000 + "a" + "}" * 3_000):
        c = (
            call("glob", pattern=evil, id="c")
            if field == "pattern"
            else call("grep", pattern="a", glob=evil, id="c")
        )
        out = await drive([c], tools=workspace_tools(ws, "glob", "grep"), approver=Approver())
        assert "at most 1,000" in _say(out, "c")
    ok = await drive(
        [call("glob", pattern="*.txt", id="l"), call("grep", pattern="a", glob="*.txt", id="g")],
        tools=workspace_tools(ws, "glob", "grep"),
        approver=Approver(),
    )
    assert "a.txt" in _say(ok, "l") and "a.txt" in _say(ok, "g")
    assert time.monotonic() - start < 10


# -- writers under auto: start-up files through the notebook tools ------------------------


@pytest.mark.parametrize(
    "rel",
    [
        "sitecustomize.py",
        "lib/python3.11/site-packages/rt4.pth",
        ".git/hooks/post-checkout",
        "conf/ipython_kernel_config.json",
        "sub/.nb_tools/settings.json",
        "profile_rt4/startup/00.ipynb",
    ],
)
async def test_04_notebook_edit_under_auto_plants_no_start_up_file(ws: Path, rel: str) -> None:
    """``notebook_edit`` writes any path it is given as a notebook (JSON that Python or
    git would run as it is not, but a name is enough to make a ``.pth`` or a hook run):
    under ``auto`` it asks for a protected name, as ``write_file`` does."""
    (ws / ".git/hooks").mkdir(parents=True)
    approver = Approver()
    await drive(
        [
            call(
                "notebook_edit",
                notebook_path=rel,
                new_source="import os",
                cell_type="code",
                edit_mode="insert",
                id="n",
            )
        ],
        tools=workspace_tools(ws, "notebook_edit"),
        approval="auto",
        approver=approver,
    )
    assert approver.asked == ["n"]
    assert not (ws / rel).exists()


# -- secrets of a project that the table knew only in a home folder ------------------------

PROJECT_SECRETS = {
    "web/.npmrc": f"//registry.npmjs.org/:_authToken=npm_{SECRET}\n",
    ".pypirc": f"[pypi]\nusername = __token__\npassword = pypi-{SECRET}\n",
    "infra/terraform.tfvars": f'db_password = "{SECRET}"\n',
    "infra/prod.tfvars.json": json.dumps({"db_password": SECRET}) + "\n",
}


@pytest.mark.parametrize("rel", sorted(PROJECT_SECRETS))
async def test_05_a_projects_package_token_or_tfvars_stays_hidden(ws: Path, rel: str) -> None:
    """A project-level ``.npmrc`` with an ``_authToken`` (CI templates commit one), a
    ``.pypirc``, Terraform's variables files (passwords in clear): the workspace is no home
    folder, and no tool without a click may show them."""
    require_sandbox()
    (ws / rel).parent.mkdir(parents=True, exist_ok=True)
    (ws / rel).write_text(PROJECT_SECRETS[rel])
    (ws / ".ignore").write_text("!.*\n!**/.*\n")
    q = json.dumps(rel)
    approver = Approver()
    out = await drive(
        [
            call("read_file", file_path=rel, id="r"),
            call("grep", pattern=SECRET, output_mode="content", id="g"),
            call("bash", command=f"cat {q}; grep -r {SECRET} .", id="b"),
        ],
        tools=workspace_tools(ws, "read_file", "grep", "bash"),
        approval="ask",
        approver=approver,
    )
    assert "r" in approver.asked  # the read asked; the person said no
    for cid in "rgb":
        assert SECRET not in _say(out, cid), cid


# -- programs on the kernel's PATH that live in the workspace ------------------------------


async def test_06_a_folder_on_the_kernels_path_is_not_writable_under_auto(
    ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``~/bin`` (Debian's ``.profile`` puts it on PATH), ``node_modules/.bin`` or a
    project's ``bin`` on the kernel's PATH: a program written there runs, in place of the
    system's, whenever the kernel or nb_tools looks a command up (``bwrap`` at the next
    start, a ``git`` a library calls), outside the sandbox with the kernel's environment.
    Under ``auto`` neither bash nor ``write_file`` may put one there without a click."""
    require_sandbox()
    (ws / "bin").mkdir()
    later = ws / "node_modules/.bin"  # on PATH, not made yet
    monkeypatch.setenv("PATH", os.pathsep.join([str(ws / "bin"), str(later), os.environ["PATH"]]))
    said = await _bash(
        ws,
        "printf '#!/bin/sh\\ntouch /tmp/pwned\\n' > bin/git; chmod +x bin/git; "
        "mkdir -p node_modules/.bin && cp /bin/true node_modules/.bin/git; echo x > ctl",
        "auto",
    )
    assert (ws / "ctl").exists(), said  # the call ran and could write the workspace
    assert not (ws / "bin/git").exists(), said
    assert not (later / "git").exists(), said
    approver = Approver()
    patch = "*** Begin Patch\n*** Add File: node_modules/.bin/python3\n+#!/bin/sh\n*** End Patch\n"
    await drive(
        [
            call("write_file", file_path="bin/bwrap", content="#!/bin/sh\n", id="w"),
            call("apply_patch", input=patch, id="p"),
        ],
        tools=workspace_tools(ws, "write_file", "apply_patch"),
        approval="auto",
        approver=approver,
    )
    assert approver.asked == ["w", "p"] and not (ws / "bin/bwrap").exists()
    assert not (later / "python3").exists()


JUPYTER_PLANTS = (
    "jdata/labextensions/rt4/static/remoteEntry.rt4.js",
    "jdata/labextensions/rt4/package.json",
    "jconf/labconfig/page_config.json",
    "jconf/custom/custom.js",
    "ipy/extensions/rt4.py",
)


async def test_07_jupyters_own_folders_in_the_workspace_under_auto(
    ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``JUPYTER_DATA_DIR``, ``JUPYTER_CONFIG_DIR`` and ``IPYTHONDIR`` pointing into the
    project (a project-local Jupyter set-up; their names match no row of the table): a
    front-end extension in ``labextensions`` is JavaScript the page runs at the next load
    (and the page runs code in the kernel); ``page_config.json`` switches extensions off.
    Under ``auto`` bash leaves none of them (the config folder does not exist yet: made
    by the call, it is removed), and ``write_file`` asks."""
    require_sandbox()
    (ws / "jdata").mkdir()
    (ws / "ipy").mkdir()
    monkeypatch.setenv("JUPYTER_DATA_DIR", str(ws / "jdata"))
    monkeypatch.setenv("JUPYTER_CONFIG_DIR", str(ws / "jconf"))
    monkeypatch.setenv("IPYTHONDIR", str(ws / "ipy"))
    plant = "; ".join(f'mkdir -p "$(dirname {r})"; echo "x" > {r}' for r in JUPYTER_PLANTS)
    said = await _bash(ws, plant + "; echo x > ctl", "auto")
    assert (ws / "ctl").exists(), said
    left = [r for r in JUPYTER_PLANTS if (ws / r).exists()]
    assert left == [], said
    approver = Approver()
    await drive(
        [call("write_file", file_path=JUPYTER_PLANTS[1], content="{}", id="w")],
        tools=workspace_tools(ws, "write_file"),
        approval="auto",
        approver=approver,
    )
    assert approver.asked == ["w"] and not (ws / JUPYTER_PLANTS[1]).exists()


# -- what remains (see docs/sandbox.md) -------------------------------------------------


@pytest.mark.xfail(
    strict=True,
    reason="what remains: a module in the kernel's working folder that shadows one the "
    "kernel imports later (IPython puts '' first on sys.path) is not protected",
)
async def test_08_a_module_that_shadows_a_later_import_of_the_kernel(ws: Path) -> None:
    """The kernel's working folder is the workspace, and IPython puts ``''`` first on
    ``sys.path``: ``markdownify.py`` written there by bash under ``auto`` runs in the
    kernel, with its keys, the next time ``web_fetch`` imports markdownify (nb_tools
    imports it on first use), and nobody chose to run it."""
    require_sandbox()
    probe = textwrap.dedent(
        """
        import importlib.util, sys
        sys.path.insert(0, '')
        spec = importlib.util.find_spec('markdownify')
        print(spec.origin if spec else '')
        """
    )
    await _bash(ws, "echo 'import os' > markdownify.py; echo x > ctl", "auto")
    assert (ws / "ctl").exists()
    found = subprocess.run(
        [sys.executable, "-c", probe], cwd=ws, capture_output=True, text=True, timeout=30
    ).stdout.strip()
    assert found != str(ws / "markdownify.py"), "the kernel would import the planted module"


TOKENS = (
    "sk-ant-api03-RT4" + "x" * 80 + "-AAAAAA",  # the shape of the kernel's own Anthropic key
    "ghp_RT4aaaaBBBBccccDDDDeeeeFFFFgggg1234",  # a GitHub token
)


async def test_09_a_token_printed_into_a_log_or_a_saved_output(ws: Path) -> None:
    """A cell once displayed ``os.environ`` (the output is saved in the notebook), a log
    holds a token: ``notebook_read``, ``read_file`` and ``grep`` need no click there, and
    the kernel's own API key would go back to the model: each channel hides the tokens by
    their shape and by the environment's values (``redact_output``)."""
    output = "".join(f"TOKEN_{i}={t}\n" for i, t in enumerate(TOKENS))
    cell = {"cell_type": "code", "id": "c", "metadata": {}, "execution_count": 1,
            "source": "os.environ",
            "outputs": [{"output_type": "stream", "name": "stdout", "text": output}]}  # fmt: skip
    nb = {"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (ws / "analysis.ipynb").write_text(json.dumps(nb))
    (ws / "run.log").write_text(output)
    out = await drive(
        [
            call("notebook_read", notebook_path="analysis.ipynb", id="n"),
            call("read_file", file_path="run.log", id="r"),
            call("grep", pattern="TOKEN_", output_mode="content", id="g"),
        ],
        tools=workspace_tools(ws, "notebook_read", "read_file", "grep"),
        approver=Approver(),
    )
    seen = "".join(_say(out, c) for c in "nrg")
    for token in TOKENS:
        assert token not in seen


async def test_10_a_file_name_that_is_not_utf8_does_not_break_the_conversation(
    ws: Path,
) -> None:
    """A name from a Windows zip or an old Latin-1 disk (``bad\\xff.txt``): the tools read
    names with ``surrogateescape``, and a lone surrogate in a tool result cannot be encoded
    as UTF-8, so the next request (httpx encodes JSON as UTF-8) fails, and every one after
    it: the conversation is lost to one ``glob``."""
    raw = os.fsencode(ws)
    with open(os.path.join(raw, b"bad\xff\xfe.txt"), "wb") as f:
        f.write(b"hello \xff world\n")
    os.mkdir(os.path.join(raw, b"dir\xc3"))
    names = ("glob", "grep", "bash", "read_file")
    out = await drive(
        [
            call("glob", pattern="**/*", id="l"),
            call("grep", pattern="hello", id="g"),
            call("bash", command="ls; cat bad*", id="b"),
            call("read_file", file_path="dir\udcc3/../bad\udcff\udcfe.txt", id="r"),
        ],
        tools=workspace_tools(ws, *names),
        approver=Approver(),
    )
    for cid in "lgbr":
        said = _say(out, cid)
        said.encode("utf-8")  # raises on a lone surrogate
        assert cid == "r" or "bad" in said, said
