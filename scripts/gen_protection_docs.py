"""Regenerate the docs' protection tables from the one table in the code:

    python scripts/gen_protection_docs.py          # rewrite the tables in docs/
    python scripts/gen_protection_docs.py --check  # exit 1 if a doc's table is stale

``docs/sandbox.md`` gets ``nb_tools.sandbox.TABLE`` (every entry: pattern, kind, where,
what the sandbox does with it, reason) and what is recognised as a secret by its text
(``TOKEN_SHAPES``, ``PEM_SHOWN``, ``SECRET_WORDS``, ``ENV_PREFIXES``), and
``docs/file-tools-safety.md`` the allow-list of a home folder's dot-entries
(``HOME_ALLOW``), each between ``<!-- BEGIN ... -->`` and
``<!-- END ... -->`` markers. Tests run the check.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from nb_tools.sandbox import HOME_ALLOW, TABLE, TOKEN_SHAPES, Entry  # noqa: E402
from nb_tools.sandbox._protection import KINDS, WHERE  # noqa: E402
from nb_tools.sandbox._runtime_paths import (  # noqa: E402
    JUPYTER_REASON,
    PATH_REASON,
    PREFIX_REASON,
    START_ENV,
    START_REASON,
)
from nb_tools.sandbox._secret_formats import COMMANDS, ENCODINGS  # noqa: E402
from nb_tools.sandbox._secret_names import (  # noqa: E402
    _ENV_WORDS,
    _KEY_KINDS,
    ENV_PREFIXES,
    SECRET_WORDS,
)
from nb_tools.sandbox._secrets import _ABOUT, PEM_SHOWN  # noqa: E402


def _sandbox(e: Entry) -> str:
    if e.where == "system":
        return "hidden from every call that could read it"
    if e.secret:
        seen = "approved calls outside a home see it; " if e.build else ""
        return f"hidden ({seen}read-only)"
    if e.pattern == ".git":
        return "hooks, config read-only; a new repository defused"
    return "read-only; a new one removed" if e.removes_new else "read-only"


def protection_table() -> str:
    rows = [f"- kind `{k}`: {v}" for k, v in KINDS.items()]
    rows += [f"- where `{k}`: {v}" for k, v in WHERE.items()]
    rows += ["", "| pattern | kind | where | sandbox | why |", "|---|---|---|---|---|"]
    for e in TABLE:
        pattern = e.pattern.replace("|", "\\|")
        rows.append(f"| `{pattern}` | {e.kind} | {e.where} | {_sandbox(e)} | {e.reason} |")
    rows.append(
        "| `sys.prefix`, `sys.exec_prefix`, the user site (read at run time) | runs-later | "
        "in the workspace (writes only: reading a library's source asks nothing) | read-only | "
        f"{PREFIX_REASON} |"
    )
    rows.append(
        "| the folders on the kernel's `PATH` (read at run time) | runs-later | in the "
        "workspace, but the workspace itself (writes only) | read-only; a new one removed | "
        f"{PATH_REASON} |"
    )
    rows.append(
        "| Jupyter's config and data folders and `IPYTHONDIR` (read at run time) | runs-later | "
        "in the workspace, but the workspace itself (writes only) | read-only; a new one "
        f"removed | {JUPYTER_REASON} |"
    )
    names = ", ".join(f"`{n}`" for n in START_ENV)
    rows.append(
        f"| the files {names} name (read at run time) | runs-later | in the workspace, but "
        f"the workspace itself (writes only) | read-only; a new one removed | {START_REASON} |"
    )
    return "\n".join(rows)


def allow_table() -> str:
    rows = ["| name | why it is allowed |", "|---|---|"]
    rows += [f"| `{name}` | {why} |" for name, why in HOME_ALLOW.items()]
    return "\n".join(rows)


def secret_shapes() -> str:
    words = ", ".join(f"`{w}`" for w in sorted(SECRET_WORDS))
    prefixes = ", ".join(f"`{p}*`" for p in ENV_PREFIXES)
    shown = ", ".join(f"`{k}`" for k in PEM_SHOWN)
    kinds = ", ".join(f"`{k}`" for k in sorted(_KEY_KINDS))
    env_words = ", ".join(f"`{w}`" for w in sorted(_ENV_WORDS))
    about = ", ".join(f"`{w}`" for w in sorted(_ABOUT))
    commands = "; ".join(what for what, _screen, _rx in COMMANDS)
    encodings = ", ".join(ENCODINGS)
    rows = [
        f"- a secret name holds a word {words} (also written without separators: "
        "`dbpassword`, `authtoken`), `pass` as its last word after another (`DB_PASS`), "
        f"or `key` after a word {kinds} (`api_key`, `privateKey`); `sort_key` is none",
        f"- an environment variable's name is also secret with a word {env_words}, a last "
        f"word ending in `key` (`STRIPE_KEY`, `MYKEY`), or a prefix {prefixes}",
        f"- PEM blocks shown (label holds one of these and not `PRIVATE`): {shown}",
        f"- a name whose last word is one of {about} is about a secret, not one "
        "(`secret_name`, `token_type`, `--password-stdin`): its value is shown",
        f"- command lines: {commands}",
        f"- copies of the kernel's secret values hidden whole: {encodings}",
        "",
        "| token | shape |",
        "|---|---|",
    ]
    rows += [f"| {t.what} | `{t.shape}` |" for t in TOKEN_SHAPES]
    return "\n".join(rows)


DOCS = [
    (REPO / "docs" / "sandbox.md", "protection-table", protection_table),
    (REPO / "docs" / "sandbox.md", "secret-shapes", secret_shapes),
    (REPO / "docs" / "file-tools-safety.md", "home-allow-list", allow_table),
]


def render(text: str, name: str, table: str, script: str = "scripts/gen_protection_docs.py") -> str:
    begin = f"<!-- BEGIN {name}: generated by {script} -->"
    end = f"<!-- END {name} -->"
    pattern = re.compile(re.escape(begin) + r".*?" + re.escape(end), re.DOTALL)
    if not pattern.search(text):
        raise SystemExit(f"the markers of {name} are missing")
    return pattern.sub(lambda _: f"{begin}\n{table}\n{end}", text)


def main(argv: list[str]) -> int:
    stale = []
    for path, name, make in DOCS:
        text = path.read_text()
        new = render(text, name, make())
        if new != text:
            stale.append(path)
            if "--check" not in argv:
                path.write_text(new)
    if stale and "--check" in argv:
        for p in stale:
            print(f"{p.relative_to(REPO)} is stale: run python scripts/gen_protection_docs.py")
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
