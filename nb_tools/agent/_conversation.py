"""The conversation an agent keeps: its messages, in the order the API gets them, and the
tokens its runs have spent. Every change goes through a method that keeps what the Messages
API asks of the list: user and assistant take turns, the first message is the user's, and
every tool call of an assistant message is answered by the next user message."""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from nb_tools.agent._turns import CONTINUE_TEXT
from nb_tools.model import (
    ImageBlock,
    Message,
    TextBlock,
    ToolResult,
    ToolResultBlock,
    ToolUseBlock,
    Usage,
)


class Conversation:
    """Messages and usage, owned by one :class:`~nb_tools.agent.Agent`; the run changes them
    only through these methods. ``usage`` counts every run's tokens and survives
    :meth:`clear` (it is what the conversation has cost so far)."""

    def __init__(self, messages: Iterable[Message] = (), usage: Usage | None = None) -> None:
        self._messages: list[Message] = list(messages)
        self._usage = usage if usage is not None else Usage()
        self._in_use = False
        self.size = 0
        """The conversation's size in tokens as the API counted it with the last reply
        (prompts and tool results added since are not in it; 0: not known, after a summary,
        a clearing or ``clear``)."""
        self.container: Mapping[str, Any] | None = None
        """The code-execution container of the last reply that used one (``{"id",
        "expires_at"}``): later requests name it while it lives, so files the model's code
        wrote are still there."""

    @property
    def messages(self) -> tuple[Message, ...]:
        return tuple(self._messages)

    @property
    def usage(self) -> Usage:
        return self._usage

    def __len__(self) -> int:
        return len(self._messages)

    def __repr__(self) -> str:
        return f"Conversation({len(self._messages)} messages, {self._usage!r})"

    # -- the user's side -------------------------------------------------------------------

    def add_prompt(
        self, text: str, parts: Sequence[Any] = (), *, last_stop_reason: str | None = None
    ) -> None:
        """Add a prompt (its attachments, then its text), keeping roles alternating: after a
        user message (tool results, or a prompt whose request failed) the prompt joins that
        message. An empty prompt continues: after tool results nothing is added, after a
        reply cut at ``max_tokens`` the model is asked to go on; else it is an error."""
        if not text.strip() and not parts:
            if self._last_role() == "user":
                return
            if self._messages and last_stop_reason == "max_tokens":
                text = CONTINUE_TEXT
            else:
                raise ValueError(
                    "Agent.run: the prompt is empty and there is nothing to continue; "
                    "pass some text"
                )
        blocks: list[Any] = [ImageBlock(part=p) for p in parts]
        if text.strip():
            blocks.append(TextBlock(text=text))
        self._add_user(tuple(blocks))

    def answer(self, results: Sequence[ToolResult]) -> None:
        """The user message answering the last assistant message's tool calls."""
        if results:
            self._add_user(tuple(ToolResultBlock(result=r) for r in results))

    def drop_refused_prompt(self) -> None:
        """After a refusal: the refused prompt leaves the conversation (tool results stay:
        they answer calls), so the next prompt starts clean and is not merged into it."""
        if self._last_role() != "user":
            return
        kept = tuple(b for b in self._messages[-1].content if isinstance(b, ToolResultBlock))
        if kept:
            self._messages[-1] = Message(role="user", content=kept)
        else:
            self._messages.pop()

    def _add_user(self, blocks: tuple[Any, ...]) -> None:
        if self._last_role() == "user":
            last = self._messages[-1]
            self._messages[-1] = Message(role="user", content=(*last.content, *blocks))
        else:
            self._messages.append(Message(role="user", content=blocks))

    # -- the model's side ------------------------------------------------------------------

    def add_reply(self, message: Message) -> Message:
        """The model's reply, as kept: every tool call id unique in the conversation (see
        :func:`unique_call_ids`). A reply after a paused turn (``pause_turn``) follows the
        paused assistant message as the API sent it."""
        if message.role != "assistant":
            raise ValueError(
                f"Conversation.add_reply: a reply is an assistant message, got {message.role!r}"
            )
        if not self._messages:
            raise ValueError("Conversation.add_reply: a conversation starts with a user message")
        taken = {b.id for m in self._messages for b in m.content if isinstance(b, ToolUseBlock)}
        message = unique_call_ids(message, taken)
        self._messages.append(message)
        return message

    def add_partial_reply(self, text: str) -> None:
        """The text of a reply cut off mid-stream (by a stop); its unfinished calls are
        dropped, so nothing is left to answer."""
        if text.strip() and self._messages:
            self._messages.append(Message(role="assistant", content=(TextBlock(text=text),)))

    # -- the whole ---------------------------------------------------------------------------

    def count(self, usage: Usage) -> None:
        """Add a reply's tokens."""
        self._usage = self._usage + usage

    def measured(self, usage: Usage) -> None:
        """The size the API gave with the last reply: what it read, and what it wrote."""
        self.size = (
            usage.input_tokens
            + usage.cache_read_input_tokens
            + usage.cache_creation_input_tokens
            + usage.output_tokens
        )

    def replace(self, messages: Iterable[Message]) -> None:
        """Put a shortened conversation in place (a summary, results cleared)."""
        self._messages[:] = list(messages)
        self.size = 0

    def clear(self) -> None:
        """Forget the messages (the usage is kept)."""
        self._messages.clear()
        self.size = 0
        self.container = None

    @contextlib.contextmanager
    def in_use(self, who: str) -> Iterator[None]:
        """Held by a run while it changes the conversation: a second run on the same
        conversation (another agent sharing it) would interleave their messages."""
        if self._in_use:
            raise RuntimeError(
                f"{who}: this conversation is in use by another run (an agent sharing it "
                "is running); wait for that run, or give this agent a copy: "
                "Agent(messages=other.messages)"
            )
        self._in_use = True
        try:
            yield
        finally:
            self._in_use = False

    def _last_role(self) -> str | None:
        return self._messages[-1].role if self._messages else None


__all__ = ["Conversation"]


def unique_call_ids(message: Message, taken: set[str]) -> Message:
    """``message`` with each tool call's id unique among ``taken`` and its own calls. The
    Messages API makes its own ids, but a provider that passes on ids the model wrote (some
    OpenAI-compatible servers) may repeat one or send none, and then one call's card,
    approval and result would stand for another's. A repeated or empty id gets a fresh one
    (``<id>_2``, ``<id>_3``, ...; ``call_2``... for none), used from then on everywhere."""
    seen = set(taken)
    blocks = []
    changed = False
    for block in message.content:
        if isinstance(block, ToolUseBlock):
            new_id = block.id
            if not new_id or new_id in seen:
                stem, n = block.id or "call", 1
                while new_id in seen or not new_id:
                    n += 1
                    new_id = f"{stem}_{n}"
                block = dataclasses.replace(block, id=new_id)
                changed = True
            seen.add(new_id)
        blocks.append(block)
    return dataclasses.replace(message, content=tuple(blocks)) if changed else message
