"""The offline demo model: what ``%%agent`` runs when no API key is set, so a notebook
works anywhere. It is not clever: it calls the tools the prompt names (or the first
one) with arguments made from their schemas (``key=value`` in the prompt wins), then
reports what they returned."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

from nb_tools.model import (
    BaseProvider,
    ModelEvent,
    ModelLimits,
    ModelRequest,
    ToolResultBlock,
    ToolSpec,
)
from nb_tools.testing import Reply, ScriptedCall, ScriptedModel

DEMO_MODEL_NAME = "nb_tools-demo (offline)"
NOTICE = (
    "(Offline demo model: no ANTHROPIC_API_KEY is set. Set it, or call "
    "nb_tools.jupyter.use_model(...), to use Claude.)"
)
MAX_CALLS = 3


class DemoModel(BaseProvider):
    """A :class:`~nb_tools.model.Provider` that plays a plausible tool tour offline."""

    name = "DemoModel"

    @property
    def model(self) -> str:
        return DEMO_MODEL_NAME

    def limits(self) -> ModelLimits:
        return ModelLimits(default_max_tokens=8192)

    def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        return ScriptedModel([respond], model=DEMO_MODEL_NAME, check=False).stream(request)


def respond(request: ModelRequest) -> Reply:
    """The demo's reply to ``request``."""
    last = request.messages[-1] if request.messages else None
    results = [b.result for b in last.content if isinstance(b, ToolResultBlock)] if last else []
    prompt = last.text if last is not None else ""
    if results and not prompt.strip():
        return Reply(text=_summary(request, results))
    tools = list(request.tools)
    if not tools:
        return Reply(text=f"I have no tools to call in this session. {NOTICE}")
    chosen = [t for t in tools if re.search(rf"\b{re.escape(t.name)}\b", prompt)]
    chosen = chosen[:MAX_CALLS] or tools[:1]
    calls = tuple(ScriptedCall(name=t.name, arguments=arguments_for(t, prompt)) for t in chosen)
    names = ", ".join(c.name for c in calls)
    return Reply(text=f"Let me call {names}.", calls=calls)


def _summary(request: ModelRequest, results: Sequence[Any]) -> str:
    names = {}
    for m in request.messages:
        for c in m.tool_calls:
            names[c.id] = c.name
    lines = ["Here is what the tools returned:"]
    for r in results:
        text = r.content.strip().replace("\n", " ")
        if len(text) > 200:
            text = text[:200] + "…"
        kind = "failed" if r.is_error else "returned"
        extra = f" (+{len(r.parts)} image/document part(s))" if r.parts else ""
        lines.append(f"- {names.get(r.tool_use_id, 'a tool')} {kind}: {text or '(nothing)'}{extra}")
    lines.append(NOTICE)
    return "\n".join(lines)


def arguments_for(spec: ToolSpec, prompt: str) -> dict[str, Any]:
    """Arguments for ``spec`` from its schema: values the prompt gives as ``name=value``
    (or ``name: value``), else defaults and examples for the required properties."""
    schema = spec.input_schema
    props: Mapping[str, Any] = schema.get("properties") or {}
    required = set(schema.get("required") or ())
    out: dict[str, Any] = {}
    for name, sub in props.items():
        given = _given(name, prompt)
        if given is not None:
            out[name] = _convert(given, sub)
        elif name in required:
            out[name] = example(sub)
    return out


def _given(name: str, prompt: str) -> str | None:
    m = re.search(rf"\b{re.escape(name)}\s*[=:]\s*(\"[^\"]*\"|'[^']*'|[^\s,;]+)", prompt)
    if m is None:
        return None
    value = m.group(1)
    if value[:1] in "\"'":
        value = value[1:-1]
    return value


def _types(schema: Mapping[str, Any]) -> list[str]:
    t = schema.get("type")
    if isinstance(t, list):
        return [x for x in t if x != "null"]
    if isinstance(t, str):
        return [t]
    for option in schema.get("anyOf") or ():
        return _types(option)
    return []


def _convert(text: str, schema: Mapping[str, Any]) -> Any:
    types = _types(schema)
    kind = types[0] if types else "string"
    try:
        if kind == "integer":
            return int(text)
        if kind == "number":
            return float(text)
        if kind == "boolean":
            return text.lower() in ("1", "true", "yes", "on")
        if kind in ("array", "object"):
            return json.loads(text)
    except ValueError:
        return example(schema)
    return text


def example(schema: Mapping[str, Any]) -> Any:
    """A plausible value for ``schema``."""
    if "default" in schema:
        return schema["default"]
    if schema.get("enum"):
        return schema["enum"][0]
    options = schema.get("anyOf")
    if options:
        return example(options[0])
    types = _types(schema)
    kind = types[0] if types else "string"
    if kind == "integer":
        low = schema.get(
            "minimum", schema.get("exclusiveMinimum", 1) + 1 if "exclusiveMinimum" in schema else 2
        )
        high = schema.get("maximum")
        return int(low if high is None else min(max(low, 2), high))
    if kind == "number":
        return float(schema.get("minimum", 1.5))
    if kind == "boolean":
        return True
    if kind == "array":
        items = schema.get("items") or {}
        n = max(1, int(schema.get("minItems", 1)))
        return [example(items) for _ in range(n)]
    if kind == "object":
        props = schema.get("properties") or {}
        return {k: example(v) for k, v in props.items() if k in (schema.get("required") or ())}
    if kind == "null":
        return None
    fmt = schema.get("format")
    if fmt == "date":
        return "2026-01-15"
    if fmt == "date-time":
        return "2026-01-15T12:00:00Z"
    text = "example"
    min_len = int(schema.get("minLength", 0))
    return text + "x" * max(0, min_len - len(text))
