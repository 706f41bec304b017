"""The binding store that holds a call to the paths its card showed."""

from __future__ import annotations

from pathlib import Path

import pytest

from nb_tools.builtin._binding import Bindings, Target, call_key, verify


def target(raw: str, path: str, protected: bool = False) -> Target:
    return Target(raw=raw, path=Path(path), protected=protected)


def test_call_key_ignores_key_order_and_spacing() -> None:
    a = call_key('{"file_path": "a", "content": "x"}')
    assert a == call_key('{"content":"x","file_path":"a"}')
    assert a == call_key({"content": "x", "file_path": "a"})
    assert a != call_key({"content": "y", "file_path": "a"})


def test_first_look_wins_unless_a_card_replaces_it() -> None:
    b = Bindings()
    first = (target("a", "/r/a"),)
    assert b.bind("k", first) == first
    assert b.bind("k", (target("a", "/r/b"),)) == first
    newer = (target("a", "/r/c"),)
    assert b.bind("k", newer, replace=True) == newer
    assert b.take("k") == newer and b.take("k") == newer  # stays: an identical call shares it


def test_bounded() -> None:
    b = Bindings(limit=3)
    for i in range(10):
        b.bind(str(i), (target("a", f"/r/{i}"),))
    assert len(b) == 3 and b.peek("0") is None and b.peek("9") is not None


def test_verify_names_both_paths_and_refuses_new_protection() -> None:
    bound = (target("notes.txt", "/r/notes.txt"),)
    verify("write_file", bound, (target("notes.txt", "/r/notes.txt"),), str)
    verify("write_file", None, (target("notes.txt", "/r/.git/x", True),), str)
    with pytest.raises(ValueError, match=r"resolved to '/r/notes.txt'.*now resolves to '/r/.git"):
        verify("write_file", bound, (target("notes.txt", "/r/.git/hooks/pre-commit"),), str)
    with pytest.raises(ValueError, match="now a protected path"):
        verify("write_file", bound, (target("notes.txt", "/r/notes.txt", True),), str)
    with pytest.raises(ValueError, match="was not among the paths"):
        verify("apply_patch", bound, (target("other", "/r/other"),), str)
