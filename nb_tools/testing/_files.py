"""The fake Messages server's Files API, as the SDK's ``client.beta.files`` resource
(anthropic 2.15, ``resources/beta/files.py``) and the API reference speak it: every route
needs the ``files-api-2025-04-14`` beta header.

- ``POST /v1/files``: a multipart upload (a part named ``file``) -> the file's metadata
  (``id``, ``type: "file"``, ``filename``, ``mime_type``, ``size_bytes``, ``created_at``,
  ``downloadable: false``: only files a tool made can be downloaded);
- ``GET /v1/files?limit=N&page=CURSOR`` -> ``{"data", "has_more", "first_id",
  "last_id", "next_page"}``, newest first (the reference's page fields, and the
  ``next_page`` cursor the SDK's ``AsyncPageCursor`` follows);
- ``GET /v1/files/{id}`` -> its metadata; ``GET /v1/files/{id}/content`` -> its bytes,
  or 400 ``file_not_downloadable`` for an uploaded file; ``DELETE /v1/files/{id}`` ->
  ``{"id", "type": "file_deleted"}``; an unknown id -> 404 ``not_found_error``.

A Messages request naming a file the server does not hold, or without the beta header,
gets a 400 (:func:`file_problem`).
"""

from __future__ import annotations

import email.parser
import email.policy
import json
import re
import urllib.parse
from collections.abc import Mapping
from typing import Any

from nb_tools.model._anthropic_features import BETA_FILES_API

_FILE_ID = re.compile(r'"file_id":\s*"([^"]*)"')
ROUTE = re.compile(r"^/v1/files(?:/(?P<id>[^/]+)(?P<content>/content)?)?$")
"""The Files API's paths."""

Answer = tuple[int, Any]
"""(status, a JSON body, or ``bytes`` for a download); an error body is
``{"message": ...}`` for the server to wrap as the API's error object."""


def _beta(headers: Mapping[str, str]) -> Answer | None:
    if BETA_FILES_API not in headers.get("anthropic-beta", ""):
        return 400, {"message": f"the Files API needs the beta header {BETA_FILES_API}"}
    return None


def _meta(stored: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in stored.items() if k != "data"}


def upload(
    files: dict[str, dict[str, Any]], headers: Mapping[str, str], raw: bytes, file_id: str
) -> Answer:
    """Store an upload in ``files``: (200, the file's metadata), or an error."""
    refused = _beta(headers)
    if refused is not None:
        return refused
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


def answer(
    method: str, path: str, files: dict[str, dict[str, Any]], headers: Mapping[str, str]
) -> Answer | None:
    """A ``GET`` or ``DELETE`` of the Files API (None: not a Files API path)."""
    url = urllib.parse.urlsplit(path)
    route = ROUTE.match(url.path)
    if route is None:
        return None
    refused = _beta(headers)
    if refused is not None:
        return refused
    file_id = route["id"]
    if file_id is None:
        return (_list(files, urllib.parse.parse_qs(url.query))) if method == "GET" else None
    stored = files.get(file_id)
    if stored is None:
        return 404, {"message": f"File not found: {file_id}"}
    if method == "DELETE" and not route["content"]:
        del files[file_id]
        return 200, {"id": file_id, "type": "file_deleted"}
    if method != "GET":
        return None
    if not route["content"]:
        return 200, _meta(stored)
    if not stored.get("downloadable"):
        return 400, {
            "message": f"File {file_id} is not downloadable: only files created by a tool "
            "(such as the code execution tool) can be downloaded",
            "error_code": "file_not_downloadable",
        }
    return 200, bytes(stored["data"])


def _list(files: Mapping[str, Mapping[str, Any]], query: Mapping[str, list[str]]) -> Answer:
    try:
        limit = int(query.get("limit", ["20"])[0])
    except ValueError:
        return 400, {"message": "limit: Input should be a valid integer"}
    if not 1 <= limit <= 1000:
        return 400, {"message": "limit: Input should be between 1 and 1000"}
    newest = list(reversed(list(files)))
    start = 0
    page = query.get("page", [""])[0]
    if page:
        start = int(page.removeprefix("page_")) if page.removeprefix("page_").isdigit() else 0
    chunk = newest[start : start + limit]
    more = start + limit < len(newest)
    return 200, {
        "data": [_meta(files[i]) for i in chunk],
        "has_more": more,
        "first_id": chunk[0] if chunk else None,
        "last_id": chunk[-1] if chunk else None,
        "next_page": f"page_{start + limit}" if more else None,
    }


def file_problem(files: Mapping[str, Any], body: Any, betas: str) -> str | None:
    """A request naming a file the server does not hold, or without the beta header."""
    named = _FILE_ID.findall(json.dumps(body))
    if named and BETA_FILES_API not in betas:
        return f"file sources need the beta header {BETA_FILES_API}"
    for file_id in named:
        if file_id not in files:
            return f"File not found: {file_id}"
    return None


class FilesRoutes:
    """The Files API's routes of the fake server's request handler (mixed into it; the
    handler gives ``server.fake``, ``_send_json``, ``_send_error`` and ``api_error``)."""

    server: Any
    headers: Any
    path: str
    rfile: Any
    wfile: Any
    _send_json: Any
    _send_error: Any
    api_error: Any
    send_response: Any
    send_header: Any
    end_headers: Any

    def do_DELETE(self) -> None:
        if not self._files("DELETE"):
            self._send_error(404, f"FakeMessagesServer: no route DELETE {self.path}")

    def _files(self, method: str) -> bool:
        """Answer a Files API ``GET`` / ``DELETE``; False when the path is not one."""
        from nb_tools.testing.server import RecordedRequest

        fake = self.server.fake
        headers = {k.lower(): v for k, v in self.headers.items()}
        answered = fake.files_answer(method, self.path, headers)
        if answered is None:
            return False
        fake.record(RecordedRequest(method=method, path=self.path, headers=headers, body=None))
        status, data = answered
        if isinstance(data, bytes):
            self.send_response(status)
            self.send_header("content-type", "application/octet-stream")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        else:
            self._send_json(status, data if status == 200 else self._files_error(status, data))
        return True

    def _files_error(self, status: int, data: Mapping[str, Any]) -> Mapping[str, Any]:
        body = dict(self.api_error(status, data["message"]))
        if "error_code" in data:
            body["error"] = {**body["error"], "details": {"error_code": data["error_code"]}}
        return body

    def _upload(self, fake: Any) -> None:
        """``POST /v1/files``: a multipart upload, or the scripted ``upload_fault``."""
        from nb_tools.testing.server import RecordedRequest

        raw = self.rfile.read(int(self.headers.get("content-length") or 0))
        headers = {k.lower(): v for k, v in self.headers.items()}
        fake.record(RecordedRequest(method="POST", path=self.path, headers=headers, body=raw))
        fault = fake.take_upload_fault()
        if fault is not None:
            status = fault.status or 500
            self._send_json(status, self.api_error(status, fault.message))
            return
        file_id = fake.new_id("file")
        status, stored = fake.store_upload(headers, raw, file_id)
        self._send_json(
            status, stored if status == 200 else self.api_error(status, stored["message"])
        )
