"""The tolerant read of tool arguments as they stream: cut at every character of a real
``write_file`` argument stream, what is read is always a prefix of the end result."""

from __future__ import annotations

import json
from typing import Any

import pytest

from nb_tools.transcript import PartialArguments, completed_arguments

CONTENT = (
    'def greet(name: str) -> str:\n    """Say hello."""\n'
    '    return f"h\\u00e9llo {name} \\t 😀 \U0001f9ea"\n\n'
    "PATH = r'C:\\temp\\new'  # a backslash and a quote: \" \\\" /\n"
)
ARGS = {"file_path": "src/greet.py", "content": CONTENT, "line": 12, "force": True}
STREAMS = {
    # Claude sends non-ASCII as it is; OpenAI-compatible servers often escape it, so an
    # emoji is two \u escapes (a surrogate pair) that a piece boundary can split
    "raw": json.dumps(ARGS, ensure_ascii=False),
    "escaped": json.dumps(ARGS, ensure_ascii=True),
    "spaced": json.dumps(ARGS, ensure_ascii=True, indent=2),
}


def _check_prefix(value: Any, final: dict[str, Any]) -> None:
    """``value`` could be what the stream ends in, read early: the members so far, each
    whole but the last string, which is a prefix of its final text."""
    if value is None:
        return
    assert isinstance(value, dict)
    keys = list(value)
    assert keys == list(final)[: len(keys)]
    for key in keys[:-1]:
        assert value[key] == final[key]
    last = keys[-1] if keys else None
    if last is not None:
        if isinstance(value[last], str):
            assert final[last].startswith(value[last])
        else:
            assert value[last] == final[last]
    json.dumps(value, ensure_ascii=False).encode("utf-8")  # no lone surrogate


@pytest.mark.parametrize("form", sorted(STREAMS))
def test_every_cut_of_a_write_file_stream_reads_a_prefix(form: str) -> None:
    text = STREAMS[form]
    for cut in range(len(text) + 1):
        reader = PartialArguments()
        reader.feed(text[:cut])
        first = reader.value()
        _check_prefix(first, ARGS)
        reader.feed(text[cut:])
        assert reader.value() == ARGS, cut
        _check_prefix(completed_arguments(text[:cut]), ARGS)


@pytest.mark.parametrize("form", sorted(STREAMS))
def test_character_by_character_the_content_only_grows(form: str) -> None:
    text = STREAMS[form]
    reader = PartialArguments()
    seen = 0
    for ch in text:
        reader.feed(ch)
        value = reader.value()
        _check_prefix(value, ARGS)
        content = (value or {}).get("content", "")
        assert len(content) >= seen
        seen = len(content)
        if "content" in (value or {}):  # the path came first, and it is whole
            assert reader.open_key in (None, "content")
            assert value["file_path"] == "src/greet.py"
        elif value and "file_path" in value and reader.open_key is None:
            assert value["file_path"] == "src/greet.py"  # whole once its quote came
    assert reader.value() == ARGS and reader.open_key is None


def test_a_surrogate_pair_split_across_pieces_is_left_out_until_whole() -> None:
    reader = PartialArguments()
    reader.feed('{"content": "a\\ud83d')
    assert reader.value() == {"content": "a"}
    reader.feed("\\ude")
    assert reader.value() == {"content": "a"}
    reader.feed('00b"}')
    assert reader.value() == {"content": "a😀b"}


def test_unfinished_keys_scalars_and_escapes_are_left_out() -> None:
    assert completed_arguments("") is None
    assert completed_arguments("{") == {}
    assert completed_arguments('{"pa') == {}
    assert completed_arguments('{"path"') == {}
    assert completed_arguments('{"path": ') == {}
    assert completed_arguments('{"path": "a.py", "n": 1') == {"path": "a.py"}
    assert completed_arguments('{"path": "a.py", "n": 12,') == {"path": "a.py", "n": 12}
    assert completed_arguments('{"ok": tru') == {}
    assert completed_arguments('{"s": "x\\') == {"s": "x"}
    assert completed_arguments('{"s": "x\\u00') == {"s": "x"}
    assert completed_arguments('{"edits": [{"old": "a", "new": "b') == {
        "edits": [{"old": "a", "new": "b"}]
    }
    assert completed_arguments('{"edits": [1, 2') == {"edits": [1]}


def test_text_that_is_not_json_keeps_the_last_value_read() -> None:
    reader = PartialArguments()
    reader.feed('{"path": "a.py", ')
    assert reader.value() == {"path": "a.py"}
    reader.feed("}{oops")
    assert reader.value() == {"path": "a.py"}
