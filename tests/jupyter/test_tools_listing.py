"""%tools lists every tool the model is offered: the session's own and, under their own
heading, the kernel's (python, describe, list_variables, notebook_read, notebook_edit),
with the same toggles; hiding one there keeps it from the model."""

from __future__ import annotations

import json

import pytest
from kernel_helpers import Kernel

from nb_tools.testing import reply

pytestmark = pytest.mark.kernel

KERNEL_TOOLS = [
    "ask_user",
    "describe",
    "list_variables",
    "notebook_edit",
    "notebook_read",
    "notebook_run",
    "python",
]


def offered(server) -> list[str]:
    return sorted(t["name"] for t in server.requests[-1].body.get("tools", []))


def test_tools_lists_what_the_model_gets_and_hides_kernel_tools(kernel: Kernel, server) -> None:
    kernel.ok(
        "%load_ext nb_tools\nfrom nb_tools import tool\n"
        "@tool\ndef shout(text: str) -> str:\n    'Shout.'\n    return text.upper()\n"
    )
    server.push(reply("ok"))
    kernel.ok("%%agent --approval auto\nhello")
    model_got = offered(server)
    assert set(KERNEL_TOOLS) <= set(model_got) and "shout" in model_got

    listed = json.loads(kernel.ok("%tools --json").stdout)
    assert sorted(s["name"] for s in listed) == model_got  # every tool, nothing more

    shown = kernel.ok("%tools").displays[0]["data"]["text/html"]
    assert f"<b>Kernel tools</b> · {len(KERNEL_TOOLS)} tool(s)" in shown
    kernel_part = shown[shown.index("<b>Kernel tools</b>") :]
    for name in KERNEL_TOOLS:
        assert f"<b>{name}</b>" in kernel_part
    assert f"<b>{len(model_got)} tool(s)</b>" in shown

    # the same toggles as for the session's tools: hide python, ask before describe
    kernel.ok(
        "from nb_tools.jupyter._inspector import Inspector\ninsp = Inspector()\n"
        "insp.visible['python'].value = False\ninsp.approval['describe'].value = 'ask'"
    )
    server.push(reply("ok again"))
    kernel.ok("%%agent --approval auto\nhello again")
    assert offered(server) == [n for n in model_got if n != "python"]
    listed = json.loads(kernel.ok("%tools --json").stdout)
    assert "python" not in [s["name"] for s in listed]
    row = kernel.ok("from nb_tools.jupyter._inspector import static_html\nprint(static_html())")
    assert "approval ✓ (session)" in row.stdout.split("<b>describe</b>")[1].split("</div>")[1]
    kernel.ok("insp.visible['python'].value = True")
