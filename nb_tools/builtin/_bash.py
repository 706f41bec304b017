"""``bash``: run a shell command in the workspace root.

Each call is a fresh ``bash -c`` (no state carries over between calls) with stdin closed,
in its own process group so that a timeout or a cancellation ends the whole tree:
SIGTERM to the group, then SIGKILL after a grace period. Output (stdout and stderr
interleaved) streams as progress about once a second; the model sees at most 30,000
characters, head and tail. The call ends when bash exits: background processes the
command leaves running keep running (their later output is drained, not collected).
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import json
import os
import signal
import time

from nb_tools.builtin._bash_readonly import is_read_only
from nb_tools.builtin._common import ToolError, parse_args
from nb_tools.builtin._workspace import Workspace
from nb_tools.tool import Info, Result, Schema
from nb_tools.tool._progress import progress

__all__ = ["BashTool", "command_is_read_only"]

DEFAULT_TIMEOUT_MS = 120_000
MAX_TIMEOUT_MS = 600_000
MAX_OUTPUT_CHARS = 30_000
_KEEP_BYTES = 4 * MAX_OUTPUT_CHARS  # per end: enough for 15,000 characters of any UTF-8
_PROGRESS_CHUNK = 8_000
_POLL = 0.05  # seconds between looks at the exit status

_DESCRIPTION = f"""\
Run a bash command in the workspace root and return its exit code and output (stdout and \
stderr together). Each call starts a fresh shell: `cd` and variables do not carry over, so \
chain dependent steps with &&. stdin is closed (no interactive prompts). `timeout` in ms \
(default {DEFAULT_TIMEOUT_MS}, at most {MAX_TIMEOUT_MS}). Output beyond \
{MAX_OUTPUT_CHARS} characters keeps its start and end. Prefer the grep, glob and read_file \
tools for searching and reading files. Read-only commands (ls, cat, grep, git status/log/diff \
...) run without asking; others wait for approval."""

PARAMETERS = Schema.object(
    {
        "command": Schema.string("The command to run with bash -c."),
        "timeout": Schema(
            type="integer",
            minimum=1,
            maximum=MAX_TIMEOUT_MS,
            description=f"Milliseconds before the command is stopped ({DEFAULT_TIMEOUT_MS}).",
        ),
        "description": Schema.string("What the command does, in 5-10 words, for the user."),
    },
    "command",
)


def command_is_read_only(args: str | bytes, root: str | os.PathLike[str] | None = None) -> bool:
    """The per-call vote from raw arguments: unreadable arguments are not read-only.
    ``root``: the workspace (for the git config check)."""
    try:
        value = json.loads(args)
        command = value.get("command") if isinstance(value, dict) else None
    except (ValueError, TypeError):
        return False
    return isinstance(command, str) and is_read_only(command, root)


class _Output:
    """Head and tail of a stream of bytes, bounded in memory."""

    def __init__(self, keep: int = _KEEP_BYTES) -> None:
        self.keep = keep
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0
        self.dropped = 0

    def add(self, chunk: bytes) -> None:
        self.total += len(chunk)
        room = self.keep - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        if chunk:
            self.tail += chunk
            extra = len(self.tail) - self.keep
            if extra > 0:
                del self.tail[:extra]
                self.dropped += extra

    def text(self, limit: int = MAX_OUTPUT_CHARS) -> str:
        head = self.head.decode("utf-8", "replace")
        tail = self.tail.decode("utf-8", "replace")
        if not self.dropped and len(head) + len(tail) <= limit:
            return head + tail
        whole = head + tail
        half = limit // 2
        if not self.dropped:
            omitted = len(whole) - 2 * half
            return f"{whole[:half]}\n\n... [{omitted} characters omitted] ...\n\n{whole[-half:]}"
        return (
            f"{head[:half]}\n\n... [output truncated: {self.total} bytes in all; the middle is "
            f"omitted] ...\n\n{tail[-half:]}"
        )


class BashTool:
    """The ``bash`` tool. ``kill_grace``: seconds between SIGTERM and SIGKILL."""

    def __init__(
        self,
        workspace: Workspace,
        *,
        kill_grace: float = 3.0,
        progress_interval: float = 1.0,
        env: dict[str, str] | None = None,
    ) -> None:
        self.workspace = workspace
        self.kill_grace = kill_grace
        self.progress_interval = progress_interval
        self.env = env
        self._info = Info(
            name="bash", description=_DESCRIPTION, parameters=PARAMETERS, requires_approval=True
        )

    def info(self) -> Info:
        return self._info

    def read_only_call(self, args: str | bytes) -> bool:
        return command_is_read_only(args, self.workspace.root)

    def requires_approval_for(self, args: str | bytes) -> bool:
        return not command_is_read_only(args, self.workspace.root)

    async def call(self, args: str | bytes) -> Result:
        try:
            a = parse_args("bash", PARAMETERS, args)
            command = a["command"]
            if not command.strip():
                raise ToolError("bash: the command is empty")
        except ToolError as exc:
            return Result.error(str(exc))
        return await self.run(command, a.get("timeout", DEFAULT_TIMEOUT_MS) / 1000)

    async def run(self, command: str, timeout: float) -> Result:
        """Run ``command``; the result says how it ended."""
        try:
            proc = await asyncio.create_subprocess_exec(
                "bash", "-c", command,
                cwd=self.workspace.root,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.STDOUT,
                start_new_session=True,
                env=self.env,
            )  # fmt: skip
        except OSError as exc:
            return Result.error(f"bash: could not start bash: {exc.strerror or exc}")
        sink = _Sink()
        reader = asyncio.ensure_future(_pump(proc, sink))
        decoder = codecs.getincrementaldecoder("utf-8")("replace")
        deadline = time.monotonic() + timeout
        last_flush = time.monotonic()
        timed_out = cancelled = False
        try:
            # Poll the exit status: Process.wait() also waits for the pipe to close, which a
            # background child (`server &`) keeps open.
            while proc.returncode is None:
                now = time.monotonic()
                if now >= deadline:
                    timed_out = True
                    break
                if reader.done():  # output closed, process still running
                    await asyncio.sleep(min(_POLL, deadline - now))
                else:
                    await asyncio.wait({reader}, timeout=min(_POLL, deadline - now))
                if time.monotonic() - last_flush >= self.progress_interval:
                    last_flush = time.monotonic()
                    _flush(sink.pending, decoder)
        except asyncio.CancelledError:
            cancelled = True
        try:
            if timed_out or cancelled:
                await self._stop(proc)
            # Output written just before the exit; a background child may hold the pipe.
            with contextlib.suppress(asyncio.TimeoutError, asyncio.CancelledError):
                await asyncio.wait_for(asyncio.shield(reader), 0.5)
        finally:
            if proc.returncode is None:  # cancelled again while stopping: no survivors
                _signal_group(proc.pid, signal.SIGKILL)
            # A background child may keep writing: keep draining the pipe (so it never
            # blocks on a full pipe) but stop collecting.
            sink.collecting = False
        _flush(sink.pending, decoder)
        return _result(sink.out, proc.returncode, timeout, timed_out=timed_out, cancelled=cancelled)

    async def _stop(self, proc: asyncio.subprocess.Process) -> None:
        """SIGTERM the group, give it ``kill_grace`` seconds, then SIGKILL what is left."""
        pgid = proc.pid  # start_new_session: the group id is the leader's pid
        _signal_group(pgid, signal.SIGTERM)
        end = time.monotonic() + self.kill_grace
        while time.monotonic() < end and _group_alive(pgid):
            await asyncio.sleep(0.05)
        _signal_group(pgid, signal.SIGKILL)
        end = time.monotonic() + 5
        while proc.returncode is None and time.monotonic() < end:
            await asyncio.sleep(0.02)


class _Sink:
    """Where the pipe's bytes go while the call collects them."""

    def __init__(self) -> None:
        self.out = _Output()
        self.pending: list[bytes] = []
        self.collecting = True


async def _pump(proc: asyncio.subprocess.Process, sink: _Sink) -> None:
    stream = proc.stdout
    if stream is None:  # pragma: no cover - PIPE always gives a stream
        return
    while chunk := await stream.read(1 << 16):
        if sink.collecting:
            sink.out.add(chunk)
            sink.pending.append(chunk)


def _flush(pending: list[bytes], decoder: codecs.IncrementalDecoder) -> None:
    if not pending:
        return
    data = b"".join(pending)
    pending.clear()
    text = decoder.decode(data)
    if len(text) > _PROGRESS_CHUNK:
        skipped = len(text) - _PROGRESS_CHUNK
        text = f"... [{skipped} characters not shown] ...\n" + text[-_PROGRESS_CHUNK:]
    if text:
        progress(text)


def _signal_group(pgid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _result(
    out: _Output, code: int | None, timeout: float, *, timed_out: bool, cancelled: bool
) -> Result:
    text = out.text()
    if timed_out:
        status = (
            f"[timed out after {timeout:g} s: the command and its child processes were "
            f"stopped; the output above is what it printed until then]"
        )
    elif cancelled:
        status = (
            "[cut off: the call was cancelled; the command and its child processes were "
            "stopped; the output above is what it printed until then]"
        )
    else:
        status = f"[exit code {code}]"
    body = text.rstrip("\n") if text.strip() else "(no output)"
    return Result(
        content=f"{body}\n\n{status}",
        is_error=timed_out or cancelled or code != 0,
        metadata={
            "exit_code": code,
            "timed_out": timed_out,
            "cancelled": cancelled,
            "output_bytes": out.total,
        },
    )
