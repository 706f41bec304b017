"""The Messages API's errors: each error type's HTTP status, whether running the turn
again can help, and what else the user can do (https://docs.claude.com/en/api/errors)."""

from __future__ import annotations

from nb_tools.model._provider import ModelError

STATUS_WORDS = {
    400: "rejected the request",
    401: "refused the credentials",
    402: "refused the request for billing reasons",
    403: "denied permission",
    404: "found no such model or endpoint",
    408: "timed out",
    413: "found the request too large",
    429: "rate limit reached",
    500: "internal error",
    502: "bad gateway",
    503: "unavailable",
    504: "timed out",
    529: "overloaded",
}
# The API's error types (https://docs.claude.com/en/api/errors) and their HTTP status.
STATUS_BY_ERROR_TYPE = {
    "invalid_request_error": 400,
    "authentication_error": 401,
    "billing_error": 402,
    "permission_error": 403,
    "not_found_error": 404,
    "request_too_large": 413,
    "rate_limit_error": 429,
    "api_error": 500,
    "timeout_error": 504,
    "overloaded_error": 529,
}
WAY_OUT = {
    401: "check ANTHROPIC_API_KEY (or pass api_key=)",
    402: "check the account's billing and credit balance in the Anthropic Console",
    403: "check the key's workspace and permissions",
    404: "check the model name",
    413: "shorten the conversation or the tool output (or attach smaller files)",
    429: "wait a little and run the turn again",
    500: "run the turn again",
    504: "run the turn again (a smaller max_tokens answers sooner)",
    529: "wait a little and run the turn again",
}


def error_detail(body: object, fallback: str) -> tuple[str, str]:
    """(error type, message) from the API's ``{"type": "error", "error": {...}}`` body."""
    if isinstance(body, dict):
        error = body.get("error", body)
        if isinstance(error, dict):
            return str(error.get("type", "")), str(error.get("message", fallback))
    return "", fallback


def mid_stream_error(error_type: str, detail: str) -> ModelError:
    """An error event inside a 200 stream: its type says the status, and so whether running
    the turn again can help and what else the user can do."""
    status = STATUS_BY_ERROR_TYPE.get(error_type, 500)
    way_out = WAY_OUT.get(status, "run the turn again")
    return ModelError(
        f"Anthropic API stream failed mid-way with {error_type or 'an error'} "
        f"({status}): {detail}; {way_out}",
        status=status,
        retryable=retryable_status(status),
        error_type=error_type,
    )


def retryable_status(status: int) -> bool:
    return status in (408, 409, 429) or status >= 500


def cut_error(reason: str) -> ModelError:
    return ModelError(
        f"Anthropic API stream was cut mid-way ({reason}); the partial reply was dropped "
        "and the conversation is unchanged, so the turn can be run again",
        retryable=True,
    )
