"""Every dispatch over the ``Event`` union outside the transcript renderers is exhaustive:
it ends in ``assert_never``, so an event kind added to the union and not handled fails
type-checking (and, at run time, fails loudly instead of being dropped)."""

from __future__ import annotations

import typing
from pathlib import Path

import pytest

from nb_tools.agent._events import Event
from nb_tools.transcript._recorder import TranscriptRecorder

pytest.importorskip("ipywidgets")

ROOT = Path(__file__).resolve().parents[2]
DISPATCHES = ["nb_tools/jupyter/_view.py"]
"""The modules with a ``match`` over ``Event`` (the transcript and display modules have
their own checks)."""


def test_the_live_view_refuses_an_event_that_is_not_an_event() -> None:
    from nb_tools.jupyter._view import RunView

    class Quiet(TranscriptRecorder):  # the recorder's own checks are not under test
        def record(self, event: Event) -> None:
            pass

    view = RunView(Quiet("go", model="m"))
    stranger = typing.cast(Event, object())
    with pytest.raises(AssertionError):
        view.on_event(stranger)


def test_every_event_kind_is_listed_in_the_live_view() -> None:
    """Each member of the union is named in ``RunView.on_event`` (shown or ignored on
    purpose), so the type check below covers them by name, not through a catch-all."""
    import inspect

    from nb_tools.jupyter._view import RunView

    source = inspect.getsource(RunView.on_event)
    missing = [k.__name__ for k in typing.get_args(Event) if f"{k.__name__}()" not in source]
    assert missing == []


def test_event_dispatches_type_check_as_exhaustive(tmp_path: Path) -> None:
    """mypy on the dispatching modules: an unhandled kind reaches ``assert_never`` with a
    type other than ``Never`` and is reported."""
    api = pytest.importorskip("mypy.api")
    out, err, status = api.run(
        [
            "--follow-imports=silent",
            "--ignore-missing-imports",
            "--no-error-summary",
            "--cache-dir",
            str(tmp_path / "mypy"),
            *(str(ROOT / p) for p in DISPATCHES),
        ]
    )
    assert status == 0, out + err
