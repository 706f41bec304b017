"""The scan's order at its cap: a bulky data folder must not use the whole budget and
leave the project's code unread (masked from a call without a click)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from sandbox_helpers import require_sandbox, run

from nb_tools.sandbox import _scan


@pytest.fixture(autouse=True)
def sandbox() -> None:
    require_sandbox()


def _files(folder: Path, n: int, text: str = "1,2\n") -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(n):
        fd = os.open(folder / f"f{i:03d}.csv", os.O_WRONLY | os.O_CREAT, 0o644)
        os.write(fd, text.encode())
        os.close(fd)


async def test_code_is_read_before_a_bulky_folder_past_the_cap(
    ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A data/ 1.2 times the scan's cap (the cap at a tenth of MAX_SCAN_ENTRIES, to stay
    fast: 6,000 files for 5,000; the order does not depend on the size): a no-click
    `cat src/app.py` works, tests/ is listed, and what the scan left unread of data/ is
    masked (a file the walk cannot have read is not shown)."""
    monkeypatch.setattr(_scan, "MAX_SCAN_ENTRIES", _scan.MAX_SCAN_ENTRIES // 10)
    _scan._scan_cache.clear()
    (ws / "src").mkdir()
    (ws / "src" / "app.py").write_text("print('APP-MARKER-5150')\n")
    (ws / "tests").mkdir()
    (ws / "tests" / "test_app.py").write_text("def test(): pass\n")
    per = 50
    total = _scan.MAX_SCAN_ENTRIES * 6 // 5
    for i in range(total // per):  # data/zNN/bNNN: the deep, bulky part
        _files(ws / "data" / f"z{i // 10:02d}" / f"b{i:03d}", per)
    last = ws / "data" / f"z{(total // per - 1) // 10:02d}"
    (last / "late.txt").write_text("LATE-MARKER-5150\n")
    try:
        found = _scan.scan_all(ws.resolve(), links=True)
        root = ws.resolve()
        assert found.unscanned, "the workspace is past the cap"
        assert all(p.is_relative_to(root / "data") for p in found.unscanned), found.unscanned
        assert _scan.unapproved_problem(ws) is None
        r = await run(ws, "cat src/app.py; ls tests; cat data/z*/late.txt", approved=False)
        assert "APP-MARKER-5150" in r.content, r.content
        assert "test_app.py" in r.content, r.content
        assert "LATE-MARKER-5150" not in r.content, r.content
    finally:
        _scan._scan_cache.clear()
