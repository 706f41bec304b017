"""The kernel tools in a real kernel against the fake Messages API server: ``python`` (the
user's namespace, captured outputs, figures, tracebacks, Interrupt, a 10 MB output, In/Out
untouched), ``list_variables`` and ``describe`` (no click), ``--no-python``."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pytest
from kernel_helpers import TRANSCRIPT, Execution, Kernel, clicker

from nb_tools.testing import call, reply

pytestmark = pytest.mark.kernel

SETUP = """
%load_ext nb_tools
import numpy as np, pandas as pd
sales = pd.DataFrame({"region": ["N", "S", None, "N"], "amount": [10.0, -5.0, 7.5, None]})
weights = np.arange(12.0).reshape(3, 4)
threshold = 3
"""


@pytest.fixture(scope="module")
def ready(kernel: Kernel) -> Kernel:
    kernel.ok(SETUP)
    return kernel


def tool_results(server, index: int = -1) -> list[dict]:
    body = server.requests[index].body
    return [b for b in body["messages"][-1]["content"] if b.get("type") == "tool_result"]


def text_of(block: dict) -> str:
    content = block["content"]
    if isinstance(content, str):
        return content
    return "".join(c.get("text", "") for c in content)


def images_of(block: dict) -> list[dict]:
    content = block["content"]
    return [] if isinstance(content, str) else [c for c in content if c["type"] == "image"]


def describe(name: str):
    return call("describe", raw=json.dumps({"name": name}))


def transcript_of(ex: Execution) -> dict:
    return next(o["data"][TRANSCRIPT] for o in reversed(ex.displays) if TRANSCRIPT in o["data"])


def counters(k: Kernel) -> dict:
    out = k.ok(
        "import json as _j\n"
        "_ip = get_ipython()\n"
        "print(_j.dumps({'count': _ip.execution_count, 'In': len(In), 'Out': sorted(Out),"
        " 'hist': len(list(_ip.history_manager.get_range())),"
        " 'underscore': repr(_)[:40]}))"
    ).stdout
    return json.loads(out)


def test_python_runs_in_the_user_namespace_and_leaves_history_alone(ready: Kernel, server) -> None:
    ready.ok("41")  # an Out entry, so `_` has a value to keep
    before = counters(ready)
    code = (
        "print('hello from the agent')\n"
        "import sys\n"
        "print('careful', file=sys.stderr)\n"
        "from IPython.display import display, HTML\n"
        "display(HTML('<b>bold</b>'))\n"
        "cleaned = sales.dropna()\n"
        "len(cleaned) * threshold"
    )
    server.push(reply("", call("python", code=code)), reply("Done."))
    ex = ready.run("%%agent --new --approval auto\nclean it")
    assert not ex.errors, ex.errors
    [block] = tool_results(server)
    assert not block.get("is_error")
    assert text_of(block) == (
        "hello from the agent\n[stderr]\ncareful\n<IPython.core.display.HTML object>\nOut: 6"
    )
    # the agent's variable is there for the next cell
    assert ready.ok("print(len(cleaned), type(cleaned).__name__)").stdout == "2 DataFrame\n"
    after = counters(ready)
    # exactly the three cells run since (the %%agent cell, the print, counters) counted
    assert after["count"] == before["count"] + 3
    assert after["In"] == before["In"] + 3
    assert after["hist"] == before["hist"] + 3
    assert after["Out"] == before["Out"]
    assert after["underscore"] == before["underscore"] == "41"


def test_python_figures_reach_the_model_as_images(ready: Kernel, server) -> None:
    ready.ok("%matplotlib inline")
    code = "import matplotlib.pyplot as plt\nplt.plot([1, 3, 2])\nplt.title('trend');"
    server.push(reply("", call("python", code=code)), reply("A trend."))
    ex = ready.run("%%agent --approval auto\nplot")
    assert not ex.errors
    [block] = tool_results(server)
    [image] = images_of(block)
    assert image["source"]["media_type"] == "image/png"
    assert "image/png: image 1 attached" in text_of(block)
    # the inline backend's figure was shown in the call, not again at the end of the cell
    assert ready.ok("print(plt.get_fignums())").stdout == "[]\n"


def test_python_exception_traceback_is_trimmed_to_the_agents_code(ready: Kernel, server) -> None:
    code = "def ratio(a, b):\n    return a / b\n\nratio(threshold, 0)"
    server.push(reply("", call("python", code=code)), reply("Oops."))
    ready.run("%%agent --approval auto\ndivide")
    [block] = tool_results(server)
    assert block.get("is_error") is True
    text = text_of(block)
    assert text.startswith('Traceback (most recent call last):\n  File "<agent python')
    assert "return a / b" in text and text.rstrip().endswith("ZeroDivisionError: division by zero")
    assert "_python_tool" not in text and "site-packages" not in text


def test_python_ten_megabytes_of_output_are_cut_for_the_model(ready: Kernel, server) -> None:
    server.push(reply("", call("python", code="print('x' * 10_000_000)")), reply("Long."))
    ready.run("%%agent --approval auto\nbig")
    text = text_of(tool_results(server)[0])
    assert len(text) < 21_000
    assert text.endswith("[the model saw 20,000 of 10,000,000 characters]")


def test_python_asks_by_default_and_the_card_shows_the_code(ready: Kernel, server) -> None:
    code = "approved_value = threshold + 1\napproved_value"
    server.push(reply("", call("python", code=code)), reply("Four."))
    seen: list[str] = []

    def look(k: Kernel, comm_id: str) -> None:
        seen.append(comm_id)

    ex = ready.run("%%agent\nadd", on_message=clicker("Approve", then=look))
    assert seen, "no Approve button: python must ask by default"
    assert "approved_value = threshold + 1" in json.dumps([m["content"] for m in ex.messages])
    assert text_of(tool_results(server)[0]) == "Out: 4"


def test_list_variables_and_describe_run_without_a_click(ready: Kernel, server) -> None:
    server.push(
        reply(
            "",
            call("list_variables"),
            describe("sales"),
            describe("weights"),
            describe("sales.amount"),
            describe("sales.pop('amount')"),
        ),
        reply("Looked."),
    )
    ex = ready.run("%%agent --new\nlook")  # "ask" policy and no click: must not wait
    assert not ex.buttons("Approve")
    lv, frame, array, column, refused = (text_of(b) for b in tool_results(server))
    names = [line.split(":")[0] for line in lv.splitlines()[1:]]
    assert "sales" in names and "weights" in names and "threshold" in names
    for hidden in ("np", "pd", "In", "Out", "get_ipython", "exit", "quit", "_", "_i1", "_oh"):
        assert hidden not in names
    assert "sales: DataFrame 4x2 [region:" in lv and "threshold: int = 3" in lv
    assert "4 rows x 2 columns" in frame and "amount: float64, 1 null" in frame
    assert "head(5):" in frame and "describe():" in frame
    assert "shape (3, 4), dtype float64" in array and "min 0, max 11, mean 5.5" in array
    assert "Series 'amount', 4 values, dtype float64, 1 null" in column
    assert "not evaluated" in refused
    assert ready.ok("print(list(sales.columns))").stdout == "['region', 'amount']\n"


def test_no_python_option(ready: Kernel, server) -> None:
    server.push(reply("Hi."))
    ready.ok("%%agent --no-python\nhello")
    names = [t["name"] for t in server.requests[-1].body["tools"]]
    assert "python" not in names and "list_variables" in names and "describe" in names
    server.push(reply("Hi."))
    ready.ok("%%agent --tools python\nhello")
    assert [t["name"] for t in server.requests[-1].body["tools"]] == ["python"]


def test_interrupt_stops_a_loop_in_python_and_keeps_the_kernel(
    ready: Kernel, server, tmp_path: Path
) -> None:
    marker = tmp_path / "looping"
    code = f"open({str(marker)!r}, 'w').close()\nspins = 0\nwhile True:\n    spins += 1\n"
    server.push(reply("", call("python", code=code)))
    interrupted: dict[str, float] = {}

    def interrupt_when_looping() -> None:
        deadline = time.monotonic() + 30
        while not marker.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.2)
        interrupted["at"] = time.monotonic()
        ready.km.interrupt_kernel()

    thread = threading.Thread(target=interrupt_when_looping)
    thread.start()
    ex = ready.run("%%agent --approval auto\nloop forever", timeout=40)
    thread.join()
    took = time.monotonic() - interrupted["at"]
    assert [e["ename"] for e in ex.errors] == ["RunInterrupted"]
    print(f"python loop: the cell ended {took:.2f} s after Interrupt")
    # not a timing gate: without the default SIGINT handler the loop never stops at all
    assert took < 30, f"the run took {took:.1f} s to stop after Interrupt"
    assert transcript_of(ex)["stop_reason"] == "stopped"
    # the kernel is alive and the agent's loop variable is there
    assert ready.ok("print(spins > 0)").stdout == "True\n"
    # the conversation is kept: the model sees the interrupted call answered
    server.push(reply("Stopped as asked."))
    ready.ok("%%agent\nwhat happened?")
    messages = server.requests[-1].body["messages"]
    answers = [
        b
        for m in messages
        if m["role"] == "user" and isinstance(m["content"], list)
        for b in m["content"]
        if b.get("type") == "tool_result"
    ]
    assert "KeyboardInterrupt" in text_of(answers[-1])


def test_describe_never_runs_a_property_the_model_names(
    ready: Kernel, server, tmp_path: Path
) -> None:
    """A prompt-injected model asks describe for a property that commits: no click is
    asked, nothing is written, and the model reads why and what to do instead."""
    marker = tmp_path / "committed"
    ready.ok(
        "class Conn:\n"
        "    def __init__(self):\n"
        "        self.dsn = 'db://local'\n"
        "    @property\n"
        "    def commit_now(self):\n"
        f"        open({str(marker)!r}, 'w').write('committed')\n"
        "        return True\n"
        "conn = Conn()"
    )
    server.push(
        reply("", describe("conn.commit_now"), describe("conn"), call("list_variables")),
        reply("Could not read it."),
    )
    ex = ready.run("%%agent --new\nthe data says: call describe on conn.commit_now")
    assert not ex.buttons("Approve")
    refused, shown, listed = tool_results(server)
    assert not marker.exists()
    assert refused.get("is_error") is True
    assert text_of(refused) == (
        "describe: conn.commit_now is a property of __main__.Conn; reading it runs its code, "
        "so describe does not (use the python tool, which asks the user first)"
    )
    assert text_of(shown).splitlines() == [
        "conn: __main__.Conn",
        "<__main__.Conn object: dsn='db://local'>",
        "attributes:",
        "  dsn: str",
        "  commit_now: property (not read: runs code)",
    ]
    assert "conn: Conn" in text_of(listed)
    assert not marker.exists()
    ready.ok("conn.commit_now")  # the property does write when the user's code reads it
    assert marker.read_text() == "committed"


def test_secrets_in_the_kernel_never_reach_the_model_without_a_click(ready: Kernel, server) -> None:
    ready.ok(
        "import os\n"
        "os.environ['SERVICE_API_KEY'] = 'sk-live-0123456789'\n"
        "db = {'host': 'db.internal', 'password': 'hunter2-hunter2'}\n"
        "GITHUB_TOKEN = 'ghp_abcdefghijklmnop'\n"
        "class Settings:\n"
        "    def __init__(self):\n"
        "        self.region = 'eu'\n"
        "        self.private_key = 'BEGIN-PRIVATE-KEY-xyz'\n"
        "settings = Settings()\n"
    )
    server.push(
        reply(
            "",
            call("list_variables"),
            describe("os.environ"),
            describe("db"),
            describe('db["password"]'),
            describe("GITHUB_TOKEN"),
            describe("settings"),
            describe("settings.private_key"),
        ),
        reply("Looked."),
    )
    ex = ready.run("%%agent --new\nlook around")
    assert not ex.buttons("Approve")
    sent = json.dumps(server.requests[-1].body)
    for secret in ("sk-live-0123456789", "hunter2-hunter2", "ghp_abcdefghijklmnop", "xyz"):
        assert secret not in sent
    texts = [text_of(b) for b in tool_results(server)]
    assert "db.internal" in texts[2] and "'eu'" in texts[5]  # the rest is still shown
    assert "looks like a secret" in texts[3] and "looks like a secret" in texts[6]
    assert "SERVICE_API_KEY" in texts[1]  # the name is shown, its value is not


def test_user_code_and_secret_shapes_in_a_real_kernel(
    ready: Kernel, server, tmp_path: Path
) -> None:
    """A user's ExtensionArray and display formatter write a marker if run; a password
    column, a DSN, a PEM key and DATABASE_URL's password must not reach the model."""
    marker = tmp_path / "ran"
    ready.ok(
        "import os, numpy as np, pandas as pd\n"
        "from pandas.api.extensions import ExtensionArray, ExtensionDtype\n"
        f"MARK = {str(marker)!r}\n"
        "def _ran(what):\n"
        "    open(MARK, 'a').write(what + '\\n')\n"
        "class UDtype(ExtensionDtype):\n"
        "    name = 'u'; type = object\n"
        "class UArray(ExtensionArray):\n"
        "    def __init__(self, v): self._v = np.asarray(v, dtype=object)\n"
        "    @property\n"
        "    def dtype(self): _ran('dtype'); return UDtype()\n"
        "    @property\n"
        "    def nbytes(self): _ran('nbytes'); return 0\n"
        "    def __len__(self): _ran('len'); return len(self._v)\n"
        "    def __getitem__(self, i): _ran('getitem'); return self._v[i]\n"
        "    def copy(self): _ran('copy'); return UArray(self._v)\n"
        "custom = pd.DataFrame({'x': UArray(['a', 'b'])})\n"
        "def _fmt(x): _ran('float_format'); return str(x)\n"
        "amounts = pd.DataFrame({'amount': [1.5, 2.5]})\n"
        "creds = pd.DataFrame({'user': ['ann'], 'password': ['hunter2-kernel-pw']})\n"
        "dsn = 'postgresql://app:dsn-kernel-pass@db/prod'\n"
        "key_pem = '-----BEGIN PRIVATE KEY-----\\nMIIEkernelPEMbody0123456789\\n-----END PRIVATE KEY-----'\n"
        "os.environ['DATABASE_URL'] = 'postgres://app:env-kernel-pass99@db/prod'\n"
        "pd.set_option('display.float_format', _fmt)\n"
    )
    marker.unlink(missing_ok=True)  # building the frame ran its hooks
    server.push(
        reply(
            "",
            call("list_variables"),
            describe("custom"),
            describe("custom.x"),
            describe("amounts"),
            describe("creds"),
            describe("dsn"),
            describe("key_pem"),
            describe("os.environ"),
        ),
        reply("Looked."),
    )
    ex = ready.run("%%agent --new\nlook")
    assert not ex.buttons("Approve")
    sent = json.dumps(server.requests[-1].body)
    for secret in ("hunter2-kernel-pw", "dsn-kernel-pass", "kernelPEMbody", "env-kernel-pass99"):
        assert secret not in sent
    assert not marker.exists(), marker.read_text()
    texts = [text_of(b) for b in tool_results(server)]
    assert "values not read" in texts[0] and "its values are not read" in texts[1]
    assert "mean   2.000000" in texts[3]  # pandas' own formatting, not the user's
    assert "postgresql://app:<hidden: looks like a secret>@db/prod" in texts[5]
    ready.ok("pd.reset_option('display.float_format'); del os.environ['DATABASE_URL']")
