"""More protected paths: what a home folder holds besides the shell rc files.

The workspace is often a home folder (Jupyter started in ``~``: the kernel's working folder
is the default root). ``_protected`` lists the classic start-up files and credentials; this
module adds the rest of a home's files that run code later without anyone choosing to run
them (desktop and systemd sessions, fish, editors, language start-up files, a folder on
``PATH``, git's XDG config, Jupyter's config path and front-end extensions under any
prefix) and the credentials the bash sandbox hides from every process
(``nb_tools.sandbox._hide.HOME_SECRETS`` and ``SYSTEM_SECRET_FILES``, for a workspace at
``/``; Jupyter's runtime folder wherever it is), so that ``read_file`` and ``grep`` do not
hand them over without a click either. A false positive costs one click.

``protected_reason(parts)`` answers for both lists, with ``_protected``'s name folding.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Sequence

from nb_tools.builtin import _protected
from nb_tools.builtin._protected import fold_name

__all__ = ["ALL_PROTECTED", "HOME_PROTECTED", "protected_reason"]

_RUNS = "runs code in the user's next session or shell"
_SECRET = "holds credentials"

# (component globs, already folded; the reason). Matched anywhere in the path.
HOME_PROTECTED: tuple[tuple[tuple[str, ...], str], ...] = (
    ((".bash_aliases",), "sourced by the default .bashrc of Debian and Ubuntu"),
    ((".config", "git"), "git's XDG config runs programs (core.fsmonitor, pagers, aliases)"),
    ((".config", "fish"), "fish runs config.fish and conf.d/ at start-up"),
    ((".config", "autostart"), "desktop sessions run these at log-in"),
    ((".config", "systemd"), "systemd user services " + _RUNS),
    ((".config", "environment.d"), "sets the session's environment (LD_PRELOAD, PATH)"),
    ((".config", "nvim"), "Neovim runs its config at start-up"),
    ((".config", "pip"), "pip's index settings decide what code installs"),
    ((".local", "bin"), "on PATH (Debian/Ubuntu .profile): a file there shadows a command"),
    ((".xprofile",), _RUNS),
    ((".xinitrc",), _RUNS),
    ((".xsession",), _RUNS),
    ((".xsessionrc",), _RUNS),
    ((".pam_environment",), "sets the session's environment (LD_PRELOAD, PATH)"),
    ((".vimrc",), "Vim runs it at start-up"),
    ((".vim",), "Vim runs plugin/ and ftplugin/ scripts"),
    ((".emacs",), "Emacs runs it at start-up"),
    ((".emacs.d",), "Emacs runs init.el at start-up"),
    ((".tmux.conf",), "tmux runs run-shell lines at start-up"),
    ((".rprofile",), "R (and the R kernel) runs it at start-up"),
    ((".renviron",), "R's start-up environment"),
    ((".julia", "config"), "Julia runs config/startup.jl at start-up"),
    ((".yarnrc*",), "yarnPath names a script yarn runs"),
    ((".condarc",), "conda's channels decide what code installs"),
    (("pip.conf",), "pip's index settings decide what code installs"),
    (("etc", "jupyter"), "Jupyter's config path under a prefix (config and .d/ files)"),
    (("share", "jupyter"), "kernel specs and front-end extensions (JavaScript in the page)"),
    ((".docker",), _SECRET + " (registry auths; credsStore runs a helper)"),
    ((".kube",), _SECRET + " (kubeconfig; exec plugins run commands)"),
    ((".azure",), _SECRET),
    ((".config", "gcloud"), _SECRET),
    ((".config", "gh"), _SECRET + " (GitHub CLI tokens)"),
    ((".config", "hub"), _SECRET),
    ((".config", "op"), _SECRET + " (1Password CLI)"),
    ((".password-store",), _SECRET),
    ((".local", "share", "keyrings"), _SECRET),
    ((".pgpass",), _SECRET),
    ((".my.cnf",), _SECRET),
    ((".vault-token",), _SECRET),
    ((".terraform.d",), _SECRET),
    ((".*_history",), "shell and REPL history: commands typed with their secrets"),
    ((".cargo", "credentials*"), _SECRET),
    ((".kaggle",), _SECRET),
    ((".huggingface",), _SECRET),
    (("huggingface", "token"), _SECRET),
    ((".boto",), _SECRET),
    ((".s3cfg",), _SECRET),
    # A workspace at "/" (a container's working folder): the system's secrets, text files.
    (("etc", "shadow*"), "password hashes"),
    (("etc", "gshadow*"), "password hashes"),
    (("etc", "sudoers*"), "who may run what as root"),
    (("etc", "ssh", "ssh_host_*"), "the host's SSH keys"),
    (("etc", "security", "opasswd"), "old password hashes"),
    (("jupyter", "runtime"), "kernel connection files: their keys run code in the kernels"),
    # Every kernel starts as `python -m ipykernel_launcher` in its notebook's folder, and -m
    # looks in the working folder first: a file of that name there runs at the next start.
    (("ipykernel_launcher*",), "every kernel started in this folder runs it first"),
    (("ipykernel",), "the kernel's own code (`python -m ipykernel` runs a folder of this name)"),
)

ALL_PROTECTED = _protected.PROTECTED + HOME_PROTECTED


def protected_reason(parts: Sequence[str]) -> str | None:
    """Why the path made of ``parts`` is protected (``_protected``'s list, then this
    one), or ``None``."""
    reason = _protected.protected_reason(parts)
    if reason is not None:
        return reason
    folded = [fold_name(p) for p in parts if p not in ("", ".", "/")]
    for pattern, why in HOME_PROTECTED:
        n = len(pattern)
        for i in range(len(folded) - n + 1):
            if all(fnmatch.fnmatchcase(folded[i + j], pattern[j]) for j in range(n)):
                return why
    return None
