"""Protected paths: files whose change runs code, grants access or rewrites the rules.

A write to one of these asks a person even under the ``auto`` policy (the tools report it
through ``is_protected_call``), and a write whose target became protected after it was
approved fails. Each entry is a sequence of component globs that protects every path
holding those components in a row (``(".git",)`` protects ``.git`` and everything under
it, anywhere in the path); the reason says what a write there could do.

Names are compared after the same folding a permissive file system could apply, so that a
spelling the OS treats as the same file cannot slip by (a false positive costs one click):

* case: ``.GIT`` is ``.git`` on macOS and Windows (Linux is case-sensitive; we fold anyway);
* Unicode: NFKC (macOS stores NFD; full-width ``．ｇｉｔ`` folds to ``.git``);
* ignorable code points (format characters such as U+200C, U+FEFF), which HFS+ drops;
* trailing dots and spaces, which Windows drops (``.git.`` and ``.git `` are ``.git``);
* an NTFS stream suffix (``.git::$INDEX_ALLOCATION`` is the folder ``.git``).
"""

from __future__ import annotations

import fnmatch
import unicodedata
from collections.abc import Sequence

__all__ = ["PROTECTED", "fold_name", "protected_reason"]

_RC_FILES = (
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".bash_logout",
    ".profile",
    ".zshrc",
    ".zshenv",
    ".zprofile",
    ".zlogin",
    ".zlogout",
    ".cshrc",
    ".tcshrc",
    ".kshrc",
    ".login",
    ".logout",
    ".inputrc",
)

# (component globs, why a write there is dangerous). Patterns are already folded.
PROTECTED: tuple[tuple[tuple[str, ...], str], ...] = (
    ((".git",), "git runs hooks and reads config (fsmonitor, diff drivers) from .git/"),
    (("git~1",), "the NTFS short name of .git"),
    ((".hg",), "Mercurial runs hooks from .hg/hgrc"),
    ((".gitconfig",), "git config runs programs (core.fsmonitor, aliases, pagers)"),
    ((".git-credentials",), "git's stored passwords and tokens"),
    ((".nb_tools",), "nb_tools' own permission rules (.nb_tools/settings.json)"),
    ((".config", "nb_tools"), "nb_tools' user-level permission rules"),
    ((".ipython",), "IPython profiles: startup/ scripts and config run in every kernel"),
    (("profile_*", "startup"), "IPython startup scripts run in every kernel of the profile"),
    (("ipython_*config.py",), "IPython config files are Python run at start-up"),
    (("ipython_*config.json",), "IPython config (exec_lines, extensions) runs code"),
    ((".jupyter",), "Jupyter config runs code when Jupyter starts"),
    (("jupyter_*config.py",), "Jupyter config files are Python run at start-up"),
    (("jupyter_*config.json",), "Jupyter config can change what the server runs"),
    ((".local", "share", "jupyter"), "kernel specs and the runtime folder (connection keys)"),
    (("kernels", "*", "kernel.json"), "a kernel spec names the command a kernel runs"),
    ((".env*",), "environment files hold secrets; direnv runs .envrc"),
    *(((name,), "a shell start-up file runs in the user's next shell") for name in _RC_FILES),
    ((".ssh",), "SSH keys and authorized_keys"),
    ((".gnupg",), "GnuPG keys"),
    ((".aws",), "AWS credentials"),
    ((".netrc",), "passwords for ftp, curl, git over http"),
    ((".pypirc",), "PyPI upload tokens"),
    ((".npmrc",), "npm tokens"),
    (("site-packages", "*.pth"), "a .pth file in site-packages runs code at Python start-up"),
    (("dist-packages", "*.pth"), "a .pth file in dist-packages runs code at Python start-up"),
    (("sitecustomize.py",), "imported by every Python start-up"),
    (("usercustomize.py",), "imported by every Python start-up"),
)


def fold_name(name: str) -> str:
    """One path component as the most permissive file system would compare it."""
    text = unicodedata.normalize("NFKC", name)
    text = "".join(c for c in text if unicodedata.category(c) != "Cf")
    text = text.casefold()
    if ":" in text:  # NTFS alternate data stream: the part before names the file
        text = text.split(":", 1)[0]
    stripped = text.rstrip(" .")
    return stripped if stripped else text


def protected_reason(parts: Sequence[str]) -> str | None:
    """Why the path made of ``parts`` is protected, or ``None``."""
    folded = [fold_name(p) for p in parts if p not in ("", ".", "/")]
    for pattern, reason in PROTECTED:
        n = len(pattern)
        for i in range(len(folded) - n + 1):
            if all(fnmatch.fnmatchcase(folded[i + j], pattern[j]) for j in range(n)):
                return reason
    return None
