"""What a tool declares for rules, "Always allow" and cards (``Info.subject``,
``always_allow_rule``, ``headline``), and that the rules read it rather than the name."""

from __future__ import annotations

from pathlib import Path

import pytest

from nb_tools import tool
from nb_tools.permissions import PermissionRules
from nb_tools.permissions._narrow import narrowest_rule
from nb_tools.tool import Headline, Subject
from nb_tools.tool._subject import headline_of, subject_of


@tool(register=False)
def lookup(count: int, term: str, note: str = "") -> str:
    return term


@tool(register=False, subject=Subject(arg="where", kind="path"))
def archive(label: str, where: str) -> str:
    return where


@tool(register=False, always_allow_rule="deploy({target})")
def deploy(target: str, force: bool = False) -> str:
    return target


@tool(register=False, subject=Subject(arg="query", kind="code"))
def sql(query: str) -> str:
    return query


def test_the_defaults_are_the_first_string_parameter_of_kind_text() -> None:
    assert subject_of(lookup.info()) == Subject(arg="term", kind="text")
    assert headline_of(lookup.info()) == Headline(arg="term", kind="text")
    assert narrowest_rule("lookup", {"count": 1, "term": "x"}, Path("/r"), lookup.info()) == (
        "lookup"
    )


def test_a_declared_path_subject_gets_path_rules_and_a_folder_rule(tmp_path: Path) -> None:
    rules = PermissionRules(root=tmp_path)
    rules.deny("archive(secrets/**)")
    hit = rules.check("archive", {"label": "notes", "where": "secrets/../secrets/k"}, archive)
    assert hit is not None and hit.action == "deny"
    assert rules.check("archive", {"label": "secrets/x", "where": "notes/a"}, archive) is None
    rule = narrowest_rule(
        "archive", {"label": "l", "where": "notes/a.txt"}, tmp_path, archive.info()
    )
    assert rule == "archive(notes/**)"
    assert headline_of(archive.info()) == Headline(arg="where", kind="path")


def test_a_template_fills_from_the_arguments() -> None:
    info = deploy.info()
    assert narrowest_rule("deploy", {"target": "prod"}, Path("/r"), info) == "deploy(prod)"
    assert narrowest_rule("deploy", {"force": True}, Path("/r"), info) is None


def test_code_is_offered_at_most_exactly() -> None:
    info = sql.info()
    assert narrowest_rule("sql", {"query": "select 1"}, Path("/r"), info) == "sql(select 1)"
    assert narrowest_rule("sql", {"query": "select *"}, Path("/r"), info) is None
    rules = PermissionRules()
    rules.allow("sql(select 1)")
    assert rules.check("sql", {"query": "select 1"}, sql) is not None
    assert rules.check("sql", {"query": "select 1; drop table t"}, sql) is None


def test_a_declaration_naming_no_parameter_fails_at_decoration() -> None:
    with pytest.raises(TypeError, match=r"subject.arg='nope' is not a parameter"):

        @tool(register=False, subject=Subject(arg="nope"))
        def f(x: str) -> str:
            return x


def test_an_unknown_kind_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown kind"):
        Subject(arg="x", kind="file")  # type: ignore[arg-type]


def test_builtins_declare_their_subject() -> None:
    from nb_tools.builtin import builtin_tools

    declared = {t.info().name: subject_of(t.info()) for t in builtin_tools(".")}
    kinds = {name: (s.arg, s.kind) for name, s in declared.items()}
    assert kinds["bash"] == ("command", "command")
    assert kinds["read_file"] == ("file_path", "path")
    assert kinds["web_fetch"] == ("url", "url")
    assert kinds["apply_patch"] == ("input", "path")
    assert declared["grep"].reads_files and declared["grep"].searches
    assert declared["glob"].searches and not declared["glob"].reads_files
