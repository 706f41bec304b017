"""The limits of OpenAI's models (from OpenAI's model pages, checked 2026-12-01), and of a
model as an OpenAI-compatible server reports it in ``GET /v1/models`` (vLLM's
``max_model_len``, OpenRouter's ``context_length``).

No ``default_max_tokens``: an OpenAI or OpenAI-compatible request leaves the output limit
to the server unless the user set one (vLLM refuses ``prompt + max_tokens >
max_model_len`` instead of clamping, so a fixed number breaks small deployments)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from nb_tools.model._provider import ModelLimits

__all__ = ["openai_limits", "served_limits"]

# Model name prefix -> (context window, max output tokens); the longest prefix wins.
_OPENAI: Mapping[str, tuple[int, int]] = {
    "gpt-5": (400_000, 128_000),
    "gpt-5-chat": (128_000, 16_384),
    "gpt-4.1": (1_047_576, 32_768),
    "gpt-4o": (128_000, 16_384),
    "o1": (200_000, 100_000),
    "o3": (200_000, 100_000),
    "o4-mini": (200_000, 100_000),
}


def openai_limits(model: str) -> ModelLimits:
    """The limits of one of OpenAI's models; unknown ones are unknown."""
    name = model.lower()
    prefix = max((p for p in _OPENAI if name.startswith(p)), key=len, default="")
    if not prefix:
        return ModelLimits()
    window, output = _OPENAI[prefix]
    return ModelLimits(context_window=window, max_output_tokens=output)


def served_limits(entry: Mapping[str, Any]) -> ModelLimits | None:
    """The limits in one ``/v1/models`` entry, when it reports any."""
    window = entry.get("max_model_len") or entry.get("context_length")
    top = entry.get("top_provider")
    output = top.get("max_completion_tokens") if isinstance(top, Mapping) else None
    if not isinstance(window, int) or window <= 0:
        return None
    return ModelLimits(
        context_window=window,
        max_output_tokens=output if isinstance(output, int) and output > 0 else window,
    )
