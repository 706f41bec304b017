"""The review list under a run that changed files, and ``%nbtools restore`` (a real kernel:
clicks sent as JupyterLab sends them; effects checked on disk)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from kernel_helpers import Kernel

from nb_tools.testing import call, reply

pytestmark = pytest.mark.kernel

LIVE_MIME = "application/vnd.nbtools.live+json"


def test_restore_everything_from_the_review_list(kernel: Kernel, server) -> None:
    cwd = Path(kernel.ok("import os; print(os.getcwd())").stdout.strip())
    (cwd / "report.md").write_text("# Draft\n")
    kernel.ok("%load_ext nb_tools")
    server.push(
        reply(
            "",
            call("read_file", file_path="report.md"),
        ),
        reply(
            "",
            call("write_file", file_path="report.md", content="# Final\n"),
            call("write_file", file_path="summary.txt", content="done\n"),
            call("python", code="side = 1"),
        ),
        reply("Wrote both."),
    )
    ex = kernel.ok("%%agent --new --builtins --approval auto\nFinish the report")
    assert (cwd / "report.md").read_text() == "# Final\n" and (cwd / "summary.txt").exists()
    [review] = [o for o in ex.displays if LIVE_MIME in o["data"]]
    assert "needs its kernel" in review["data"][LIVE_MIME]["lost"]
    labels = {
        m["content"]["data"]["state"].get("value", "")
        for m in ex.of_type("comm_open")
        if m["content"]["data"]["state"].get("_model_name") == "HTMLModel"
    }
    assert any("This run changed 3 things" in v for v in labels)
    assert any("python: code run in the kernel" in v for v in labels)
    [restore_all] = ex.buttons("Restore everything")
    kernel.click(restore_all)
    deadline = time.monotonic() + 20
    while (cwd / "summary.txt").exists() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert (cwd / "report.md").read_text() == "# Draft\n"
    assert not (cwd / "summary.txt").exists()


def test_nbtools_restore_refuses_what_changed_since(kernel: Kernel, server) -> None:
    cwd = Path(kernel.ok("import os; print(os.getcwd())").stdout.strip())
    server.push(
        reply("", call("write_file", file_path="a.txt", content="from the run\n")),
        reply("ok"),
    )
    kernel.ok("%%agent --new --builtins --approval auto\nWrite a")
    (cwd / "a.txt").write_text("the user's edit\n")
    out = kernel.ok("%nbtools restore").stdout
    assert out.strip() == "not restored: a.txt: a.txt changed since the run; left as it is"
    assert (cwd / "a.txt").read_text() == "the user's edit\n"
    (cwd / "a.txt").write_text("from the run\n")
    assert kernel.ok("%nbtools restore a.txt").stdout.strip() == "restored create a.txt"
    assert not (cwd / "a.txt").exists()
    bad = kernel.run("%nbtools restore nope.txt")
    said = " ".join(str(o.get("text", "")) + str(o.get("evalue", "")) for o in bad.outputs)
    assert "the last run changed no nope.txt (it changed: a.txt)" in said
