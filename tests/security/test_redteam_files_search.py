"""Red team: the search tools (``grep``, no click) never show the content of a protected
file (``.env*``, ``.ssh/``, ``.netrc``, ...), even when an ignore file re-includes it.

``grep`` skips hidden files the way ripgrep does, and ripgrep's rule is "hidden unless a
``!`` line of an ignore file re-includes it". The text of ``.gitignore`` / ``.ignore`` is
the repository's (attacker-controlled: a cloned project, a dependency), so one line
``!.env`` turned a search of the workspace into a read of the user's ``.env``, without the
click that ``read_file .env`` asks for. Each test runs the real tool (``rg`` and the
pure-Python engine) and checks that the secret's text is not in what the model gets.

Also: ``grep`` on a FIFO (``path`` naming it) used to hang until the call was cancelled
(``rg`` blocks opening it; the Python engine's thread blocks forever).
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pytest

from nb_tools.agent import Agent, ApprovalRequest
from nb_tools.builtin import builtin_tools
from nb_tools.builtin._grep import GrepTool
from nb_tools.builtin._rg import find_rg
from nb_tools.builtin._workspace import Workspace
from nb_tools.testing import ScriptedModel, call, reply

# letters only: in no shape the text search hides, so only the defence under test keeps it out
SECRET = "skLiveFourFoxes"

ENGINES = ["rg", "python"]

# (file holding the secret, ignore file, the line that re-includes it)
REINCLUDED = [
    (".env", ".gitignore", "!.env"),
    (".env.local", ".ignore", "!.env*"),
    (".envrc", ".rgignore", "!.envrc"),
    ("config/.env.production", "config/.gitignore", "!.env.production"),
    (".ssh/id_ed25519", ".gitignore", "!.ssh/"),
    (".netrc", ".ignore", "!.*"),
    (".git-credentials", ".ignore", "!.git-credentials"),
]


def _engine(name: str) -> str | None:
    if name == "python":
        return None
    rg = find_rg()
    if rg is None:
        pytest.skip("no rg binary")
    return rg


def _grep(root: Path, engine: str, **args: object) -> str:
    tool = GrepTool(Workspace(root), rg=_engine(engine))
    result = asyncio.run(tool.call(json.dumps(args)))
    return result.content


MODES = {
    "content": {"output_mode": "content"},
    "glob": {"output_mode": "content", "glob": "*"},
    "type": {"output_mode": "content", "type": "sh"},
    "context": {"output_mode": "content", "-C": 2},
    "files": {"output_mode": "files_with_matches"},  # an oracle, pattern after pattern
    "count": {"output_mode": "count"},
}


def _world(root: Path, secret: str, ignore: str, line: str) -> None:
    (root / secret).parent.mkdir(parents=True, exist_ok=True)
    (root / secret).write_text(f"API_KEY={SECRET}\n")
    (root / ignore).write_text(f"{line}\n")
    (root / "app.py").write_text("key = 'sk-live-'\n")


def _assert_hidden(out: str, secret: str) -> None:
    assert SECRET not in out, out
    assert Path(secret).name not in out, out  # not even its name: the oracle
    assert "app.py" in out, out  # the search itself ran


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize(("secret", "ignore", "line"), REINCLUDED)
def test_a_reincluded_secret_file_is_not_searched_without_a_click(
    tmp_path: Path, engine: str, secret: str, ignore: str, line: str
) -> None:
    _world(tmp_path, secret, ignore, line)
    _assert_hidden(_grep(tmp_path, engine, pattern="sk-live", output_mode="content"), secret)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("mode", list(MODES))
def test_no_output_mode_or_filter_reveals_a_reincluded_env(
    tmp_path: Path, engine: str, mode: str
) -> None:
    _world(tmp_path, ".bashrc" if mode == "type" else ".env", ".gitignore", "!.*")
    (tmp_path / "app.sh").write_text("key = 'sk-live-'\n")
    out = _grep(tmp_path, engine, pattern="sk-live", **MODES[mode])
    if mode == "type":
        out = out.replace("app.sh", "app.py")  # the type filter keeps the .sh file only
    _assert_hidden(out, ".bashrc" if mode == "type" else ".env")


@pytest.mark.parametrize("engine", ENGINES)
def test_control_the_same_search_finds_a_plain_file(tmp_path: Path, engine: str) -> None:
    (tmp_path / "settings.txt").write_text(
        f"API_KEY is {SECRET}\n"
    )  # prose: not hidden by its text
    assert SECRET in _grep(tmp_path, engine, pattern="API_KEY", output_mode="content")


def test_grep_through_the_agent_under_auto_never_hands_over_the_env(tmp_path: Path) -> None:
    """End to end: the injected model greps the workspace for ``KEY``; the next request
    (what the model sees) does not hold the secret, and nothing was asked."""
    (tmp_path / ".env").write_text(f"OPENAI_API_KEY={SECRET}\n")
    (tmp_path / ".gitignore").write_text("node_modules/\n!.env\n")
    (tmp_path / "README.md").write_text("set OPENAI_API_KEY in .env\n")
    asked: list[ApprovalRequest] = []
    model = ScriptedModel(
        [reply("", call("grep", pattern="KEY", output_mode="content")), reply("done")]
    )
    agent = Agent(
        model,
        tools=builtin_tools(tmp_path, include=["grep", "read_file"]),
        approval="auto",
        approver=lambda r: asked.append(r) or False,
    )
    agent.run_sync("go")
    seen = model.requests[1].messages[-1].content[0].result.content
    assert "README.md" in seen
    assert SECRET not in seen


def test_grep_of_the_protected_file_by_name_still_asks(tmp_path: Path) -> None:
    (tmp_path / ".env").write_text(f"API_KEY={SECRET}\n")
    tool = GrepTool(Workspace(tmp_path))
    assert tool.requires_approval_for(json.dumps({"pattern": "x", "path": ".env"}))


@pytest.mark.parametrize("engine", ENGINES)
def test_grep_on_a_fifo_is_refused_at_once(tmp_path: Path, engine: str) -> None:
    os.mkfifo(tmp_path / "pipe")
    tool = GrepTool(Workspace(tmp_path), rg=_engine(engine))

    async def go() -> str:
        result = await asyncio.wait_for(
            tool.call(json.dumps({"pattern": "x", "path": "pipe"})), timeout=10
        )
        assert result.is_error
        return result.content

    assert "FIFO" in asyncio.run(go())


@pytest.mark.parametrize("engine", ENGINES)
def test_the_binary_check_of_a_big_file_runs_off_the_event_loop(
    tmp_path: Path, engine: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``grep path=data.csv`` scanned the whole file for a NUL byte on the event loop: a
    multi-GB data file froze the kernel's loop (and its Stop button) until it was read.
    The scan must run in a worker thread."""
    import threading

    from nb_tools.builtin import _grep

    (tmp_path / "data.csv").write_text("a,b\n1,2\n")
    threads: list[threading.Thread] = []
    real = _grep._refuse_binary

    def spy(path: str, *rest: object) -> None:
        threads.append(threading.current_thread())
        real(path, *rest)  # type: ignore[arg-type]

    monkeypatch.setattr(_grep, "_refuse_binary", spy)
    out = _grep_in_loop(tmp_path, engine)
    assert "data.csv" in out
    assert threads and all(t is not threading.main_thread() for t in threads)


def _grep_in_loop(root: Path, engine: str) -> str:
    tool = GrepTool(Workspace(root), rg=_engine(engine))
    args = json.dumps({"pattern": "1", "path": "data.csv", "output_mode": "content"})
    return asyncio.run(tool.call(args)).content
