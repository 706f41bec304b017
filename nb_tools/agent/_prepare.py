"""What a run sends besides the conversation, made in one place for the run and for
:meth:`Agent.request_preview` (so the preview cannot drift from the request): the tools
(the registry, Claude's memory tool when ``Agent(memory=...)``, the ``final_result`` tool
for a typed output without structured outputs) and the request builder with the typed
output's options."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from nb_tools.agent._driver import TurnDriver
from nb_tools.agent._output import (
    DEFAULT_RETRIES,
    FINAL_TOOL,
    FinalResultTool,
    OutputState,
    OutputType,
    output_options,
)

if TYPE_CHECKING:
    from nb_tools.agent._agent import Agent
    from nb_tools.model import Provider
    from nb_tools.tool import Registry


@dataclass(frozen=True)
class Prepared:
    registry: Registry
    driver: TurnDriver
    output: OutputState | None


def prepare(
    agent: Agent,
    provider: Provider,
    output: OutputType | None = None,
    output_retries: int = DEFAULT_RETRIES,
) -> Prepared:
    """The run's tools and request builder; with ``output``, asked for the provider's way
    (its structured outputs) or with the ``final_result`` tool added."""
    registry = agent.tools
    driver = TurnDriver(agent, provider)
    if agent.memory is not None:
        from nb_tools.builtin import MemoryTool

        registry = registry.clone()
        registry.add(MemoryTool(agent.memory))
    state: OutputState | None = None
    if output is not None:
        options = output_options(provider, output)
        state = OutputState(type=output, native=options is not None, retries=output_retries)
        if options is not None:
            driver.policy.output_options = options
        else:
            if registry.get(FINAL_TOOL) is not None:
                raise ValueError(
                    f"Agent.run(output=...): a tool named {FINAL_TOOL} is registered, "
                    "and the run needs that name for the answer; rename the tool"
                )
            registry = registry.clone()
            registry.add(FinalResultTool(state))
    return Prepared(registry=registry, driver=driver, output=state)


__all__ = ["Prepared", "prepare"]
