"""Suite-wide guards: no test reaches a real model, whatever the environment holds."""

from __future__ import annotations

import functools
import os

import pytest

# Before anything imports the SDK: no real key or endpoint from the environment, and the
# Anthropic provider refuses any base URL that is not on loopback (NB_TOOLS_BLOCK_REAL_MODELS).
# Kernels and servers started by tests inherit this environment.
os.environ.pop("ANTHROPIC_API_KEY", None)
os.environ.pop("ANTHROPIC_BASE_URL", None)
os.environ["NB_TOOLS_BLOCK_REAL_MODELS"] = "1"
os.environ.setdefault("MPLBACKEND", "Agg")

from nb_tools.testing._guard import block_real_models  # noqa: F401  (autouse fixture)


@pytest.fixture(autouse=True)
def transcripts_follow_the_schema(monkeypatch: pytest.MonkeyPatch):
    """Every transcript a recorder builds in this process validates against the shipped
    schema (nb_tools/transcript/transcript.schema.json): the contract holds in every scenario
    the suite runs, not only in the schema's own tests."""
    from nb_tools.transcript._recorder import TranscriptRecorder

    validator = _transcript_validator()
    to_dict = TranscriptRecorder.to_dict
    problems: list[str] = []

    def checked(self: TranscriptRecorder) -> dict:
        d = to_dict(self)
        for error in validator.iter_errors(d):
            while error.context:  # inside anyOf: the item type whose kind matched
                branches: dict[object, list] = {}
                for e in error.context:
                    branches.setdefault(e.relative_schema_path[0], []).append(e)
                near = [
                    errors
                    for errors in branches.values()
                    if not any(e.validator == "const" and list(e.path) == ["kind"] for e in errors)
                ]
                error = (near[0] if near else error.context)[0]
            path = "/".join(map(str, error.absolute_path))
            problems.append(f"/{path}: {error.message[:300]}")
        return d

    monkeypatch.setattr(TranscriptRecorder, "to_dict", checked)
    yield
    assert not problems, "a transcript broke its schema:\n" + "\n".join(dict.fromkeys(problems))


@functools.cache
def _transcript_validator():
    import jsonschema

    from nb_tools.transcript._schema import load_schema

    return jsonschema.Draft202012Validator(load_schema())
