"""The notebook layer's costs in a real kernel, against what a user would otherwise do.

1. ``%load_ext nb_tools`` in a warm kernel (target < 150 ms), next to ``import anthropic``
   (what loading would cost if the extension imported the SDK).
2. Streaming 2,000 tokens into a cell with ``%%agent``: iopub display/comm messages and
   bytes (target < 300 KB), next to the naive way (set an ``HTML`` widget's value per token).
3. ``streaming_section``: 2,000 Markdown tokens at 10 ms a token, as Claude streams: updates
   in the slowest full second (>= 10), bytes (< 300 KB), widget messages that carry no
   text (< 30). ``--only-streaming`` runs just this.

4. ``list_variables`` over 500 user variables (20 DataFrames of 1M rows among them), in the
   kernel (targets < 50 ms, < 4,000 tokens at 4 characters a token), next to ``%whos``.
5. The open notebook's snapshot (300 cells with outputs) reaching the kernel over the
   ``nb_tools.notebook`` comm from JupyterLab in Chromium (target < 200 ms), when Chromium
   and the built extension are there (``--no-browser`` skips it).

6. ``stored_once_section``: 200 ``%%agent`` runs of one conversation; the saved notebook's
   size and what the kernel holds, each against the same with the conversation stored once
   (target <= 1.3x both); next to the size every transcript holding the whole conversation
   (before it was chained) would take. ``--only-stored-once`` runs just this.

7. ``first_token_section``: the first ``%%agent`` of a fresh kernel (``%load_ext``, then a
   few seconds while a person types) against a warm kernel's, from the cell's start to its
   first token on iopub, Claude served by the fake Messages API on loopback (target: within
   0.3 s of warm); also with no pause after ``%load_ext``. ``--only-first-token``.

``python benchmarks/bench_notebook.py [--tokens 2000] [--delay 0.001]``; ``--delay`` is the
pause between tokens (0.001: a fast stream; 0.01: Claude-like, ~100 tokens/s).
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import sys
import time
from pathlib import Path

import jupyter_client

ROOT = Path(__file__).resolve().parents[1]
TRANSCRIPT_MIME = "application/vnd.nbtools.transcript+json"
COUNTED = {
    "display_data",
    "update_display_data",
    "comm_open",
    "comm_msg",
    "comm_close",
    "stream",
    "clear_output",
    "execute_result",
}

STREAMER = '''
import asyncio
from nb_tools.model import BaseProvider, Message, ResponseEvent, TextBlock, TextDeltaEvent, Usage

class Streamer(BaseProvider):
    """A provider that streams N short tokens with a pause between them."""

    name = "bench"

    def __init__(self, n, delay):
        self.n, self.delay = n, delay

    @property
    def model(self):
        return "bench-stream"

    def token(self, i):
        return f"tok{i % 10} "

    async def stream(self, request):
        parts = []
        for i in range(self.n):
            tok = self.token(i)
            parts.append(tok)
            yield TextDeltaEvent(text=tok)
            if self.delay:
                await asyncio.sleep(self.delay)
        yield ResponseEvent(
            message=Message(role="assistant", content=(TextBlock(text="".join(parts)),)),
            stop_reason="end_turn", usage=Usage(input_tokens=10, output_tokens=self.n))
'''

NAIVE = """
import asyncio, ipywidgets
from IPython.display import display
w = ipywidgets.HTML()
display(w)
text = ""
for i in range({n}):
    text += f"tok{{i % 10}} "
    w.value = text
    if {delay}:
        await asyncio.sleep({delay})
w.close()
"""


class Kernel:
    def __init__(self, **extra_env: str) -> None:
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
        for key in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "NB_TOOLS_MODEL"):
            env.pop(key, None)
        env["NB_TOOLS_APPROVAL"] = "auto"
        env.update(extra_env)
        self.km = jupyter_client.KernelManager(kernel_name="python3")
        self.km.start_kernel(env=env)
        self.kc = self.km.client()
        self.kc.start_channels()
        self.kc.wait_for_ready(timeout=60)

    def run(self, code: str, timeout: float = 600) -> list[dict]:
        msg_id = self.kc.execute(code)
        msgs = []
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                msg = self.kc.get_iopub_msg(timeout=0.5)
            except queue.Empty:
                continue
            if msg["parent_header"].get("msg_id") != msg_id:
                continue
            msgs.append(msg)
            if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
                break
        reply = self.kc.get_shell_msg(timeout=10)["content"]
        if reply["status"] != "ok":
            raise RuntimeError(f"cell failed: {reply.get('ename')}: {reply.get('evalue')}")
        return msgs

    def value(self, code: str) -> str:
        out = [m["content"]["text"] for m in self.run(code) if m["msg_type"] == "stream"]
        return "".join(out).strip()

    def close(self) -> None:
        self.kc.stop_channels()
        self.km.shutdown_kernel(now=True)


def traffic(msgs: list[dict]) -> tuple[int, int, dict[str, int]]:
    counted = [m for m in msgs if m["msg_type"] in COUNTED]
    size = sum(
        len(json.dumps(m["content"])) + sum(len(b) for b in m.get("buffers") or []) for m in counted
    )
    kinds: dict[str, int] = {}
    for m in counted:
        kinds[m["msg_type"]] = kinds.get(m["msg_type"], 0) + 1
    return len(counted), size, kinds


def timed(k: Kernel, statement: str) -> float:
    return float(
        k.value(
            "import time as _t\n_t0 = _t.perf_counter()\n"
            f"{statement}\n"
            "print(_t.perf_counter() - _t0)"
        )
    )


MARKDOWN_STREAMER = '''
class MarkdownStreamer(Streamer):  # after STREAMER
    """N tokens of Markdown-like text (paragraphs, a list, a long code block), one every
    ``delay`` seconds: what a real answer looks like to the live view."""

    @property
    def model(self):
        return "bench-markdown"

    def token(self, i):
        if i == self.n // 3:
            return "\\n\\n```python\\n"
        if i == self.n // 3 + 300:
            return "\\n```\\n\\n"
        if self.n // 3 < i < self.n // 3 + 300:
            return f"x{i} = {i}\\n" if i % 3 == 0 else f"y{i} "
        if i % 60 == 0:
            return "\\n\\n- item\\n- **bold** item\\n\\nNext "
        return f"word{i % 10} "
'''


def _is_text_update(msg: dict) -> bool:
    """A comm update that sets a streamed text widget's value (nothing else)."""
    if msg["msg_type"] != "comm_msg":
        return False
    data = msg["content"].get("data", {})
    state = data.get("state", {})
    return data.get("method") == "update" and set(state) == {"value"}


def message_kind(msg: dict) -> str:
    """What a counted iopub message is: its type, and for widget messages the model it
    opens or the state keys it sets."""
    kind = msg["msg_type"]
    data = msg["content"].get("data", {})
    if kind == "comm_open":
        return f"comm_open {data.get('state', {}).get('_model_name', '?')}"
    if kind == "comm_msg":
        state = data.get("state", {})
        return f"comm_msg {data.get('method', '?')} {','.join(sorted(state)) or '-'}"
    return kind


def breakdown(msgs: list[dict]) -> str:
    """Counted messages and their bytes per :func:`message_kind`, largest first."""
    per: dict[str, list[int]] = {}
    for m in msgs:
        if m["msg_type"] in COUNTED:
            size = len(json.dumps(m["content"])) + sum(len(b) for b in m.get("buffers") or [])
            entry = per.setdefault(message_kind(m), [0, 0])
            entry[0] += 1
            entry[1] += size
    rows = sorted(per.items(), key=lambda kv: -kv[1][1])
    return "\n".join(f"    {n:5d} msgs {b / 1000:8.1f} KB  {k}" for k, (n, b) in rows)


def streaming_section(k: Kernel, tokens: int = 2000, delay: float = 0.01) -> dict[str, float]:
    """The live view while an answer streams (issue 12): updates per second over every
    full second of the stream, bytes on the wire, and the widget messages that do not
    carry text (opening, closing, layout), which should not grow with the answer."""
    k.run(
        STREAMER + MARKDOWN_STREAMER + "\nfrom nb_tools.jupyter import use_model\n"
        f"use_model(MarkdownStreamer({tokens}, {delay}))"
    )
    k.run("%%agent --new\nwarm up")
    started = time.perf_counter()
    msgs = k.run("%%agent --new\nstream some Markdown")
    took = time.perf_counter() - started
    n, size, _kinds = traffic(msgs)
    updates = [m for m in msgs if _is_text_update(m)]
    fixed = n - len(updates)
    times = sorted(m["header"]["date"].timestamp() for m in updates)
    per_second: list[int] = []
    if times:
        t = times[0]
        while t + 1.0 <= times[-1]:
            per_second.append(sum(1 for x in times if t <= x < t + 1.0))
            t += 1.0
    slowest = min(per_second) if per_second else 0
    print(
        f"streaming {tokens} Markdown tokens at {delay * 1000:.0f} ms/token ({took:.1f} s): "
        f"{len(updates)} text updates, slowest full second {slowest}/s "
        f"(target >= 10), {size / 1000:.1f} KB in all (target < 300 KB), "
        f"{fixed} fixed-cost messages (target < 30)"
    )
    print(breakdown(msgs))
    return {"slowest_per_s": slowest, "kb": size / 1000, "fixed": fixed}


KERNEL_SIZES = """
import gc, json, sys, dataclasses
from nb_tools.jupyter._session import get_session

def _deep(roots):
    seen, total, stack = set(), 0, list(roots)
    while stack:
        o = stack.pop()
        if id(o) in seen or isinstance(o, type):
            continue
        seen.add(id(o))
        total += sys.getsizeof(o)
        if isinstance(o, dict):
            stack.extend(o.keys()); stack.extend(o.values())
        elif isinstance(o, (list, tuple, set, frozenset)):
            stack.extend(o)
        elif dataclasses.is_dataclass(o):
            stack.extend(getattr(o, f.name) for f in dataclasses.fields(o))
        elif type(o).__module__.startswith("nb_tools") and hasattr(o, "__dict__"):
            stack.extend(vars(o).values())
    return total

gc.collect()
_s = get_session()
_held = _deep([_s.agent.conversation, _s._runs, _s.conversation])
_bare = [{k: v for k, v in t.items() if k != "conversation"} for t, _ in _s._runs]
_once = _deep([_s.agent.conversation, _bare])
_rss = int(open("/proc/self/statm").read().split()[1]) * 4096
print(json.dumps([_held, _once, _rss]))
"""


def stored_once_section(k: Kernel, turns: int = 200, tokens: int = 400) -> dict[str, float]:
    """200 runs of one conversation, one turn each: the notebook on disk and the kernel's
    objects, against the same with the conversation stored once."""
    import nbformat

    from nb_tools.agent._persist import by_id, full_messages

    k.run(STREAMER + f"\nfrom nb_tools.jupyter import use_model\nuse_model(Streamer({tokens}, 0))")
    rss0 = int(k.value("print(int(open('/proc/self/statm').read().split()[1]) * 4096)"))
    bundles = []
    started = time.perf_counter()
    for i in range(turns):
        msgs = k.run(f"%%agent\nturn {i}: tell me more")
        kinds = ("display_data", "update_display_data")
        data = [m["content"]["data"] for m in msgs if m["msg_type"] in kinds]
        bundles.append(next(d for d in reversed(data) if TRANSCRIPT_MIME in d))
    took = time.perf_counter() - started
    held, once, rss1 = json.loads(k.value(KERNEL_SIZES))

    def size(bs: list[dict]) -> int:
        nb = nbformat.v4.new_notebook()
        out = nbformat.v4.new_output
        nb.cells = [
            nbformat.v4.new_code_cell("%%agent", outputs=[out("display_data", d)]) for d in bs
        ]
        return len(nbformat.writes(nb).encode())

    runs = [b[TRANSCRIPT_MIME] for b in bundles]
    known = by_id(runs)
    _, whole = full_messages(runs[-1], known)
    conversation = len(json.dumps(whole).encode())
    bare = [{**b, TRANSCRIPT_MIME: {**b[TRANSCRIPT_MIME]}} for b in bundles]
    for b in bare:
        b[TRANSCRIPT_MIME].pop("conversation", None)
    disk = size(bundles)
    disk_once = size(bare) + conversation
    before = size(bare) + sum(len(json.dumps(full_messages(r, known)[1]).encode()) for r in runs)
    print(
        f"{turns} %%agent runs of one conversation ({took:.0f} s; the conversation stored once: "
        f"{conversation / 1e6:.2f} MB):"
    )
    print(
        f"  notebook {disk / 1e6:.2f} MB vs {disk_once / 1e6:.2f} MB with the conversation "
        f"stored once -> {disk / disk_once:.2f}x (target <= 1.3x); every transcript holding "
        f"the whole conversation: {before / 1e6:.1f} MB -> {before / disk_once:.1f}x"
    )
    print(
        f"  kernel objects {held / 1e6:.2f} MB vs {once / 1e6:.2f} MB with the conversation "
        f"stored once -> {held / once:.2f}x (target <= 1.3x); resident memory grew "
        f"{(rss1 - rss0) / 1e6:.1f} MB"
    )
    return {"disk": disk / disk_once, "kernel": held / once}


def until_token(k: Kernel, code: str, token: str, timeout: float = 120) -> float:
    """Seconds from sending ``code`` to the first iopub message carrying ``token``."""
    started = time.perf_counter()
    msg_id = k.kc.execute(code)
    seen = None
    while time.perf_counter() - started < timeout:
        try:
            msg = k.kc.get_iopub_msg(timeout=0.5)
        except queue.Empty:
            continue
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        if seen is None and token in json.dumps(msg["content"]):
            seen = time.perf_counter() - started
        if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
            break
    k.kc.get_shell_msg(timeout=10)
    if seen is None:
        raise RuntimeError(f"no {token!r} on iopub")
    return seen


def first_token_section(pause: float = 3.0) -> dict[str, float]:
    """The first %%agent's first token: a fresh kernel once the background warm-up after
    %load_ext is done (how long it took is printed: a person types meanwhile), and right
    after %load_ext, each against the same kernel's second run (warm)."""
    from nb_tools.testing import FakeMessagesServer, reply

    figures = {}
    with FakeMessagesServer() as server:
        env = {"ANTHROPIC_BASE_URL": server.base_url, "ANTHROPIC_API_KEY": "bench"}
        for wait in (pause, 0.0):
            k = Kernel(**env, NB_TOOLS_BLOCK_REAL_MODELS="1")
            try:
                started = time.perf_counter()
                k.run("%load_ext nb_tools")
                warmed = ""
                if wait:
                    time.sleep(wait)
                    k.run(WAIT_FOR_WARM_UP)
                    warmed = f", warm-up done {time.perf_counter() - started:.1f} s after it"
                server.push(reply("Firsttoken and the rest."), reply("Warmtoken again."))
                fresh = until_token(k, "%%agent\nhello", "Firsttoken")
                warm = until_token(k, "%%agent\nhello again", "Warmtoken")
            finally:
                k.close()
            figures[f"fresh_{wait:g}"], figures["warm"] = fresh, warm
            when = f"{wait:g} s after %load_ext{warmed}" if wait else "right after %load_ext"
            print(
                f"first token, fresh kernel ({when}): {fresh * 1000:.0f} ms vs warm "
                f"{warm * 1000:.0f} ms -> {(fresh - warm) * 1000:+.0f} ms"
                + (" (target: within 300 ms)" if wait else "")
            )
    return figures


WAIT_FOR_WARM_UP = (
    "import threading\n"
    "for _t in threading.enumerate():\n"
    "    if _t.name == 'nb_tools-warm-sdk':\n"
    "        _t.join(120)\n"
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tokens", type=int, default=2000)
    parser.add_argument("--delay", type=float, default=0.001)
    parser.add_argument("--no-browser", action="store_true", help="skip the snapshot benchmark")
    parser.add_argument("--snapshot-only", action="store_true", help="only the snapshot one")
    parser.add_argument("--stream-delay", type=float, default=0.01)
    parser.add_argument(
        "--only-streaming", action="store_true", help="run only the live streaming section"
    )
    parser.add_argument("--only-stored-once", action="store_true", help="only section 6")
    parser.add_argument("--only-first-token", action="store_true", help="only section 7")
    parser.add_argument("--turns", type=int, default=200, help="runs for section 6")
    args = parser.parse_args(argv)
    if args.snapshot_only:
        bench_snapshot()
        return 0

    if args.only_first_token:
        first_token_section()
        return 0
    k = Kernel()
    if args.only_stored_once:
        try:
            k.run("%load_ext nb_tools")
            stored_once_section(k, args.turns)
        finally:
            k.close()
        return 0
    if args.only_streaming:
        try:
            k.run("%load_ext nb_tools")
            streaming_section(k, args.tokens, args.stream_delay)
        finally:
            k.close()
        return 0
    try:
        k.run("import IPython, nb_tools.model  # warm: the kernel's own imports done")
        load = timed(k, "get_ipython().run_line_magic('load_ext', 'nb_tools')")
        heavy = k.value(
            "import sys; print(sorted(m for m in ('anthropic', 'ipywidgets') if m in sys.modules))"
        )
        sdk = timed(k, "import anthropic")
        print(
            f"%load_ext nb_tools: {load * 1000:.1f} ms (target < 150 ms); modules loaded: {heavy}"
        )
        print(f"  vs import anthropic: {sdk * 1000:.1f} ms -> ratio {sdk / load:.1f}x")

        k.run(
            STREAMER + f"\nfrom nb_tools.jupyter import use_model\n"
            f"use_model(Streamer({args.tokens}, {args.delay}))"
        )
        k.run("%%agent --new\nwarm up the widgets")  # first run imports ipywidgets
        started = time.perf_counter()
        msgs = k.run("%%agent --new\nstream please")
        took = time.perf_counter() - started
        n, size, kinds = traffic(msgs)
        print(
            f"%%agent streaming {args.tokens} tokens ({took:.1f} s): {n} messages, "
            f"{size / 1000:.1f} KB (target < 300 KB; about 12 updates a second, see below)"
        )
        print(f"  by type: {kinds}")

        naive_msgs = k.run(NAIVE.format(n=args.tokens, delay=args.delay))
        nn, nsize, _ = traffic(naive_msgs)
        print(
            f"  vs HTML.value per token: {nn} messages, {nsize / 1000:.1f} KB -> "
            f"{nn / n:.0f}x messages, {nsize / size:.0f}x bytes"
        )
        bench_list_variables(k)
        streaming_section(k, args.tokens, args.stream_delay)
        stored_once_section(k, args.turns)
    finally:
        k.close()
    first_token_section()
    if not args.no_browser:
        bench_snapshot()
    return 0


VARIABLES = """
import numpy as np, pandas as pd
_base = pd.DataFrame({"id": np.arange(1_000_000), "price": np.random.rand(1_000_000),
                      "qty": np.ones(1_000_000, dtype="int32"),
                      "region": pd.Categorical(np.random.choice(["N", "S", "E", "W"], 1_000_000))})
for _i in range(20):
    globals()[f"sales_{_i}"] = _base.copy()
for _i in range(480):
    globals()[f"v{_i}"] = [_i, 1.5 * _i, f"name {_i}", list(range(_i % 50)),
                           np.zeros((_i % 7 + 1, 3)), {"k": _i}][_i % 6]
del _i
"""


def bench_list_variables(k: Kernel) -> None:
    """3. list_variables over 500 user variables, 20 of them 1M-row DataFrames."""
    k.run(VARIABLES)
    k.run("from nb_tools.jupyter._kernel_tools import ListVariablesTool\n_lv = ListVariablesTool()")
    out = k.value(
        "import time as _t, json as _j\n_ts = []\n"
        "for _ in range(7):\n"
        "    _t0 = _t.perf_counter(); _r = _lv.call('{}'); _ts.append(_t.perf_counter() - _t0)\n"
        "print(_j.dumps([min(_ts), sorted(_ts)[3], len(_r.content), _r.content.count(chr(10))]))"
    )
    best, median, chars, lines = json.loads(out)
    print(
        f"list_variables, 500 variables (20 DataFrames of 1M rows): best {best * 1000:.1f} ms, "
        f"median {median * 1000:.1f} ms (target < 50 ms); {chars:,} characters = "
        f"~{chars / 4:,.0f} tokens (target < 4,000), {lines} lines"
    )
    whos = k.value(
        "import io, contextlib\n_buf = io.StringIO()\n_t0 = _t.perf_counter()\n"
        "with contextlib.redirect_stdout(_buf):\n    get_ipython().run_line_magic('whos', '')\n"
        "print(_j.dumps([_t.perf_counter() - _t0, len(_buf.getvalue())]))"
    )
    wt, wchars = json.loads(whos)
    print(
        f"  vs %whos: {wt * 1000:.1f} ms, {wchars:,} characters -> {wt / median:.1f}x the time, "
        f"{wchars / chars:.1f}x the characters"
    )


SNAPSHOT_CELL = """
import time, json
from nb_tools.jupyter._live_notebook import live
_nb = live(); _nb.open()
assert await _nb.wait_for_frontend(10), "no frontend answered"
_ts = []
for _ in range(7):
    _t0 = time.perf_counter(); _snap = await _nb.read(); _ts.append(time.perf_counter() - _t0)
print("SNAP", json.dumps([len(_snap["cells"]), min(_ts), sorted(_ts)[3], len(json.dumps(_snap))]))
"""


def bench_snapshot() -> None:
    """4. A 300-cell notebook's snapshot from JupyterLab in Chromium to the kernel."""
    import tempfile

    sys.path.insert(0, str(ROOT / "tests" / "browser"))
    try:
        import nbformat
        from browser_ui import open_notebook
        from conftest import CHROMIUM, CHROMIUM_ARGS, built_extension, start_server, stop_server
        from playwright.sync_api import sync_playwright
    except ImportError as exc:
        print(f"snapshot benchmark skipped: {exc}")
        return
    if not CHROMIUM.exists() or built_extension() is None:
        print("snapshot benchmark skipped: needs Chromium and labextension/dist (jlpm build:prod)")
        return
    with tempfile.TemporaryDirectory() as tmp:
        server = start_server("lab", Path(tmp), "http://127.0.0.1:9")
        try:
            nb = nbformat.v4.new_notebook()
            for i in range(299):
                c = nbformat.v4.new_code_cell(f"x{i} = {i}\nprint('value', x{i})\nx{i} * 2")
                c.outputs = [
                    nbformat.v4.new_output("stream", name="stdout", text=f"value {i}\n"),
                    nbformat.v4.new_output(
                        "execute_result", {"text/plain": str(2 * i)}, execution_count=i
                    ),
                ]
                nb.cells.append(c)
            nb.cells.append(nbformat.v4.new_code_cell(SNAPSHOT_CELL))
            nb.metadata["kernelspec"] = {
                "name": "python3",
                "display_name": "Python 3",
                "language": "python",
            }
            nbformat.write(nb, server.root / "big.ipynb")
            with sync_playwright() as pw:
                browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
                page = browser.new_page(viewport={"width": 1280, "height": 900})
                open_notebook(page, server, "big.ipynb")
                page.evaluate(
                    "() => { const nb = window.jupyterapp.shell.currentWidget.content;"
                    " nb.activeCellIndex = 299;"
                    " window.jupyterapp.commands.execute('notebook:run-cell'); }"
                )
                outputs = (
                    "() => window.jupyterapp.shell.currentWidget.content.model.sharedModel"
                    ".cells[299].toJSON().outputs.map(o => [].concat(o.text || o.evalue || '')"
                    ".join('')).join('')"
                )
                page.wait_for_function(
                    "() => window.jupyterapp.shell.currentWidget.content.model.sharedModel"
                    ".cells[299].toJSON().outputs.length > 0",
                    timeout=180_000,
                )
                text = page.evaluate(outputs)
                browser.close()
        finally:
            stop_server(server)
    line = next((x for x in str(text).splitlines() if x.startswith("SNAP ")), None)
    if line is None:
        print(f"snapshot benchmark failed: {text!r}")
        return
    cells, best, median, size = json.loads(line[5:])
    print(
        f"snapshot of a {cells}-cell notebook (JupyterLab -> kernel, {size / 1000:.0f} KB): "
        f"best {best * 1000:.1f} ms, median {median * 1000:.1f} ms (target < 200 ms)"
    )


if __name__ == "__main__":
    sys.exit(main())
