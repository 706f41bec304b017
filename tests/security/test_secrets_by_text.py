"""Secrets by their text, as effects: a secret written in one of the formats below never
reaches the model's answer of a call no person clicked (``read_file`` here: every channel
calls the same ``redact_secret_text``); code that only names a secret stays readable; a
protected file is no oracle for ``grep`` or ``bash`` in any output mode; every built-in
tool that reads a file refuses a protected one through the one opener."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import urllib.parse
from pathlib import Path

import pytest
from sandbox_helpers import APPROVED, NOT_APPROVED, require_sandbox, run

from nb_tools.builtin import builtin_tools
from nb_tools.builtin._files import ReadFileTool
from nb_tools.builtin._readstate import ReadState
from nb_tools.builtin._text_editor import TextEditorTool
from nb_tools.builtin._workspace import Workspace
from nb_tools.sandbox import SecretStream, redact_secret_text
from nb_tools.tool._grant import granted

S = "hunter2-Zq8-value"  # the secret of every case (no known token shape)
WORDS = "correcthorsebatterystaple"
LEAKS = {
    "escaped JSON in a log line": 'log: {\\"password\\": \\"' + S + '\\"}',
    "JSON in JSON in JSON": json.dumps({"o": json.dumps({"t": json.dumps({"api_key": S})})}),
    "JSON, spaced colon": '"api_key" :  "' + S + '"',
    "YAML, two words": "db password: " + S,
    "YAML, nested": "aws:\n  secret_access_key: " + S,
    "YAML, capitalised": "Password: " + S,
    "dashed key": "client-secret: " + S,
    "dotted key": "oauth.client.secret=" + S,
    "TOML section": '[db]\npassword = "' + S + '"',
    ".netrc, one line": "machine example.com login bob password " + S,
    ".netrc, lines": "machine example.com\n  login bob\n  password " + S,
    ".pgpass": "db.example.com:5432:prod:bob:" + S,
    "docker config auth": '{"auths": {"r.io": {"auth": "'
    + base64.b64encode(f"bob:{S}".encode()).decode()
    + '"}}}',
    "k8s Secret data": "apiVersion: v1\nkind: Secret\ndata:\n  tls.crt: "
    + base64.b64encode(S.encode()).decode()
    + "\n",
    "connection string": f"Server=db;Database=x;User Id=bob;Password={S};",
    "connection string in code": f'conn = "Server=db;User Id=bob;Password={S};"',
    "query in a code literal": f'url = "a=b&token={S}"',
    "JDBC": f"jdbc:postgresql://db:5432/x?user=bob&password={S}",
    "PGPASSWORD": f"PGPASSWORD={S} psql -h db",
    "curl -u": f"curl -u bob:{S} https://x",
    "curl --user": f"curl --user 'bob:{S}' https://x",
    "flag =": f"mysql --password={S} -h db",
    "flag, space": f"app --api-key {S}",
    "mysql -p": f"mysql -u root -p{S}",
    "sshpass -p": f"sshpass -p {S} ssh x",
    "redis-cli -a": f"redis-cli -a {S}",
    "XML element": f"<password>{S}</password>",
    "Basic header": "Authorization: Basic " + base64.b64encode(f"bob:{S}".encode()).decode(),
    "letters only, YAML": f"password: {WORDS}",
    "letters only, .env": f"DB_PASSWORD={WORDS}",
    "letters only, short, .env": "DB_PASSWORD=letmein",
    "quoted with spaces": 'password = "correct horse battery"',
    "one character, JSON": '"password":"p"',
    "Ruby, PHP =>": f'password => "{S}"',
    "Go :=": f'password := "{S}"',
    "Authorization, any scheme": f"Authorization: token {S}",
}
HIDDEN = (S, WORDS, "letmein", "correct horse", base64.b64encode(S.encode()).decode()[:12], '"p"')


def _read(ws: Path, name: str, *, approved: bool = False) -> str:
    tool = ReadFileTool(Workspace(ws), ReadState())
    with granted(APPROVED if approved else NOT_APPROVED):
        return asyncio.run(tool.call(json.dumps({"file_path": name}))).content


@pytest.mark.parametrize("case", LEAKS)
def test_a_secret_in_these_formats_never_reaches_a_no_click_read(case: str, tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text(LEAKS[case] + "\n")
    out = _read(tmp_path, "notes.txt")
    assert not [h for h in HIDDEN if h in out], out
    assert "<hidden" in out
    shown = _read(tmp_path, "notes.txt", approved=True)  # a click shows it: the test can see
    assert "<hidden" not in shown and LEAKS[case].splitlines()[-1] in shown


CODE = [
    "password = getpass()",
    'token = request.headers["x"]',
    'secret_name = "prod"',
    'token_type = "bearer"',
    "def password_reset(user: User, password: str) -> None:",
    "    password: str",
    "    api_key: Optional[str] = None",
    'api_key = "xxx"',
    'API_KEY = "<your key>"',
    'token = "your-api-token"',
    "docker login --password-stdin -u bob",
    "    password: The password to use.",
    "secret = os.environ.get('SECRET')",
    "--password-file /run/secrets/db",
    "git clone https://github.com/psf/requests.git",
    "python -u script.py -p 8080",
    'if password == "abc":',
    'api_key = "..."',
    "the Authorization header of the request",
]


def test_code_that_names_a_secret_stays_readable() -> None:
    for line in CODE:
        assert redact_secret_text(line + "\n") == (line + "\n", 0), line


def test_changeme_is_hidden_it_may_be_the_password_in_use() -> None:
    assert "changeme" not in redact_secret_text('password = "changeme"')[0]


def test_copies_of_the_kernels_secret_values_are_hidden(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    value = "Zz9-secret+value/with?odd&chars"
    monkeypatch.setenv("NB_TEST_API_KEY", value)
    data = value.encode()
    copies = {
        "base64": base64.b64encode(data).decode(),
        "base64, shifted, with a newline": base64.b64encode(b"x" + data + b"\n").decode(),
        "base64 of user:value": base64.b64encode(b"user:" + data).decode(),
        "base64url": base64.urlsafe_b64encode(data).decode(),
        "hex": data.hex(),
        "HEX": data.hex().upper(),
        "URL-encoded": urllib.parse.quote(value, safe=""),
        "form-encoded": "k=" + urllib.parse.quote_plus(value),
        "reversed": value[::-1],
    }
    for how, copy in copies.items():
        out, n = redact_secret_text(f"out: {copy}\n")
        assert n >= 1 and "$NB_TEST_API_KEY" in out, (how, out)
        middle = copy[len(copy) // 2 - 4 : len(copy) // 2 + 4]
        assert middle not in out, (how, out)


# -- a protected file is no oracle, and every file-reading tool refuses it -----------------

MARK = "zqvalue-7c1f-unique"  # no known shape: only the protection keeps it out
NOTEBOOK = {
    "cells": [{"cell_type": "code", "id": "a", "source": f"x = '{MARK}'", "metadata": {},
               "outputs": [], "execution_count": None}],
    "metadata": {}, "nbformat": 4, "nbformat_minor": 5,
}  # fmt: skip
EXTRA = {  # what each reading tool needs besides its path argument
    "read_file": {},
    "notebook_read": {},
    "grep": {"pattern": "zqvalue", "output_mode": "content"},
    "str_replace_based_edit_tool": {"command": "view"},
}


async def _call(tool: object, args: dict[str, object], *, approved: bool) -> str:
    with granted(APPROVED if approved else NOT_APPROVED):
        return (await tool.call(json.dumps(args))).content  # type: ignore[attr-defined]


async def test_every_builtin_tool_that_reads_files_refuses_a_protected_one(
    tmp_path: Path,
) -> None:
    """Walks the registered built-in tools: each that reads files (its subject says so)
    gets a protected file's path (``.env.ipynb``: a ``.env*`` file, a notebook too) in a
    call no person clicked, and shows nothing of it; a click shows it (the control)."""
    (tmp_path / ".env.ipynb").write_text(json.dumps(NOTEBOOK))
    ws, state = Workspace(tmp_path), ReadState()
    tools = [*builtin_tools(tmp_path), TextEditorTool(ws, state)]
    readers = [t for t in tools if t.info().subject and t.info().subject.reads_files]
    assert {t.info().name for t in readers} == set(EXTRA)  # a new reader: add it here
    for t in readers:
        name = t.info().name
        args = {t.info().subject.arg: ".env.ipynb", **EXTRA[name]}
        out = await _call(t, args, approved=False)
        assert MARK not in out, (name, out)
        assert MARK in await _call(t, args, approved=True), name


@pytest.mark.parametrize("mode", ["content", "files_with_matches", "count"])
async def test_grep_on_a_protected_file_is_no_oracle_in_any_mode(mode: str, tmp_path: Path) -> None:
    (tmp_path / ".env").write_text(f"PASSWORD={MARK}\n")
    (tmp_path / "plain.txt").write_text("nothing\n")
    grep = next(t for t in builtin_tools(tmp_path, include=["grep"]))
    hit, miss = f"PASSWORD={MARK[:8]}", "PASSWORD=nomatch"
    for path in (".env", "."):
        outs = [
            await _call(grep, {"pattern": p, "path": path, "output_mode": mode}, approved=False)
            for p in (hit, miss)
        ]
        assert outs[0].replace(hit, "P") == outs[1].replace(miss, "P"), (path, outs)
        assert ".env" not in outs[0] or path == ".env"


async def test_bash_grep_count_test_and_wc_on_a_protected_file_say_nothing(
    tmp_path: Path,
) -> None:
    require_sandbox()
    (tmp_path / ".env").write_text(f"PASSWORD={MARK}\n")
    probes = (
        "grep -c 'PASSWORD=zq' .env; grep -l zq .env; test -s .env && echo HAS || echo NONE; "
        "wc -c < .env; ls -la"
    )
    r = await run(tmp_path, probes, approved=False)
    assert "HAS" in (await run(tmp_path, probes, approved=True, sandbox="off")).content
    assert MARK not in r.content and "HAS" not in r.content and "NONE" in r.content


# -- false positives: a real package's source stays readable -------------------------------

REVIEWED = {  # every line of these packages hidden today, reviewed: keep it short
    # httpx/_urls.py documents a URL with a password: hidden, as it should be
    'url = httpx.URL("HTTPS://jo%40email.com:a%20secret@müller.de:1234/pa%20th?search=ab#anchorlink")',
    "https://jo%40email.com:a%20secret@müller.de:1234/pa%20th?search=ab#anchorlink",
    'username="jo@gmail.com", password="a secret"',
    'assert url == "https://jo%40email.com:a%20secret@www.example.com"',
    "password = password1",  # jupyter_server/auth/__main__.py: a literal, for all we know
}  # fmt: skip


@pytest.mark.parametrize("package", ["requests", "httpx", "jupyter_server"])
def test_a_real_packages_source_is_left_alone_but_a_reviewed_few_lines(
    package: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in [k for k in os.environ if k != "PATH"]:
        monkeypatch.delenv(name)  # only the text's own shapes: no env value to find
    root = Path(pytest.importorskip(package).__file__ or "").parent
    changed = []
    for path in sorted(root.rglob("*.py")):
        text = path.read_text(errors="replace")
        out, _n = redact_secret_text(text)
        changed += [
            a.strip() for a, b in zip(text.split("\n"), out.split("\n"), strict=True) if a != b
        ]
    assert set(changed) <= REVIEWED, sorted(set(changed) - REVIEWED)


# -- a secret cut by a chunk's edge or by the output cap ------------------------------------

LINE = f"DB_PASSWORD={S}\n"


def test_a_stream_sees_a_secret_cut_at_any_chunk_edge() -> None:
    """``SecretStream`` (the hook for a streaming tool's progress) gets the line cut at
    every position, and after a gap: the secret is never shown, other text is."""
    text = "before\n" + LINE + "after\n"
    for cut in range(1, len(text)):
        stream = SecretStream()
        shown = stream.feed(text[:cut]) + stream.feed(text[cut:]) + stream.finish()
        assert S not in shown and S[:8] not in shown, (cut, shown)
        assert "before\n" in shown and "after\n" in shown
    stream = SecretStream()  # a chunk that starts after a gap, inside the value
    shown = stream.feed(LINE[16:] + "next\n", cut=True)
    assert S[4:] not in shown and shown.endswith("next\n")


async def _progress_of(ws: Path, command: str) -> tuple[str, str]:
    from nb_tools.builtin._bash import BashTool
    from nb_tools.tool._progress import bind_call, progress_sink

    seen: list[str] = []
    tool = BashTool(Workspace(ws), kill_grace=0.3, progress_interval=0.05)
    with progress_sink(lambda _cid, p: seen.append(p.text)), bind_call("c1"), granted(NOT_APPROVED):
        r = await tool.call(json.dumps({"command": command, "timeout": 20_000}))
    return "".join(seen), r.content


async def test_bash_progress_never_shows_a_secret_cut_between_two_chunks(tmp_path: Path) -> None:
    require_sandbox()
    half = len("DB_PASSWORD=") + 4
    command = f"printf '%s' '{LINE[:half]}'; sleep 0.6; printf '%s\\n' '{LINE[half:-1]}'"
    progress, answer = await _progress_of(tmp_path, command)
    assert S not in answer  # the model's answer is searched whole
    assert S[4:] in progress.replace("\n", "") or S not in progress  # both chunks arrived
    assert S not in progress and S[4:] not in progress, progress


async def test_bash_answer_never_shows_a_secret_cut_by_the_output_cap(tmp_path: Path) -> None:
    require_sandbox()
    from nb_tools.builtin._bash import MAX_OUTPUT_CHARS

    half = MAX_OUTPUT_CHARS // 2
    after = "y" * (half - len(S) + 5 - 1)  # the kept tail starts 5 characters into S
    script = tmp_path / "out.py"
    script.write_text(f"print('z' * {MAX_OUTPUT_CHARS}); print({LINE[:-1]!r}); print({after!r})")
    r = await run(tmp_path, "python3 out.py", approved=False)
    assert S[8:] not in r.content, r.content[-half - 200 : -half + 200]
