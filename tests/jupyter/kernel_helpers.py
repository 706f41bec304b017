"""A real IPython kernel for tests, talking to a fake Messages API server in this process,
with helpers that read iopub like a frontend (display updates applied) and click widget
buttons the way JupyterLab does."""

from __future__ import annotations

import os
import queue
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jupyter_client

from nb_tools.testing import FakeMessagesServer

ROOT = Path(__file__).resolve().parents[2]
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
TRANSCRIPT = "application/vnd.nbtools.transcript+json"


@dataclass
class Execution:
    messages: list[dict[str, Any]] = field(default_factory=list)
    outputs: list[dict[str, Any]] = field(default_factory=list)
    reply: dict[str, Any] | None = None

    def of_type(self, *types: str) -> list[dict[str, Any]]:
        return [m for m in self.messages if m["msg_type"] in types]

    @property
    def stdout(self) -> str:
        return "".join(
            o.get("text", "")
            for o in self.outputs
            if o["output_type"] == "stream" and o.get("name") == "stdout"
        )

    @property
    def errors(self) -> list[dict[str, Any]]:
        return [o for o in self.outputs if o["output_type"] == "error"]

    @property
    def displays(self) -> list[dict[str, Any]]:
        return [o for o in self.outputs if o["output_type"] in ("display_data", "execute_result")]

    def buttons(self, description: str) -> list[str]:
        return [
            m["content"]["comm_id"]
            for m in self.of_type("comm_open")
            if m["content"]["data"]["state"].get("_model_name") == "ButtonModel"
            and _labelled(m["content"]["data"]["state"].get("description"), description)
        ]


class Kernel:
    def __init__(self, server: FakeMessagesServer, cwd: Path) -> None:
        self.server = server
        env = dict(os.environ)
        env.update(
            ANTHROPIC_BASE_URL=server.base_url,
            ANTHROPIC_API_KEY="test",
            NB_TOOLS_BLOCK_REAL_MODELS="1",
            MPLBACKEND="Agg",
            # The tests play the frontend (they click), but render nothing: not headless.
            NB_TOOLS_HEADLESS="0",
            PYTHONPATH=os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep),
        )
        env.pop("NB_TOOLS_APPROVAL", None)
        self.km = jupyter_client.KernelManager(kernel_name="python3")
        self.km.start_kernel(env=env, cwd=str(cwd))
        self.kc = self.km.client()
        self.kc.start_channels()
        self.kc.wait_for_ready(timeout=60)

    def close(self) -> None:
        self.kc.stop_channels()
        self.km.shutdown_kernel(now=True)

    def send_comm(self, comm_id: str, data: dict[str, Any]) -> None:
        self.kc.shell_channel.send(
            self.kc.session.msg("comm_msg", {"comm_id": comm_id, "data": data})
        )

    def click(self, comm_id: str) -> None:
        """A Button click exactly as JupyterLab 4.6 sends it."""
        self.send_comm(comm_id, {"method": "custom", "content": {"event": "click"}})

    def set_state(self, comm_id: str, state: dict[str, Any]) -> None:
        self.send_comm(comm_id, {"method": "update", "state": state, "buffer_paths": []})

    def run(
        self,
        code: str,
        *,
        on_message: Callable[[Kernel, dict[str, Any], Execution], None] | None = None,
        timeout: float = 60,
        cell: str | None = None,
    ) -> Execution:
        """Execute ``code`` and collect its iopub messages until the kernel is idle;
        ``on_message`` sees each message as it comes (to click buttons); ``cell``: the
        notebook cell's id, sent as JupyterLab sends it."""
        if cell is None:
            msg_id = self.kc.execute(code)
        else:
            content = {"code": code, "silent": False, "store_history": True}
            content |= {"user_expressions": {}, "allow_stdin": False, "stop_on_error": True}
            msg = self.kc.session.msg("execute_request", content, metadata={"cellId": cell})
            self.kc.shell_channel.send(msg)
            msg_id = msg["header"]["msg_id"]
        ex = Execution()
        by_display: dict[str, list[dict[str, Any]]] = {}
        deadline = time.monotonic() + timeout
        while True:
            if time.monotonic() > deadline:
                raise TimeoutError(
                    f"cell did not finish in {timeout} s: {code[:80]!r}; "
                    f"last messages: {[m['msg_type'] for m in ex.messages[-5:]]}"
                )
            try:
                msg = self.kc.get_iopub_msg(timeout=0.5)
            except queue.Empty:
                continue
            if msg["parent_header"].get("msg_id") != msg_id:
                continue
            ex.messages.append(msg)
            kind, content = msg["msg_type"], msg["content"]
            if kind in ("display_data", "execute_result", "stream", "error"):
                out = {"output_type": kind, **content}
                ex.outputs.append(out)
                display_id = content.get("transient", {}).get("display_id")
                if display_id:
                    by_display.setdefault(display_id, []).append(out)
            elif kind == "update_display_data":
                for out in by_display.get(content.get("transient", {}).get("display_id"), []):
                    out["data"] = content["data"]
                    out["metadata"] = content.get("metadata", {})
            elif kind == "clear_output":
                ex.outputs.clear()
            if on_message is not None:
                on_message(self, msg, ex)
            if kind == "status" and content["execution_state"] == "idle":
                break
        while ex.reply is None:  # skip replies to earlier requests (kernel_info, ...)
            reply = self.kc.get_shell_msg(timeout=10)
            if reply["parent_header"].get("msg_id") == msg_id:
                ex.reply = reply["content"]
        return ex

    def ok(self, code: str, **kw: Any) -> Execution:
        ex = self.run(code, **kw)
        assert not ex.errors, ex.errors[0].get("traceback")
        return ex


def _labelled(label: object, wanted: str) -> bool:
    """A button's label is ``wanted`` ("Always allow" also names its rule after it)."""
    return isinstance(label, str) and (label == wanted or label.startswith(wanted + " "))


def clicker(description: str, *, then: Callable[[Kernel, str], None] | None = None):
    """An ``on_message`` that clicks the first button labelled ``description``."""
    done: list[str] = []

    def on_message(k: Kernel, msg: dict[str, Any], ex: Execution) -> None:
        if done or msg["msg_type"] != "comm_open":
            return
        state = msg["content"]["data"]["state"]
        if state.get("_model_name") == "ButtonModel" and _labelled(
            state.get("description"), description
        ):
            done.append(msg["content"]["comm_id"])
            if then is not None:
                then(k, msg["content"]["comm_id"])
            k.click(msg["content"]["comm_id"])

    return on_message
