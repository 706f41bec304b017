"""Fix this error: the failed cell is remembered, an action line is added under the error,
and ``%%agent --fix`` asks for the fix (a real kernel; without the extension the fix goes
in a new cell below)."""

from __future__ import annotations

import pytest
from kernel_helpers import Kernel

from nb_tools.jupyter._fix import FIX_MIME, fixed_source, used_names
from nb_tools.testing import reply

pytestmark = pytest.mark.kernel


def test_used_names_are_data_not_code() -> None:
    import math

    ns = {"df": object(), "math": math, "f": print, "n": 3}
    assert used_names("x = f(df) + n + math.pi + undefined", ns) == ["df", "n"]
    assert used_names("def (", ns) == []


def test_the_last_code_block_is_the_fix() -> None:
    text = "Here:\n```python\nold()\n```\nbetter:\n```python\nnew()\n```\n"
    assert fixed_source(text) == "new()\n"
    assert fixed_source("no code") is None


def test_fix_from_a_red_traceback(kernel: Kernel, server) -> None:
    kernel.ok("%load_ext nb_tools\ncount = 0\nprices = [3, 4]\napi_token = 'tok-SECRET-123'")
    failed = kernel.run("total = sum(prices)\nratio = total / count")
    assert failed.errors and failed.errors[0]["ename"] == "ZeroDivisionError"
    [action] = [o for o in failed.displays if FIX_MIME in o["data"]]
    assert action["data"][FIX_MIME]["error"] == "ZeroDivisionError: division by zero"
    assert "%%agent --fix" in action["data"]["text/plain"]

    ok = kernel.ok("x = 1")
    assert not [o for o in ok.displays if FIX_MIME in o["data"]]

    server.push(
        reply(
            "Guard the division:\n```python\ntotal = sum(prices)\nratio = total / count if count else 0.0\n```"
        )
    )
    n = len(server.requests)
    ex = kernel.ok("%%agent --fix --new --approval deny\nuse 0.0 when empty")
    sent = server.requests[n].body["messages"][-1]["content"]
    text = sent if isinstance(sent, str) else "".join(b.get("text", "") for b in sent)
    assert "ratio = total / count" in text and "ZeroDivisionError: division by zero" in text
    assert '<variable name="count">' in text and '<variable name="prices">' in text
    assert "api_token" not in text
    assert "nb_tools extension is not connected" in text
    assert text.endswith("The user adds: use 0.0 when empty")
    [payload] = [p for p in ex.reply.get("payload", []) if p.get("source") == "set_next_input"]
    assert payload["text"] == "total = sum(prices)\nratio = total / count if count else 0.0\n"
    assert "the fix is in a new cell below" in ex.stdout


def test_nothing_to_fix_says_so(server, tmp_path) -> None:
    k = Kernel(server, tmp_path)
    try:
        k.ok("%load_ext nb_tools")
        ex = k.run("%%agent --fix")
        said = " ".join(str(o.get("text", "")) + str(o.get("evalue", "")) for o in ex.outputs)
        assert "no cell has failed since nb_tools was loaded" in said
        bad = k.run("%nbtools frobnicate")
        assert not [o for o in bad.displays if FIX_MIME in o["data"]]
    finally:
        k.close()
