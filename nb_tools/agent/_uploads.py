"""Files sent once (``Agent(upload_attachments=True)``): before each request, the newest
user message's attachments and its tool results' large images and documents go to the
provider's file store (Claude's Files API, ``upload_file``), and the conversation names
them by ``file_id`` from then on, so no later request carries their bytes again.

Which tool-result parts: an image (JPEG, PNG, GIF, WebP) or a document (PDF, plain text)
of at least :data:`UPLOAD_MIN_BYTES`. Below that, sending the bytes again each turn
(under 44 KB of base64) costs less than an upload's extra round trip before the next
request and a file left in the organisation's store; a typical small chart stays inline.
A tool's text answer is never uploaded: the model reads it as the answer itself, where a
document block would read as an attachment (and text is prompt-cached like the rest of
the conversation).

A failed upload is not the run's end: the part goes inline, as without the option, and a
notice says what could not be uploaded and why. The same bytes are uploaded once per
provider (it keeps the ``file_id`` of each content hash).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable
from typing import Any

from nb_tools.agent._context import MAX_IMAGE_BYTES
from nb_tools.agent._conversation import Conversation
from nb_tools.agent._notices import RunNotice
from nb_tools.model import ImageBlock, Message, ModelError, Part, ToolResultBlock

UPLOAD_MIN_BYTES = 32 * 1024
"""A tool result's image or document is uploaded from this size on."""

FILE_MEDIA_TYPES = frozenset(
    {"image/jpeg", "image/png", "image/gif", "image/webp", "application/pdf", "text/plain"}
)
"""What a content block may name by ``file_id`` (images as images; PDF and plain text as
documents)."""


def _media(part: Part) -> str:
    return part.media_type.split(";")[0].strip().lower()


class Uploader:
    """Per run: uploads what is new in the conversation's last user message, once."""

    def __init__(self, provider: object, emit: Callable[[Any], Awaitable[None]]) -> None:
        self.upload = getattr(provider, "upload_file", None)
        self.name = str(getattr(provider, "name", "provider"))
        self.emit = emit
        self.done: Message | None = None  # the last user message already looked at

    async def send_new(self, conversation: Conversation) -> None:
        messages = list(conversation.messages)
        if self.upload is None or not messages or messages[-1].role != "user":
            return
        last = messages[-1]
        if last is self.done:
            return
        blocks = []
        changed = False
        for block in last.content:
            if isinstance(block, ImageBlock) and not block.part.file_id:
                block = ImageBlock(
                    part=await self._put(block.part, f"the attached {block.part.kind}")
                )
            elif isinstance(block, ToolResultBlock) and any(_wanted(p) for p in block.result.parts):
                parts = [
                    await self._put(p, f"the {p.kind} in the result of {block.result.tool_use_id}")
                    if _wanted(p)
                    else p
                    for p in block.result.parts
                ]
                block = ToolResultBlock(
                    result=dataclasses.replace(block.result, parts=tuple(parts))
                )
            else:
                blocks.append(block)
                continue
            changed = True
            blocks.append(block)
        if changed:
            messages[-1] = dataclasses.replace(last, content=tuple(blocks))
            conversation.replace(messages)
        self.done = conversation.messages[-1]

    async def _put(self, part: Part, what: str) -> Part:
        if self.upload is None:
            return part
        try:
            file_id = await self.upload(part)
        except ModelError as exc:
            title = f" {part.title!r}" if part.title else ""
            await self.emit(
                RunNotice(
                    kind="upload_failed",
                    message=f"{what}{title} ({len(part.data):,} bytes) was sent inline: the "
                    f"upload to the {self.name} file store failed ({exc})",
                )
            )
            return part
        return dataclasses.replace(part, file_id=str(file_id))


def _wanted(part: Part) -> bool:
    """A part to upload. An image past the API's 5 MB is not: the request builder sends
    it downscaled, inline."""
    image = part.kind == "image"
    return (
        not part.file_id
        and len(part.data) >= UPLOAD_MIN_BYTES
        and not (image and len(part.data) > MAX_IMAGE_BYTES)
        and _media(part) in FILE_MEDIA_TYPES
        and image == _media(part).startswith("image/")
    )


__all__ = ["FILE_MEDIA_TYPES", "UPLOAD_MIN_BYTES", "Uploader"]
