"""In a real kernel: a click sent the way JupyterLab sends it lands while the approval
waits in its one wake loop, and at the end every widget of the run is closed in the
kernel itself (its comm is gone from the kernel's comm manager), not only announced."""

from __future__ import annotations

import json
import time

import pytest
from kernel_helpers import Execution, Kernel

from nb_tools.testing import call, reply

pytestmark = pytest.mark.kernel

SETUP = '''
%load_ext nb_tools
from nb_tools import tool

ran = []

@tool(requires_approval=True)
def launch(target: str) -> str:
    """Launch something."""
    ran.append(target)
    return f"launched {target}"
'''

OPEN_COMMS = """
import json
from IPython import get_ipython
print(json.dumps(sorted(get_ipython().kernel.comm_manager.comms)))
"""

CLICK_AFTER = 1.0
"""Seconds the card waits before the click: several wake periods of the wait."""


def test_a_late_click_lands_and_every_widget_comm_is_closed_in_the_kernel(
    kernel: Kernel, server
) -> None:
    kernel.ok(SETUP)
    before = set(json.loads(kernel.ok(OPEN_COMMS).stdout))
    server.push(reply("", call("launch", target="moon")), reply("Launched."))
    clicked: list[str] = []

    def on_message(k: Kernel, msg: dict, ex: Execution) -> None:
        if clicked or msg["msg_type"] != "comm_open":
            return
        state = msg["content"]["data"]["state"]
        if state.get("_model_name") == "ButtonModel" and state.get("description") == "Approve":
            clicked.append(msg["content"]["comm_id"])
            time.sleep(CLICK_AFTER)  # the cell waits for the answer meanwhile
            k.click(msg["content"]["comm_id"])

    ex = kernel.run("%%agent --new\nlaunch the moon", on_message=on_message, timeout=60)
    assert clicked and not ex.errors, ex.errors and ex.errors[0]["traceback"]
    assert kernel.ok("print(ran)").stdout.strip() == "['moon']"
    opened = {m["content"]["comm_id"] for m in ex.of_type("comm_open")}
    assert set(clicked) <= opened
    still_open = set(json.loads(kernel.ok(OPEN_COMMS).stdout)) - before
    # the style and layout models every run's view shares stay (made once per kernel)
    shared = kernel.ok(
        "from nb_tools.jupyter._view import _SHARED\n"
        "print(' '.join(w.model_id for w in _SHARED.values()))"
    ).stdout.split()
    assert len(shared) <= 5
    left = (opened & still_open) - set(shared)
    assert not left, f"{len(left)} widget comms left open"
    assert still_open == set(shared)
