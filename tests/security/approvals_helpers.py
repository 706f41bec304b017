"""Shared by the approval-loop attack tests: a run through ``Agent`` with real built-in
tools on a temporary workspace, approvers that deny or never click, and a loopback HTTP
listener that counts every connection (refused fetches must leave it at zero)."""

from __future__ import annotations

import asyncio
import functools
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nb_tools import Registry
from nb_tools.agent import (
    Agent,
    ApprovalDecided,
    ApprovalRequest,
    Decision,
    Event,
    ToolCallFinished,
)
from nb_tools.builtin import builtin_tools
from nb_tools.builtin._web import WebFetchTool
from nb_tools.model import ToolResultBlock
from nb_tools.permissions import PermissionRules
from nb_tools.testing import ScriptedModel, call, reply

__all__ = [
    "Approver",
    "Listener",
    "Outcome",
    "args",
    "call",
    "drive",
    "fetch_tool",
    "reply",
    "workspace_tools",
]


class Listener:
    """A loopback HTTP server: ``connections`` counts accepted sockets (those that close
    without a byte too, but not a ZeroMQ peer's), ``hosts`` the Host headers received.
    Answers every request with a short text page."""

    def __init__(self) -> None:
        self.connections = 0
        self.stray = 0  # connections from ZeroMQ peers (not HTTP), not counted
        self.hosts: list[str] = []
        self.paths: list[str] = []
        self.port = 0
        self._server: asyncio.Server | None = None

    async def __aenter__(self) -> Listener:
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            first = await reader.read(1)
            if first == b"\xff":
                # A ZeroMQ greeting: a kernel socket of an earlier test, reconnecting to a
                # port number this listener now happens to have. Not a fetch.
                self.stray += 1
                return
            self.connections += 1
            head = first + await reader.readuntil(b"\r\n\r\n")
            lines = head.decode("latin-1").split("\r\n")
            self.paths.append(lines[0].split(" ")[1])
            for line in lines[1:]:
                if line.lower().startswith("host:"):
                    self.hosts.append(line.split(":", 1)[1].strip())
            body = b"fetched body"
            writer.write(
                b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: "
                + str(len(body)).encode()
                + b"\r\nConnection: close\r\n\r\n"
                + body
            )
            await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()


def fetch_tool(resolved: list[str] | None = None) -> WebFetchTool:
    """``web_fetch`` with its loopback-allowing test option; every name resolves to
    127.0.0.1 (``resolved`` records the names looked up)."""

    async def resolve(host: str, port: int) -> list[str]:
        if resolved is not None:
            resolved.append(host)
        return ["127.0.0.1"]

    return WebFetchTool(allow_private_network=True, resolver=resolve)


@dataclass
class Approver:
    """Answers every request with ``answers`` in turn (the last one repeats); records the
    requests. ``stop=True`` never clicks: it stops the run while the card waits."""

    answers: list[bool | Decision] = field(default_factory=lambda: [False])
    stop: bool = False
    requests: list[ApprovalRequest] = field(default_factory=list)
    task: asyncio.Task[Any] | None = None

    async def __call__(self, request: ApprovalRequest) -> bool | Decision:
        self.requests.append(request)
        if self.stop:
            assert self.task is not None
            self.task.cancel()
            await asyncio.Event().wait()  # nobody clicks
        index = min(len(self.requests), len(self.answers)) - 1
        return self.answers[index]

    @property
    def asked(self) -> list[str]:
        return [r.call.id for r in self.requests]


@dataclass
class Outcome:
    agent: Agent
    model: ScriptedModel
    events: list[Event]
    stopped: bool

    def result(self, call_id: str) -> tuple[str, bool]:
        """What the model read for ``call_id``: (content, is_error)."""
        for message in self.agent.messages:
            for block in message.content:
                if isinstance(block, ToolResultBlock) and block.result.tool_use_id == call_id:
                    return block.result.content, block.result.is_error
        raise AssertionError(f"no result for {call_id}")

    def status(self, call_id: str) -> str:
        (finished,) = [
            e for e in self.events if isinstance(e, ToolCallFinished) and e.call.id == call_id
        ]
        return finished.status

    def decided(self) -> list[ApprovalDecided]:
        return [e for e in self.events if isinstance(e, ApprovalDecided)]


async def drive(
    calls: Iterable[Any],
    *,
    tools: Iterable[Any],
    approval: str = "ask",
    approver: Approver | None = None,
    rules: PermissionRules | None = None,
    turns: list[list[Any]] | None = None,
    permission: Any = None,
) -> Outcome:
    """Run one prompt whose first reply makes ``calls`` (and later replies ``turns``)."""
    script = [reply("", *calls)] + [reply("", *t) for t in (turns or [])] + [reply("done")]
    model = ScriptedModel(script)
    events: list[Event] = []
    agent = Agent(
        model,
        tools=Registry(*tools),
        approval=approval,  # type: ignore[arg-type]
        approver=approver,
        rules=rules,
        permission=permission,
        on_event=events.append,
    )
    task = asyncio.ensure_future(agent.run("go"))
    if approver is not None:
        approver.task = task
    stopped = False
    try:
        await task
    except asyncio.CancelledError:
        stopped = True
    return Outcome(agent=agent, model=model, events=events, stopped=stopped)


def workspace_tools(root: Path, *names: str) -> list[Any]:
    return builtin_tools(root, include=names)


def args(**kw: Any) -> str:
    return json.dumps(kw)


@functools.cache
def builtin_tool(name: str) -> Any:
    """The built-in tool called ``name``: what it declares (``Info.subject``) is what the
    rules read, so a call is checked with its tool, as the agent checks it."""
    from nb_tools.builtin import ReadState, TextEditorTool, Workspace, builtin_tools

    tools = {t.info().name: t for t in builtin_tools(".")}
    tools["str_replace_based_edit_tool"] = TextEditorTool(Workspace("."), ReadState())
    return tools.get(name)
