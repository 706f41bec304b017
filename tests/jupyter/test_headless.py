"""A headless run (nbclient: no frontend shows the cell) with the "ask" policy never
waits for a click: the call is denied at once, and the model is told how to choose a
policy (NB_TOOLS_APPROVAL)."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

from nb_tools.testing import FakeMessagesServer, call, reply

pytestmark = pytest.mark.kernel

ROOT = Path(__file__).resolve().parents[2]
TRANSCRIPT = "application/vnd.nbtools.transcript+json"


def _headless_env(monkeypatch: pytest.MonkeyPatch, base_url: str) -> None:
    """The environment of an unattended run (nbclient) against the fake server: no
    approval policy or notebook session of the machine's, this checkout's nb_tools."""
    for name in ("NB_TOOLS_APPROVAL", "NB_TOOLS_HEADLESS", "JPY_SESSION_NAME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", base_url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test")
    monkeypatch.setenv("NB_TOOLS_BLOCK_REAL_MODELS", "1")
    monkeypatch.setenv(
        "PYTHONPATH",
        os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p),
    )


def test_ask_in_a_headless_run_denies_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import nbformat
    from nbclient import NotebookClient

    marker = tmp_path / "launched"
    with FakeMessagesServer() as server:
        server.push(
            reply("Launching.", call("launch", target="prod")),
            reply("It was denied."),
        )
        _headless_env(monkeypatch, server.base_url)
        nb = nbformat.v4.new_notebook()
        nb.cells = [
            nbformat.v4.new_code_cell(
                "%load_ext nb_tools\n"
                "from nb_tools import tool\n"
                "@tool(requires_approval=True)\n"
                "def launch(target: str) -> str:\n"
                '    """Launches (a side effect)."""\n'
                f"    open({str(marker)!r}, 'w').write(target)\n"
                "    return 'launched'\n"
            ),
            nbformat.v4.new_code_cell("%%agent\nLaunch prod"),
        ]
        start = time.monotonic()
        NotebookClient(nb, timeout=60, kernel_name="python3").execute()
        elapsed = time.monotonic() - start
        requests = list(server.requests)

    assert not marker.exists(), "the call ran without approval"
    outputs = nb.cells[1].outputs
    assert not [o for o in outputs if o.output_type == "error"]
    transcript = [o for o in outputs if o.output_type == "display_data"][-1].data[TRANSCRIPT]
    [item] = [i for i in transcript["items"] if i["kind"] == "tool"]
    assert item["status"] == "denied"
    answer = requests[-1].body["messages"][-1]["content"][0]
    assert answer["type"] == "tool_result" and answer["is_error"] is True
    text = json.dumps(answer["content"])
    assert "headless" in text and "NB_TOOLS_APPROVAL" in text
    assert elapsed < 55  # never a hang (the cell timeout is 60 s)

    # The saved notebook's transcript holds the conversation: an agent continues it.
    from nb_tools.agent import Agent
    from nb_tools.model._anthropic_convert import RequestEncoder
    from nb_tools.testing import ScriptedModel

    path = tmp_path / "run.ipynb"
    nbformat.write(nb, path)
    agent = Agent.from_notebook(path, cell=1, model=ScriptedModel([]))
    sent = RequestEncoder(transcript["model"]).encode(agent.request_preview("next"), cache=False)
    assert json.loads(sent)["messages"] == [
        *_without_cache_marks(requests[-1].body["messages"]),
        {"role": "assistant", "content": [{"type": "text", "text": "It was denied."}]},
        {"role": "user", "content": [{"type": "text", "text": "next"}]},
    ]


def _without_cache_marks(value: object) -> object:
    if isinstance(value, dict):
        return {k: _without_cache_marks(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [_without_cache_marks(v) for v in value]
    return value


async def test_a_frontend_view_means_someone_is_there(monkeypatch: pytest.MonkeyPatch) -> None:
    import ipywidgets as widgets

    from nb_tools.jupyter import _headless

    for name in ("NB_TOOLS_HEADLESS", "JPY_SESSION_NAME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(_headless, "_frontend_seen", False)
    monkeypatch.setattr(_headless, "FRONTEND_WAIT_SECONDS", 0.2)
    box = widgets.Box()
    watch = _headless.FrontendWatch(box)
    assert box._view_count == 0
    assert await watch.headless()  # nothing rendered it
    box._view_count = 1  # what a frontend sends when it shows the view
    assert not await watch.headless()
    monkeypatch.setenv("NB_TOOLS_HEADLESS", "1")
    assert await watch.headless()
    box.close()


def test_an_awaited_map_in_a_headless_run_never_waits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``await nb_tools.amap(...)`` in a cell nobody shows, policy "ask": the plan is
    printed and the map goes on; each call that needs a person is denied at once. With
    NB_TOOLS_APPROVAL=auto, the next map's calls run, with no card shown."""
    import nbformat
    from nbclient import NotebookClient

    marker = tmp_path / "refunded"

    def wants_refund(request: Any) -> Any:
        if len(request.messages) == 1:
            return reply("", call("refund", customer=request.messages[0].text.split()[-1]))
        return reply("done")

    with FakeMessagesServer(fallback=wants_refund) as server:
        _headless_env(monkeypatch, server.base_url)
        nb = nbformat.v4.new_notebook()
        nb.cells = [
            nbformat.v4.new_code_cell(
                "import os, nb_tools\n"
                "from nb_tools import tool\n"
                "@tool(register=False, requires_approval=True)\n"
                "def refund(customer: str) -> str:\n"
                '    """Refunds (a side effect)."""\n'
                f"    open({str(marker)!r}, 'a').write(customer)\n"
                "    return 'refunded'\n"
            ),
            nbformat.v4.new_code_cell(
                "r = await nb_tools.amap('Refund {input}', ['a', 'b'], tools=[refund])\n"
                "print(list(r['status']))"
            ),
            nbformat.v4.new_code_cell(
                "os.environ['NB_TOOLS_APPROVAL'] = 'auto'\n"
                "r = await nb_tools.amap('Refund {input}', ['c'], tools=[refund])\n"
                "print(list(r['status']))"
            ),
        ]
        start = time.monotonic()
        NotebookClient(nb, timeout=60, kernel_name="python3").execute()
        elapsed = time.monotonic() - start

    def stdout(cell: int) -> str:
        return "".join(
            o.get("text", "") for o in nb.cells[cell].outputs if o.output_type == "stream"
        )

    asked = stdout(1)
    assert "nb_tools.map plan: 2 rows on " in asked and "refund: asks a person" in asked
    assert asked.strip().endswith("['denied', 'denied']")
    html = "".join(o.get("data", {}).get("text/html", "") for o in nb.cells[1].outputs)
    assert "headless: no frontend shows this cell; went on" in html
    assert stdout(2).strip().endswith("['ok']")
    assert marker.read_text() == "c"  # only the run under NB_TOOLS_APPROVAL=auto refunded
    assert elapsed < 55  # never a hang (the cell timeout is 60 s)
