"""The fake Messages server's Files API: ``POST /v1/files`` (a multipart upload) and the
check that a request names only files the server holds, with the beta header."""

from __future__ import annotations

import email.parser
import email.policy
import json
import re
from collections.abc import Mapping
from typing import Any

from nb_tools.model._anthropic_features import BETA_FILES_API

_FILE_ID = re.compile(r'"file_id":\s*"([^"]*)"')


def upload(
    files: dict[str, dict[str, Any]], headers: Mapping[str, str], raw: bytes, file_id: str
) -> tuple[int, dict[str, Any]]:
    """Store an upload in ``files``: (200, the file's metadata), or (an error status,
    ``{"message": ...}``)."""
    if BETA_FILES_API not in headers.get("anthropic-beta", ""):
        return 400, {"message": f"the Files API needs the beta header {BETA_FILES_API}"}
    head = f"Content-Type: {headers.get('content-type', '')}\r\n\r\n".encode()
    message = email.parser.BytesParser(policy=email.policy.default).parsebytes(head + raw)
    parts = message.iter_parts() if message.is_multipart() else iter(())
    part = next(
        (p for p in parts if p.get_param("name", header="content-disposition") == "file"), None
    )
    if part is None:
        return 400, {"message": "file: Field required (a multipart part named 'file')"}
    data = part.get_payload(decode=True)
    data = data if isinstance(data, bytes) else b""
    meta: dict[str, Any] = {
        "id": file_id,
        "type": "file",
        "filename": part.get_filename() or "upload",
        "mime_type": part.get_content_type(),
        "size_bytes": len(data),
        "created_at": "2026-12-01T00:00:00Z",
        "downloadable": False,
    }
    files[file_id] = {**meta, "data": data}
    return 200, meta


def file_problem(files: Mapping[str, Any], body: Any, betas: str) -> str | None:
    """A request naming a file the server does not hold, or without the beta header."""
    named = _FILE_ID.findall(json.dumps(body))
    if named and BETA_FILES_API not in betas:
        return f"file sources need the beta header {BETA_FILES_API}"
    for file_id in named:
        if file_id not in files:
            return f"File not found: {file_id}"
    return None
