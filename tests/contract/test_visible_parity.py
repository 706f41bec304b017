"""Both renderers mark the same characters: ``tests/fixtures/hidden_codepoints.json`` lists
the code points Python's ``nb_tools.transcript._visible`` marks (alone between two letters),
as ranges; ``labextension/test/golden.test.js`` checks ``src/visible.ts`` marks exactly
these. Regenerate with ``NB_TOOLS_UPDATE_GOLDENS=1 pytest tests/contract``."""

from __future__ import annotations

import json
import os
from pathlib import Path

from nb_tools.transcript._visible import hidden_kind

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "hidden_codepoints.json"


def ranges() -> list[list[int]]:
    out: list[list[int]] = []
    for cp in range(0x110000):
        if 0xD800 <= cp <= 0xDFFF or not hidden_kind(f"a{chr(cp)}b", 1):
            continue
        if out and out[-1][1] == cp - 1:
            out[-1][1] = cp
        else:
            out.append([cp, cp])
    return out


def test_the_code_point_list_is_what_python_marks() -> None:
    found = ranges()
    if os.environ.get("NB_TOOLS_UPDATE_GOLDENS") == "1":
        FIXTURE.write_text(json.dumps(found) + "\n")
    assert found == json.loads(FIXTURE.read_text())
    flat = {cp for a, b in found for cp in range(a, b + 1)}
    assert {0x202E, 0x2066, 0x200B, 0xFEFF, 0xE0041, 0x1B, 0xAD} <= flat
    assert not flat & {ord(c) for c in "aé中😀שم\n\t "}
