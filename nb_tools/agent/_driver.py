"""One run's Messages API side: each turn's request (options, images fitted, the context
kept within the window) and what each reply means (:class:`~nb_tools.agent._turns.Verdict`).
The loop (``_run.Run``) calls :meth:`TurnDriver.request` and :meth:`TurnDriver.judge`; the
driver reads the run's frozen :class:`~nb_tools.agent._settings.AgentSettings` and changes
only the conversation it was given (compaction, cleared results, measured sizes)."""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from nb_tools.agent._context import (
    ImageFitter,
    clear_old_results,
    needs_summary,
    server_context_management,
    summarise,
)
from nb_tools.agent._notices import (
    CitationsReceived,
    ContextCompacted,
    RunNotice,
    ServerToolUsed,
)
from nb_tools.agent._turns import TurnPolicy, Verdict
from nb_tools.model import (
    CompactionBlock,
    Message,
    ModelRequest,
    Provider,
    ResponseEvent,
    ServerToolResultBlock,
    ServerToolUseBlock,
    TextBlock,
    estimate_tokens,
)

if TYPE_CHECKING:
    from nb_tools.agent._conversation import Conversation
    from nb_tools.agent._events import Event
    from nb_tools.agent._settings import AgentSettings
    from nb_tools.tool import Registry

log = logging.getLogger("nb_tools.agent")


class TurnDriver:
    def __init__(self, settings: AgentSettings, conversation: Conversation) -> None:
        self.settings = settings
        self.conversation = conversation
        provider: Provider = settings.provider
        self.provider = provider
        self.model = provider.model
        self.policy = TurnPolicy(settings=settings, conversation=conversation)
        self.fitter = ImageFitter()
        opts = settings.request_options
        limits = provider.limits()
        if not provider.features.context_management:
            limits = dataclasses.replace(limits, server_compaction=False, clear_tool_uses=False)
        self.extra, self.betas = server_context_management(
            limits, opts.compaction, opts.clear_tool_results
        )
        self.client_summary = opts.compaction and not limits.server_compaction
        self.client_clear = opts.clear_tool_results and not limits.clear_tool_uses

    async def request(
        self, registry: Registry, max_tokens: int | None
    ) -> tuple[ModelRequest, list[Event]]:
        events: list[Event] = []
        conversation = self.conversation
        messages = list(conversation.messages)
        request = self.build(registry, messages, max_tokens)
        window = self.provider.limits().context_window
        if (self.client_summary or self.client_clear) and window:
            tokens = conversation.size or await self._count(request, window)
            if self.client_clear and tokens >= window // 2:
                cleared = clear_old_results(messages)
                if cleared is not None:
                    events.append(cleared)
            if self.client_summary and needs_summary(window, tokens):
                done = await summarise(self.provider, request, messages, tokens)
                if done is not None:
                    messages = done[0]
                    events.append(done[1])
            if events:
                conversation.replace(messages)
                request = self.build(registry, messages, max_tokens)
        events.extend(self.policy.notices)
        self.policy.notices.clear()
        events.extend(self.fitter.notices)
        self.fitter.notices.clear()
        return request, events

    def build(
        self, registry: Registry, messages: Sequence[Message], max_tokens: int | None
    ) -> ModelRequest:
        fitted = self.fitter.fit(messages)
        request = self.policy.request(
            registry, fitted, extra_options=self.extra, extra_betas=self.betas
        )
        if max_tokens is not None:
            request = _with_max_tokens(request, max_tokens)
        return request

    async def _count(self, request: ModelRequest, window: int) -> int:
        """The conversation's size when no reply has said it yet: a rough count, made
        exact with the server's token counting only when the rough one is near the line."""
        rough = estimate_tokens(request.messages)
        if rough < window * 0.4 or not self.provider.features.server_token_counting:
            return rough
        try:
            return int(await self.provider.count_tokens(request))
        except Exception as exc:  # counting is an optimisation: fall back to the guess
            log.info("token counting failed (%s); using the estimate", exc)
            return rough

    def judge(self, response: ResponseEvent, request: ModelRequest) -> tuple[Verdict, list[Event]]:
        usage = response.usage
        self.conversation.measured(response.usage)
        verdict = self.policy.judge(response, request)
        events: list[Event] = list(verdict.notices)
        if any(isinstance(b, CompactionBlock) for b in response.message.content):
            events.append(
                ContextCompacted(
                    how="server",
                    messages_before=len(self.conversation),
                    messages_after=1,
                    tokens_before=usage.input_tokens + usage.cache_read_input_tokens,
                    message="the API compacted the conversation: a summary now stands for "
                    "the turns before it",
                )
            )
        events.extend(reply_events(response.message))
        if response.stop_reason == "pause_turn":
            events.append(
                RunNotice(kind="pause_turn", message="the API paused a long turn; continuing it")
            )
        return verdict, events


def reply_events(message: Message) -> list[Event]:
    """A server tool call whose result did not come in the reply (the others were reported
    as they streamed), and the citations of the reply's text."""
    answered = {b.tool_use_id for b in message.content if isinstance(b, ServerToolResultBlock)}
    events: list[Event] = []
    citations: list[Any] = []
    for b in message.content:
        if isinstance(b, ServerToolUseBlock) and b.id not in answered:
            events.append(server_tool_used(b, None))
        elif isinstance(b, TextBlock) and b.citations:
            citations.extend(b.citations)
    if citations:
        events.append(CitationsReceived(citations=tuple(citations)))
    return events


def server_tool_used(use: ServerToolUseBlock, result: ServerToolResultBlock | None) -> Event:
    return ServerToolUsed(
        id=use.id,
        name=use.name,
        arguments=use.arguments,
        result_type=result.type if result else "",
        content=result.content if result else None,
    )


def _with_max_tokens(request: ModelRequest, max_tokens: int) -> ModelRequest:
    current = request.max_tokens
    bigger = max_tokens if current is None else max(max_tokens, current)
    return dataclasses.replace(request, max_tokens=bigger)


__all__ = [
    "TurnDriver",
    "reply_events",
    "server_tool_used",
]
