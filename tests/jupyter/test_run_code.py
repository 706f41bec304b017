"""``%nbtools code``: a run of the agent becomes a cell of plain code (a real kernel against
the fake Messages API server); running that cell re-does the run's effects, no model."""

from __future__ import annotations

import pytest
from kernel_helpers import Kernel

from nb_tools.testing import call, reply

pytestmark = pytest.mark.kernel

SETUP = '''
%load_ext nb_tools
from nb_tools import tool
booked = []

@tool
def book(restaurant: str, people: int) -> str:
    """Book a table.

    Args:
        restaurant: Where.
        people: How many.
    """
    booked.append((restaurant, people))
    return "booked"
'''


def test_the_code_cell_redoes_the_run(kernel: Kernel, server) -> None:
    kernel.ok(SETUP)
    server.push(
        reply(
            "On it.",
            call("python", code="total = 40 + 2\nprint(total)"),
            call("book", restaurant="Chez Panisse", people=4),
            call("book", restaurant="Bad", people="x"),
        ),
        reply("Done."),
    )
    kernel.ok("%%agent --new --approval auto\nCompute and book")
    assert kernel.ok("print(total, booked)").stdout.strip() == "42 [('Chez Panisse', 4)]"

    printed = kernel.ok("%nbtools code --print").stdout
    assert "# 1. python: code run in the kernel\ntotal = 40 + 2\nprint(total)" in printed
    assert "call_tool('book', restaurant='Chez Panisse', people=4)" in printed
    assert "# 3. book: failed, not re-done" in printed

    # As a person would: the cell below gets the code; they run it after a reset.
    ex = kernel.ok("%nbtools code")
    [payload] = [p for p in ex.reply.get("payload", []) if p.get("source") == "set_next_input"]
    assert payload["text"] == printed.rstrip("\n") + "\n"
    assert payload["replace"] is False
    requests = len(server.requests)
    kernel.ok("del total; booked.clear()")
    ran = kernel.ok(payload["text"])
    assert ran.stdout.strip() == "42"
    assert kernel.ok("print(total, booked)").stdout.strip() == "42 [('Chez Panisse', 4)]"
    assert len(server.requests) == requests


def test_without_a_run_it_says_what_to_do(server, tmp_path) -> None:
    k = Kernel(server, tmp_path)
    try:
        k.ok("%load_ext nb_tools")
        ex = k.run("%nbtools code")
        said = " ".join(str(o.get("text", "")) + str(o.get("evalue", "")) for o in ex.outputs)
        assert "no agent run yet in this kernel; run %%agent first" in said
    finally:
        k.close()
