"""The ``%%agent --over`` progress view, driven without a browser (``Button.click()``)."""

from __future__ import annotations

from nb_tools.agent import MapProgress
from nb_tools.jupyter._map_view import MapView, progress_text


def progress(**kw: object) -> MapProgress:
    base: dict = dict(
        rows=40,
        done=12,
        running=8,
        failed=1,
        spent_usd=0.0312,
        budget_usd=2.0,
        elapsed=6.0,
        eta=14.2,
    )
    base.update(kw)
    return MapProgress(**base)


def test_the_line_says_rows_cost_against_budget_and_eta() -> None:
    assert progress_text(progress()) == (
        "12/40 rows done · 8 running · 1 failed · $0.0312 of $2.00 · ETA 14 s"
    )
    assert progress_text(progress(failed=0, budget_usd=None, eta=None)) == (
        "12/40 rows done · 8 running · $0.0312"
    )


def test_stop_sets_the_maps_stop_event_once() -> None:
    view = MapView()
    assert not view.stop.is_set()
    view.button.click()
    assert view.stop.is_set() and view.button.disabled
    view.update(progress(done=40, running=0, eta=0.0))
    assert view.text.value.startswith("40/40 rows done")
