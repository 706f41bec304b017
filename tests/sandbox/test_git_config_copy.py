"""The credential-free copy of a repository's git config is made safely from several
threads at once (the background warm-up builds a command line while a call does)."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from nb_tools.sandbox import _hide


def test_two_threads_making_the_same_copy_at_once_both_get_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cfg = tmp_path / "config"
    cfg.write_text('[remote "origin"]\n\turl = https://bot:tok@example.com/r\n')
    both_written = threading.Barrier(2, timeout=10)
    real_replace = os.replace

    def replace_when_both_wrote(src: str, dst: str) -> None:
        both_written.wait()  # each thread has written its temporary file
        real_replace(src, dst)

    monkeypatch.setattr(_hide.os, "replace", replace_when_both_wrote)
    got: list[object] = []

    def make() -> None:
        try:
            got.append(_hide.sanitized_git_config(cfg))
        except OSError as exc:
            got.append(exc)

    threads = [threading.Thread(target=make) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(isinstance(p, Path) for p in got), got
    assert "tok" not in Path(str(got[0])).read_text()
