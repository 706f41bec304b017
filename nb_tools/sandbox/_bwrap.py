"""The bubblewrap command line for a policy.

The file system view is built in a fixed order (as codex-rs/linux-sandbox does): the
whole system read-only; private, empty folders over ``/tmp``, ``/run``, the home folders
and the Jupyter runtime folder; the system's secret files hidden; the workspace bound back
(read-only, or writable in ``workspace-write``) with the extra writable roots; then, inside
those, the paths that must stay read-only re-bound read-only, and the secrets (``.env*``,
``.ssh``, credentials of a home folder that lies inside) and every Unix socket hidden.
Mounts made later win, which is why the order matters.
"""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path

from nb_tools.sandbox._hide import (
    GIT_PROTECTED,
    HOME_SECRETS,
    WRITE_PROTECTED,
    coarse_masks,
    git_configs_with_credentials,
    home_dirs,
    outside_masks,
    repository_dirs,
    sanitized_git_config,
    scan_all,
    system_secret_files,
    toolchain_dirs,
    unix_sockets,
)
from nb_tools.sandbox._policy import SandboxPolicy

__all__ = ["bwrap_argv"]


def _under(path: Path, roots: list[Path]) -> bool:
    """``path`` is one of ``roots`` or inside one (all absolute and normalised: compared as
    strings, component-wise, which is what ``Path.is_relative_to`` does, only faster)."""
    s = str(path)
    for r in roots:
        t = str(r)
        if s == t or s.startswith(t.rstrip("/") + "/"):
            return True
    return False


# The kernel-wide settings under the new /proc. bubblewrap covers /proc/sys only when
# access(W_OK) says the folder is writable, which it does not (mode 0555) even where its
# files are: as root (uid 0 maps to the files' owner) `echo x > /proc/sys/kernel/core_pattern`
# then changes the host (a core_pattern of "|prog" runs prog as root outside the sandbox).
_PROC_READ_ONLY = (
    "--ro-bind-try", "/proc/sys", "/proc/sys",
    "--ro-bind-try", "/proc/sysrq-trigger", "/proc/sysrq-trigger",
)  # fmt: skip


def bwrap_argv(
    bwrap: str, policy: SandboxPolicy, argv: list[str], *, cwd: str | os.PathLike[str] | None
) -> list[str]:
    """``bwrap ... -- argv`` for ``policy`` (its mode must not be ``off``)."""
    if policy.mode == "off":
        raise ValueError("bwrap_argv: the policy's mode is 'off'; run the command directly")
    workspace = policy.workspace
    roots = [r for r in (workspace, *policy.writable_roots) if r is not None]
    writable = policy.mode == "workspace-write"
    confined = policy.system_only and not writable
    gitdirs: list[Path] = []
    if confined and workspace is not None:  # git reads its repository, read-only
        tops, gitdirs = repository_dirs(workspace)
        roots += [d for d in tops if not _under(d, roots)]
    roots = [r for r in dict.fromkeys(roots) if r.is_dir()]
    gitdirs = [g for g in dict.fromkeys(gitdirs) if not _under(g, roots)]
    out = [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", *_PROC_READ_ONLY]
    masks = coarse_masks() + [p for p in policy.hidden if p.is_dir()]
    if confined:  # only the system and the workspace: a link inside leads nowhere else
        masks += [m for m in outside_masks() if m not in masks]
    # A mask strictly inside a root goes on after the root's bind; one that is or holds a
    # root goes on before it (the root comes back on top).
    inside = [m for m in masks if m not in roots and _under(m, roots + gitdirs)]
    early = [m for m in masks if m not in inside]
    late = inside
    applied: list[Path] = []
    for m in sorted(early, key=lambda p: len(p.parts)):
        if not _under(m, applied):
            out += ["--tmpfs", str(m)]
            applied.append(m)
    tools = [t for t in toolchain_dirs(applied) if not _under(t, roots)]
    for t in tools:
        out += ["--ro-bind", str(t), str(t)]
    for f in system_secret_files():
        if f.is_file() and not _under(f, applied):
            out += ["--ro-bind", "/dev/null", str(f)]
    for r in roots:
        out += ["--bind" if writable else "--ro-bind", str(r), str(r)]
    for g in gitdirs:  # git's own folders: not scanned (objects), bound read-only
        out += ["--ro-bind", str(g), str(g)]
    found = {r: scan_all(r) for r in roots}
    scans = {r: (list(f.secrets), list(f.repos)) for r, f in found.items()}
    if writable:
        for r in roots:
            out += _protect(r, scans[r][1])
    hidden = _fine_secrets(roots, policy, scans) + _home_secrets_in(tools) + late
    if confined:  # no click: more credentials, and what the scan did not read, out of sight
        extra = [p for f in found.values() for p in (*f.protected, *f.unscanned, *f.linked)]
        hidden += [p for p in extra if os.path.lexists(p) and not os.path.islink(p)]
    late_binds: list[str] = []
    if confined:  # git reads its config; the credentials in it stay out of sight
        for cfg in git_configs_with_credentials(roots, gitdirs):
            clean = sanitized_git_config(cfg)
            late_binds += ["--ro-bind", str(clean), str(cfg)] if clean else _hide(cfg)
    for p in dict.fromkeys(hidden):
        out += _hide(p)
    out += late_binds
    visible_dead = applied  # masked folders hold nothing any more
    for sock in dict.fromkeys(unix_sockets()):
        if _under(sock, visible_dead) and not _under(sock, roots):
            continue
        if os.path.lexists(sock) and not os.path.islink(sock):
            out += ["--ro-bind", "/dev/null", str(sock)]
    chdir = os.path.realpath(os.fspath(cwd)) if cwd is not None else str(workspace or "/")
    out += ["--chdir", chdir]
    out += ["--unshare-all"]
    if policy.network:
        out += ["--share-net"]
    out += ["--die-with-parent", "--new-session", "--cap-drop", "ALL", "--"]
    return out + list(argv)


def _protect(root: Path, repos: list[Path]) -> list[str]:
    """Re-bind the code-running paths of a writable root read-only (creating the two that
    must exist to be protected). Each repository's ``.git`` is first bound onto itself, so
    that it is a mount point: it cannot be renamed away and replaced by a hostile one."""
    out: list[str] = []
    for repo in repos:
        dot = repo / ".git"
        if os.path.islink(dot):
            continue
        if dot.is_file():  # a linked worktree's pointer: rewritten, it sends the user's
            out += ["--ro-bind", str(dot), str(dot)]  # next git to a planted config
            continue
        out += ["--bind", str(dot), str(dot)]
        if dot.is_dir():
            _mkdir(dot / "hooks")
        for rel in GIT_PROTECTED:
            p = repo / rel
            if os.path.lexists(p):
                out += ["--ro-bind", str(p), str(p)]
    _mkdir(root / ".nb_tools")
    for rel in WRITE_PROTECTED:
        p = root / rel
        if os.path.lexists(p):
            out += ["--ro-bind", str(p), str(p)]
    for prefix in {os.path.realpath(p) for p in (sys.prefix, sys.exec_prefix)}:
        # The kernel's own environment (a .venv in the workspace): what it imports and
        # the programs in its bin/ run later outside the sandbox.
        if Path(prefix).is_relative_to(root) and os.path.isdir(prefix):
            out += ["--ro-bind", prefix, prefix]
    ipython = os.environ.get("IPYTHONDIR")
    if ipython:
        ip = Path(os.path.realpath(ipython))
        if ip.is_relative_to(root) and ip.exists():
            out += ["--ro-bind", str(ip), str(ip)]
    return out


def _mkdir(p: Path) -> None:
    if not os.path.lexists(p):
        with contextlib.suppress(OSError):
            p.mkdir()


def _fine_secrets(
    roots: list[Path], policy: SandboxPolicy, scans: dict[Path, tuple[list[Path], list[Path]]]
) -> list[Path]:
    out: list[Path] = []
    homes = home_dirs()
    for r in roots:
        out += scans[r][0]
        for home in homes:
            if home == r or home.is_relative_to(r) or r.is_relative_to(home):
                out += [home / rel for rel in HOME_SECRETS if _under(home / rel, [r])]
    out += [p for p in policy.hidden if _under(p, roots)]
    # A symlink is left alone: what it points to is hidden or visible on its own account.
    return [p for p in out if os.path.lexists(p) and not os.path.islink(p)]


def _home_secrets_in(folders: list[Path]) -> list[Path]:
    """Credentials inside the tool folders brought back from a home (``~/.cargo/credentials``)."""
    out: list[Path] = []
    for home in home_dirs():
        h = str(home).rstrip("/") + "/"
        for folder in folders:
            f = str(folder)
            if not f.startswith(h):
                continue
            rel = f[len(h) :] + "/"
            for secret in HOME_SECRETS:
                if (secret + "/").startswith(rel) or secret.startswith(rel):
                    p = h + secret
                    if os.path.lexists(p) and not os.path.islink(p):
                        out.append(Path(p))
    return out


def _hide(p: Path) -> list[str]:
    if p.is_dir() and not p.is_symlink():
        return ["--tmpfs", str(p), "--remount-ro", str(p)]
    return ["--ro-bind", "/dev/null", str(p)]
