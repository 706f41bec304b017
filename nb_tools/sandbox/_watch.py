"""Knowing that a scanned folder changed without looking at it again: Linux inotify.

One inotify instance per process watches every folder the secret scan read, for the
events that change what the scan would find: a name created, deleted or moved in or out
(``.env`` appears, a folder holding one is renamed in), the folder itself deleted or
moved, and a child's metadata (``IN_ATTRIB``: a file's link count changed). The kernel
queues an event inside the system call that made the change, before that call returns,
so a change finished before :meth:`Watcher.changed` is asked is always in its answer:
whoever made it (the user's code in the kernel, another process, a sandboxed call
through its bind mount: inotify watches inodes, not paths). Each event names the entry it
is about (or is about the watched folder itself), so the scan looks again at those names
only.

Where inotify cannot answer (not Linux, no ``libc``, out of watches, a network or FUSE
file system whose changes made elsewhere the local kernel never sees), :func:`watcher`
is ``None`` or :meth:`Watcher.add` fails, and the caller checks freshness itself.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import errno
import os
import struct
import sys
import threading

__all__ = ["Watcher", "watchable", "watcher"]

IN_MODIFY = 0x00000002
IN_ATTRIB = 0x00000004
IN_MOVED_FROM = 0x00000040
IN_MOVED_TO = 0x00000080
IN_CREATE = 0x00000100
IN_DELETE = 0x00000200
IN_DELETE_SELF = 0x00000400
IN_MOVE_SELF = 0x00000800
IN_UNMOUNT = 0x00002000
IN_Q_OVERFLOW = 0x00004000
IN_IGNORED = 0x00008000
IN_ONLYDIR = 0x01000000
IN_DONT_FOLLOW = 0x02000000
IN_NONBLOCK = os.O_NONBLOCK
IN_CLOEXEC = 0o2000000

MASK = (
    IN_ATTRIB
    | IN_MOVED_FROM
    | IN_MOVED_TO
    | IN_CREATE
    | IN_DELETE
    | IN_DELETE_SELF
    | IN_MOVE_SELF
    | IN_ONLYDIR
    | IN_DONT_FOLLOW
)
_SELF = IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED | IN_UNMOUNT
_EVENT = struct.Struct("iIII")  # wd, mask, cookie, len (then len bytes of name)

# File systems whose changes made on another machine (or by a FUSE daemon) raise no
# inotify event here: the scan checks them by stat-ing every folder instead.
_REMOTE = frozenset(
    {"nfs", "nfs4", "cifs", "smb3", "smbfs", "9p", "ceph", "glusterfs", "lustre", "gpfs",
     "afs", "virtiofs", "vboxsf", "vmhgfs", "davfs", "sshfs"}
)  # fmt: skip


class Watcher:
    """One inotify file descriptor; folders are watched by descriptor number (``wd``)."""

    def __init__(self, libc: ctypes.CDLL, fd: int) -> None:
        self._libc = libc
        self._fd = fd
        self._lock = threading.Lock()

    def add(self, folder: str) -> int:
        """Watch ``folder`` (not following a symlink); its ``wd``. Raises ``OSError`` when
        the kernel refuses (``ENOSPC``: out of watches; ``ENOENT``: gone)."""
        wd = self._libc.inotify_add_watch(self._fd, os.fsencode(folder), MASK)
        if wd < 0:
            code = ctypes.get_errno()
            raise OSError(code, os.strerror(code), folder)
        return int(wd)

    def remove(self, wd: int) -> None:
        self._libc.inotify_rm_watch(self._fd, wd)

    def changed(self) -> dict[int, set[str] | None] | None:
        """Every folder (``wd``) with an event since the last call, with the names in it
        the events were about; ``None`` for a folder whose own event came (it was deleted,
        moved or its metadata changed): it is to be read whole. ``None`` for the whole
        answer when the queue overflowed (events were lost: everything counts as
        changed)."""
        out: dict[int, set[str] | None] = {}
        lost = False
        with self._lock:
            while True:
                try:
                    data = os.read(self._fd, 65536)
                except BlockingIOError:
                    break
                except OSError as exc:
                    if exc.errno == errno.EINTR:
                        continue
                    return None
                if not data:
                    break
                i = 0
                while i + _EVENT.size <= len(data):
                    wd, mask, _cookie, size = _EVENT.unpack_from(data, i)
                    name = data[i + _EVENT.size : i + _EVENT.size + size].rstrip(b"\0")
                    i += _EVENT.size + size
                    if mask & IN_Q_OVERFLOW:
                        lost = True
                    elif wd < 0:
                        continue
                    elif not name or mask & _SELF:
                        out[wd] = None
                    else:
                        names = out.setdefault(wd, set())
                        if names is not None:
                            names.add(os.fsdecode(name))
        return None if lost else out


_state: list[Watcher | None] = []
_init_lock = threading.Lock()


def watcher() -> Watcher | None:
    """The process's watcher (made on first use), or ``None`` where inotify is missing."""
    with _init_lock:
        if _state and (_state[0] is None or _state[0]._fd >= 0):
            return _state[0]
        _state[:] = [_make()]
        return _state[0]


def _make() -> Watcher | None:
    if not sys.platform.startswith("linux"):
        return None
    name = ctypes.util.find_library("c") or "libc.so.6"
    try:
        libc = ctypes.CDLL(name, use_errno=True)
        init = libc.inotify_init1
    except (OSError, AttributeError):
        return None
    init.argtypes = [ctypes.c_int]
    libc.inotify_add_watch.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32]
    libc.inotify_rm_watch.argtypes = [ctypes.c_int, ctypes.c_int]
    fd = init(IN_NONBLOCK | IN_CLOEXEC)
    if fd < 0:
        return None
    with contextlib.suppress(AttributeError):
        os.register_at_fork(after_in_child=_forget)  # a child has its own events to miss
    return Watcher(libc, fd)


def _forget() -> None:
    _state.clear()


def watchable(path: str) -> bool:
    """Whether changes under ``path`` reach this machine's inotify: the file system that
    holds it, and every one mounted inside it, is a local one (``/proc/self/mountinfo``)."""
    best, kind = "", ""
    inner: list[str] = []
    top = path.rstrip("/") + "/"
    try:
        with open("/proc/self/mountinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                left, _, right = line.partition(" - ")
                fields = left.split()
                if len(fields) < 5 or not right:
                    continue
                mount = fields[4].replace("\\040", " ")
                fs = right.split()[0]
                if mount.startswith(top):
                    inner.append(fs)
                elif (path == mount or path.startswith(mount.rstrip("/") + "/")) and len(
                    mount
                ) >= len(best):
                    best, kind = mount, fs
    except OSError:
        return False
    return bool(best) and not any(_remote(k) for k in (kind, *inner))


def _remote(kind: str) -> bool:
    return kind in _REMOTE or kind.startswith("fuse")
