"""``bash``: run a shell command in the workspace root, inside the OS sandbox.

Each call is a fresh ``bash -c`` (no state carries over between calls) with stdin closed,
in its own process group so that a timeout or a cancellation ends the whole tree:
SIGTERM to the group, then SIGKILL after a grace period. Output (stdout and stderr
interleaved) streams as progress about once a second; the model sees at most 30,000
characters, head and tail.

Every call runs in the sandbox (:mod:`nb_tools.sandbox`): a call that ran without approval
(the read-only vote) in ``read-only`` with only the system folders and the workspace in view
and no network (``SandboxPolicy.unapproved``), an approved call in the session's mode
(``workspace-write`` by default). The sandbox's process tree dies with the call: background
jobs end when bash exits. A call may ask to run outside the sandbox (``"sandbox": "off"``):
such a call always asks a person, even under the ``auto`` policy, and its card says so.
Where no sandbox can start, every call asks, and approved calls run without one (with the
allow-listed environment); a call that was not approved then does not run.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import json
import os
import signal
import time
import warnings
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from nb_tools.builtin._bash_readonly import is_read_only
from nb_tools.builtin._child import Child
from nb_tools.builtin._common import ToolError, output_stream, parse_args, redact_output
from nb_tools.builtin._workspace import Workspace
from nb_tools.sandbox import (
    SandboxMode,
    SandboxPolicy,
    SecretStream,
    check_mode,
    default_mode,
    make_ready,
    prepare,
    remove_planted,
    sandbox_available,
    take_ready,
    unapproved_problem,
    warm_up,
    writable_problem,
    write_protected,
)
from nb_tools.tool import Change, Info, Result, Schema, Subject, progress
from nb_tools.tool._grant import current_grant
from nb_tools.tool._progress import progress_wanted

__all__ = ["BashTool", "command_is_read_only"]

DEFAULT_TIMEOUT_MS = 120_000
MAX_TIMEOUT_MS = 600_000
MAX_OUTPUT_CHARS = 30_000
_KEEP_BYTES = 4 * MAX_OUTPUT_CHARS  # per end: enough for 15,000 characters of any UTF-8
_PROGRESS_CHUNK = 8_000
DRAIN_AFTER_EXIT = 0.5
"""Seconds a call waits, after bash exits, for the output pipe to close (the last bytes
written before the exit; a background child that keeps the pipe open holds it no longer)."""

_DESCRIPTION = f"""\
Run a bash command in the workspace root and return its exit code and output (stdout and \
stderr together). Each call starts a fresh shell: `cd` and variables do not carry over, so \
chain dependent steps with &&. stdin is closed (no interactive prompts). `timeout` in ms \
(default {DEFAULT_TIMEOUT_MS}, at most {MAX_TIMEOUT_MS}). Output beyond \
{MAX_OUTPUT_CHARS} characters keeps its start and end. Prefer the grep, glob and read_file \
tools for searching and reading files. Commands run in a sandbox without network access, \
secrets or a home folder: read-only commands (ls, cat, grep, git status/log/diff ...) run \
without asking in a read-only sandbox; others wait for the user's approval and then may change \
the workspace (not .git/hooks, .git/config or .nb_tools). Only if the sandbox blocks what the \
task needs, pass "sandbox": "off" to run OUTSIDE the sandbox (full file system and network); \
the user is always asked about such a call."""

OUTSIDE_NOTE = (
    "runs OUTSIDE the sandbox: the whole file system, the network and the kernel's "
    "environment as configured; nothing confines it"
)

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
        "sandbox": Schema.enum(
            '"off": run OUTSIDE the sandbox (full file system and network access); always '
            "asks the user. Leave it out to run sandboxed.",
            "off",
        ),
    },
    "command",
)


def command_is_read_only(args: str | bytes, root: str | os.PathLike[str] | None = None) -> bool:
    """The per-call vote from raw arguments: unreadable arguments, and a call that asks to
    run outside the sandbox, are not read-only. ``root``: the workspace (for the git config
    check)."""
    value = _loads(args)
    if value is None or "sandbox" in value:
        return False
    command = value.get("command")
    return isinstance(command, str) and is_read_only(command, root)


def asks_outside(args: str | bytes) -> bool:
    """Whether the call asks to run outside the sandbox; unreadable arguments count as
    asking (fail closed)."""
    value = _loads(args)
    return value is None or value.get("sandbox") is not None


def _loads(args: str | bytes) -> dict[str, Any] | None:
    try:
        value = json.loads(args)
    except (ValueError, TypeError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


_warned: set[str] = set()


def warn_unavailable(reason: str) -> None:
    """Say once per process that no sandbox can start (shows in the cell as a warning)."""
    if reason in _warned:
        return
    _warned.add(reason)
    warnings.warn(
        f"nb_tools: no sandbox for shell commands ({reason}). Every bash call now asks for "
        "approval, and approved calls run without a sandbox.",
        RuntimeWarning,
        stacklevel=3,
    )


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

    def text(self, limit: int = MAX_OUTPUT_CHARS, redact: Callable[[str], str] = str) -> str:
        """The output for the model, at most about ``limit`` characters: its middle
        omitted when longer. ``redact`` sees the text before the cut, so a secret whose
        name falls in the omitted middle is still found; after a gap in what was kept, the
        tail's first line (which lost its start, and with it maybe a secret's name) is
        not shown."""
        head = self.head.decode("utf-8", "replace")
        tail = self.tail.decode("utf-8", "replace")
        half = limit // 2
        if not self.dropped:
            whole = redact(head + tail)
            if len(whole) <= limit:
                return whole
            omitted = len(whole) - 2 * half
            return f"{whole[:half]}\n\n... [{omitted} characters omitted] ...\n\n{whole[-half:]}"
        end = tail.find("\n")
        tail = tail[end + 1 :] if end >= 0 else ""
        return (
            f"{redact(head)[:half]}\n\n... [output truncated: {self.total} bytes in all; the "
            f"middle is omitted] ...\n\n{redact(tail)[-half:]}"
        )


class BashTool:
    """The ``bash`` tool. ``kill_grace``: seconds between SIGTERM and SIGKILL.

    ``sandbox``: where approved calls run ("workspace-write", "read-only", "off" or a
    :class:`~nb_tools.sandbox.SandboxPolicy`); ``None`` (the default) follows the agent's
    ``sandbox=`` and the session default (``%nbtools sandbox``). A call that ran without
    approval always runs read-only; a call made outside the tool loop (no approval known)
    counts as not approved unless ``sandbox`` was given here. ``env``: extra environment
    variables (secret-looking names are dropped)."""

    def __init__(
        self,
        workspace: Workspace,
        *,
        kill_grace: float = 3.0,
        progress_interval: float = 1.0,
        env: dict[str, str] | None = None,
        sandbox: SandboxMode | SandboxPolicy | None = None,
    ) -> None:
        self.workspace = workspace
        self.kill_grace = kill_grace
        self.progress_interval = progress_interval
        self.env = env
        self.sandbox: SandboxMode | SandboxPolicy | None = (
            check_mode(sandbox) if isinstance(sandbox, str) else sandbox
        )
        self._info = Info(
            name="bash",
            description=_DESCRIPTION,
            parameters=PARAMETERS,
            requires_approval=True,
            subject=Subject(arg="command", kind="command"),
        )
        scanned = warm_up(workspace.root)  # the first call finds the workspace scanned
        # ...and the sandbox of a first call without a click made ready once it is.
        first = self.sandbox if self.sandbox is not None else default_mode()
        base = first if isinstance(first, SandboxPolicy) else SandboxPolicy(mode=first)
        if base.workspace is None:
            base = base.with_workspace(workspace.root)
        make_ready(base.unapproved(), cwd=workspace.root, env=env, after=scanned)

    def info(self) -> Info:
        return self._info

    def read_only_call(self, args: str | bytes) -> bool:
        found = sandbox_available()
        if not found.ok:  # without a sandbox the vote is no gate: every call asks
            warn_unavailable(found.reason)
            return False
        if unapproved_problem(self.workspace.root) is not None:
            return False  # secrets the sandbox cannot hide: every call asks
        return command_is_read_only(args, self.workspace.root)

    def requires_approval_for(self, args: str | bytes) -> bool:
        return not self.read_only_call(args)

    def is_protected_call(self, args: str | bytes) -> bool:
        """A call that asks to run outside the sandbox goes to a person, even under "auto"."""
        return asks_outside(args)

    def preview(self, args: str | bytes) -> Change:
        """The card's warning for a call outside the sandbox (no preview otherwise)."""
        value = _loads(args)
        outside = value is not None and value.get("sandbox") == "off"
        if value is None or not (outside or self._session_off()):
            raise ValueError("bash: only a call outside the sandbox has a preview")
        return Change(path=f"bash {OUTSIDE_NOTE}", before=None, after=str(value.get("command")))

    def _session_off(self) -> bool:
        """Approved calls run outside the sandbox by the tool's or the session's setting
        (an ``Agent(sandbox="off")`` is not known here)."""
        mode = self.sandbox if self.sandbox is not None else default_mode()
        name = mode.mode if isinstance(mode, SandboxPolicy) else mode
        return name == "off" or not sandbox_available().ok

    def policy_for(self, *, outside: bool = False) -> SandboxPolicy | str:
        """The policy the current call runs under, or the reason it may not run."""
        grant = current_grant()
        explicit = self.sandbox
        if grant is None:  # outside the tool loop: only the developer's explicit choice
            base = explicit if explicit is not None else "read-only"
            approved = explicit is not None
        else:
            base = explicit if explicit is not None else grant.sandbox
            base = base if base is not None else default_mode()
            approved = grant.approved
        policy = base if isinstance(base, SandboxPolicy) else SandboxPolicy(mode=base)
        if policy.workspace is None:
            policy = policy.with_workspace(self.workspace.root)
        if outside:
            if not approved or (grant is None and policy.mode != "off"):
                return (
                    "bash: a call outside the sandbox runs only when a person approved it "
                    "(through an Agent), or when the tool was made with sandbox='off'"
                )
            return policy.with_mode("off")
        if not approved:  # no click: read-only, whatever the session's mode
            policy = policy.unapproved()
            problem = unapproved_problem(self.workspace.root)
            if problem is not None:
                return f"bash: this call was not approved and {problem}; it did not run"
        elif policy.mode == "workspace-write":
            problem = writable_problem(self.workspace.root)
            if problem is not None:
                return (
                    f"bash: {problem}, so a writable sandbox could not keep them read-only; "
                    "the call did not run. Run it in a smaller workspace, or with "
                    "sandbox='read-only'"
                )
        if policy.mode != "off" and grant is not None and grant.rules is not None:
            try:
                unreadable = grant.rules.unreadable(self.workspace.root, approved=approved)
            except ValueError as exc:
                return f"bash: {exc}, so that this call cannot be kept from them; it did not run"
            if unreadable:
                policy = replace(policy, hidden=(*policy.hidden, *unreadable))
        if policy.mode != "off":
            found = sandbox_available()
            if not found.ok:
                warn_unavailable(found.reason)
                if not approved:
                    return (
                        f"bash: this call was not approved and no sandbox can start here "
                        f"({found.reason}), so it did not run; run it through an Agent, which "
                        "asks the user first"
                    )
                policy = policy.with_mode("off")
        return policy

    async def call(self, args: str | bytes) -> Result:
        try:
            a = parse_args("bash", PARAMETERS, args)
            command = a["command"]
            if not command.strip():
                raise ToolError("bash: the command is empty")
        except ToolError as exc:
            return Result.error(str(exc))
        policy = self.policy_for(outside=a.get("sandbox") == "off")
        if isinstance(policy, str):
            return Result.error(policy)
        return await self.run(command, a.get("timeout", DEFAULT_TIMEOUT_MS) / 1000, policy=policy)

    async def run(
        self, command: str, timeout: float, *, policy: SandboxPolicy | None = None
    ) -> Result:
        """Run ``command`` under ``policy`` (default: the current call's); the result says
        how it ended."""
        if policy is None:
            chosen = self.policy_for()
            if isinstance(chosen, str):
                return Result.error(chosen)
            policy = chosen
        argv = ["bash", "-c", command]
        root = self.workspace.root
        try:
            launch = prepare(argv, policy, cwd=root, env=self.env)
            sink = _Sink()
            # A call without a click takes the sandbox made ready for it, when still fresh.
            ready = await take_ready(policy, launch, argv, cwd=root, env=self.env)
            # bubblewrap gives the command its own session (--new-session): bwrap itself
            # needs only its own process group.
            child = Child(
                launch.argv,
                cwd=launch.cwd,
                env=launch.env,
                on_output=sink.add,
                new_session=not launch.sandboxed,
                started=ready,
            )
        except (OSError, RuntimeError) as exc:
            what = getattr(exc, "strerror", None) or exc
            return Result.error(f"bash: could not start bash: {what}")
        decoder = codecs.getincrementaldecoder("utf-8")("replace")
        stream = output_stream()
        deadline = time.monotonic() + timeout
        last_flush = time.monotonic()
        timed_out = cancelled = False
        # The loop wakes when the process exits (its pidfd), at the deadline, and when
        # progress is due; the output is read meanwhile as it arrives.
        try:
            while not child.exited.done():
                now = time.monotonic()
                if now >= deadline:
                    timed_out = True
                    break
                wake = min(deadline, last_flush + self.progress_interval)
                await asyncio.wait((child.exited,), timeout=max(wake - now, 0))
                if time.monotonic() - last_flush >= self.progress_interval:
                    last_flush = time.monotonic()
                    _flush(sink, decoder, stream)
        except asyncio.CancelledError:
            cancelled = True
        try:
            if timed_out or cancelled:
                await self._stop(child)
            # Output written just before the exit; a background child may hold the pipe.
            if not child.closed.done():
                with contextlib.suppress(asyncio.CancelledError):
                    await asyncio.wait((child.closed,), timeout=DRAIN_AFTER_EXIT)
        finally:
            if not child.exited.done():  # cancelled again while stopping: no survivors
                _signal_group(child.pid, signal.SIGKILL)
            # A background child may keep writing: the pipe is still drained (so it never
            # blocks on a full pipe), but nothing more is collected.
            child.stop_collecting()
            planted = remove_planted(launch)  # even when cancelled twice
            make_ready(policy, cwd=root, env=self.env)  # the next such call's, meanwhile
        _flush(sink, decoder, stream)
        if progress_wanted() and (rest := stream.finish()):
            progress(rest)
        result = _result(
            sink.out, child.returncode, timeout, timed_out=timed_out, cancelled=cancelled
        )
        if planted:
            note = (
                "\n[the sandbox removed or switched off what the call made at paths the "
                "protection table guards (they run later outside the sandbox, hold "
                "credentials or grant permissions; write_file asks for them): "
                + "; ".join(_guarded(p) for p in planted)
                + "]"
            )
            result = Result(
                content=result.content + note,
                is_error=True,
                metadata={**result.metadata, "removed": planted},
            )
        if launch.unread:
            result = Result(
                content=result.content + _unread_note(launch.unread, self.workspace.root),
                is_error=result.is_error,
                metadata={**result.metadata, "unread": list(launch.unread)},
            )
        return _with_sandbox(result, policy, self.workspace.root)

    async def _stop(self, child: Child) -> None:
        """SIGTERM the group, give it ``kill_grace`` seconds, then SIGKILL what is left."""
        pgid = child.pid  # its own process group: the group id is the leader's pid
        _signal_group(pgid, signal.SIGTERM)
        end = time.monotonic() + self.kill_grace
        while time.monotonic() < end and _group_alive(pgid):
            await asyncio.sleep(0.05)
        _signal_group(pgid, signal.SIGKILL)
        if not child.exited.done():
            await asyncio.wait((child.exited,), timeout=5)


_PENDING_MAX = 4 * _PROGRESS_CHUNK
"""Bytes of progress kept between flushes: a flush shows the last ``_PROGRESS_CHUNK``
characters, so more is never shown (a no-click ``cat /dev/zero`` would otherwise hold a
second of output, GBs on a fast machine, in the kernel)."""


class _Sink:
    """Where the pipe's bytes go while the call collects them: the model's head and tail
    (``out``) and the progress not yet shown (``pending``, at most ``_PENDING_MAX``
    bytes; ``dropped`` counts what was let go before it was shown)."""

    def __init__(self) -> None:
        self.out = _Output()
        self.pending: list[bytes] = []
        self.pending_bytes = 0
        self.dropped = 0

    def add(self, chunk: bytes) -> None:
        self.out.add(chunk)
        self.pending.append(chunk)
        self.pending_bytes += len(chunk)
        while self.pending_bytes > _PENDING_MAX and len(self.pending) > 1:
            first = self.pending.pop(0)
            self.pending_bytes -= len(first)
            self.dropped += len(first)


def _flush(sink: _Sink, decoder: codecs.IncrementalDecoder, stream: SecretStream) -> None:
    """Show the progress collected since the last flush, its whole lines redacted
    (``stream`` holds a line until it ends: a secret cut at a chunk's edge is seen whole)."""
    if not sink.pending:
        return
    data = b"".join(sink.pending) if progress_wanted() else b""
    dropped = sink.dropped
    sink.pending.clear()
    sink.pending_bytes = sink.dropped = 0
    if not data:  # nobody receives progress: no decoding, no redaction
        return
    text = decoder.decode(data)
    if len(text) > _PROGRESS_CHUNK or dropped:
        skipped = len(text) - min(len(text), _PROGRESS_CHUNK)
        what = f"{skipped} characters" if not dropped else f"about {skipped + dropped} characters"
        text = f"... [{what} not shown] ...\n" + stream.feed(text[-_PROGRESS_CHUNK:], cut=True)
    else:
        text = stream.feed(text)
    if text:
        progress(text)  # the live view: what the model reads


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


def _unread_note(unread: tuple[str, ...], root: Path) -> str:
    """What a call without a click could not see: folders the workspace's scan had not read
    (it was still under way, or they lie past its limits) were hidden, so they looked empty."""
    shown = [os.path.relpath(p, root) if Path(p).is_relative_to(root) else p for p in unread]
    more = f" and {len(shown) - 8} more" if len(shown) > 8 else ""
    return (
        f"\n[sandbox: {', '.join(shown[:8])}{more} looked empty to this call: the workspace's "
        "scan for secrets had not read them (it runs once, in the background, or they lie "
        "past its limits), so they were hidden; a later call sees them once they are read]"
    )


def limits_note(policy: SandboxPolicy, root: Path) -> str:
    """What the sandbox did not let a command keep, for the model and the card: an exit
    code 0 does not say that a file written outside the workspace is gone."""
    network = "" if policy.network else "; no network"
    if policy.mode == "read-only":
        return (
            "[read-only sandbox: nothing written is kept (/tmp is discarded when the command "
            f"ends, elsewhere writing fails){network}]"
        )
    folders = ", ".join(str(p) for p in (policy.workspace or root, *policy.writable_roots))
    return (
        f"[sandbox: only files written under {folders} are kept; elsewhere (/tmp, the home "
        f"folder) they are discarded when the command ends{network}]"
    )


def _with_sandbox(result: Result, policy: SandboxPolicy, root: Path) -> Result:
    mode = policy.mode
    meta = {**result.metadata, "sandbox": mode}
    content = result.content
    if mode == "read-only" and "Read-only file system" in content:
        content += (
            "\n[ran in the read-only sandbox, as a call that needed no approval: it cannot "
            "write files (outside /tmp) or reach the network; a command that must write runs "
            "once the user approves it]"
        )
    elif mode != "off":
        meta["sandbox_limits"] = note = limits_note(policy, root)
        content += "\n" + note
    return Result(content=content, parts=result.parts, is_error=result.is_error, metadata=meta)


def _result(
    out: _Output, code: int | None, timeout: float, *, timed_out: bool, cancelled: bool
) -> Result:
    text = out.text(redact=lambda t: redact_output(t)[0])
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
    elif code is None:  # something else in the kernel reaped the process first
        status = "[exit status unknown: the process ended, but its status was collected elsewhere]"
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


def _guarded(path: str) -> str:
    """A removed path with the table's reason for guarding it."""
    reason = write_protected(Path(path).parts)
    return f"{path} ({reason})" if reason else path
