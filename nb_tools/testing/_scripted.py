"""ScriptedModel: a Provider that answers from a script, in-process, with no network."""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
from collections.abc import AsyncIterator, Sequence

from nb_tools.model import (
    BaseProvider,
    Block,
    Message,
    ModelError,
    ModelEvent,
    ModelLimits,
    ModelRequest,
    Price,
    RequestFeatures,
    ResponseEvent,
    ServerToolEvent,
    ServerToolResultBlock,
    ServerToolUseBlock,
    TextBlock,
    TextDeltaEvent,
    ThinkingBlock,
    ThinkingDeltaEvent,
    ToolArgumentsDeltaEvent,
    ToolResultBlock,
    ToolUseBlock,
    ToolUseStartEvent,
    Usage,
)
from nb_tools.model._limits import CLAUDE_FEATURES, limits_for
from nb_tools.model._pricing import price_for
from nb_tools.testing._script import Fault, Reply, Step

TEXT_CHUNKS = 3
"""Text and argument text are streamed in about this many pieces."""

_RETRYABLE = frozenset({408, 409, 429, 500, 502, 503, 504, 529})


def _chunks(text: str, n: int = TEXT_CHUNKS) -> list[str]:
    if not text:
        return []
    size = max(1, -(-len(text) // n))
    return [text[i : i + size] for i in range(0, len(text), size)]


def conversation_problems(messages: Sequence[Message]) -> list[str]:
    """What the Messages API would reject in ``messages``: a conversation must start with a
    user message, alternate roles, have no empty message or empty text block, and answer
    every tool_use of an assistant message with a tool_result (first) in the next user
    message."""
    problems: list[str] = []
    if messages and messages[0].role != "user":
        problems.append("messages.0: the first message must have role 'user'")
    for i, m in enumerate(messages):
        if not m.content:
            problems.append(f"messages.{i}: content is empty")
        if i and m.role == messages[i - 1].role:
            problems.append(f"messages.{i}: roles must alternate; two '{m.role}' messages")
        for j, b in enumerate(m.content):
            if isinstance(b, TextBlock) and not b.text.strip():
                problems.append(
                    f"messages.{i}.content.{j}: text blocks must contain non-whitespace text"
                )
        if m.role != "assistant":
            continue
        ids = [c.id for c in m.tool_calls]
        if not ids:
            continue
        nxt = messages[i + 1] if i + 1 < len(messages) else None
        answered = (
            [b.result.tool_use_id for b in nxt.content if isinstance(b, ToolResultBlock)]
            if nxt is not None
            else []
        )
        missing = [x for x in ids if x not in answered]
        if nxt is not None and missing:
            problems.append(
                f"messages.{i + 1}: tool_use ids {missing} have no tool_result right after "
                "the assistant message that made them"
            )
        if nxt is not None and nxt.content and isinstance(nxt.content[0], TextBlock) and ids:
            problems.append(f"messages.{i + 1}: tool_result blocks must come first")
    return problems


class ScriptedModel(BaseProvider):
    """A :class:`~nb_tools.model.Provider` that replies from ``script``: each request takes
    the next step: a :class:`Reply`, a :class:`Fault` (raised as ``ModelError``, for
    ``times`` requests in a row) or a responder ``(request) -> Reply``.

    Text and tool-argument text are streamed in a few chunks, as the real API does.
    ``requests`` records every request. With ``check=True`` (the default) a request whose
    conversation the real API would reject fails with a 400 ``ModelError`` naming the
    problem, so a test notices a broken conversation.

    It scripts the Messages API's shapes (thinking, server tools), so by default it
    declares what Claude's API takes: ``limits`` (default: the Claude model ``model`` names,
    the newest family's for another name) and ``features``; pass others to stand in for
    another provider. ``price``: by default the Claude model's list price, and $0 for
    another name (a scripted reply costs what its ``usage`` says); None stands in for a
    model without a known price."""

    name = "ScriptedModel"

    def __init__(
        self,
        script: Sequence[Step],
        *,
        model: str = "scripted",
        check: bool = True,
        limits: ModelLimits | None = None,
        features: RequestFeatures | None = None,
        price: Price | str | None = "claude",
    ) -> None:
        self._limits = limits if limits is not None else limits_for(model)
        self._price = (
            (price_for(model) or Price(input=0.0, output=0.0)) if price == "claude" else price
        )
        self.features = features if features is not None else CLAUDE_FEATURES
        self._script = list(script)
        self._model = model
        self._check = check
        self._next = 0
        self._fault_left = 0
        self._ids = itertools.count(1)
        self.requests: list[ModelRequest] = []
        self.replies = 0

    @property
    def model(self) -> str:
        return self._model

    def limits(self) -> ModelLimits:
        return self._limits

    def price(self) -> Price | None:
        return self._price if isinstance(self._price, Price) else None

    @property
    def remaining(self) -> int:
        """Steps not used yet."""
        return len(self._script) - self._next

    def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        snapshot = request  # the agent's requests hold tuples already: nothing to copy
        if type(request.messages) is not tuple or type(request.tools) is not tuple:
            snapshot = dataclasses.replace(
                request, messages=tuple(request.messages), tools=tuple(request.tools)
            )
        self.requests.append(snapshot)
        return self._stream(snapshot)

    def _step(self) -> Step:
        if self._fault_left:
            self._fault_left -= 1
            return self._script[self._next - 1]
        if self._next >= len(self._script):
            raise ModelError(
                f"ScriptedModel: script exhausted after {self.replies} replies; the "
                f"conversation asked for request {len(self.requests)}: add more steps"
            )
        step = self._script[self._next]
        self._next += 1
        if isinstance(step, Fault):
            self._fault_left = max(0, step.times - 1)
        return step

    async def _stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        if self._check:
            problems = conversation_problems(request.messages)
            if problems:
                raise ModelError(
                    "ScriptedModel: invalid_request_error: " + "; ".join(problems), status=400
                )
        step = self._step()
        if isinstance(step, Fault):
            raise ModelError(
                f"ScriptedModel: {step.message} (status {step.status})",
                status=step.status,
                retryable=step.status in _RETRYABLE,
            )
        reply = step if isinstance(step, Reply) else step(request)
        if isinstance(reply, Fault):
            raise ModelError(f"ScriptedModel: {reply.message}", status=reply.status)
        self.replies += 1
        blocks: list[Block] = []
        if reply.thinking is not None:
            from nb_tools.testing._sse import signature_for

            for piece in _chunks(reply.thinking):
                await self._pause(reply)
                yield ThinkingDeltaEvent(text=piece)
            blocks.append(
                ThinkingBlock(thinking=reply.thinking, signature=signature_for(reply.thinking))
            )
        if reply.redacted_thinking is not None or reply.blocks:
            from nb_tools.model._anthropic_convert import block_from_api

            extra = [{"type": "redacted_thinking", "data": reply.redacted_thinking}]
            for api in [*extra[: reply.redacted_thinking is not None], *reply.blocks]:
                block = block_from_api(api)
                if block is None:
                    continue
                if isinstance(block, ServerToolResultBlock):
                    use = next(
                        (
                            b
                            for b in blocks
                            if isinstance(b, ServerToolUseBlock) and b.id == block.tool_use_id
                        ),
                        None,
                    )
                    if use is not None:
                        yield ServerToolEvent(use=use, result=block)
                blocks.append(block)
        for piece in _chunks(reply.text):
            await self._pause(reply)
            yield TextDeltaEvent(text=piece)
        if reply.text:
            blocks.append(TextBlock(text=reply.text))
        for n, c in enumerate(reply.calls):
            call_id = c.id or f"toolu_scripted_{next(self._ids):04d}"
            await self._pause(reply)
            yield ToolUseStartEvent(id=call_id, name=c.name)
            text = c.argument_text
            if reply.cut_last_call and n == len(reply.calls) - 1:
                text = text[: len(text) // 2]
            for piece in _chunks(text):
                await self._pause(reply)
                yield ToolArgumentsDeltaEvent(id=call_id, partial_json=piece)
            blocks.append(ToolUseBlock(id=call_id, name=c.name, arguments=text))
        usage = reply.usage or Usage(
            input_tokens=max(1, _size(request) // 4),
            output_tokens=max(
                1, (len(reply.text) + sum(len(c.argument_text) for c in reply.calls)) // 4
            ),
        )
        yield ResponseEvent(
            message=Message(role="assistant", content=tuple(blocks)),
            stop_reason=reply.effective_stop_reason,
            usage=usage,
            stop_details=reply.stop_details,
        )

    @staticmethod
    async def _pause(reply: Reply) -> None:
        await asyncio.sleep(reply.chunk_delay)


def _size(request: ModelRequest) -> int:
    n = len(request.system)
    for m in request.messages:
        for b in m.content:
            if isinstance(b, TextBlock):
                n += len(b.text)
            elif isinstance(b, ToolUseBlock):
                n += len(b.arguments) + len(b.name)
            elif isinstance(b, ToolResultBlock):
                n += len(b.result.content)
    return n
