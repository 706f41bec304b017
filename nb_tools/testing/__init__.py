"""Offline doubles for users and tests: ``ScriptedModel`` (in-process) and
``FakeMessagesServer`` (the Messages API on loopback: real HTTP, SSE streaming) and
``FakeOpenAIServer`` (Chat Completions and Responses, likewise), all driven by the same
script format (``reply``, ``call``, ``Fault``), plus
``block_real_models`` to make sure a test never reaches a real model.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from nb_tools._lazy import lazy_exports
from nb_tools.testing._script import Fault, Reply, Responder, ScriptedCall, Step, call, reply
from nb_tools.testing._scripted import ScriptedModel, conversation_problems

if TYPE_CHECKING:
    from nb_tools.testing._cache import PromptCache
    from nb_tools.testing._guard import block_real_models
    from nb_tools.testing.openai_server import FakeOpenAIServer
    from nb_tools.testing.server import FakeMessagesServer

# Imported on first use: the server pulls in an HTTP stack, and both live in modules of
# their own.
__getattr__ = lazy_exports(
    __name__,
    {
        "FakeMessagesServer": "nb_tools.testing.server",
        "FakeOpenAIServer": "nb_tools.testing.openai_server",
        "PromptCache": "nb_tools.testing._cache",
        "block_real_models": "nb_tools.testing._guard",
    },
)


__all__ = [
    "FakeMessagesServer",
    "FakeOpenAIServer",
    "Fault",
    "PromptCache",
    "Reply",
    "Responder",
    "ScriptedCall",
    "ScriptedModel",
    "Step",
    "block_real_models",
    "call",
    "conversation_problems",
    "reply",
]
