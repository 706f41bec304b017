"""What an OpenAI-compatible server's failure says to the user: the server's own words
(a JSON error's message, or a body that is not JSON, whole), and the way out."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from nb_tools.model._provider import ModelError

__all__ = ["connection_error", "context_length_problem", "status_error", "stream_error"]

MAX_BODY_CHARS = 2000
"""A body longer than this is shown by its head (an HTML error page, say)."""

_WAY_OUT = {
    401: "set OPENAI_API_KEY (or the server's own key variable) or pass api_key=",
    403: "check the key's project and permissions",
    404: "check the model name (and, for a local server, that the model is pulled)",
    429: "wait a little and run the turn again, or check the account's quota",
}
_CONTEXT = re.compile(
    r"context (length|window)|maximum context|max_model_len|prompt is too long|"
    r"(max_tokens|max_completion_tokens).{0,40}too large|exceeds? the (available )?context",
    re.I,
)
CONTEXT_WAY_OUT = (
    "the conversation and the reply's max_tokens do not fit the model's context: leave "
    "max_tokens unset (Agent(max_tokens=None): the server then fits the reply into what is "
    "left) or lower it, start the server with a larger context (vLLM --max-model-len, "
    "llama.cpp's -c, Ollama's num_ctx), or start a new conversation (%%agent --new, "
    "agent.reset())"
)


def _detail(body: Any) -> str:
    """The server's message: ``{"error": {"message"}}`` (OpenAI), ``{"error": "..."}``
    (Ollama's own API), ``{"message"}`` (vLLM's older ``ErrorResponse``), ``{"detail"}``
    (FastAPI servers); any other body whole."""
    if isinstance(body, Mapping):
        inner = body.get("error", body)
        if isinstance(inner, str) and inner:
            return inner
        if isinstance(inner, Mapping):
            for key in ("message", "detail"):
                if isinstance(inner.get(key), str) and inner[key]:
                    return str(inner[key])
        body = json.dumps(body, ensure_ascii=False)
    text = str(body or "").strip()
    if len(text) > MAX_BODY_CHARS:
        text = text[:MAX_BODY_CHARS] + f"… ({len(text):,} characters in all)"
    return text


def context_length_problem(status: int, detail: str) -> bool:
    return status in (400, 413, 422) and bool(_CONTEXT.search(detail))


def status_error(err: Any, retries: int, *, name: str, where: str) -> ModelError:
    """The ``ModelError`` for the SDK's ``APIStatusError`` ``err``."""
    status = int(getattr(err, "status_code", 0) or 0)
    detail = _detail(getattr(err, "body", None))
    retryable = status in (408, 409, 429) or status >= 500
    way = _WAY_OUT.get(status, "run the turn again" if status >= 500 else "")
    body = getattr(err, "body", None)
    if status == 404 and not isinstance(body, Mapping):
        # Not the API's JSON: the path is not served (Ollama answers "404 page not found"
        # for a base URL without /v1).
        way = (
            f"{where} does not serve the Chat Completions path: check the base URL (an "
            "OpenAI-compatible server's ends in /v1, e.g. http://localhost:11434/v1)"
        )
    elif context_length_problem(status, detail):
        way = CONTEXT_WAY_OUT
    after = f" after {retries} retries" if retryable else ""
    text = f"{name}: the server answered {status}{after}" + (f": {detail}" if detail else "")
    return ModelError(text + (f"; {way}" if way else ""), status=status, retryable=retryable)


def connection_error(err: BaseException, *, name: str, where: str) -> ModelError:
    """The server could not be reached (no reply began)."""
    return ModelError(
        f"{name}: could not reach {where} ({err}); check that the server runs and the base URL",
        retryable=True,
    )


def stream_error(err: BaseException, *, name: str, started: bool) -> ModelError:
    """The reply's stream broke off after the server began answering."""
    what = "mid-reply" if started else "before the reply began"
    cause = f"{type(err).__name__}: {err}" if str(err) else type(err).__name__
    body = getattr(err, "body", None)
    if isinstance(body, Mapping):  # an error object sent as an event of the stream
        cause = f"the server sent an error: {_detail(body)}"
    return ModelError(
        f"{name}: the reply stream was cut {what} ({cause}); run the turn again",
        retryable=True,
    )
