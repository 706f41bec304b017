"""Who retries a provider's failed requests: its SDK client, or the caller (the agent)."""

from __future__ import annotations

from typing import Any

from nb_tools.model._provider import BaseProvider


class RetryHandover(BaseProvider):
    """Mixin for a provider with an SDK client (``_client``, ``None`` until first made)
    and ``max_retries``; the provider makes its client with ``sdk_retries()`` retries."""

    _client: Any
    max_retries: int
    _caller_retries: bool = False

    def take_over_retries(self) -> int:
        """For a caller that retries itself and shows each retry (the agent): the SDK
        client is then made with no retries, and this returns how many the caller should
        make (``max_retries``); 0 when a client exists already (it keeps its own)."""
        if self._client is not None and not self._caller_retries:
            return 0
        self._caller_retries = True
        return self.max_retries

    def sdk_retries(self) -> int:
        """The retries the SDK client makes itself: none once the caller took them over."""
        return 0 if self._caller_retries else self.max_retries
