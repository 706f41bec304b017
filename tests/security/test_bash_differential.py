"""The parse against bash itself: scripts built from tricky fragments (quotes, comments,
continuations, here-documents, keywords) around a command that creates a marker. Whenever
bash really creates the marker, the parse must see the command (or say it cannot see),
the vote must refuse, and ``deny bash(touch:*)`` must deny or ask."""

from __future__ import annotations

import itertools
import json
import random
import subprocess
from pathlib import Path

import pytest
from approvals_helpers import builtin_tool

from nb_tools.builtin._bash_readonly import is_read_only
from nb_tools.permissions import PermissionRules
from nb_tools.permissions._shell import Script, parse_script

_PRE = ["", "ls ", "echo a", "# c ", "echo '", 'echo "', "echo $'", "x=", "case a in a) ",
        "if true; then ", "{ ", "( ", "echo \\", "cat <<EOF\n", "f() { ", "echo $(",
        "echo `", "for i in 1; do ", "echo ${x:-", "[[ a == ", "echo a#", "echo $((",
        "coproc ", "time ", "! ", "cat <<'EOF'\n", "cat <<-EOF\n\t"]  # fmt: skip
_SEP = ["\n", ";", " ", "&&", "||", "|", "&", "\\\n", "#", "'", '"', "\r\n", ")", "`", "}",
        ";;", "\t", " # '\n"]  # fmt: skip
_MID = ["touch pwned", "t\\\nouch pwned", "$'touch' pwned", "\\touch pwned", "to''uch pwned",
        "/usr/bin/touch pwned", "env touch pwned"]  # fmt: skip
_SUF = ["", "\n", ";", "'", '"', " #", "\nEOF\n", " }", " )", ";; esac", "; fi", "; done",
        ")", "`", "}", "\n\tEOF\n"]  # fmt: skip

_DELIMS = ["EOF", "'EOF'", '"EOF"', "E\\OF", "E'O'F", "$'EOF'", "'E F'", "-", "E$'O'F", "EOF "]
_OPS = ["<<", "<<-", "<< ", "<<- "]
_ENDS = ["EOF", "\tEOF", " EOF", "EOF ", "E F", "-", "$'EOF'", "E'O'F", "E\\OF", "EOF\\"]
_BODIES = ["x", "$(echo y)", "\\", "EOF\\", "\t$(echo y)"]


def _sample(seed: int, n: int) -> list[str]:
    rng = random.Random(seed)
    general = [p + s + m + f for p, s, m, f in itertools.product(_PRE, _SEP, _MID, _SUF)]
    heredoc = [
        f"cat {op}{d}\n{b}\n{e}\ntouch pwned"
        for d, op, e, b in itertools.product(_DELIMS, _OPS, _ENDS, _BODIES)
    ]
    return rng.sample(general, n) + rng.sample(heredoc, n // 2)


CASES = _sample(2026, 500)


def _sees_touch(script: Script) -> bool:
    names = [c.name or "" for c in script.commands]
    names += [(r[0].value or "") for c in script.commands for r in c.runs if r]
    return bool(script.hidden) or any(n.rsplit("/", 1)[-1] == "touch" for n in names)


def test_the_parse_agrees_with_bash(tmp_path: Path) -> None:
    rules = PermissionRules(root=tmp_path)
    rules.deny("bash(touch:*)")
    ran = 0
    misses: list[str] = []
    for command in CASES:
        marker = tmp_path / "pwned"
        marker.unlink(missing_ok=True)
        subprocess.run(["bash", "-c", command], cwd=tmp_path, capture_output=True, timeout=10,
                       stdin=subprocess.DEVNULL)  # fmt: skip
        if not marker.exists():
            continue
        ran += 1
        match = rules.check("bash", json.dumps({"command": command}), builtin_tool("bash"))
        if (
            not _sees_touch(parse_script(command))
            or is_read_only(command, tmp_path)
            or match is None
            or match.action not in ("deny", "ask")
        ):
            misses.append(command)
    assert not misses, misses
    assert ran >= 30  # enough fragments really run the marker: the test can fail


@pytest.mark.parametrize(
    "command", ["touch pwned", "echo a#\n\\touch pwned", "# c \\\ntouch pwned"]
)
def test_known_divergences_stay_closed(command: str) -> None:
    assert _sees_touch(parse_script(command))
