"""What a run sends besides the conversation, made in one place for the run and for
:meth:`Agent.request_preview` (so the preview cannot drift from the request): the tools
(the registry, Claude's memory tool when ``Agent(memory=...)``, the ``final_result`` tool
for a typed output without structured outputs) and the request builder with the typed
output's options."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from nb_tools.agent._driver import TurnDriver
from nb_tools.agent._output import FINAL_TOOL, FinalResultTool, OutputState, output_options

if TYPE_CHECKING:
    from nb_tools.agent._conversation import Conversation
    from nb_tools.agent._settings import AgentSettings
    from nb_tools.tool import Registry


@dataclass(frozen=True)
class Prepared:
    registry: Registry
    driver: TurnDriver
    output: OutputState | None


def prepare(settings: AgentSettings, conversation: Conversation) -> Prepared:
    """The run's tools and request builder for ``conversation``; with the settings' output
    type, asked for the provider's way (its structured outputs) or with the
    ``final_result`` tool added."""
    registry = settings.tools
    driver = TurnDriver(settings, conversation)
    if settings.memory is not None:
        from nb_tools.builtin import MemoryTool

        registry = registry.clone()
        registry.add(MemoryTool(settings.memory))
    state: OutputState | None = None
    output = settings.output
    if output is not None:
        options = output_options(settings.provider, output)
        state = OutputState(
            type=output, native=options is not None, retries=settings.output_retries
        )
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
