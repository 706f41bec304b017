"""The read-only classifier: a table of commands, tricky ones included (fail closed)."""

from __future__ import annotations

import pytest

from nb_tools.builtin._bash_readonly import READ_ONLY_COMMANDS, is_read_only

READ_ONLY = [
    "ls",
    "ls -la",
    "ls -la src/ | head -20",
    "cat README.md",
    "head -n 5 a.txt && tail -n 5 a.txt",
    "tail -f log.txt",
    "wc -l *.py",
    "grep -rn 'def main' .",
    "rg -n TODO src",
    "find . -name '*.py' -type f",
    'find . -name "*.py" -newer setup.py -print',
    "git status",
    "git log --oneline -10",
    "git log -p -- src/app.py",
    "git diff HEAD~1",
    "git show HEAD:README.md",
    "git branch",
    "git branch -a -v",
    "git rev-parse --abbrev-ref HEAD",
    "git --no-pager log -3",
    "git stash list",
    "git remote -v",
    "pwd",
    "echo hello",
    "which python",
    "file data.bin",
    "stat setup.py",
    "du -sh .",
    "df -h",
    "sort names.txt | uniq -c | sort -rn",
    "cut -d, -f1 data.csv | tr a-z A-Z",
    "ls 2>&1",
    "ls missing 2>/dev/null",
    "ls &>/dev/null",
    "grep x a.txt > /dev/null || echo none",
    "cat < input.txt",
    "cat <<'EOF'\n$(not run) because quoted\nEOF",
    "cat <<EOF\nliteral text\nEOF",
    "case x in a) ls;; *) pwd;; esac",
    "for f in a b; do cat a; done",
    "(ls; pwd)",
    "{ ls; pwd; }",
    "cd src && ls",
    "if test -f setup.py; then cat setup.py; fi",
    "while false; do ls; done",
    "! grep -q x a.txt",
    "ls &",
    "echo done # rm -rf /",
    "diff a.txt b.txt",
    "sha256sum a.txt",
    "sort -n -k2 data.txt",
    "uniq data.txt",
    "jq .name package.json",
]

NOT_READ_ONLY = [
    # stricter since the vote reads the parse (any expansion, here-string, env, git -C)
    "git -C sub status",
    'echo "$HOME"',
    "cat <<< 'here string'",
    "cat <<EOF\nliteral $HOME text\nEOF",
    "case $x in a) ls;; *) pwd;; esac",
    'for f in a b; do cat "$f"; done',
    "env",
    "rm -rf build",
    "echo $(rm x)",
    'echo "$(rm x)"',
    "echo `rm x`",
    "ls > files.txt",
    "ls >> files.txt",
    "ls >| files.txt",
    "ls 2> err.txt",
    "ls &> all.txt",
    "ls <> f",
    "FOO=1 ls",
    "x=1",
    "x=1; ls",
    "export A=1",
    "$CMD a",
    "${CMD} a",
    '"ls" -la',
    "./script.sh",
    "/bin/ls",
    "find . -delete",
    "find . -name '*.pyc' -exec rm {} \\;",
    "find . -execdir rm {} +",
    "find . -ok rm {} \\;",
    "find . -fprint out.txt",
    "find . $ARGS",
    "find . *",
    "git -c core.pager=evil log",
    "git -c x=y log",
    "git -p log",
    "git log --output=f",
    "git log --outp=f",
    "git diff --ext-diff",
    "git grep -O x",
    "git branch new-branch",
    "git branch -D main",
    "git stash",
    "git stash pop",
    "git commit -m x",
    "git push",
    "git checkout main",
    "git st",
    "sed -i s/a/b/ f",
    "sed -n 1p f",
    "awk '{print}' f",
    "sort -o out.txt in.txt",
    "sort -no out.txt in.txt",
    "sort --out=out.txt in.txt",
    "uniq in.txt out.txt",
    "rg --pre ./evil x",
    "printf -v PATH x",
    "date -s tomorrow",
    "env rm x",
    "[[ -f x ]]",
    "[[ $x -eq 'a[$(rm x)]' ]]",
    "echo $((1+2))",
    "(( x = 1 ))",
    "cat <<EOF\n$(rm x)\nEOF",
    "diff <(ls a) <(ls b)",
    "cat >(tee x)",
    "echo ${x:-$(rm x)}",
    "f() { ls; }; f",
    "ls() { rm -rf .; }; ls",
    "for PATH in /tmp/evil; do ls; done",
    "for ((i=0; i<3; i++)); do ls; done",
    "exec ls",
    "eval ls",
    "source env.sh",
    ". env.sh",
    "xargs rm < list",
    "sudo ls",
    "time ls",
    "python -c 'print(1)'",
    "pip install x",
    "npm test",
    "ls |",
    "ls &&",
    "if true; then ls",
    "echo 'unterminated",
    "ls \\",
    "",
    "   ",
]


@pytest.mark.parametrize("command", READ_ONLY)
def test_read_only(command: str) -> None:
    assert is_read_only(command), command


@pytest.mark.parametrize("command", NOT_READ_ONLY)
def test_not_read_only(command: str) -> None:
    assert not is_read_only(command), command


def test_the_table_is_big_and_covers_the_list() -> None:
    assert len(READ_ONLY) + len(NOT_READ_ONLY) >= 120
    firsts = {c.split()[0] for c in READ_ONLY if c.split()}
    assert {"cat", "ls", "head", "tail", "wc", "grep", "rg", "find", "git"} <= firsts
    assert {"cat", "ls", "git", "find", "sort"} <= READ_ONLY_COMMANDS
    assert "rm" not in READ_ONLY_COMMANDS and "sed" not in READ_ONLY_COMMANDS


def test_nul_byte_is_not_read_only() -> None:
    assert not is_read_only("ls\x00rm")
