"""The kernel's side of the ``nb_tools.notebook`` comm (docs/comm.md) in a real kernel, with
the test client playing the frontend(s) exactly as the protocol says; the browser tests
(tests/browser/test_live_notebook.py) run the real extension."""

from __future__ import annotations

import json
from typing import Any

import pytest
from kernel_helpers import Execution, Kernel

from nb_tools.testing import call, reply

pytestmark = pytest.mark.kernel

CELLS = [
    {"id": "c1", "cell_type": "code", "source": "x = 1", "execution_count": 1, "outputs": []},
    {"id": "m1", "cell_type": "markdown", "source": "# Notes (unsaved)"},
]


class FakeFrontend:
    """Answers the comm as the extension would; ``clients`` frontends say hello."""

    def __init__(self, clients: tuple[str, ...] = ("lab-1",)) -> None:
        self.clients = clients
        self.cells = [dict(c) for c in CELLS]
        self.requests: list[dict[str, Any]] = []
        self.comm_id = ""

    def __call__(self, k: Kernel, msg: dict, ex: Execution) -> None:
        content = msg["content"]
        if msg["msg_type"] == "comm_open" and content.get("target_name") == "nb_tools.notebook":
            assert content["data"] == {"protocol": 1}
            self.comm_id = content["comm_id"]
            for client in self.clients:
                k.send_comm(
                    self.comm_id,
                    {"type": "hello", "protocol": 1, "client": client, "path": "nb.ipynb"},
                )
        elif msg["msg_type"] == "comm_msg" and content["comm_id"] == self.comm_id:
            data = content["data"]
            if data.get("type") != "request":
                return
            self.requests.append(data)
            snap = {"path": "nb.ipynb", "dirty": True, "cells": self.cells}
            if data["op"] == "edit":
                for edit in data["edits"]:
                    if edit["action"] == "insert":
                        cell = dict(edit["cell"], outputs=edit.get("outputs", []))
                        cell["execution_count"] = edit.get("execution_count")
                        at = [c["id"] for c in self.cells].index(edit["after"]) + 1
                        self.cells.insert(at, cell)
            k.send_comm(
                self.comm_id, {"type": "reply", "id": data["id"], "ok": True, "snapshot": snap}
            )


@pytest.fixture(scope="module")
def ready(kernel: Kernel) -> Kernel:
    kernel.ok("%load_ext nb_tools\nx = 1")
    return kernel


def results(server) -> list[str]:
    body = server.requests[-1].body
    blocks = [b for b in body["messages"][-1]["content"] if b.get("type") == "tool_result"]
    out = []
    for b in blocks:
        c = b["content"]
        out.append(c if isinstance(c, str) else "".join(x.get("text", "") for x in c))
    return out


def test_without_a_frontend_the_live_tools_say_so(ready: Kernel, server) -> None:
    server.push(
        reply(
            "",
            call("notebook_read"),
            call("notebook_edit", cell_id="c1", new_source="y"),
            call("notebook_read", notebook_path="other.ipynb"),
        ),
        reply("No notebook."),
    )
    ready.ok("%%agent --new --approval auto\nread the notebook")
    read, edit, other = results(server)
    assert other.startswith("notebook_read: other.ipynb is not the notebook open in this kernel")
    assert "--builtins" in other
    assert read.startswith("notebook_read: no JupyterLab or Notebook 7 window with the nb_tools")
    assert "nbclient, papermill or VS Code" in read
    assert edit.startswith("notebook_edit: no JupyterLab or Notebook 7 window")


def test_read_sees_the_open_document_and_edit_goes_to_the_leader_once(
    ready: Kernel, server
) -> None:
    front = FakeFrontend(clients=("lab-1", "lab-2"))
    server.push(
        reply("", call("notebook_read")),
        reply(
            "",
            call(
                "notebook_edit",
                cell_id="c1",
                edit_mode="insert",
                cell_type="code",
                new_source="y = x + 41\nprint('y is', y)\ny",
                run=True,
            ),
        ),
        reply("Added."),
    )
    ex = ready.run("%%agent --new --approval auto\nadd a cell", on_message=front)
    assert not ex.errors, ex.errors
    # the model read the live cells (the unsaved markdown cell included)
    read = server.requests[-2].body["messages"][-1]["content"][0]["content"]
    read = read if isinstance(read, str) else read[0]["text"]
    assert "Open notebook nb.ipynb (unsaved changes): 2 cells" in read
    assert '<cell id="m1" type="markdown" index="1">\n# Notes (unsaved)\n</cell>' in read
    ops = [(r["op"], r["leader"]) for r in front.requests]
    assert ops == [("snapshot", "lab-1"), ("edit", "lab-1")]  # the first hello leads
    [edit] = front.requests[1]["edits"]
    assert edit["action"] == "insert" and edit["after"] == "c1"
    assert edit["cell"]["source"] == "y = x + 41\nprint('y is', y)\ny"
    assert [o["output_type"] for o in edit["outputs"]] == ["stream", "execute_result"]
    assert edit["outputs"][0]["text"] == "y is 42\n"
    assert edit["outputs"][1]["data"]["text/plain"] == "42"
    # a number of its own: the %%agent cell, which finishes last, ends with the next one
    assert edit["execution_count"] == ex.reply["execution_count"] - 1
    assert front.requests[1]["turn"]
    [text] = results(server)
    assert text.startswith(f"Inserted code cell {edit['cell']['id']} after cell c1")
    assert "y is 42" in text
    # the run's variable is in the user's namespace
    after = ready.ok("print(y)")
    assert after.stdout == "42\n"
    assert after.reply["execution_count"] == edit["execution_count"] + 2


def test_edit_preview_is_the_cell_diff_and_needs_approval(ready: Kernel, server) -> None:
    front = FakeFrontend()
    server.push(
        reply("", call("notebook_read")),
        reply("", call("notebook_edit", cell_id="c1", new_source="x = 2")),
        reply("Changed."),
    )
    seen: dict[str, Any] = {}

    def on_message(k: Kernel, msg: dict, ex: Execution) -> None:
        front(k, msg, ex)
        if msg["msg_type"] == "comm_open" and not seen:
            state = msg["content"]["data"].get("state", {})
            if state.get("_model_name") == "ButtonModel" and state.get("description") == "Deny":
                seen["deny"] = msg["content"]["comm_id"]
                seen["text"] = json.dumps([m["content"] for m in ex.messages])
                k.click(seen["deny"])

    ready.run("%%agent --new\nchange c1", on_message=on_message)
    assert "deny" in seen, "notebook_edit must ask"
    assert "-x = 1" in seen["text"] and "+x = 2" in seen["text"]  # the cell diff on the card
    assert [r["op"] for r in front.requests] == ["snapshot"]  # denied: no edit sent


def test_the_preview_diffs_against_the_last_snapshot(ready: Kernel) -> None:
    assert ready.ok(
        "from nb_tools.jupyter._live_notebook import live\n"
        "n = live()\n"
        "n.take_snapshot({'path': 'nb.ipynb', 'cells': [{'id': 'q', 'cell_type': 'code',"
        " 'source': 'old'}]})\n"
        "from nb_tools.jupyter._live_notebook import LiveNotebookEdit\n"
        'print(LiveNotebookEdit(n).preview(\'{"cell_id": "q", "new_source": "new"}\')'
        ".diff(), end='')"
    ).stdout == (
        "--- a/nb.ipynb#q\n+++ b/nb.ipynb#q\n@@ -1 +1 @@\n-old\n"
        "\\ No newline at end of file\n+new\n\\ No newline at end of file\n"
    )
