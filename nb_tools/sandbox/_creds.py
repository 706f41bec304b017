"""What the sandboxed process may do by the file modes alone.

Inside the sandbox a command runs with the caller's user and groups, every capability
dropped (``--cap-drop ALL``) and ``no_new_privs`` set (bubblewrap sets it: a set-user-id
program gains nothing). So even root gets no ``CAP_DAC_OVERRIDE``: the owner's bits apply
to the owner, the group's to a member, the others' to the rest, and a file with an access
ACL is taken as allowed (not read here). This decides which system secret files need an
empty file bound over them (:mod:`._bwrap`) and which program ``execvp`` would run.
"""

from __future__ import annotations

import os
import stat

__all__ = ["R_BIT", "X_BIT", "resolve_program", "sandbox_may"]

R_BIT = 4
X_BIT = 1


def sandbox_may(st: os.stat_result, bit: int, path: str | None = None) -> bool:
    """Whether a sandboxed process of this process's user may ``bit`` (:data:`R_BIT`,
    :data:`X_BIT`) the file ``st`` describes, with no capability; ``path``: looked at for
    an access ACL (one there: ``True``)."""
    mode = st.st_mode
    if st.st_uid == os.geteuid():
        allowed = bool((mode >> 6) & bit)
    elif st.st_gid == os.getegid() or st.st_gid in os.getgroups():
        allowed = bool((mode >> 3) & bit)
    else:
        allowed = bool(mode & bit)
    if allowed or path is None:
        return allowed
    try:
        os.getxattr(path, "system.posix_acl_access")
    except OSError:
        return False
    return True  # an ACL may grant more than the mode says: not judged here


def resolve_program(name: str, path: str, visible: tuple[str, ...]) -> str | None:
    """The file ``execvp(name)`` inside the sandbox runs, with the sandbox's ``PATH``
    (``path``), when it lies in one of the folders ``visible`` (absolute, ending in "/";
    the same file inside the sandbox as outside) and is reached through no link, else
    ``None``. As ``execvp``: each entry
    in turn, skipping one where the name is missing or not executable by the sandbox (no
    capability); ``None`` as soon as an entry is relative (it depends on the folder the
    command starts in) or the hit is not in ``visible``."""
    if not name or "/" in name:
        return None
    for entry in path.split(":"):
        if not entry.startswith("/"):
            return None
        candidate = entry.rstrip("/") + "/" + name
        try:
            st = os.stat(candidate)
        except OSError:
            continue
        if not stat.S_ISREG(st.st_mode) or not sandbox_may(st, X_BIT, candidate):
            continue
        # Through no link (a link's target may be masked inside), and with the name as
        # given (a multi-call program reads its name).
        if candidate.startswith(visible) and os.path.realpath(candidate) == candidate:
            return candidate
        return None
    return None
