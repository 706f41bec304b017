"""What each Claude model takes: output and context limits, thinking, effort, compaction,
and the versions of Anthropic-defined and server tools it knows (from the Messages API
documentation, checked 2026-12-01). Model names are read by family and version, so a newer
dated snapshot of a known model takes that model's entry."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from nb_tools.model._pricing import model_version
from nb_tools.model._provider import DEFAULT_MAX_TOKENS, ModelLimits, RequestFeatures

BETA_INTERLEAVED_THINKING = "interleaved-thinking-2025-05-14"
BETA_EFFORT = "effort-2025-11-24"
BETA_COMPACTION = "compact-2026-01-12"
BETA_CONTEXT_MANAGEMENT = "context-management-2025-06-27"
BETA_WEB_FETCH = "web-fetch-2025-09-10"
BETA_CODE_EXECUTION = "code-execution-2025-08-25"


_CLAUDE = ModelLimits(
    context_window=200_000,
    max_output_tokens=64_000,
    default_max_tokens=DEFAULT_MAX_TOKENS,
    thinking=True,
    claude4=True,
)


CLAUDE_FEATURES = RequestFeatures(
    server_tools=True,
    context_management=True,
    betas=True,
    anthropic_tools=True,
    images_in_tool_results=True,
    server_token_counting=True,
)
"""What the Messages API takes of a request (``AnthropicProvider.features``)."""


@functools.lru_cache(maxsize=64)
def limits_for(model: str) -> ModelLimits:
    """The limits of the Claude model ``model`` (``AnthropicProvider.limits()``); an
    unknown model gets the newest family's (a new model is likelier to take more than less).
    Other providers' models have their own (``Provider.limits()``)."""
    name = model.lower()
    version = model_version(name)[:2]
    family = next((f for f in ("opus", "sonnet", "haiku") if f in name.split("-")), "")
    if version and version[0] == 3:  # claude-3-7-sonnet, claude-3-5-haiku, ...
        if version >= (3, 7):
            return replace(_CLAUDE, claude4=False)
        return replace(_CLAUDE, max_output_tokens=8_192, thinking=False, claude4=False)
    if family == "opus" and version < (4, 5):
        return replace(_CLAUDE, max_output_tokens=32_000, clear_tool_uses=True)
    newest = version >= (4, 6) or not version or not family
    return replace(
        _CLAUDE,
        max_output_tokens=128_000 if family == "opus" and version >= (4, 6) else 64_000,
        adaptive_thinking=newest,
        effort=newest or (family == "opus" and version >= (4, 5)),
        server_compaction=newest,
        clear_tool_uses=True,
    )


# Anthropic-defined client tools: our type -> (the type and name a model of each kind takes).
def anthropic_tool(base_type: str, name: str, model: str) -> Mapping[str, str] | None:
    """The declaration (``{"type", "name"}``) of an Anthropic-defined tool for ``model``,
    or None when this model's version of the tool has another name than ours (it is then
    declared as a custom tool with its schema)."""
    claude4 = limits_for(model).claude4
    version = model_version(model)[:2]
    if base_type.startswith("text_editor_"):
        if claude4:
            wanted = ("text_editor_20250728", "str_replace_based_edit_tool")
        elif version >= (3, 7):
            wanted = ("text_editor_20250124", "str_replace_editor")
        else:
            wanted = ("text_editor_20241022", "str_replace_editor")
    elif base_type.startswith("bash_"):
        wanted = ("bash_20250124" if claude4 or version >= (3, 7) else "bash_20241022", "bash")
    else:
        wanted = (base_type, name)
    if wanted[1] != name:
        return None
    return {"type": wanted[0], "name": wanted[1]}


# Server tools (the API runs them): name -> (definition, beta header or "").
SERVER_TOOLS: Mapping[str, tuple[Mapping[str, Any], str]] = {
    "web_search": ({"type": "web_search_20250305", "name": "web_search"}, ""),
    "web_fetch": ({"type": "web_fetch_20250910", "name": "web_fetch"}, BETA_WEB_FETCH),
    "code_execution": (
        {"type": "code_execution_20250825", "name": "code_execution"},
        BETA_CODE_EXECUTION,
    ),
}


def server_tool(spec: str | Mapping[str, Any]) -> tuple[dict[str, Any], str]:
    """A server tool's definition and its beta header ("" for none) from its name
    (``"web_search"``) or the API's own definition (a dict, sent as given)."""
    if isinstance(spec, str):
        known = SERVER_TOOLS.get(spec)
        if known is None:
            raise ValueError(
                f"server tool {spec!r} is unknown: use one of {', '.join(SERVER_TOOLS)}, or "
                "pass the API's definition as a dict"
            )
        return dict(known[0]), known[1]
    definition = dict(spec)
    if "name" not in definition or "type" not in definition:
        raise ValueError(f"server tool {definition!r}: a definition needs 'type' and 'name'")
    beta = next(
        (b for n, (_, b) in SERVER_TOOLS.items() if str(definition["type"]).startswith(n)), ""
    )
    return definition, beta
