"""The public surface of nb_tools.agent and nb_tools.testing."""

from __future__ import annotations

import nb_tools.agent
import nb_tools.testing


def test_agent_exports() -> None:
    names = nb_tools.agent.__all__
    assert names == sorted(names, key=lambda n: (not n.isupper(), n))
    for name in names:
        assert getattr(nb_tools.agent, name) is not None
    assert {"Agent", "RunResult", "Decision", "ApprovalRequest", "decide"} <= set(names)


def test_testing_exports() -> None:
    for name in nb_tools.testing.__all__:
        assert getattr(nb_tools.testing, name) is not None
    assert {
        "ScriptedModel",
        "Reply",
        "ScriptedCall",
        "Fault",
        "reply",
        "call",
        "FakeMessagesServer",
        "block_real_models",
    } <= set(nb_tools.testing.__all__)
