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
