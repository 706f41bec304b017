"""Which credential the Anthropic SDK uses, said once as a run notice instead of the SDK's
log line on stderr (red in a notebook cell, and gone from the record).

The SDK (checked against anthropic 2.15) logs, once per process, through the logger of
``anthropic.lib.credentials._auth`` when ``ANTHROPIC_API_KEY`` / ``ANTHROPIC_AUTH_TOKEN``
shadows a profile or federation configuration (``ANTHROPIC_PROFILE``,
``ANTHROPIC_CONFIG_DIR``, an ``active_config`` file), or when both are set. With no handler
configured, Python prints such a record to stderr. :func:`credential_notes` holds those
records back while the client is made and rewrites them as notices saying which credential
is used.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["SDK_CREDENTIALS_LOGGER", "credential_notes"]

SDK_CREDENTIALS_LOGGER = "anthropic.lib.credentials._auth"


class _Hold(logging.Filter):
    """Keeps the records instead of letting them reach a handler (or stderr)."""

    def __init__(self) -> None:
        super().__init__()
        self.records: list[logging.LogRecord] = []

    def filter(self, record: logging.LogRecord) -> bool:
        self.records.append(record)
        return False


def _note(record: logging.LogRecord) -> str:
    args = record.args if isinstance(record.args, tuple) else ()
    if "takes precedence" in str(record.msg) and args:
        var = str(args[0])
        return (
            f"using {var} from the environment; the Anthropic SDK's profile / federation "
            f"credentials (ANTHROPIC_PROFILE, ANTHROPIC_CONFIG_DIR, ~/.config/anthropic) are "
            f"not used (unset {var} to use them)"
        )
    if "are both set" in str(record.msg):
        return "using ANTHROPIC_API_KEY; ANTHROPIC_AUTH_TOKEN is set too and is not used"
    return f"Anthropic SDK: {record.getMessage()}"


@contextmanager
def credential_notes() -> Iterator[list[str]]:
    """Within the block, the SDK's credential warnings are held back; the list it yields
    gets one notice per warning when the block ends."""
    logger = logging.getLogger(SDK_CREDENTIALS_LOGGER)
    hold = _Hold()
    logger.addFilter(hold)
    notes: list[str] = []
    try:
        yield notes
    finally:
        logger.removeFilter(hold)
        notes.extend(dict.fromkeys(_note(r) for r in hold.records))
