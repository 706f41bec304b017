"""The docs' protection tables are the code's: generated from ``nb_tools.sandbox.TABLE``
and ``HOME_ALLOW`` by ``scripts/gen_protection_docs.py``; this fails when they differ."""

from __future__ import annotations

import importlib.util
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_the_docs_tables_match_the_code() -> None:
    spec = importlib.util.spec_from_file_location(
        "gen_protection_docs", REPO / "scripts" / "gen_protection_docs.py"
    )
    assert spec is not None and spec.loader is not None
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    for path, name, make in gen.DOCS:
        text = path.read_text()
        assert gen.render(text, name, make()) == text, (
            f"{path.relative_to(REPO)} is stale: run python scripts/gen_protection_docs.py"
        )
    assert "`.nb_tools`" in gen.protection_table()  # the table holds the rows
