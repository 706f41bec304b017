"""The protection table's matcher: name folding, component globs at any depth, the first
(outermost) entry, secrets, and a table that cannot hold a pattern the matcher misreads."""

from __future__ import annotations

import pytest

from nb_tools.sandbox import TABLE, Entry, is_secret, protection_of, write_protected
from nb_tools.sandbox._protection import Matcher, matcher


@pytest.mark.parametrize(
    "path",
    [
        ".git/config",
        "a/.GIT/hooks/pre-commit",
        "a/．ｇｉｔ/config",  # full-width
        "a/.g\u200bit/config",  # a format character HFS+ drops
        "a/.git./config",  # Windows drops trailing dots
        "a/.git::$INDEX_ALLOCATION/config",
        "git~1/config",
        "sub/.nb_tools/settings.json",
        "x/share/jupyter/kernels/py/kernel.json",
        ".venv/lib/python3.12/site-packages/evil.pth",
        "analysis/ipykernel_launcher.py",
        "infra/prod/terraform.tfstate.backup",
        "keys/My-Service_Account-1.json",
        ".streamlit/secrets.toml",
        "p/.mozilla/firefox/x/cookies.sqlite",
    ],
)
def test_protected(path: str) -> None:
    assert write_protected(path.split("/")) is not None


@pytest.mark.parametrize(
    "path",
    ["notes/config", "src/bin/tool.py", "docs/history.md", "git.md", "model.pth", "a/.gitx",
     "environment.yml", "jupyter/notes.ipynb", "site-packages/numpy/core.py"],
)  # fmt: skip
def test_not_protected(path: str) -> None:
    assert protection_of(path.split("/")) is None


def test_the_outermost_entry_answers_and_secrets_are_found_inside_others() -> None:
    parts = [".config", "git", "credentials"]
    found = protection_of(parts)
    assert found is not None and found.pattern == ".config/git"
    assert is_secret(parts)
    assert not is_secret([".config", "git", "config"])


def test_every_entry_matches_its_example() -> None:
    for e in TABLE:
        found = protection_of(e.example.split("/"))
        assert found is not None, e.pattern
        assert is_secret(e.example.split("/")) == e.secret or not e.secret, e.pattern


def test_compiled_once() -> None:
    assert matcher() is matcher()


def test_a_pattern_the_matcher_cannot_read_is_refused() -> None:
    bad = Entry(pattern="[ab].txt", kind="credentials", where="any depth", reason="r", example="a")
    with pytest.raises(ValueError, match="only \\* and \\?"):
        Matcher([bad])
