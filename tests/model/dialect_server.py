"""A loopback HTTP server that answers each ``POST .../chat/completions`` with the next
recorded body, byte for byte (whole, or in small pieces), and ``GET .../models`` with a
given answer; it records every request, and can refuse a request as the real server
would (a ``check`` returning the error to send)."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

JSON = dict[str, Any]


@dataclass
class Answer:
    """One HTTP answer: ``body`` sent as given (``piece`` bytes at a time, chunked);
    ``cut_after``: close the connection after that many bytes of the body."""

    body: bytes
    status: int = 200
    content_type: str = "text/event-stream"
    piece: int = 0
    cut_after: int | None = None
    check: Callable[[JSON], Answer | None] | None = None
    """Looks at the request's JSON; an answer it returns is sent instead of this one."""


@dataclass
class DialectServer:
    answers: list[Answer]
    models: Answer | None = None
    requests: list[JSON] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                outer.paths.append(f"GET {self.path}")
                self._send(outer.models or Answer(b"404 page not found", 404, "text/plain"))

            def do_POST(self) -> None:
                outer.paths.append(f"POST {self.path}")
                raw = self.rfile.read(int(self.headers.get("content-length") or 0))
                request = json.loads(raw)
                outer.requests.append(request)
                answer = outer.answers.pop(0)
                if answer.check is not None:
                    answer = answer.check(request) or answer
                self._send(answer)

            def _send(self, answer: Answer) -> None:
                body = answer.body
                self.send_response(answer.status)
                self.send_header("content-type", answer.content_type)
                self.send_header("transfer-encoding", "chunked")
                self.end_headers()
                if answer.cut_after is not None:
                    body = body[: answer.cut_after]
                step = answer.piece or len(body) or 1
                for i in range(0, len(body), step):
                    chunk = body[i : i + step]
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                    self.wfile.flush()
                if answer.cut_after is not None:
                    self.close_connection = True
                    return  # no closing chunk: the body was cut
                self.wfile.write(b"0\r\n\r\n")

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self._httpd.serve_forever, daemon=True).start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def close(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()


def json_answer(status: int, payload: Any) -> Answer:
    return Answer(json.dumps(payload).encode(), status, "application/json")


def serving(answers: list[Answer], models: Answer | None = None) -> Iterator[DialectServer]:
    server = DialectServer(answers, models)
    try:
        yield server
    finally:
        server.close()


def assistant_messages(request: Mapping[str, Any]) -> list[JSON]:
    return [m for m in request["messages"] if m["role"] == "assistant"]
