"""The provider's SDK is imported in the background after %load_ext (the first run's first
token then comes as fast as a warm kernel's); ``import nb_tools`` still imports no SDK."""

from __future__ import annotations

import pytest
from kernel_helpers import Kernel

from nb_tools.jupyter._warm import modules_to_warm


def test_what_is_warmed_follows_the_model_the_first_run_picks(monkeypatch) -> None:
    for key in ("NB_TOOLS_MODEL", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(key, raising=False)
    assert modules_to_warm() == ()  # the offline demo model: nothing to import
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    assert modules_to_warm()[0] == "anthropic"
    monkeypatch.setenv("NB_TOOLS_MODEL", "ollama:qwen3")
    assert modules_to_warm()[0] == "openai"
    monkeypatch.setenv("NB_TOOLS_MODEL", "claude-sonnet-4-5")
    assert modules_to_warm()[0] == "anthropic"


@pytest.mark.kernel
def test_load_ext_imports_the_sdk_in_the_background(kernel: Kernel) -> None:
    ex = kernel.ok(
        "import sys, threading\n"
        "before = 'anthropic' in sys.modules\n"
        "get_ipython().run_line_magic('load_ext', 'nb_tools')\n"
        "warming = [t for t in threading.enumerate() if t.name == 'nb_tools-warm-sdk']\n"
        "for t in warming: t.join(60)\n"
        "print(before, len(warming), 'anthropic' in sys.modules, 'nb_tools.agent' in sys.modules)"
    )
    assert ex.stdout.split() == ["False", "1", "True", "True"]


@pytest.mark.kernel
def test_after_the_warm_up_the_first_run_has_nothing_left_to_make(kernel: Kernel, server) -> None:
    """What the first run would otherwise do before its first token, done by the warm-up:
    no module of nb_tools left to import, the Markdown parser's scanners compiled, and the
    TLS context (the CA bundle read) that the run's SDK client shares."""
    from nb_tools.testing import reply

    kernel.ok(
        "import sys, threading\n"
        "get_ipython().run_line_magic('load_ext', 'nb_tools')\n"
        "for t in threading.enumerate():\n"
        "    if t.name == 'nb_tools-warm-sdk': t.join(60)\n"
        "from nb_tools.model import anthropic as _a\n"
        "_tls = _a.tls_context()\n"
        "_before = set(sys.modules)"
    )
    server.push(reply("Warm enough."))
    kernel.ok("%%agent --new\nhello")
    ex = kernel.ok(
        "from nb_tools.jupyter._session import get_session\n"
        "_client = get_session().agent.provider.client\n"
        "_pool = _client._client._transport._pool\n"
        "print(sorted(m for m in set(sys.modules) - _before if m.startswith('nb_tools')))\n"
        "print(_tls is not None and _a.tls_context() is _tls)\n"
        "print(_pool._ssl_context is _tls)"
    )
    assert ex.stdout.split("\n")[:3] == ["[]", "True", "True"]
