from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from nb_tools.tool import truncate

MARKER = re.compile(r"\n… \[truncated (\d+) bytes\] …\n")


def test_text_that_fits_comes_back_unchanged() -> None:
    s = "héllo wörld" * 3
    assert truncate(s, len(s.encode())) is s
    assert truncate("", 0) == ""


def test_keeps_head_and_tail_and_says_how_much_was_cut() -> None:
    s = "".join(f"line {i}\n" for i in range(100))  # 790 bytes
    out = truncate(s, 100)
    assert out == (
        "line 0\nline 1\nline 2\nline 3\nline 4\n"
        "\n… [truncated 721 bytes] …\n"
        "5\nline 96\nline 97\nline 98\nline 99\n"
    )
    assert len(out.encode()) <= 100


def test_never_splits_a_code_point() -> None:
    s = "€" * 50  # 3 bytes each
    out = truncate(s, 46)  # the marker takes 31 bytes: 8 are left for the head, 7 for the tail
    assert out == "€€\n… [truncated 138 bytes] …\n€€"
    assert len(out.encode()) == 43


def test_lone_surrogates_survive() -> None:
    s = "\ud800" + "a" * 100 + "\udfff"
    out = truncate(s, 60)
    assert out.startswith("\ud800a") and out.endswith("a\udfff")


def test_budget_smaller_than_the_marker_cuts_the_head_only() -> None:
    assert truncate("abcdefghij" * 10, 5) == "abcde"
    assert truncate("ééééé", 3) == "é"
    assert truncate("abc", 0) == ""


@given(st.text(), st.integers(min_value=0, max_value=300))
def test_properties(s: str, max_bytes: int) -> None:
    out = truncate(s, max_bytes)
    size = len(s.encode("utf-8", "surrogatepass"))
    if size <= max_bytes:
        assert out == s
        return
    assert len(out.encode("utf-8", "surrogatepass")) <= max_bytes
    found = MARKER.search(out)
    if found is None:  # budget below the marker: a head cut
        assert s.startswith(out)
        return
    head, tail = out[: found.start()], out[found.end() :]
    assert s.startswith(head) and s.endswith(tail)
    removed = (
        size
        - len(head.encode("utf-8", "surrogatepass"))
        - len(tail.encode("utf-8", "surrogatepass"))
    )
    assert int(found.group(1)) == removed
    assert len(s) - len(head) - len(tail) >= 1
