"""Claude's newer request features, as the Messages API takes them (checked against the
anthropic SDK 2.14's types and the API documentation, 2026-12-01): structured outputs
(``output_config.format``), the prompt-cache TTL, tool search, the memory tool, the MCP
connector and the Files API. Plain data and small functions: no SDK import."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, TypeAlias

from nb_tools.model._pricing import model_version

CacheTTL: TypeAlias = Literal["5m", "1h"]
CACHE_TTLS: tuple[str, ...] = ("5m", "1h")
DEFAULT_CACHE_TTL: CacheTTL = "1h"
"""A notebook's pace: a person reads, thinks and edits between cells, often for more than
five minutes, and under the 5-minute TTL every such cell writes the whole prefix (tools,
system prompt, conversation) again at 1.25x the input price. A 1-hour write costs 2x but
the next cells read it at 0.1x (``benchmarks/bench_cache_ttl.py`` measures a session)."""

# -- tool search --------------------------------------------------------------------------

TOOL_SEARCH_TOOL: Mapping[str, str] = {
    "type": "tool_search_tool_bm25_20251119",
    "name": "tool_search_tool_bm25",
}
"""The server tool Claude searches deferred tools with (BM25 over names, descriptions and
argument names); declared whenever a tool has ``defer_loading``."""
TOOL_SEARCH_THRESHOLD = 30
"""With ``tool_search="auto"``, MCP tools are deferred once the registry holds more tools
than this, on a model that has tool search (:func:`tool_search`): every tool definition
costs input tokens on every turn."""


def tool_search(model: str) -> bool:
    """Whether ``model`` has tool search (the models of structured outputs: 4.5 and later)."""
    return structured_outputs(model)


# -- the Files API ------------------------------------------------------------------------------

BETA_FILES_API = "files-api-2025-04-14"
"""Sent with an upload and with every request that names an uploaded file."""


# -- programmatic tool calling ----------------------------------------------------------------


def live_container(container: Mapping[str, Any] | None, now: float | None = None) -> str | None:
    """The id of a code-execution container a request may name: None when there is none or
    its ``expires_at`` (ISO 8601) has passed."""
    if not container or not container.get("id"):  # most requests: before any import
        return None
    import datetime
    import time

    expires = container.get("expires_at")
    if isinstance(expires, str) and expires:
        try:
            when = datetime.datetime.fromisoformat(expires.replace("Z", "+00:00"))
        except ValueError:
            return str(container["id"])
        if when.tzinfo is None:
            when = when.replace(tzinfo=datetime.UTC)
        if when.timestamp() <= (time.time() if now is None else now):
            return None
    return str(container["id"])


# -- structured outputs ----------------------------------------------------------------------

# String formats the API's constrained decoding knows; another format is described in text.
_STRING_FORMATS = frozenset(
    {"date-time", "time", "date", "duration", "email", "hostname", "uri", "ipv4", "ipv6", "uuid"}
)
# Keywords the API's JSON outputs do not take (numbers, lengths, patterns, defaults): moved
# into the description, so the model still reads them; our own validation checks them.
_DESCRIBED = (
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "minLength",
    "maxLength",
    "pattern",
    "default",
    "format",
    "minItems",
    "maxItems",
)


def structured_outputs(model: str) -> bool:
    """Whether ``model`` takes ``output_config.format`` (Claude Opus, Sonnet and Haiku 4.5
    and later; an unversioned or unknown Claude name is taken as the newest). Tool search
    (``defer_loading``) has the same models."""
    name = model.lower()
    version = model_version(name)[:2]
    if not version or not any(f in name.split("-") for f in ("opus", "sonnet", "haiku")):
        return True
    return version >= (4, 5)


def output_format(schema: Mapping[str, Any]) -> dict[str, Any]:
    """``output_config.format`` asking for JSON matching ``schema`` (our schema subset):
    every object closed, a type list spelled as ``anyOf``, and the keywords the API does
    not take written into the description."""
    return {"type": "json_schema", "schema": _closed(schema)}


def _closed(schema: Mapping[str, Any]) -> dict[str, Any]:
    src = dict(schema)
    types = src.pop("type", None)
    if isinstance(types, list):
        if len(types) == 1:
            types = types[0]
        else:
            description = src.pop("description", None)
            out: dict[str, Any] = {
                "anyOf": [
                    {"type": "null"} if t == "null" else _closed({**src, "type": t}) for t in types
                ]
            }
            if description:
                out["description"] = description
            return out
    out = {}
    if types is not None:
        out["type"] = types
    extra: dict[str, Any] = {}
    for key in _DESCRIBED:
        if key not in src:
            continue
        value = src.pop(key)
        if key == "format" and value in _STRING_FORMATS:
            out["format"] = value
        elif key == "minItems" and value in (0, 1):
            out["minItems"] = value
        else:
            extra[key] = value
    for key in ("title", "description", "enum"):
        if key in src:
            out[key] = src[key]
    if "anyOf" in src:
        out["anyOf"] = [_closed(v) for v in src["anyOf"]]
    if types == "object" or "properties" in src:
        out["properties"] = {k: _closed(v) for k, v in (src.get("properties") or {}).items()}
        out["required"] = list(src.get("required") or ())
        out["additionalProperties"] = False
    if "items" in src:
        out["items"] = _closed(src["items"])
    if extra:
        note = "{" + ", ".join(f"{k}: {_text(v)}" for k, v in extra.items()) + "}"
        out["description"] = f"{out['description']}\n\n{note}" if out.get("description") else note
    return out


def _text(value: object) -> str:
    import json

    return json.dumps(value, ensure_ascii=False)
