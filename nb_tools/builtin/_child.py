"""A child process whose output and exit the event loop watches itself: no thread, no
transport.

asyncio's subprocesses on CPython 3.11 start a thread per child to wait for its exit
(``ThreadedChildWatcher``) and read the pipe through a transport, a protocol and a stream:
each hand-over between that thread and the loop waits for the scheduler, which on a busy
machine is a large part of what a short command costs. Here the exit arrives through a
pidfd (``os.pidfd_open``, Linux 5.3 and later) registered with the loop's selector, and
the output through ``loop.add_reader`` on the pipe's non-blocking end. Where no pidfd can
be opened (another system, an older kernel, a seccomp filter), a waiter thread reports
the exit, as asyncio does.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import threading
import weakref
from collections.abc import Callable, Sequence

__all__ = ["Child", "pidfd_works"]

_READ = 1 << 18  # bytes per read of the pipe (asyncio's transports read as much)


def pidfd_works() -> bool:
    """Whether this system gives pidfds (``os.pidfd_open`` exists and the kernel has it)."""
    opener = getattr(os, "pidfd_open", None)
    if opener is None:
        return False
    try:
        os.close(opener(os.getpid()))
    except OSError:
        return False
    return True


class Child:
    """``argv`` started in its own process group (and, with ``new_session``, in a new
    session, without the kernel's controlling terminal), stdin from ``/dev/null``,
    stdout and stderr into one pipe whose bytes go to ``on_output`` as they arrive.

    ``exited`` completes with the exit status as :attr:`subprocess.Popen.returncode` gives
    it (negative: killed by that signal), or ``None`` when something else in the process
    reaped the child first (its status is lost). ``closed`` completes when the pipe reaches
    its end: every process holding it (background children too) closed it or ended. Must
    be made inside a running event loop; the pipe is drained to its end even after
    :meth:`stop_collecting`, so a writer never blocks on a full pipe."""

    def __init__(
        self,
        argv: Sequence[str],
        *,
        cwd: str,
        env: dict[str, str],
        on_output: Callable[[bytes], None],
        new_session: bool = True,
        started: subprocess.Popen[bytes] | None = None,
    ) -> None:
        self._loop = loop = asyncio.get_running_loop()
        self._on_output: Callable[[bytes], None] | None = on_output
        self.exited: asyncio.Future[int | None] = loop.create_future()
        self.closed: asyncio.Future[None] = loop.create_future()
        # ``started``: a process already running as this class starts one (its own process
        # group, stdin from /dev/null, stdout and stderr into one unbuffered pipe), adopted
        # instead (a ready sandbox: ``nb_tools.sandbox.take_ready``).
        self._proc = started or subprocess.Popen(
            argv,
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            bufsize=0,
            # A new session makes a new scheduler autogroup, which costs milliseconds on a
            # busy machine; a process group is enough to signal the tree. A caller whose
            # program makes its own session (bubblewrap's --new-session) asks for none.
            start_new_session=new_session,
            process_group=None if new_session else 0,
        )
        self.pid = self._proc.pid
        pipe = self._proc.stdout
        if pipe is None:  # pragma: no cover - stdout=PIPE always gives one
            raise RuntimeError("no output pipe")
        self._pipe = pipe
        self._close_pipe = weakref.finalize(self, pipe.close)  # also when dropped unread
        self._pidfd = -1
        reading = False
        try:
            os.set_blocking(pipe.fileno(), False)
            loop.add_reader(pipe.fileno(), self._read)
            reading = True
            try:
                self._pidfd = os.pidfd_open(self.pid)
                # Closed at the exit, or when the loop drops the child unfinished.
                self._close_pidfd = weakref.finalize(self, os.close, self._pidfd)
            except (AttributeError, OSError):
                threading.Thread(
                    target=self._wait_blocking, name="nb_tools-bash-wait", daemon=True
                ).start()
            else:
                loop.add_reader(self._pidfd, self._reap)
        except BaseException:  # a loop without add_reader (Windows' proactor): no orphan
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.pid, signal.SIGKILL)
            self._proc.wait()
            if reading:
                loop.remove_reader(pipe.fileno())
            self._close_pipe()
            if self._pidfd >= 0:
                self._close_pidfd()
            raise

    @property
    def returncode(self) -> int | None:
        """The exit status once ``exited`` is done (``None`` before, or if it was lost)."""
        return self.exited.result() if self.exited.done() else None

    def stop_collecting(self) -> None:
        """From now on the pipe's bytes are read and dropped."""
        self._on_output = None

    def _read(self) -> None:
        try:
            data = os.read(self._pipe.fileno(), _READ)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:  # the pipe broke: as good as its end
            data = b""
        if data:
            if self._on_output is not None:
                self._on_output(data)
            return
        self._loop.remove_reader(self._pipe.fileno())
        self._close_pipe()
        if not self.closed.done():
            self.closed.set_result(None)

    def _reap(self) -> None:
        """The pidfd is readable: the child has ended; collect its status."""
        try:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
        except ChildProcessError:  # reaped elsewhere: the status is lost
            self._exit(None)
            return
        if pid == self.pid:
            self._exit(os.waitstatus_to_exitcode(status))

    def _wait_blocking(self) -> None:
        """The fallback without pidfds, on its own thread."""
        try:
            _, status = os.waitpid(self.pid, 0)
            code: int | None = os.waitstatus_to_exitcode(status)
        except ChildProcessError:
            code = None
        with contextlib.suppress(RuntimeError):  # the loop is closed: nobody is waiting
            self._loop.call_soon_threadsafe(self._exit, code)

    def _exit(self, code: int | None) -> None:
        if self._pidfd >= 0:
            self._loop.remove_reader(self._pidfd)
            self._close_pidfd()
            self._pidfd = -1
        # Popen's own bookkeeping: it neither waits again nor warns that it still runs.
        self._proc.returncode = code if code is not None else 255
        if not self.exited.done():
            self.exited.set_result(code)
