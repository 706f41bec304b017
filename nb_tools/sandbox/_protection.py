"""The one protection table: what runs later outside the sandbox, what holds credentials,
what grants permissions, which secret stores exist; and its matcher, compiled once.

Each :class:`Entry` is a path pattern (component globs: ``*`` and ``?`` within one
name), what it is (:data:`KINDS`), why, and where it applies (:data:`WHERE`). A pattern
matches every path that holds its components in a row, at any depth: ``.git`` protects
``.git`` and everything under it, ``kernels/*/kernel.json`` every kernel spec. The file
tools ask before a write (and a read) of a matching path; ``grep`` never shows one; the
sandbox hides the secrets (:attr:`Entry.secret`) from its processes, keeps the rest
read-only in ``workspace-write`` and removes a new one a call created; the docs' table is
generated from it (``scripts/protection_table.py``).

Names are compared after the folding a permissive file system could apply, so that a
spelling the OS treats as the same file cannot slip by (a false positive costs one click),
and a copy of a file is matched as that file: Jupyter's checkpoint
(``.ipynb_checkpoints/.netrc-checkpoint``) and a backup (``.netrc.bak``, ``kaggle.json~``):
case (``.GIT`` is ``.git`` on macOS and Windows), Unicode NFKC (full-width ``．ｇｉｔ``),
ignorable format characters (U+200C, U+FEFF, which HFS+ drops), trailing dots and spaces
(Windows drops them: ``.git.``), an NTFS stream suffix (``.git::$INDEX_ALLOCATION``).
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

__all__ = [
    "KINDS",
    "TABLE",
    "WHERE",
    "Entry",
    "Matcher",
    "fold_name",
    "is_secret",
    "matcher",
    "protection_of",
    "write_protected",
]

Kind = Literal["runs-later", "credentials", "permissions", "secret-store"]
Where = Literal["any depth", "home folder", "repository", "system"]

KINDS: dict[str, str] = {
    "runs-later": "runs code later, outside the sandbox, without anyone choosing to run it",
    "credentials": "holds credentials (keys, tokens, passwords)",
    "permissions": "grants permissions (nb_tools' rules, who may run what)",
    "secret-store": "a store of secrets (history, cookies, saved logins, key rings)",
}
WHERE: dict[str, str] = {
    "any depth": "matched anywhere in a path",
    "home folder": (
        "what a home folder holds; matched at any depth (a copy of a home is one too), and "
        "under a home folder inside the workspace looked up even past the scan's cap"
    ),
    "repository": "a repository's own folder, matched at any depth",
    "system": (
        "the system's files (for a workspace at /); matched at any depth, and the real "
        "ones are hidden from every sandboxed call"
    ),
}


@dataclass(frozen=True, kw_only=True)
class Entry:
    """One row of the table. ``pattern``: component globs joined by ``/``, as the OS spells
    them (folded when compiled). ``example``: a path (relative) this entry protects, which
    the tests write and read. ``build``: an approved sandboxed call still sees it outside a
    home folder (a build reads its settings: ``.npmrc``, ``.gitconfig``)."""

    pattern: str
    kind: Kind
    where: Where
    reason: str
    example: str
    build: bool = False

    @property
    def parts(self) -> tuple[str, ...]:
        return tuple(self.pattern.split("/"))

    @property
    def removes_new(self) -> bool:
        """A writable sandboxed call that creates it has it removed afterwards: what runs
        later or grants permissions, and the credentials files a tool reads (dot-named);
        not data a program makes that holds a secret (``terraform.tfstate``)."""
        return self.kind in ("runs-later", "permissions") or (
            self.kind == "credentials" and self.pattern.startswith(".")
        )

    @property
    def secret(self) -> bool:
        """Its content must not reach a process or a model without a click."""
        return self.kind in ("credentials", "secret-store") or self.where == "system"


def _e(pattern: str, kind: Kind, where: Where, reason: str, example: str = "", **kw: bool) -> Entry:
    return Entry(
        pattern=pattern, kind=kind, where=where, reason=reason, example=example or pattern, **kw
    )


_RUNS = "runs code in the user's next session or shell"
_SECRET = "holds credentials"
_RC = (".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile", ".zshrc",
       ".zshenv", ".zprofile", ".zlogin", ".zlogout", ".cshrc", ".tcshrc", ".kshrc",
       ".login", ".logout", ".inputrc")  # fmt: skip

TABLE: tuple[Entry, ...] = (
    # -- repositories -------------------------------------------------------------------
    _e(".git", "runs-later", "repository",
       "git runs hooks and reads config (fsmonitor, diff drivers) from .git/", ".git/config"),
    _e("git~1", "runs-later", "repository", "the NTFS short name of .git", "git~1/config"),
    _e(".hg", "runs-later", "repository", "Mercurial runs hooks from .hg/hgrc", ".hg/hgrc"),
    # -- nb_tools' own rules -------------------------------------------------------------
    _e(".nb_tools", "permissions", "any depth",
       "nb_tools' permission rules (.nb_tools/settings.json)", ".nb_tools/settings.json"),
    _e(".config/nb_tools", "permissions", "home folder", "nb_tools' user-level permission rules",
       ".config/nb_tools/settings.json"),
    _e("AGENTS.md", "permissions", "any depth",
       "project instructions, read into the agent's system prompt", "AGENTS.md"),
    _e("CLAUDE.md", "permissions", "any depth",
       "project instructions, read into the agent's system prompt", "CLAUDE.md"),
    # -- Python and Jupyter start-up -----------------------------------------------------
    _e(".ipython", "runs-later", "home folder",
       "IPython profiles: startup/ scripts and config run in every kernel",
       ".ipython/profile_default/startup/00-x.py"),
    _e("profile_*/startup", "runs-later", "any depth",
       "IPython startup scripts run in every kernel of the profile", "profile_x/startup/0.py"),
    _e("ipython_*config.py", "runs-later", "any depth",
       "IPython config files are Python run at start-up", "ipython_config.py"),
    _e("ipython_*config.json", "runs-later", "any depth",
       "IPython config (exec_lines, extensions) runs code", "ipython_config.json"),
    _e(".jupyter", "runs-later", "home folder", "Jupyter config runs code when Jupyter starts",
       ".jupyter/jupyter_config.py"),
    _e("jupyter_*config.py", "runs-later", "any depth",
       "Jupyter config files are Python run at start-up", "jupyter_server_config.py"),
    _e("jupyter_*config.json", "runs-later", "any depth",
       "Jupyter config can change what the server runs", "jupyter_server_config.json"),
    _e(".config/jupyter", "runs-later", "home folder",
       "Jupyter's config folder with JUPYTER_PLATFORM_DIRS=1 (config runs code)",
       ".config/jupyter/jupyter_server_config.py"),
    _e("jupyter_*config.d", "runs-later", "any depth",
       "Jupyter reads every file in a config.d folder as config",
       "conf/jupyter_server_config.d/x.json"),
    _e(".local/share/jupyter", "runs-later", "home folder",
       "kernel specs and the runtime folder (connection keys)",
       ".local/share/jupyter/kernels/x/kernel.json"),
    _e("kernels/*/kernel.json", "runs-later", "any depth",
       "a kernel spec names the command a kernel runs", "share/kernels/py/kernel.json"),
    _e("etc/jupyter", "runs-later", "any depth",
       "Jupyter's config path under a prefix (config and .d/ files)",
       "venv/etc/jupyter/jupyter_server_config.d/x.json"),
    _e("share/jupyter", "runs-later", "any depth",
       "kernel specs and front-end extensions (JavaScript in the page)",
       "venv/share/jupyter/labextensions/x/static/remoteEntry.js"),
    _e("jupyter/runtime", "credentials", "any depth",
       "kernel connection files: their keys run code in the kernels",
       "run/jupyter/runtime/kernel-1.json"),
    _e("kernel-*.json", "credentials", "any depth",
       "a kernel connection file: its key lets any program run code in the kernel",
       "kernel-v3e1f.json"),
    _e("jpserver-*.json", "credentials", "any depth",
       "a Jupyter server's info file: its token runs code through the server",
       "jpserver-4242.json"),
    _e("nbserver-*.json", "credentials", "any depth",
       "a classic notebook server's info file: its token runs code through the server",
       "nbserver-4242.json"),
    _e("jupyter_cookie_secret", "credentials", "any depth",
       "signs the Jupyter server's login cookies"),
    _e("site-packages/*.pth", "runs-later", "any depth",
       "a .pth file in site-packages runs code at every Python start-up",
       ".venv/lib/python3/site-packages/x.pth"),
    _e("dist-packages/*.pth", "runs-later", "any depth",
       "a .pth file in dist-packages runs code at every Python start-up",
       ".local/lib/python3/dist-packages/x.pth"),
    _e("sitecustomize*", "runs-later", "any depth", "imported by every Python start-up",
       "sitecustomize.py"),
    _e("usercustomize*", "runs-later", "any depth", "imported by every Python start-up",
       "usercustomize.py"),
    # `python -m ipykernel_launcher` runs in the notebook's folder, and -m looks there first.
    _e("ipykernel_launcher*", "runs-later", "any depth",
       "every kernel started in this folder runs it first", "analysis/ipykernel_launcher.py"),
    _e("ipykernel", "runs-later", "any depth",
       "the kernel's own code (`python -m ipykernel` runs a folder of this name)",
       "ipykernel/__main__.py"),
    _e("ipykernel.*", "runs-later", "any depth",
       "`python -m ipykernel` runs a module of this name in the working folder",
       "ipykernel.py"),
    # matplotlib reads ./matplotlibrc in the kernel's working folder (then MPLCONFIGDIR's and
    # ~/.config/matplotlib's): `backend: module://helper` imports helper.py at the next plot.
    _e("matplotlibrc", "runs-later", "any depth",
       "matplotlib reads it from the kernel's working folder at the next plot: "
       "`backend: module://name` imports a module of that name in the kernel",
       "analysis/matplotlibrc"),
    # VS Code runs what a folder's settings and tasks name: jupyter.runStartupCommands in
    # every kernel it starts there, a task with runOn: folderOpen when the folder opens.
    _e(".vscode/settings.json", "runs-later", "any depth",
       "VS Code runs `jupyter.runStartupCommands` in every kernel it starts for the folder"),
    _e(".vscode/tasks.json", "runs-later", "any depth",
       "VS Code runs a task with `runOn: folderOpen` when the folder is opened"),
    # -- git hook managers: installed hooks run what these files name at the next commit --
    _e(".pre-commit-config.yaml", "runs-later", "any depth",
       "pre-commit's installed git hook runs the commands it names (a local hook's entry)"),
    _e("*lefthook*", "runs-later", "any depth",
       "lefthook's installed git hooks run the commands it names", "lefthook.yml"),
    # -- shell, desktop and editor start-up ----------------------------------------------
    *(_e(n, "runs-later", "home folder", "a shell start-up file runs in the user's next shell")
      for n in _RC),
    _e(".bash_aliases", "runs-later", "home folder",
       "sourced by the default .bashrc of Debian and Ubuntu"),
    _e(".config/git/credentials", "credentials", "home folder",
       "git's stored passwords and tokens (XDG)"),
    _e(".config/git", "runs-later", "home folder",
       "git's XDG config runs programs (core.fsmonitor, pagers, aliases)", ".config/git/config"),
    _e(".gitconfig", "credentials", "home folder",
       "git config runs programs (core.fsmonitor, aliases) and may hold tokens", build=True),
    _e(".config/fish", "runs-later", "home folder", "fish runs config.fish and conf.d/",
       ".config/fish/config.fish"),
    _e(".config/autostart", "runs-later", "home folder", "desktop sessions run these at log-in",
       ".config/autostart/x.desktop"),
    _e(".config/systemd", "runs-later", "home folder", "systemd user services " + _RUNS,
       ".config/systemd/user/x.service"),
    _e(".config/environment.d", "runs-later", "home folder",
       "sets the session's environment (LD_PRELOAD, PATH)", ".config/environment.d/10-x.conf"),
    _e(".config/nvim", "runs-later", "home folder", "Neovim runs its config at start-up",
       ".config/nvim/init.lua"),
    _e(".local/bin", "runs-later", "home folder",
       "on PATH (Debian/Ubuntu .profile): a file there shadows a command", ".local/bin/git"),
    *(_e(n, "runs-later", "home folder", _RUNS)
      for n in (".xprofile", ".xinitrc", ".xsession", ".xsessionrc")),
    _e(".pam_environment", "runs-later", "home folder",
       "sets the session's environment (LD_PRELOAD, PATH)"),
    _e(".vimrc", "runs-later", "home folder", "Vim runs it at start-up"),
    _e(".vim", "runs-later", "home folder", "Vim runs plugin/ and ftplugin/ scripts",
       ".vim/plugin/x.vim"),
    _e(".emacs", "runs-later", "home folder", "Emacs runs it at start-up"),
    _e(".emacs.d", "runs-later", "home folder", "Emacs runs init.el at start-up",
       ".emacs.d/init.el"),
    _e(".tmux.conf", "runs-later", "home folder", "tmux runs run-shell lines at start-up"),
    _e(".Rprofile", "runs-later", "home folder", "R (and the R kernel) runs it at start-up"),
    _e(".Renviron", "runs-later", "home folder", "R's start-up environment"),
    _e(".julia/config", "runs-later", "home folder", "Julia runs config/startup.jl",
       ".julia/config/startup.jl"),
    _e(".yarnrc*", "runs-later", "home folder", "yarnPath names a script yarn runs",
       ".yarnrc.yml", build=True),
    # -- package indexes: what installs, often with a token --------------------------------
    _e(".condarc", "credentials", "home folder",
       "conda's channels decide what code installs (and may carry a token)", build=True),
    _e("pip.conf", "credentials", "any depth",
       "pip's index decides what code installs; an index URL may carry a password",
       ".config/pip/pip.conf", build=True),
    _e(".config/pip", "credentials", "home folder",
       "pip's index settings (an index URL may carry a password)", ".config/pip/pip.ini",
       build=True),
    _e("pip.ini", "credentials", "any depth",
       "pip's settings on Windows (%APPDATA%\\pip\\pip.ini): an index URL may carry a password",
       "AppData/Roaming/pip/pip.ini", build=True),
    _e(".pypirc", "credentials", "home folder", "PyPI upload tokens", build=True),
    _e(".npmrc", "credentials", "home folder", "npm tokens", build=True),
    _e(".continuum", "credentials", "home folder", "anaconda-client tokens",
       ".continuum/anaconda-client/tokens/x.token"),
    # -- credentials, at any depth ---------------------------------------------------------
    _e(".env*", "credentials", "any depth", "environment files hold secrets; direnv runs .envrc",
       ".env"),
    _e(".ssh", "credentials", "any depth", "SSH keys and authorized_keys", ".ssh/id_ed25519"),
    _e(".gnupg", "credentials", "any depth", "GnuPG keys", ".gnupg/private-keys-v1.d/x.key"),
    _e(".aws", "credentials", "any depth", "AWS credentials", ".aws/credentials"),
    _e(".docker", "credentials", "any depth",
       _SECRET + " (registry auths; credsStore runs a helper)", ".docker/config.json"),
    _e(".kube", "credentials", "any depth", _SECRET + " (kubeconfig; exec plugins run commands)",
       ".kube/config"),
    _e(".netrc", "credentials", "any depth", "passwords for ftp, curl, git over http"),
    _e(".git-credentials", "credentials", "any depth", "git's stored passwords and tokens"),
    _e(".pgpass", "credentials", "any depth", "PostgreSQL passwords"),
    _e("postgresql/pgpass.conf", "credentials", "any depth",
       "PostgreSQL passwords (Windows: %APPDATA%\\postgresql\\pgpass.conf)",
       "AppData/Roaming/postgresql/pgpass.conf"),
    _e("_netrc", "credentials", "any depth",
       "the Windows name of .netrc: passwords for curl and git over http"),
    _e(".streamlit/secrets.toml", "credentials", "any depth", "Streamlit's app secrets"),
    _e("*.tfstate*", "credentials", "any depth",
       "Terraform state holds every resource's secrets in clear", "infra/terraform.tfstate"),
    _e("*.tfvars", "credentials", "any depth",
       "Terraform variables files hold passwords and keys in clear", "infra/terraform.tfvars"),
    _e("*.tfvars.json", "credentials", "any depth",
       "Terraform variables files hold passwords and keys in clear", "infra/prod.tfvars.json"),
    _e("*service?account*.json", "credentials", "any depth", "a cloud service-account key",
       "keys/my-service-account.json"),
    _e("*sa?key*.json", "credentials", "any depth", "a cloud service-account key",
       "keys/prod-sa-key.json"),
    _e("*credentials*.json", "credentials", "any depth",
       "cloud credentials (application_default_credentials.json, OAuth clients)",
       "application_default_credentials.json"),
    _e("client_secret*.json", "credentials", "any depth", "an OAuth client secret",
       "client_secret_1.json"),
    _e("kaggle.json", "credentials", "any depth", "the Kaggle API token"),
    _e("rclone.conf", "credentials", "any depth", "rclone's remotes with their tokens",
       ".config/rclone/rclone.conf"),
    _e(".databrickscfg", "credentials", "any depth", "Databricks tokens"),
    _e("gcloud/*.db", "credentials", "any depth",
       "gcloud's credential and access-token databases (Windows keeps them in AppData)",
       "AppData/Roaming/gcloud/credentials.db"),
    _e("gcloud/legacy_credentials", "credentials", "any depth", "gcloud's older key files",
       "gcloud/legacy_credentials/a@b/adc.json"),
    _e("huggingface/token", "credentials", "any depth", "the Hugging Face token",
       ".cache/huggingface/token"),
    _e("huggingface/stored_tokens", "credentials", "any depth", "Hugging Face tokens",
       ".cache/huggingface/stored_tokens"),
    # -- credentials of a home folder ------------------------------------------------------
    *(_e(n, "credentials", "home folder", _SECRET, ex) for n, ex in (
        (".azure", ".azure/accessTokens.json"),
        (".config/gcloud", ".config/gcloud/credentials.db"),
        (".config/gh", ".config/gh/hosts.yml"),
        (".config/hub", ".config/hub"),
        (".config/op", ".config/op/config"),
        (".config/doctl", ".config/doctl/config.yaml"),
        (".config/rclone", ".config/rclone/x.conf"),
        (".oci", ".oci/config"),
        (".databricks", ".databricks/token-cache.json"),
        (".snowflake", ".snowflake/connections.toml"),
        (".dbt", ".dbt/profiles.yml"),
        (".my.cnf", ".my.cnf"),
        (".mylogin.cnf", ".mylogin.cnf"),
        (".vault-token", ".vault-token"),
        (".terraform.d", ".terraform.d/credentials.tfrc.json"),
        (".terraformrc", ".terraformrc"),
        (".cargo/credentials*", ".cargo/credentials.toml"),
        (".gem/credentials", ".gem/credentials"),
        (".kaggle", ".kaggle/kaggle.json"),
        (".huggingface", ".huggingface/token"),
        (".boto", ".boto"),
        (".s3cfg", ".s3cfg"),
    )),
    # -- secret stores ---------------------------------------------------------------------
    _e(".*_history", "secret-store", "home folder",
       "shell and REPL history: commands typed with their secrets", ".bash_history"),
    _e("history.sqlite*", "secret-store", "any depth",
       "IPython's history: every line typed in a kernel, keys included",
       "notes/history.sqlite"),
    _e("Library/Keychains", "secret-store", "home folder",
       "macOS key chains: saved passwords, keys, certificates",
       "Library/Keychains/login.keychain-db"),
    _e("*.keychain*", "secret-store", "any depth", "a macOS key chain", "old.keychain"),
    _e("*.binarycookies", "secret-store", "any depth", "Safari's and macOS apps' cookies",
       "Cookies.binarycookies"),
    _e(".viminfo", "secret-store", "home folder", "Vim's registers and search history"),
    _e(".password-store", "secret-store", "home folder", "pass's password store",
       ".password-store/email.gpg"),
    _e(".local/share/keyrings", "secret-store", "home folder", "the desktop key ring",
       ".local/share/keyrings/login.keyring"),
    _e(".mozilla", "secret-store", "home folder", "Firefox profiles: cookies, saved logins",
       ".mozilla/firefox/x.default/cookies.sqlite"),
    *(_e(n, "secret-store", "home folder", "a browser profile: cookies, saved logins", n + "/x")
      for n in (".config/google-chrome", ".config/chromium", ".config/BraveSoftware",
                ".config/microsoft-edge", ".config/vivaldi", ".config/opera")),
    *(_e(n, "secret-store", "any depth", "a browser's cookie or login database",
         "profile/" + n.replace("*", "")) for n in (
        "cookies.sqlite*", "key3.db", "key4.db", "logins.json", "login data*", "cookies",
        "cookies-journal")),
    # -- the system's files, for a workspace at / ------------------------------------------
    _e("etc/shadow*", "credentials", "system", "password hashes", "etc/shadow"),
    _e("etc/gshadow*", "credentials", "system", "password hashes", "etc/gshadow-"),
    _e("etc/sudoers*", "permissions", "system", "who may run what as root",
       "etc/sudoers.d/admins"),
    _e("etc/ssh/ssh_host_*key", "credentials", "system", "the host's SSH keys",
       "etc/ssh/ssh_host_ed25519_key"),
    _e("etc/security/opasswd", "credentials", "system", "old password hashes"),
    _e("etc/ssl/private", "credentials", "system", "TLS private keys", "etc/ssl/private/x.key"),
    _e("etc/wireguard", "credentials", "system", "WireGuard keys", "etc/wireguard/wg0.conf"),
    _e("etc/NetworkManager/system-connections", "credentials", "system",
       "Wi-Fi and VPN passwords", "etc/NetworkManager/system-connections/x.nmconnection"),
    _e("etc/krb5.keytab", "credentials", "system", "Kerberos keys"),
    _e("etc/docker/key.json", "credentials", "system", "the Docker daemon's key"),
    _e("etc/letsencrypt/archive", "credentials", "system", "TLS private keys",
       "etc/letsencrypt/archive/x/privkey1.pem"),
    _e("etc/environment", "credentials", "system",
       "system-wide variables: proxies with passwords, keys"),
)  # fmt: skip


# -- folding and matching ----------------------------------------------------------------


@functools.lru_cache(maxsize=65_536)
def fold_name(name: str) -> str:
    """One path component as the most permissive file system would compare it."""
    if name.isascii():  # NFKC and format characters change nothing here
        text = name.lower()
    else:
        text = unicodedata.normalize("NFKC", name)
        text = "".join(c for c in text if unicodedata.category(c) != "Cf")
        text = text.casefold()
    if ":" in text:  # NTFS alternate data stream: the part before names the file
        text = text.split(":", 1)[0]
    stripped = text.rstrip(" .")
    text = stripped if stripped else text
    backup = _BACKUP.fullmatch(text)  # a backup copy (`.netrc.bak`, `kaggle.json~`)
    if backup is not None:
        text = backup[1]
    copy = _CHECKPOINT.fullmatch(text)  # Jupyter's checkpoint copy holds the same bytes
    return copy[1] + (copy[2] or "") if copy is not None else text


CHECKPOINTS = ".ipynb_checkpoints"
"""The folder where Jupyter keeps a copy of each file saved from it, as
``NAME-checkpoint.EXT``: the copy is matched as ``NAME.EXT`` in the folder above."""
_CHECKPOINT = re.compile(r"(.+)-checkpoint(\.[^.]*)?")
_BACKUP = re.compile(r"(.+?)(?:\.(?:bak|orig|old|save|backup)|~)+")
"""The suffixes of a backup copy (editors' ``~``, ``cp x x.bak``): the copy is matched
as the file it copies."""


def _glob_re(glob: str) -> str:
    out = []
    for c in fold_name(glob) if glob not in ("*", "?") else glob:
        out.append("[^/]*" if c == "*" else "[^/]" if c == "?" else re.escape(c))
    return "".join(out)


class Matcher:
    """Entries compiled once: for each pattern length one regex of named alternatives (in
    table order) over the last components joined by ``/``, and one regex of every
    pattern's last component that must match before any of them is tried."""

    def __init__(self, entries: Iterable[Entry]) -> None:
        self.entries = tuple(entries)
        by_len: dict[int, list[str]] = {}
        lasts: list[str] = []
        self._literal_lasts: set[str] = set()
        self._ends: dict[str, bool] = {}  # a name seen before: can a pattern end there?
        for i, e in enumerate(self.entries):
            parts = e.parts
            if any(c in e.pattern for c in "[]{}\\") or "" in parts:
                raise ValueError(f"protection pattern {e.pattern!r}: only * and ? are globs")
            by_len.setdefault(len(parts), []).append(
                f"(?P<e{i}>{'/'.join(_glob_re(p) for p in parts)})"
            )
            if "*" in parts[-1] or "?" in parts[-1]:
                lasts.append(_glob_re(parts[-1]))
            else:
                self._literal_lasts.add(fold_name(parts[-1]))
        self._last = re.compile("|".join(lasts) or "(?!)")
        self._by_len = sorted((n, re.compile("|".join(alts))) for n, alts in by_len.items())

    def _can_end(self, name: str) -> bool:
        """Whether some pattern's last component matches the folded ``name`` (memoised)."""
        ends = self._ends.get(name)
        if ends is None:
            ends = name in self._literal_lasts or self._last.fullmatch(name) is not None
            if len(self._ends) > 100_000:
                self._ends.clear()
            self._ends[name] = ends
        return ends

    def _tail(self, folded: Sequence[str]) -> Entry | None:
        if CHECKPOINTS in folded:  # a checkpoint copy stands for the file beside its folder
            folded = [f for f in folded if f != CHECKPOINTS]
        best: int | None = None
        for n, rx in self._by_len:
            if n > len(folded):
                break
            m = rx.fullmatch(folded[-1] if n == 1 else "/".join(folded[-n:]))
            if m is not None and m.lastgroup is not None:
                i = int(m.lastgroup[1:])
                best = i if best is None else min(best, i)
        return None if best is None else self.entries[best]

    def at_end(self, folded: Sequence[str]) -> Entry | None:
        """The first entry whose pattern matches the last components of ``folded``."""
        if not folded or not self._can_end(folded[-1]):
            return None
        return self._tail(folded)

    def first(self, parts: Sequence[str]) -> Entry | None:
        """The entry of the outermost protected path in ``parts``, or ``None``."""
        folded: list[str] = []
        for p in parts:
            if p in ("", ".", "/"):
                continue
            name = fold_name(p)
            folded.append(name)
            if self._can_end(name):
                found = self._tail(folded)
                if found is not None:
                    return found
        return None


ALL = Matcher(TABLE)
SECRETS = Matcher(e for e in TABLE if e.secret)


def matcher() -> Matcher:
    """The table, compiled."""
    return ALL


def protection_of(parts: Sequence[str]) -> Entry | None:
    """The entry protecting the path made of ``parts`` (its outermost protected part)."""
    return ALL.first(parts)


def write_protected(parts: Sequence[str]) -> str | None:
    """Why a write to the path made of ``parts`` needs a click, or ``None``."""
    found = ALL.first(parts)
    return None if found is None else found.reason


def is_secret(parts: Sequence[str]) -> bool:
    """Whether the path made of ``parts`` is, or is inside, a secret of the table."""
    return SECRETS.first(parts) is not None
