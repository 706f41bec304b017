"""The notebook layer's costs in a real kernel, against what a user would otherwise do.

1. ``%load_ext nb_tools`` in a warm kernel (target < 150 ms), next to ``import anthropic``
   (what loading would cost if the extension imported the SDK).
2. Streaming 2,000 tokens into a cell with ``%%agent``: iopub display/comm messages and
   bytes (target < 300 KB), next to the naive way (set an ``HTML`` widget's value per token).
3. ``streaming_section``: 2,000 Markdown tokens at 10 ms a token, as Claude streams: updates
   in the slowest full second (>= 10), bytes (< 300 KB), widget messages that carry no
   text (< 30). ``--only-streaming`` runs just this.

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
from nb_tools.model import Message, ResponseEvent, TextBlock, TextDeltaEvent, Usage

class Streamer:
    """A provider that streams N short tokens with a pause between them."""

    def __init__(self, n, delay):
        self.n, self.delay = n, delay

    @property
    def model(self):
        return "bench-stream"

    async def stream(self, request):
        parts = []
        for i in range(self.n):
            tok = f"tok{i % 10} "
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
    def __init__(self) -> None:
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
        for key in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"):
            env.pop(key, None)
        env["NB_TOOLS_APPROVAL"] = "auto"
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
import asyncio
from nb_tools.model import Message, ResponseEvent, TextBlock, TextDeltaEvent, Usage

class MarkdownStreamer:
    """N tokens of Markdown-like text (paragraphs, a list, a long code block), one every
    ``delay`` seconds: what a real answer looks like to the live view."""

    def __init__(self, n, delay):
        self.n, self.delay = n, delay

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


def _is_text_update(msg: dict) -> bool:
    """A comm update that sets a streamed text widget's value (nothing else)."""
    if msg["msg_type"] != "comm_msg":
        return False
    data = msg["content"].get("data", {})
    state = data.get("state", {})
    return data.get("method") == "update" and set(state) == {"value"}


def streaming_section(k: Kernel, tokens: int = 2000, delay: float = 0.01) -> dict[str, float]:
    """The live view while an answer streams (issue 12): updates per second over every
    full second of the stream, bytes on the wire, and the widget messages that do not
    carry text (opening, closing, layout), which should not grow with the answer."""
    k.run(
        MARKDOWN_STREAMER + "\nfrom nb_tools.jupyter import use_model\n"
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
    return {"slowest_per_s": slowest, "kb": size / 1000, "fixed": fixed}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tokens", type=int, default=2000)
    parser.add_argument("--delay", type=float, default=0.001)
    parser.add_argument("--stream-delay", type=float, default=0.01)
    parser.add_argument(
        "--only-streaming", action="store_true", help="run only the live streaming section"
    )
    args = parser.parse_args(argv)

    k = Kernel()
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
        streaming_section(k, args.tokens, args.stream_delay)
    finally:
        k.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
