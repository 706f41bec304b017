"""MCP server tools as nb_tools tools: names, infos, and results."""

from __future__ import annotations

import base64
import hashlib
import json
import re
from typing import Any

from nb_tools.mcp._connection import Connection, ConnectionClosed
from nb_tools.model import Part
from nb_tools.tool import MCP_NAME_PREFIX, Info, Result, ValidationError
from nb_tools.tool._json import loads_ijson
from nb_tools.tool._progress import Progress, capture_progress

MAX_NAME = 64
_UNSAFE = re.compile(r"[^a-zA-Z0-9_-]")


def server_slug(name: str) -> str:
    """A server name as it appears inside tool names: safe characters, no ``__``."""
    slug = _UNSAFE.sub("_", name.strip())
    slug = re.sub(r"_{2,}", "_", slug).strip("_")
    if not slug:
        raise ValueError(f"MCP server name {name!r}: use letters, digits, '_' or '-'")
    return slug


def tool_name(server: str, tool: str, taken: set[str]) -> str:
    """``mcp__<server>__<tool>``, shortened (with a hash of the full name) to 64 characters
    where needed, and made unique among ``taken``."""
    base = _UNSAFE.sub("_", tool) or "tool"
    name = f"{MCP_NAME_PREFIX}{server}__{base}"
    if len(name) <= MAX_NAME and name not in taken:
        return name
    digest = hashlib.sha256(f"{server}\0{tool}".encode()).hexdigest()
    for n in range(6, len(digest)):
        suffix = "_" + digest[:n]
        head = f"{MCP_NAME_PREFIX}{server}__"
        room = MAX_NAME - len(head) - len(suffix)
        if room < 1:
            raise ValueError(
                f"MCP server name {server!r} is too long to name its tools within 64 "
                "characters; attach it under a shorter name"
            )
        candidate = head + base[:room] + suffix
        if candidate not in taken:
            return candidate
    raise ValueError(f"cannot name MCP tool {tool!r} of {server!r} uniquely")  # pragma: no cover


class MCPTool:
    """One tool of an MCP server. Its JSON Schema is sent to the model as is
    (``raw_parameters``); arguments still must be I-JSON objects. Every call asks for
    approval by default: the server's ``readOnlyHint`` is its own claim, and the MCP
    specification says a client must not trust annotations from a server it does not
    trust. ``trust_hints``: the user trusts this server, so a ``readOnlyHint`` tool is
    read-only and runs without a click, unless it also says ``openWorldHint: true``
    (egress: it asks, as ``web_fetch`` does)."""

    def __init__(
        self,
        connection: Connection,
        server: str,
        name: str,
        remote: Any,
        *,
        trust_hints: bool = False,
    ) -> None:
        self.connection = connection
        self.mcp_server = server
        self.remote_name: str = remote.name
        hints = remote.annotations
        read_only = trust_hints and bool(hints is not None and hints.read_only_hint)
        # A read-only tool that says it reaches the open world (a fetcher, a search) is
        # egress, as web_fetch is: it changes nothing here, but what its arguments carry
        # leaves the machine, so it still asks (and plan mode refuses it).
        egress = bool(hints is not None and hints.open_world_hint)
        description = remote.description or remote.title or f"{remote.name} (MCP server {server})"
        self._info = Info(
            name=name,
            description=description,
            raw_parameters=dict(remote.input_schema or {"type": "object"}),
            read_only=read_only,
            requires_approval=not read_only or egress,
        )

    def info(self) -> Info:
        return self._info

    async def call(self, args: str | bytes) -> Result:
        try:
            arguments = loads_ijson(args or "{}")
        except ValidationError as exc:
            return Result.error(
                f"invalid arguments for {self._info.name}:\n" + "\n".join(exc.problems)
            )
        if not isinstance(arguments, dict):
            return Result.error(f"invalid arguments for {self._info.name}: expected a JSON object")
        report = capture_progress()

        async def on_progress(done: float, total: float | None, message: str | None) -> None:
            if report is not None:
                fraction = done / total if total else None
                report(Progress(text=message or "", fraction=fraction))

        try:
            result = await self.connection.request(
                lambda client: client.call_tool(
                    self.remote_name, arguments, progress_callback=on_progress
                )
            )
        except ConnectionClosed as exc:
            return Result.error(str(exc))
        except Exception as exc:  # an MCP error answer, a timeout, a broken transport
            return Result.error(
                f"MCP server {self.mcp_server!r} failed on {self.remote_name}: {exc}"
            )
        return convert_result(result)


def convert_result(result: Any) -> Result:
    """An MCP ``CallToolResult`` as our ``Result``: text joined, images and PDFs as parts,
    structured content as JSON when there is no text."""
    texts: list[str] = []
    parts: list[Part] = []
    for block in result.content or []:
        kind = getattr(block, "type", "")
        if kind == "text":
            texts.append(block.text)
        elif kind == "image":
            parts.append(
                Part(kind="image", media_type=block.mime_type, data=base64.b64decode(block.data))
            )
        elif kind == "resource":
            res = block.resource
            if getattr(res, "text", None) is not None:
                texts.append(res.text)
            elif getattr(res, "blob", None) is not None:
                mime = res.mime_type or "application/octet-stream"
                data = base64.b64decode(res.blob)
                if mime.startswith("image/"):
                    parts.append(Part(kind="image", media_type=mime, data=data))
                elif mime == "application/pdf":
                    parts.append(
                        Part(kind="document", media_type=mime, data=data, title=str(res.uri))
                    )
                else:
                    texts.append(f"[binary resource {res.uri} ({mime}, {len(data)} bytes)]")
        elif kind == "resource_link":
            texts.append(f"[resource {block.uri}]")
        elif kind == "audio":
            texts.append(f"[audio ({block.mime_type})]")
    structured = getattr(result, "structured_content", None)
    if structured is not None and not texts:
        texts.append(json.dumps(structured, ensure_ascii=False))
    metadata: dict[str, Any] = {}
    if structured is not None:
        metadata["structured_content"] = structured
    return Result(
        content="\n".join(texts), parts=parts, is_error=bool(result.is_error), metadata=metadata
    )
