"""What a run reads, as one frozen value: :class:`AgentSettings`.

A run (:class:`~nb_tools.agent._run.Run`), its request builder
(:class:`~nb_tools.agent._driver.TurnDriver`) and its turn policy
(:class:`~nb_tools.agent._turns.TurnPolicy`) read their configuration from an
``AgentSettings`` made when the run starts, never from the live ``Agent``: changing the
agent's system prompt, tools, policy or limits while a run is in progress changes the next
run, not this one. (pydantic-ai splits a run the same way: ``GraphAgentDeps``, fixed for
the run, and ``GraphAgentState``, which the run changes.) :meth:`Agent.settings` makes one
per run; :func:`nb_tools.map` makes one for all its rows, so every row reads the same value
(one system prompt, one tool list: one prompt-cache prefix, and no per-row set-up).

What is configuration and what is state:

- **Settings (frozen, here)**: the provider (model, features, limits), the tools (a copy of
  the registry taken when the run starts: registering a tool on the agent mid-run does not
  reach the run), the system prompt as sent, the approval policy, the approver and the
  permission callable, the rule set, the sandbox, the turn, token and budget limits, the
  output type, the request options (thinking, server tools, cache TTL, tool search, ...),
  memory, citations and uploads, the middlewares.
- **State (mutable, elsewhere)**: the conversation and its token counts
  (:class:`~nb_tools.agent.Conversation`, shared with the agent), the run's usage, turns,
  pending calls and output attempts (the ``Run``), and the session rules "Always allow"
  adds: they go into the rule set object the settings name (``rules``: its session rules
  are state, shared with the agent and with every map row), or, when there is none, into a
  new rule set the run keeps and hands back to the agent when it ends.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from nb_tools.agent._instructions import ProjectInstructions, system_with
from nb_tools.agent._output import DEFAULT_RETRIES, OutputType
from nb_tools.agent._turns import RequestOptions
from nb_tools.model import Provider
from nb_tools.tool import Middleware, Registry

if TYPE_CHECKING:
    from nb_tools.agent._agent import Agent
    from nb_tools.agent._approval import Approver, Permission, Policy
    from nb_tools.permissions import PermissionRules
    from nb_tools.sandbox import SandboxMode, SandboxPolicy


@dataclass(frozen=True, kw_only=True, eq=False)
class AgentSettings:
    """Everything a run reads besides its state (see the module docstring). Compared by
    identity: two runs share settings only when they share this very value."""

    provider: Provider
    tools: Registry
    """The tools the run offers; a copy, not the agent's registry (treat it as read-only)."""
    system: str | None = None
    """The user's system prompt (what ``RunResult.system`` records)."""
    system_prompt: str = ""
    """The system prompt as sent: ``system``, the project instructions, the context."""
    instructions: ProjectInstructions | None = None
    approval: Policy = "ask"
    approver: Approver | None = None
    permission: Permission | None = None
    rules: PermissionRules | None = None
    sandbox: SandboxMode | SandboxPolicy | None = None
    max_turns: int = 25
    max_tokens: int | None = None
    budget_usd: float | None = None
    request_options: RequestOptions = dataclasses.field(default_factory=RequestOptions)
    middlewares: tuple[Middleware, ...] = ()
    output: OutputType | None = None
    output_retries: int = DEFAULT_RETRIES
    memory: Path | None = None
    citations: bool = False
    upload_attachments: bool = False

    @classmethod
    def of(
        cls,
        agent: Agent,
        *,
        output: OutputType | None = None,
        output_retries: int = DEFAULT_RETRIES,
    ) -> AgentSettings:
        """The settings of ``agent`` as they are now (the provider is made if it was
        given by name)."""
        return cls(
            provider=agent.provider,
            tools=agent.tools.clone(),
            system=agent.system,
            system_prompt=system_with(agent.system, agent.system_sections()),
            instructions=agent.instructions,
            approval=agent.approval,
            approver=agent.approver,
            permission=agent.permission,
            rules=agent.rules,
            sandbox=agent.sandbox,
            max_turns=agent.max_turns,
            max_tokens=agent.max_tokens,
            budget_usd=agent.budget_usd,
            request_options=agent.request_options,
            middlewares=agent.middlewares,
            output=output,
            output_retries=output_retries,
            memory=agent.memory,
            citations=agent.citations,
            upload_attachments=agent.upload_attachments,
        )

    def replace(self, **changes: object) -> AgentSettings:
        """A copy with ``changes`` (a new value: its identity differs)."""
        return dataclasses.replace(self, **changes)  # type: ignore[arg-type]


__all__ = ["AgentSettings"]
