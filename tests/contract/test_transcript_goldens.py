"""Golden tests: the Python fallback (``transcript_html``) shows what
``tests/fixtures/transcripts/*.view.json`` say; ``labextension/test/golden.test.js`` checks
the labextension's renderer against the same files (run by test_labextension_jlpm.py).
After a deliberate change of what a transcript shows, regenerate them with
``NB_TOOLS_UPDATE_GOLDENS=1 pytest tests/contract/test_transcript_goldens.py`` and check
the diff (and that ``jlpm test`` agrees)."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import jsonschema
import pytest
from transcript_view import view_of_html

from nb_tools.transcript._html import transcript_html
from nb_tools.transcript._schema import load_schema
from nb_tools.transcript._types import ITEM_KINDS, STOP_REASONS, TOOL_STATUSES

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "transcripts"
NAMES = sorted(p.stem for p in FIXTURES.glob("*.json") if not p.name.endswith(".view.json"))
UPDATE = os.environ.get("NB_TOOLS_UPDATE_GOLDENS") == "1"


def load(name: str) -> dict:
    return json.loads((FIXTURES / f"{name}.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("name", NAMES)
def test_the_fixture_follows_the_schema(name: str) -> None:
    jsonschema.Draft202012Validator(load_schema()).validate(load(name))


@pytest.mark.parametrize("name", NAMES)
def test_the_html_fallback_shows_what_the_golden_says(name: str) -> None:
    view = view_of_html(transcript_html(load(name)))
    golden = FIXTURES / f"{name}.view.json"
    if UPDATE:
        golden.write_text(json.dumps(view, indent=1, ensure_ascii=False, sort_keys=True) + "\n")
    assert view == json.loads(golden.read_text(encoding="utf-8"))


def test_the_fixtures_cover_every_kind_status_and_stop_reason() -> None:
    kinds, statuses, reasons = set(), set(), set()
    for name in NAMES:
        d = load(name)
        reasons.add(d["stop_reason"])
        for item in d["items"]:
            kinds.add(item["kind"])
            if item["kind"] == "tool":
                statuses.add(item["status"])
    assert kinds == set(ITEM_KINDS)
    assert statuses == set(TOOL_STATUSES)
    # the model's own reasons that never end a run (tool_use, pause_turn) or read like
    # end_turn (stop_sequence) need no fixture of their own
    ordinary = {"tool_use", "pause_turn", "stop_sequence", "stopped"}
    assert set(STOP_REASONS) - ordinary <= reasons
    assert None in reasons  # a run still going


def test_only_whitelisted_base64_images_are_shown() -> None:
    html = transcript_html(load("images"))
    sources = re.findall(r'<img [^>]*src="([^"]*)"', html)
    assert len(sources) == 5  # png, jpeg, gif, webp parts and the one good display image
    for src in sources:
        assert re.fullmatch(r"data:image/(png|jpeg|gif|webp);base64,[A-Za-z0-9+/=]+", src), src
    assert "<script>" not in html and "javascript:" not in html
