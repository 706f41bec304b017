"""A pytest guard: no test reaches a real model, whatever the environment holds.

In a ``conftest.py``::

    from nb_tools.testing._guard import block_real_models  # noqa: F401  (autouse)

or ``pytest_plugins = ["nb_tools.testing._guard"]``. Each test then runs with a dummy API
key, ``ANTHROPIC_BASE_URL`` at a host that never resolves, no other credentials from the
environment (``ANTHROPIC_CONFIG_DIR`` at an empty folder when a profile could be found), and
``NB_TOOLS_BLOCK_REAL_MODELS=1``, under which :class:`~nb_tools.model.anthropic.AnthropicProvider`
refuses any base URL that is not on loopback (it raises ``ModelError``, naming the URL).
Tests talk to :class:`~nb_tools.testing.server.FakeMessagesServer` or ``ScriptedModel``.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from nb_tools.model._defaults import BLOCK_ENV

DUMMY_API_KEY = "sk-ant-test-dummy-key"
# Not loopback, so AnthropicProvider refuses it with a clear error; and `.invalid` never
# resolves (RFC 2606), so a bare SDK client made in a test cannot reach the real API either.
BLOCKED_BASE_URL = "http://real-model-requests-are-blocked.invalid"

CONFIG_DIR_ENV = "ANTHROPIC_CONFIG_DIR"
# Where the SDK reads profiles when ANTHROPIC_CONFIG_DIR is unset (Linux and macOS).
SDK_CONFIG_DIR = Path.home() / ".config" / "anthropic"

# Credentials and endpoints the SDK would otherwise pick up from the environment.
_CLEARED = (
    "ANTHROPIC_AUTH_TOKEN",
    "ANTHROPIC_PROFILE",
    "ANTHROPIC_IDENTITY_TOKEN",
    "ANTHROPIC_IDENTITY_TOKEN_FILE",
    "ANTHROPIC_FEDERATION_RULE_ID",
    "ANTHROPIC_ORGANIZATION_ID",
)


@pytest.fixture(autouse=True)
def block_real_models(
    monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[None]:
    """Autouse: real model requests fail loudly; loopback fakes work."""
    monkeypatch.setenv(BLOCK_ENV, "1")
    monkeypatch.setenv("ANTHROPIC_API_KEY", DUMMY_API_KEY)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", BLOCKED_BASE_URL)
    # An empty config dir, so no profile on disk supplies credentials or an endpoint; only
    # when there is one to hide: the variable itself makes the SDK warn that the key shadows
    # a profile, in every kernel the tests start.
    if os.environ.get(CONFIG_DIR_ENV) or SDK_CONFIG_DIR.exists():
        monkeypatch.setenv(CONFIG_DIR_ENV, str(tmp_path_factory.mktemp("anthropic-config")))
    for name in _CLEARED:
        monkeypatch.delenv(name, raising=False)
    yield
