"""Ready sandboxes: the next no-click sandbox made before the call comes.

Most of what a sandboxed call costs is bubblewrap making its namespaces and mounts. For a
call without a click (``read-only``, ``system_only``: the one kind that runs at once) that
work is done ahead, off the call's path: after such a call (while the model reads its
result and thinks), and when a shell tool is made (once its workspace's scan is read,
``after``), a long-lived thread prepares the same launch with a small shim in
place of the command and starts it. The shim waits inside the finished sandbox until the
call hands it the command (its arguments, NUL-separated, in a memory file; then a byte
on a pipe), and ``exec``s it: the command runs as ``bash -c`` would have been run there.

A ready sandbox is a snapshot of the mounts of the moment it was made, so it is used only
if, at the call, all of these hold (:func:`take_ready`; else it is killed and reaped, and
the call starts cold):

1. the call's own :func:`~nb_tools.sandbox.prepare` gives the same launch: bubblewrap's
   command line up to ``--``, the environment, the folder, the folders hidden unread, and
   every other field (a new secret, a new hard link, a new credential in a git config,
   a changed home: a different command line);
2. no kept scan of a workspace changed since before it was made (the scan's
   :func:`~nb_tools.sandbox._scan.generation`: inotify's events, a walk moving on);
3. every path its mounts name (sources, destinations and the ``--chdir`` folder) is the
   same file or folder (``st_dev``, ``st_ino``, links followed; missing then, missing now)
   as just before it was made: a mount over a file or folder that was later renamed
   away, or renamed over (git writes ``.git/config`` so), no longer covers the name;
4. its process still runs, in this process (not a forked child), for the same policy.

One ready sandbox is kept per launch shape (policy, folder, extra environment), at most
:data:`MAX_READY`; each runs one command. They are killed when the interpreter exits
(and die with it: ``--die-with-parent``, from the long-lived thread that started them).
``NB_TOOLS_READY_SANDBOX=0`` in the environment switches them off (every call starts
cold, as before).
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import contextlib
import dataclasses
import os
import queue
import signal
import subprocess
import threading
from collections.abc import Mapping
from dataclasses import dataclass

from nb_tools.sandbox._launch import Launch, prepare
from nb_tools.sandbox._policy import SandboxPolicy
from nb_tools.sandbox._scan import generation

__all__ = ["MAX_READY", "READY_ENV", "close_ready", "make_ready", "ready_enabled", "take_ready"]

READY_ENV = "NB_TOOLS_READY_SANDBOX"
"""``0`` switches ready sandboxes off."""
MAX_READY = 4
"""Ready sandboxes kept at most (one per launch shape); the oldest goes first."""
WAIT_FOR_READY = 0.0
"""Seconds a call waits for its ready sandbox while it is still being made; then (and by
default at once) it starts cold, and the one being made is kept for the next call. Waiting
measured slower than starting cold (bench_sandbox's "2nd at once"): the making's own
``prepare`` and the shim's ``bash`` start come on top of bubblewrap's start."""

# The options bubblewrap takes, by what follows them: paths (what a mount names; checked
# for freshness), other values, nothing. A command line with any other option is never
# made ready (it cannot be checked).
_PATHS = {
    "--bind": 2, "--ro-bind": 2, "--dev-bind": 2, "--bind-try": 2, "--ro-bind-try": 2,
    "--dev-bind-try": 2, "--tmpfs": 1, "--remount-ro": 1, "--dev": 1, "--proc": 1,
    "--dir": 1, "--mqueue": 1, "--chdir": 1,
}  # fmt: skip
_VALUES = {"--size": 1, "--cap-drop": 1, "--cap-add": 1, "--perms": 1, "--symlink": 2}
_FLAGS = {
    "--unshare-all", "--share-net", "--die-with-parent", "--new-session", "--unshare-user",
    "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-net", "--unshare-cgroup",
    "--unshare-cgroup-try", "--unshare-user-try", "--as-pid-1",
}  # fmt: skip

_SHIM = (
    'read -r -N 1 _ <&{go}; mapfile -d "" -t a <&{args}; exec {go}<&- {args}<&-; exec "${{a[@]}}"'
)
"""Waits for the byte on ``go``, reads the command's arguments (NUL-separated) from the
memory file ``args`` (a regular file: bash reads it in blocks, not byte by byte as from a
pipe), closes both and ``exec``s the command."""

_Key = tuple[SandboxPolicy, str, tuple[tuple[str, str], ...] | None]
_Stat = tuple[int, int] | None


@dataclass(eq=False)
class _Ready:
    launch: Launch
    prefix: list[str]
    """bubblewrap's command line up to and including ``--``."""
    stats: list[tuple[str, _Stat]]
    made_at: int
    """The scans' generation read before the launch was prepared."""
    proc: subprocess.Popen[bytes]
    go: int
    args: int
    owner: int


_lock = threading.Lock()
_slots: dict[_Key, _Ready | concurrent.futures.Future[_Ready | None]] = {}
_Request = tuple[_Key, SandboxPolicy, str, dict[str, str] | None, threading.Event | None]
_queue: queue.SimpleQueue[_Request | None] = queue.SimpleQueue()
_thread: list[threading.Thread] = []
counts = {"made": 0, "taken": 0, "discarded": 0}
"""How many were made, used and thrown away (for tests and benchmarks)."""


def ready_enabled() -> bool:
    """Whether ready sandboxes are on (``NB_TOOLS_READY_SANDBOX`` is not ``0``)."""
    return os.environ.get(READY_ENV, "1") != "0"


def _key(policy: SandboxPolicy, cwd: str, env: Mapping[str, str] | None) -> _Key:
    return (policy, cwd, tuple(sorted(env.items())) if env is not None else None)


def _usable(policy: SandboxPolicy) -> bool:
    """Only a call without a click: read-only, the system and the workspace only."""
    return policy.mode == "read-only" and policy.system_only and not policy.network


def make_ready(
    policy: SandboxPolicy,
    *,
    cwd: str | os.PathLike[str],
    env: Mapping[str, str] | None = None,
    after: threading.Event | None = None,
) -> None:
    """Have a ready sandbox made for the next ``bash -c`` under ``policy`` in ``cwd`` (in
    the background; nothing when one is kept or being made, or when switched off);
    ``after``: once that is set (the workspace's scan read: :func:`~._scan.warm_up`), at
    most a minute later."""
    if not ready_enabled() or not _usable(policy):
        return
    key = _key(policy, os.fspath(cwd), env)
    with _lock:
        if key in _slots:
            return
        fut: concurrent.futures.Future[_Ready | None] = concurrent.futures.Future()
        _slots[key] = fut
        if not _thread or not _thread[0].is_alive():
            _thread[:] = [threading.Thread(target=_work, name="nb_tools-ready", daemon=True)]
            _thread[0].start()
    _queue.put((key, policy, os.fspath(cwd), dict(env) if env is not None else None, after))


def _work() -> None:
    """The long-lived thread that makes them: bubblewrap's ``--die-with-parent`` fires when
    the thread that started it ends, so it must outlive them."""
    while True:
        item = _queue.get()
        if item is None:
            return
        key, policy, cwd, env, after = item
        made: _Ready | None = None
        if after is not None:
            after.wait(60)
        try:
            made = _make(policy, cwd, env)
        except Exception:  # a call that comes starts cold (and says why, if it fails too)
            made = None
        with _lock:
            fut = _slots.get(key)
            if isinstance(fut, concurrent.futures.Future) and made is not None:
                _slots[key] = made
                _trim()
            elif isinstance(fut, concurrent.futures.Future):
                del _slots[key]
            elif made is not None:  # closed meanwhile
                _kill(made)
                made = None
        if isinstance(fut, concurrent.futures.Future):
            fut.set_result(made)


def _make(policy: SandboxPolicy, cwd: str, env: dict[str, str] | None) -> _Ready | None:
    made_at = generation()  # before the launch reads the scans: a change since shows
    go_r, go_w = os.pipe()
    args = os.memfd_create("nb_tools-ready", os.MFD_CLOEXEC)
    try:
        shim = ["bash", "--norc", "--noprofile", "-c", _SHIM.format(go=go_r, args=args)]
        launch = prepare(shim, policy, cwd=cwd, env=env)
        n = len(launch.argv) - len(shim)
        prefix = launch.argv[:n]
        stats = _mount_paths(prefix)
        if not launch.sandboxed or stats is None or prefix[-1:] != ["--"]:
            raise _NotReady
        before = [(p, _stat(p)) for p in stats]  # before the mounts are made
        proc = subprocess.Popen(
            launch.argv,
            cwd=launch.cwd,
            env=launch.env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            bufsize=0,
            pass_fds=(go_r, args),
            process_group=0,
        )
    except _NotReady:
        for fd in (go_r, go_w, args):
            os.close(fd)
        return None
    except BaseException:
        for fd in (go_r, go_w, args):
            os.close(fd)
        raise
    os.close(go_r)
    counts["made"] += 1
    return _Ready(
        launch=launch,
        prefix=prefix,
        stats=before,
        made_at=made_at,
        proc=proc,
        go=go_w,
        args=args,
        owner=os.getpid(),
    )


class _NotReady(Exception):
    """The command line has an option the freshness check does not know."""


def _mount_paths(prefix: list[str]) -> list[str] | None:
    """The paths the options of ``prefix`` (bubblewrap's, then ``--``) name; ``None`` for an
    option not known here."""
    out: list[str] = []
    i = 1
    while i < len(prefix) - 1:
        opt = prefix[i]
        if opt in _PATHS:
            out += prefix[i + 1 : i + 1 + _PATHS[opt]]
            i += 1 + _PATHS[opt]
        elif opt in _VALUES:
            i += 1 + _VALUES[opt]
        elif opt in _FLAGS:
            i += 1
        else:
            return None
    return out


def _stat(path: str) -> _Stat:
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return (st.st_dev, st.st_ino)


async def take_ready(
    policy: SandboxPolicy,
    launch: Launch,
    argv: list[str],
    *,
    cwd: str | os.PathLike[str],
    env: Mapping[str, str] | None = None,
) -> subprocess.Popen[bytes] | None:
    """The ready sandbox made for ``policy``, ``cwd`` and ``env``, running ``argv`` (the
    command after bubblewrap's ``--`` in ``launch``, the call's own prepared launch), if
    it is still fresh (see the module's text); ``None``: start the call cold. Waits up to
    :data:`WAIT_FOR_READY` for one still being made."""
    if not ready_enabled() or not _usable(policy):
        return None
    key = _key(policy, os.fspath(cwd), env)
    with _lock:
        slot = _slots.get(key)
    if isinstance(slot, concurrent.futures.Future) and WAIT_FOR_READY > 0:
        with contextlib.suppress(TimeoutError, asyncio.TimeoutError):
            await asyncio.wait_for(asyncio.shield(asyncio.wrap_future(slot)), WAIT_FOR_READY)
    with _lock:
        slot = _slots.get(key)
        if not isinstance(slot, _Ready):
            return None
        del _slots[key]
    # the command as the call's launch runs it (its program resolved, as a cold call's)
    argv = launch.argv[len(launch.argv) - len(argv) :] if len(launch.argv) > len(argv) else []
    try:  # what Popen would pass (a NUL inside an argument cannot be passed)
        data = b"".join(os.fsencode(a) + b"\0" for a in argv)
    except (UnicodeError, TypeError):
        data = b""
    if not data or any("\0" in a for a in argv) or not _fresh(slot, launch, argv):
        _kill(slot)
        counts["discarded"] += 1
        return None
    try:
        os.pwrite(slot.args, data, 0)
        os.write(slot.go, b"1")
    except OSError:
        _kill(slot)
        counts["discarded"] += 1
        return None
    os.close(slot.args)
    os.close(slot.go)
    counts["taken"] += 1
    return slot.proc


def _fresh(ready: _Ready, launch: Launch, argv: list[str]) -> bool:
    return (
        _alive(ready)
        and _same_launch(ready, launch, argv)
        and _same_scans(ready)
        and _same_mounts(ready)
    )


def _alive(ready: _Ready) -> bool:
    return ready.owner == os.getpid() and ready.proc.poll() is None


def _same_launch(ready: _Ready, launch: Launch, argv: list[str]) -> bool:
    """The call's launch is the ready one's but for the command after ``--``."""
    n = len(launch.argv) - len(argv)
    if launch.argv[n:] != argv or launch.argv[:n] != ready.prefix:
        return False
    return dataclasses.replace(launch, argv=[]) == dataclasses.replace(ready.launch, argv=[])


def _same_scans(ready: _Ready) -> bool:
    return generation() == ready.made_at


def _same_mounts(ready: _Ready) -> bool:
    return all(_stat(p) == before for p, before in ready.stats)


def _kill(ready: _Ready) -> None:
    """End a ready sandbox (bubblewrap's group; its namespace dies with it) and reap it."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(ready.proc.pid, signal.SIGKILL)
    with contextlib.suppress(ChildProcessError, subprocess.TimeoutExpired):
        ready.proc.wait(timeout=5)
    if ready.proc.stdout is not None:
        ready.proc.stdout.close()
    for fd in (ready.go, ready.args):
        with contextlib.suppress(OSError):
            os.close(fd)


def _trim() -> None:
    """Keep at most :data:`MAX_READY` (the caller holds the lock)."""
    made = [k for k, v in _slots.items() if isinstance(v, _Ready)]
    for k in made[: max(0, len(made) - MAX_READY)]:
        old = _slots.pop(k)
        if isinstance(old, _Ready):
            _kill(old)


def close_ready(cwd: str | os.PathLike[str] | None = None) -> int:
    """Kill the ready sandboxes (those for ``cwd`` only, if given); how many. One still
    being made is killed when it is (its slot is gone)."""
    want = None if cwd is None else os.fspath(cwd)
    with _lock:
        gone = [_slots.pop(k) for k in list(_slots) if want in (None, k[1])]
    for r in gone:
        if isinstance(r, _Ready) and r.owner == os.getpid():
            _kill(r)
        elif isinstance(r, concurrent.futures.Future) and not r.done():
            r.set_result(None)
    return sum(isinstance(r, _Ready) for r in gone)


def _after_fork() -> None:
    """A forked child owns none of them (they are its parent's to use and to kill)."""
    global _lock
    _lock = threading.Lock()
    _slots.clear()
    _thread.clear()
    while not _queue.empty():
        _queue.get_nowait()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork)
atexit.register(close_ready)


def wait_ready(cwd: str | os.PathLike[str], within: float = 10.0) -> bool:
    """Wait until a ready sandbox for ``cwd`` is set up: its shim runs inside (bubblewrap
    made every mount before it started it); whether one is (for tests and benchmarks)."""
    import time

    want = os.fspath(cwd)
    end = time.monotonic() + within
    while time.monotonic() < end:
        with _lock:
            pids = [v.proc.pid for k, v in _slots.items() if isinstance(v, _Ready) and k[1] == want]
        if pids and _shim_under(pids[0]):
            return True
        time.sleep(0.005)
    return False


def _shim_under(pid: int) -> bool:
    """Whether a process below ``pid`` (bubblewrap: its PID namespace's init, then the
    shim) runs the shim."""
    parents: dict[int, int] = {}
    shims = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                ppid = int(f.read().rsplit(b")", 1)[1].split()[1])
            with open(f"/proc/{name}/cmdline", "rb") as f:
                cmdline = f.read()
        except (OSError, ValueError, IndexError):
            continue
        parents[int(name)] = ppid
        # the shim's program as the launch gives it: "bash", or its path resolved
        if b"bash\0--norc\0--noprofile\0-c\0" in cmdline and b"mapfile" in cmdline:
            shims.append(int(name))
    for s in shims:
        p = s
        for _ in range(3):
            p = parents.get(p, 0)
            if p == pid:
                return True
    return False
