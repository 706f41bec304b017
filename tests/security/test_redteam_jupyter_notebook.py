"""Red team, the live notebook tools in a real kernel, the test client playing the
extension's side of the comm (it applies an edit only when the cell still holds the
``expect`` source, as labextension/src/notebook.ts does).

The attack: in one turn the model asks for ``notebook_read`` and ``notebook_edit`` (delete
or replace a cell). The card shows the cell as it was when the reply came; while it waits,
the person edits that cell. After the click the read runs first (no click needed) and
refreshes the kernel's snapshot; the edit used to re-plan from that snapshot, so its
``expect`` was the person's new text and the frontend deleted it, though the card showed
the old text. The edit must carry what the card showed."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "jupyter"))

from kernel_helpers import Execution, Kernel

from nb_tools.testing import FakeMessagesServer, call, reply

pytestmark = pytest.mark.kernel

LIVE_EDIT = "important = fetch_results()  # typed while the card waited"


@pytest.fixture(scope="module")
def server():
    with FakeMessagesServer() as srv:
        yield srv


@pytest.fixture(scope="module")
def kernel(server: FakeMessagesServer, tmp_path_factory: pytest.TempPathFactory):
    k = Kernel(server, tmp_path_factory.mktemp("kernel"))
    try:
        k.ok("%load_ext nb_tools")
        yield k
    finally:
        k.close()


class Frontend:
    """The extension's side: hello, snapshots, and edits checked against ``expect``."""

    def __init__(self) -> None:
        self.cells = [
            {"id": "c1", "cell_type": "code", "source": "scratch = 1", "outputs": []},
            {"id": "c2", "cell_type": "code", "source": "y = 2", "outputs": []},
        ]
        self.comm_id = ""
        self.refused: list[str] = []

    def snap(self) -> dict[str, Any]:
        return {"path": "nb.ipynb", "dirty": True, "cells": [dict(c) for c in self.cells]}

    def __call__(self, k: Kernel, msg: dict, ex: Execution) -> None:
        content = msg["content"]
        if msg["msg_type"] == "comm_open" and content.get("target_name") == "nb_tools.notebook":
            self.comm_id = content["comm_id"]
            k.send_comm(self.comm_id, {"type": "hello", "protocol": 1, "client": "lab-1"})
            return
        if msg["msg_type"] != "comm_msg" or content["comm_id"] != self.comm_id:
            return
        data = content["data"]
        if data.get("type") != "request":
            return
        answer: dict[str, Any] = {"type": "reply", "id": data["id"], "ok": True}
        if data["op"] == "edit":
            for edit in data["edits"]:
                i = [c["id"] for c in self.cells].index(edit["cell_id"])
                if "expect" in edit and self.cells[i]["source"] != edit["expect"]:
                    self.refused.append(edit["cell_id"])
                    answer = {"type": "reply", "id": data["id"], "ok": False}
                    answer["error"] = f"cell {edit['cell_id']} changed since the agent read it"
                    break
                if edit["action"] == "delete":
                    del self.cells[i]
                elif edit["action"] == "replace":
                    self.cells[i] = dict(self.cells[i], source=edit["source"])
        answer["snapshot"] = self.snap()
        k.send_comm(self.comm_id, answer)


def approve_after_a_live_edit(front: Frontend):
    """Clicks Approve on the card, after the person changed cell c1 in the notebook."""
    done: list[str] = []

    def on_message(k: Kernel, msg: dict, ex: Execution) -> None:
        front(k, msg, ex)
        if done or msg["msg_type"] != "comm_open":
            return
        state = msg["content"]["data"].get("state", {})
        if state.get("_model_name") == "ButtonModel" and state.get("description") == "Approve":
            done.append("clicked")
            front.cells[0]["source"] = LIVE_EDIT
            k.click(msg["content"]["comm_id"])

    return on_message, done


@pytest.mark.parametrize(
    "edit",
    [
        {"cell_id": "c1", "edit_mode": "delete"},
        {"cell_id": "c1", "new_source": "scratch = 0"},
    ],
    ids=["delete", "replace"],
)
def test_an_edit_never_changes_a_cell_the_card_did_not_show(
    kernel: Kernel, server: FakeMessagesServer, edit: dict[str, Any]
) -> None:
    front = Frontend()
    server.push(
        reply("", call("notebook_read")),
        reply("", call("notebook_read"), call("notebook_edit", **edit)),
        reply("Done."),
    )
    on_message, clicked = approve_after_a_live_edit(front)
    kernel.run("%%agent --new\ntidy the notebook", on_message=on_message)
    assert clicked, "notebook_edit did not ask"
    # the person's text is still in the notebook: the edit was refused, not applied
    assert [c["source"] for c in front.cells if c["id"] == "c1"] == [LIVE_EDIT]
    assert front.refused == ["c1"]
