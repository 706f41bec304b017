"""Long conversations and what a request may carry: server-side compaction and tool-result
clearing where the model takes them, a client-side summary of older turns near the context
window otherwise, images fitted to the API's limits, and attachments in a prompt."""

from __future__ import annotations

import dataclasses
import io
import mimetypes
import os
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from nb_tools.agent._notices import ContextCompacted, RunNotice
from nb_tools.model import (
    ImageBlock,
    Message,
    ModelLimits,
    ModelRequest,
    Part,
    Provider,
    ResponseEvent,
    TextBlock,
    ToolResultBlock,
)
from nb_tools.model._limits import BETA_COMPACTION, BETA_CONTEXT_MANAGEMENT

if TYPE_CHECKING:
    pass

# The API's image limits: bytes and pixels per side; fewer pixels when a request holds more
# than MANY_IMAGES images.
MAX_IMAGE_BYTES = 5 * 1024 * 1024
MAX_IMAGE_SIDE = 8000
MANY_IMAGES = 20
MAX_IMAGE_SIDE_MANY = 2000
SUMMARY_AT = 0.8  # of the context window: summarise older turns past this
SUMMARY_PREFIX = "[Summary of the earlier conversation, written when it grew long]\n"
SUMMARY_PROMPT = (
    "The conversation above is about to be shortened. Write a summary of it that lets you "
    "carry on the work: the user's goals, decisions made, files and names involved, results "
    "of tool calls that still matter, and what is left to do. Reply with the summary only."
)
CARRY_ON = "Carry on with the task from where the summary leaves off."
CLEARED_RESULT = "[tool result cleared to save context; call the tool again if it is needed]"
CLEAR_KEEP_LAST = 3  # tool-result messages kept whole when clearing client-side
CLEAR_MIN_CHARS = 4000


def server_context_management(
    limits: ModelLimits, compaction: bool, clear: bool
) -> tuple[dict, list]:
    """``context_management`` edits and beta headers for a model with ``limits``, where it
    takes them."""
    edits: list[dict[str, Any]] = []
    betas: list[str] = []
    if clear and limits.clear_tool_uses:
        edits.append({"type": "clear_tool_uses_20250919"})
        betas.append(BETA_CONTEXT_MANAGEMENT)
    if compaction and limits.server_compaction:
        edits.append({"type": "compact_20260112"})
        betas.append(BETA_COMPACTION)
    return ({"context_management": {"edits": edits}} if edits else {}), betas


def needs_summary(window: int, tokens: int) -> bool:
    return tokens >= window * SUMMARY_AT


def split_point(messages: Sequence[Message]) -> int:
    """Where the kept part starts: the newest user message that is a prompt (text, no tool
    results), so the summary never separates a tool call from its result; 0: none."""
    for i in range(len(messages) - 1, 0, -1):
        m = messages[i]
        if m.role == "user" and not any(isinstance(b, ToolResultBlock) for b in m.content):
            return i
    return 0


async def summarise(
    provider: Provider, request: ModelRequest, messages: Sequence[Message], tokens: int
) -> tuple[list[Message], ContextCompacted] | None:
    """Older turns replaced by a summary the model writes. The cut is at the newest prompt;
    when that is the first message (one long tool loop) and the conversation ends with tool
    results, all of it is summarised and the model is asked to carry on from the summary.
    None when there is nothing to summarise."""
    cut = split_point(messages)
    whole = False
    if cut < 2:
        last = messages[-1] if messages else None
        if len(messages) < 3 or last is None or last.role != "user":
            return None
        if not any(isinstance(b, ToolResultBlock) for b in last.content):
            return None
        cut, whole = len(messages), True
    older = list(messages[:cut])
    ask = Message(role="user", content=(TextBlock(text=SUMMARY_PROMPT),))
    if older[-1].role == "user":  # tool results: the question joins them
        older[-1] = Message(role="user", content=(*older[-1].content, *ask.content))
    else:
        older.append(ask)
    options = {k: v for k, v in request.options.items() if k not in ("tool_choice",)}
    if request.tools:
        options["tool_choice"] = {"type": "none"}
    summary_request = dataclasses.replace(
        request, messages=tuple(older), options=options, server_tools=()
    )
    final: ResponseEvent | None = None
    async for event in provider.stream(summary_request):
        if isinstance(event, ResponseEvent):
            final = event
    text = final.message.text.strip() if final is not None else ""
    if not text:
        return None
    head = TextBlock(text=SUMMARY_PREFIX + text)
    if whole:
        kept = [Message(role="user", content=(head, TextBlock(text=CARRY_ON)))]
    else:
        kept = list(messages[cut:])
        kept[0] = Message(role="user", content=(head, *kept[0].content))
    event = ContextCompacted(
        how="summary",
        messages_before=len(messages),
        messages_after=len(kept),
        tokens_before=tokens,
        message=f"the conversation reached {tokens:,} tokens: {cut} older messages were "
        "replaced by a summary",
    )
    return kept, event


def clear_old_results(messages: list[Message]) -> ContextCompacted | None:
    """Client-side tool-result clearing: large results older than the last few tool-result
    messages become a short note (their calls stay, so the conversation stays valid)."""
    indexes = [
        i
        for i, m in enumerate(messages)
        if m.role == "user" and any(isinstance(b, ToolResultBlock) for b in m.content)
    ]
    cleared = 0
    for i in indexes[:-CLEAR_KEEP_LAST]:
        blocks = []
        for b in messages[i].content:
            if (
                isinstance(b, ToolResultBlock)
                and b.result.content != CLEARED_RESULT
                and (len(b.result.content) + sum(len(p.data) for p in b.result.parts))
                >= CLEAR_MIN_CHARS
            ):
                b = ToolResultBlock(
                    result=dataclasses.replace(b.result, content=CLEARED_RESULT, parts=())
                )
                cleared += 1
            blocks.append(b)
        messages[i] = Message(role="user", content=tuple(blocks))
    if not cleared:
        return None
    return ContextCompacted(
        how="cleared",
        messages_before=len(messages),
        messages_after=len(messages),
        message=f"{cleared} old tool results were cleared to save context",
    )


# ---- images and attachments ----------------------------------------------------------------


class ImageFitter:
    """Fits images to the API's limits (downscaled with Pillow, or replaced by a note),
    each image once: the fitted part is kept by the identity of the original."""

    def __init__(self) -> None:
        self._done: dict[int, tuple[Part, Part | None, str]] = {}
        self._plain: dict[int, Message] = {}  # messages seen to hold no image
        self.notices: list[RunNotice] = []

    def fit(self, messages: Sequence[Message]) -> list[Message]:
        out = list(messages)
        plain = self._plain
        count = 0
        found: list[int] = []
        for i, m in enumerate(out):
            if plain.get(id(m)) is m:
                continue
            n = sum(1 for b in m.content for p in _parts(b) if p.kind == "image")
            if n:
                count += n
                found.append(i)
            else:
                plain[id(m)] = m
        side = MAX_IMAGE_SIDE_MANY if count > MANY_IMAGES else MAX_IMAGE_SIDE
        for i in found:
            m = out[i]
            blocks = tuple(self._block(b, side) for b in m.content)
            if any(a is not b for a, b in zip(blocks, m.content, strict=True)):
                out[i] = Message(role=m.role, content=blocks)
        return out

    def _block(self, block: Any, side: int) -> Any:
        if isinstance(block, ImageBlock) and block.part.kind == "image":
            part, note = self._part(block.part, side)
            if part is block.part:
                return block
            return ImageBlock(part=part) if part is not None else TextBlock(text=note)
        if isinstance(block, ToolResultBlock) and block.result.parts:
            parts: list[Part] = []
            notes: list[str] = []
            for p in block.result.parts:
                fitted, note = self._part(p, side) if p.kind == "image" else (p, "")
                if fitted is not None:
                    parts.append(fitted)
                else:
                    notes.append(note)
            if len(parts) == len(block.result.parts) and all(
                a is b for a, b in zip(parts, block.result.parts, strict=True)
            ):
                return block
            content = "\n".join(x for x in (block.result.content, *notes) if x)
            return ToolResultBlock(
                result=dataclasses.replace(block.result, content=content, parts=tuple(parts))
            )
        return block

    def _part(self, part: Part, side: int) -> tuple[Part | None, str]:
        key = id(part)
        kept = self._done.get(key)
        if kept is not None and kept[0] is part and kept[2] == str(side):
            return kept[1], _note(part, "")
        fitted, why = fit_image(part, side)
        self._done[key] = (part, fitted, str(side))
        if fitted is None:
            self.notices.append(RunNotice(kind="image_dropped", message=_note(part, why)))
        elif fitted is not part:
            self.notices.append(RunNotice(kind="image_resized", message=why))
        return fitted, _note(part, why)


def _parts(block: object) -> tuple[Part, ...]:
    if isinstance(block, ImageBlock):
        return (block.part,)
    if isinstance(block, ToolResultBlock):
        return block.result.parts
    return ()


def _note(part: Part, why: str) -> str:
    name = f" {part.title!r}" if part.title else ""
    return f"[image{name} ({part.media_type}, {len(part.data):,} bytes) not sent: {why}]"


def fit_image(part: Part, side: int = MAX_IMAGE_SIDE) -> tuple[Part | None, str]:
    """The image within ``side`` pixels and 5 MB (the same part when it already is), or
    None and why not."""
    try:
        from PIL import Image
    except ImportError:  # pragma: no cover - Pillow is a dependency
        if len(part.data) <= MAX_IMAGE_BYTES:
            return part, ""
        return None, "it is over 5 MB and Pillow is not installed to shrink it"
    try:
        image = Image.open(io.BytesIO(part.data))
        width, height = image.size
    except Exception as exc:
        # Not an image Pillow knows: its size is all that can be checked here (the API
        # judges the rest, and the media type already limits what is sent as an image).
        if len(part.data) <= MAX_IMAGE_BYTES:
            return part, ""
        return None, f"it is over 5 MB and Pillow cannot read it to shrink it ({exc})"
    if max(width, height) <= side and len(part.data) <= MAX_IMAGE_BYTES:
        return part, ""
    scale = min(1.0, side / max(width, height))
    for _ in range(6):
        size = (max(1, int(width * scale)), max(1, int(height * scale)))
        small = image.convert("RGBA" if image.mode in ("RGBA", "LA", "P") else "RGB")
        small = small.resize(size, Image.Resampling.LANCZOS)
        buf = io.BytesIO()
        if small.mode == "RGBA":
            small.save(buf, format="PNG", optimize=True)
            media = "image/png"
        else:
            small.save(buf, format="JPEG", quality=85)
            media = "image/jpeg"
        data = buf.getvalue()
        if len(data) <= MAX_IMAGE_BYTES:
            why = (
                f"image {part.title or ''} downscaled from {width}x{height} "
                f"({len(part.data):,} bytes) to {size[0]}x{size[1]} ({len(data):,} bytes) "
                "to fit the API's limits"
            ).replace("image  ", "image ")
            return Part(kind="image", media_type=media, data=data, title=part.title), why
        scale *= 0.7
    return None, "it could not be made smaller than 5 MB"


def attachment_parts(items: Iterable[object]) -> list[Part]:
    """Images and PDFs for a prompt: paths, bytes, PIL images or :class:`Part` objects."""
    parts: list[Part] = []
    for item in items:
        parts.append(_attachment(item))
    return parts


def _attachment(item: object) -> Part:
    if isinstance(item, Part):
        return item
    if isinstance(item, str | os.PathLike):
        path = os.fspath(item)
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError as exc:
            raise ValueError(f"attachment {path!r} cannot be read: {exc.strerror}") from None
        kind = _sniff(data) or mimetypes.guess_type(path)[0] or ""
        return _typed(data, kind, os.path.basename(path), path)
    if isinstance(item, bytes | bytearray | memoryview):
        data = bytes(item)
        return _typed(data, _sniff(data) or "", "", "the bytes given")
    save = getattr(item, "save", None)
    if callable(save) and hasattr(item, "size"):  # a PIL image
        buf = io.BytesIO()
        save(buf, format="PNG")
        return Part(kind="image", media_type="image/png", data=buf.getvalue())
    raise ValueError(
        f"attachment of type {type(item).__name__}: pass a path, bytes, a PIL image or a Part"
    )


def _typed(data: bytes, media_type: str, title: str, what: str) -> Part:
    if media_type == "application/pdf":
        return Part(kind="document", media_type=media_type, data=data, title=title)
    if media_type.startswith("image/"):
        return Part(kind="image", media_type=media_type, data=data, title=title)
    if media_type.startswith("text/") or media_type in ("application/json",):
        return Part(kind="document", media_type="text/plain", data=data, title=title)
    raise ValueError(
        f"attachment {what}: {media_type or 'an unknown type'} cannot be sent; attach "
        "images (PNG, JPEG, GIF, WebP), PDFs or text files"
    )


_MAGIC: Mapping[bytes, str] = {
    b"\x89PNG\r\n\x1a\n": "image/png",
    b"\xff\xd8\xff": "image/jpeg",
    b"GIF87a": "image/gif",
    b"GIF89a": "image/gif",
    b"%PDF-": "application/pdf",
}


def _sniff(data: bytes) -> str | None:
    for magic, media in _MAGIC.items():
        if data.startswith(magic):
            return media
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return None
