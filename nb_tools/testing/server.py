"""A fake Anthropic Messages API on loopback: real HTTP and SSE, replies from a script.

The official SDK talks to it unchanged (``base_url=server.base_url``), so tests exercise
the real client stack with no network and no key::

    with FakeMessagesServer([reply("Hi!"), Fault(status=529), reply("Again")]) as srv:
        provider = AnthropicProvider(base_url=srv.base_url)

Standalone: ``python -m nb_tools.testing.server --port 8765 --script replies.json`` prints
its base URL; point ``ANTHROPIC_BASE_URL`` at it.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import itertools
import json
import runpy
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from nb_tools.model import ModelRequest, Usage
from nb_tools.model._anthropic_convert import request_from_api
from nb_tools.testing._batches import ROUTE as BATCH_ROUTE
from nb_tools.testing._cache import PromptCache
from nb_tools.testing._files import FilesRoutes, file_problem
from nb_tools.testing._script import Fault, Reply, ScriptedCall, Step
from nb_tools.testing._sse import (
    check_body,
    encode_event,
    error_body,
    message_json,
    recorded_thinking,
    stream_events,
    usage_for,
)

__all__ = ["FakeMessagesServer", "RecordedRequest", "load_script", "steps_from_json"]


@dataclass(frozen=True, kw_only=True)
class RecordedRequest:
    """One request the fake server received (headers with lower-case names)."""

    method: str
    path: str
    headers: Mapping[str, str]
    body: Any

    @cached_property
    def model_request(self) -> ModelRequest:
        """The body read back into our types (Messages, Chat Completions or Responses)."""
        if self.path.startswith("/v1/chat/completions"):
            from nb_tools.testing._openai_sse import request_from_chat

            return request_from_chat(self.body)
        if self.path.startswith("/v1/responses"):
            from nb_tools.testing._openai_sse import request_from_responses

            return request_from_responses(self.body)
        return request_from_api(self.body)


@dataclass(kw_only=True)
class _Action:
    reply: Reply | None = None
    fault: Fault | None = None
    status: int = 200
    message: str = ""


class FakeMessagesServer:
    """Serves ``POST /v1/messages`` from ``script`` in order: a :class:`Reply` is answered
    (streamed as SSE when the request says ``stream: true``), a responder callable gets the
    request as a :class:`ModelRequest` and returns the reply, a :class:`Fault` answers an
    error status ``times`` times (with ``retry-after-ms`` so SDK retries are quick), or,
    with ``cut_after``, breaks the next reply's stream after that many events without
    consuming the reply: the connection drops (no ``status``), an ``event: error`` of that
    status follows (``status`` >= 400, as when the API overloads mid-stream), or the stream
    just ends before ``message_stop`` (``status=200``). When the
    script runs out, ``fallback`` answers, else a 500 says so. (A responder that follows a
    cut is called for the cut stream and again for the retry.)
    """

    def __init__(
        self,
        script: Sequence[Step] | None = None,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        fallback: Callable[[ModelRequest], Reply | Fault] | None = None,
        retry_after_ms: int = 10,
        prompt_cache: PromptCache | bool = False,
        latency: float = 0.0,
        max_concurrent: int | None = None,
        batch_delay: float = 0.0,
    ) -> None:
        from nb_tools.testing._batches import Batches

        self.host = host
        self.batches = Batches()
        """Message Batches created (``POST /v1/messages/batches``), by id."""
        self.batch_delay = batch_delay
        """Seconds a batch is "in_progress" before it has ended."""
        self.latency = latency
        """Seconds every ``POST /v1/messages`` takes before its answer starts (a model's
        time to first token)."""
        self.max_concurrent = max_concurrent
        """With a number: a Messages request that arrives while that many are being
        answered gets a 429 ``rate_limit_error`` with ``retry-after-ms`` (and
        ``retry-after``), as the API's concurrency limits answer."""
        self.active = 0
        self.peak_active = 0
        """The most Messages requests answered at once."""
        self.rate_limited = 0
        """Requests answered 429 for ``max_concurrent``."""
        self.prompt_cache: PromptCache | None = (
            PromptCache() if prompt_cache is True else prompt_cache or None
        )
        """With ``prompt_cache`` (True, or a :class:`PromptCache` with its own clock):
        usage reports cache reads and writes as the API would for the request's
        breakpoints and TTLs (a reply's own ``usage`` still wins)."""
        self.port = port
        self.fallback = fallback
        self.retry_after_ms = retry_after_ms
        self.requests: list[RecordedRequest] = []
        self.files: dict[str, dict[str, Any]] = {}
        """Files uploaded to ``POST /v1/files`` (the Files API), by id: their metadata and,
        under ``"data"``, their bytes (:mod:`nb_tools.testing._files` serves the rest of
        the Files API: list, metadata, download, delete)."""
        self._upload_faults = 0
        self.upload_fault: Fault | None = None
        """With a :class:`Fault`: the next ``times`` uploads are answered with its status
        and message (e.g. ``Fault(status=413)``, a file too large)."""
        self._steps: collections.deque[Step] = collections.deque(script or ())
        self._fault_uses = 0
        self._served = 0
        self._ids = itertools.count(1)
        # (thinking, signature) of the thinking blocks in recorded streams served, which
        # may come back signed by the real API rather than by this server
        self.signed: set[tuple[str, str]] = set()
        self._lock = threading.Lock()
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        if self._httpd is None:
            raise RuntimeError("FakeMessagesServer is not running; call start() or use `with`")
        return f"http://{self.host}:{self.port}"

    @property
    def remaining(self) -> int:
        """Steps of the script not yet used up."""
        with self._lock:
            return len(self._steps)

    def push(self, *steps: Step) -> None:
        """Append steps to the script (also while serving)."""
        with self._lock:
            self._steps.extend(steps)

    def start(self) -> FakeMessagesServer:
        if self._httpd is not None:
            return self
        httpd = _HTTPServer((self.host, self.port), self._handler())
        httpd.fake = self
        self.port = httpd.server_address[1]
        self._httpd = httpd
        self._thread = threading.Thread(
            target=httpd.serve_forever,
            kwargs={"poll_interval": 0.05},
            daemon=True,
            name=f"FakeMessagesServer:{self.port}",
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        httpd, self._httpd = self._httpd, None
        if httpd is None:
            return
        httpd.shutdown()
        httpd.close_connections()
        httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> FakeMessagesServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def __repr__(self) -> str:
        where = f"{self.host}:{self.port}" if self._httpd else "stopped"
        return f"FakeMessagesServer({where}, {self.remaining} steps left)"

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        """The request handler class (a fake of another API serves other routes)."""
        return _Handler

    def _model_request(self, body: Mapping[str, Any]) -> ModelRequest:
        """A request body as a responder sees it."""
        return request_from_api(body)

    # ---- the script -----------------------------------------------------------------------

    def record(self, request: RecordedRequest) -> None:
        """Keep ``request`` in :attr:`requests` (the route handlers call this)."""
        with self._lock:
            self.requests.append(request)

    def take_upload_fault(self) -> Fault | None:
        """The scripted ``upload_fault`` for this upload, if any (spent after its
        ``times``)."""
        with self._lock:
            fault = self.upload_fault
            if fault is not None:
                self._upload_faults += 1
                if self._upload_faults >= fault.times:
                    self.upload_fault, self._upload_faults = None, 0
            return fault

    def files_answer(self, method: str, path: str, headers: Mapping[str, str]) -> Any:
        """A Files API ``GET``/``DELETE`` answer from the stored files (``None``: not a
        Files path)."""
        from nb_tools.testing._files import answer

        with self._lock:
            return answer(method, path, self.files, headers)

    def store_upload(self, headers: Mapping[str, str], raw: bytes, file_id: str) -> Any:
        """Store an uploaded file: the status and the file's metadata or the problem."""
        from nb_tools.testing._files import upload

        with self._lock:
            return upload(self.files, headers, raw, file_id)

    def next_action(self, body: Mapping[str, Any]) -> _Action:
        """What to answer the request ``body`` with: the next scripted step (the OpenAI
        fake server shares the script)."""
        with self._lock:
            step: object = self._take_step()
        if step is None:
            if self.fallback is None:
                return _Action(
                    status=500,
                    message=f"FakeMessagesServer: the script is exhausted ({self._served} "
                    "replies served); this request has no reply. Add steps to the script "
                    "or push() more.",
                )
            step = self.fallback
        if callable(step) and not isinstance(step, Reply | Fault):
            step = step(self._model_request(body))
        if isinstance(step, Fault):
            if step.cut_after is None:
                return self._fault_action(step)
            return _Action(fault=step, reply=self._cut_reply(body))
        if not isinstance(step, Reply):
            return _Action(
                status=500,
                message=f"FakeMessagesServer: a responder returned "
                f"{type(step).__name__}, expected Reply or Fault",
            )
        with self._lock:
            self._served += 1
        return _Action(reply=step)

    def _take_step(self) -> Step | None:
        """The next step, consumed (a Fault only once it has been used ``times`` times)."""
        if not self._steps:
            return None
        step = self._steps[0]
        if isinstance(step, Fault):
            self._fault_uses += 1
            if self._fault_uses >= step.times:
                self._steps.popleft()
                self._fault_uses = 0
            return step
        return self._steps.popleft()

    def _cut_reply(self, body: Mapping[str, Any]) -> Reply:
        """The reply a cut stream starts to send: the next one in the script, left there
        for the retry; a filler when there is none."""
        with self._lock:
            following = next((s for s in self._steps if not isinstance(s, Fault)), None)
        if isinstance(following, Reply):
            return following
        if following is not None:
            answer = following(self._model_request(body))
            if isinstance(answer, Reply):
                return answer
        return Reply(text="This reply is cut off before it ends.")

    def _fault_action(self, fault: Fault) -> _Action:
        return _Action(fault=fault, status=fault.status or 500, message=fault.message)

    def _enter(self) -> bool:
        """Count a Messages request in; False (count nothing) when ``max_concurrent`` are
        being answered already."""
        with self._lock:
            if self.max_concurrent is not None and self.active >= self.max_concurrent:
                self.rate_limited += 1
                return False
            self.active += 1
            self.peak_active = max(self.peak_active, self.active)
            return True

    def _leave(self) -> None:
        with self._lock:
            self.active -= 1

    def new_id(self, prefix: str) -> str:
        """A fresh id (``toolu_fake_0001``)."""
        with self._lock:
            return f"{prefix}_fake_{next(self._ids):04d}"


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256  # many rows connect at once (the default backlog is 5)
    fake: FakeMessagesServer

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._connections: set[socket.socket] = set()
        self._connections_lock = threading.Lock()

    def process_request(self, request: Any, client_address: Any) -> None:
        with self._connections_lock:
            self._connections.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        with self._connections_lock:
            self._connections.discard(request)
        super().shutdown_request(request)

    def close_connections(self) -> None:
        """Close kept-alive connections so their handler threads end with the server."""
        with self._connections_lock:
            connections = list(self._connections)
        for conn in connections:
            _hang_up(conn)


class _Handler(FilesRoutes, BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # else every streamed reply stalls ~40 ms (delayed ACK)
    server: _HTTPServer
    timeout = 60

    def log_message(self, format: str, *args: Any) -> None:  # quiet: tests read .requests
        pass

    def do_GET(self) -> None:
        fake = self.server.fake
        if self._files("GET"):
            return
        path = self.path.split("?")[0]
        m = BATCH_ROUTE.match(path)
        if m is not None and m["id"] and m["action"] in (None, "results"):
            headers = {k.lower(): v for k, v in self.headers.items()}
            fake.record(RecordedRequest(method="GET", path=self.path, headers=headers, body=None))
            if m["action"] == "results":
                status, data = fake.batches.results(fake, m["id"])
                self.send_response(status)
                self.send_header("content-type", "application/binary")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            else:
                self._send_json(*fake.batches.get(fake, m["id"]))
            return
        self._send_json(404, error_body(404, f"FakeMessagesServer: no route GET {self.path}"))

    def do_POST(self) -> None:
        fake = self.server.fake
        path = self.path.split("?")[0]
        if path == "/v1/files":
            self._upload(fake)
            return
        m = BATCH_ROUTE.match(path)
        if m is not None:
            body, problem = self._read_body()
            if problem is not None:
                self._send_error(400, problem)
            elif m["id"] is None:
                self._send_json(*fake.batches.create(fake, body))
            elif m["action"] == "cancel":
                self._send_json(*fake.batches.cancel(fake, m["id"]))
            else:
                self._send_error(404, f"FakeMessagesServer: no route POST {path}")
            return
        body, problem = self._read_body()
        if problem is None:
            problem = check_body(body, count=path.endswith("/count_tokens"), signed=fake.signed)
        if problem is None:
            problem = file_problem(fake.files, body, self.headers.get("anthropic-beta", ""))
        if path not in ("/v1/messages", "/v1/messages/count_tokens"):
            self._send_error(404, f"FakeMessagesServer: no route POST {path}")
        elif problem is not None:
            self._send_error(400, problem)
        elif path.endswith("/count_tokens"):
            tokens = usage_for(Reply(), body).input_tokens
            self._send_json(200, {"input_tokens": tokens})
        elif not fake._enter():
            headers = {
                "retry-after-ms": str(fake.retry_after_ms),
                "retry-after": str(max(1, -(-fake.retry_after_ms // 1000))),
            }
            message = f"FakeMessagesServer: more than {fake.max_concurrent} concurrent requests"
            self._send_json(429, self.api_error(429, message), headers)
        else:
            try:
                if fake.latency:
                    time.sleep(fake.latency)
                self._answer(fake, body)
            finally:
                fake._leave()

    def _answer(self, fake: FakeMessagesServer, body: Mapping[str, Any]) -> None:
        action = fake.next_action(body)
        if action.reply is None:
            self._send_failure(fake, action)
            return
        reply = action.reply
        if reply.raw_sse is not None:
            fake.signed.update(recorded_thinking(reply.raw_sse))
            self._stream_raw(reply.raw_sse)
            return
        ids = [c.id or fake.new_id("toolu") for c in reply.calls]
        msg_id, model, usage = fake.new_id("msg"), str(body["model"]), usage_for(reply, body)
        if fake.prompt_cache is not None and reply.usage is None:
            counts = fake.prompt_cache.usage(body)
            usage = Usage(
                input_tokens=counts["input_tokens"],
                output_tokens=usage.output_tokens,
                cache_read_input_tokens=counts["cache_read_input_tokens"],
                cache_creation_input_tokens=counts["cache_creation_input_tokens"],
                cache_creation_1h_input_tokens=counts["ephemeral_1h_input_tokens"],
            )
        cut = action.fault.cut_after if action.fault else None
        try:
            if body.get("stream"):
                events = stream_events(reply, msg_id=msg_id, model=model, tool_ids=ids, usage=usage)
                if action.fault and cut is not None:
                    events, cut = _break(events, action.fault, cut)
                self._stream(events, reply.chunk_delay, cut)
            else:
                message = message_json(reply, msg_id=msg_id, model=model, tool_ids=ids, usage=usage)
                self._send_json(200, message, cut=cut is not None)
        except OSError:
            self.close_connection = True  # the client went away (an interrupted turn)

    api_error: Callable[[int, str], Mapping[str, Any]] = staticmethod(error_body)
    """The API's error object for a status and a message."""

    def _read_body(self) -> tuple[Any, str | None]:
        """The POSTed body, parsed and recorded; with the problem when it is not JSON (the
        body is then its text, recorded as it came)."""
        raw = self.rfile.read(int(self.headers.get("content-length") or 0))
        problem = None
        try:
            body = json.loads(raw)
        except ValueError as err:
            body = raw.decode("utf-8", errors="replace")
            problem = f"the request body is not JSON: {err}"
        headers = {k.lower(): v for k, v in self.headers.items()}
        record = RecordedRequest(method="POST", path=self.path, headers=headers, body=body)
        self.server.fake.record(record)
        return body, problem

    def _send_error(self, status: int, message: str) -> None:
        self._send_json(status, self.api_error(status, message))

    def _send_failure(self, fake: FakeMessagesServer, action: _Action) -> None:
        """A scripted error status (a fault's comes with ``retry-after-ms``)."""
        extra = {"retry-after-ms": str(fake.retry_after_ms)} if action.fault else {}
        self._send_json(action.status, self.api_error(action.status, action.message), extra)

    def _stream(
        self, events: Iterable[tuple[str, Mapping[str, Any]]], delay: float, cut: int | None
    ) -> None:
        self._stream_payloads((encode_event(name, data) for name, data in events), delay, cut)

    STREAM_HEADERS: Mapping[str, str] = {"request-id": "req_fake"}
    """Headers of a streamed response besides the SSE ones (the API's request id)."""

    def _stream_payloads(self, payloads: Iterable[bytes], delay: float, cut: int | None) -> None:
        """Send encoded SSE events as a chunked ``text/event-stream``, each its own HTTP
        chunk (as the APIs frame them), ``delay`` seconds apart; ``cut``: break the
        connection before that event."""
        self.send_response(200)
        self.send_header("content-type", "text/event-stream; charset=utf-8")
        self.send_header("cache-control", "no-cache")
        self.send_header("transfer-encoding", "chunked")
        for key, value in self.STREAM_HEADERS.items():
            self.send_header(key, value)
        self.end_headers()
        # Events due at the same moment go out in one write (a send per event cost client
        # and server a wake-up each); ``delay`` still spaces them out.
        pending: list[bytes] = []
        for n, payload in enumerate(payloads):
            if cut is not None and n >= cut:
                self.wfile.write(b"".join(pending))
                self._cut()
                return
            if delay and n:
                self.wfile.write(b"".join(pending))
                pending.clear()
                time.sleep(delay)
            pending.append(b"%x\r\n%s\r\n" % (len(payload), payload))
        pending.append(b"0\r\n\r\n")
        self.wfile.write(b"".join(pending))

    def _stream_raw(self, body: bytes) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/event-stream; charset=utf-8")
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        self.wfile.write(b"%x\r\n%s\r\n0\r\n\r\n" % (len(body), body))

    def _send_json(
        self,
        status: int,
        data: Mapping[str, Any],
        headers: Mapping[str, str] | None = None,
        *,
        cut: bool = False,
    ) -> None:
        payload = json.dumps(data).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(payload)))
        self.send_header("request-id", "req_fake")
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        if cut:
            self.wfile.write(payload[: len(payload) // 2])
            self._cut()
        else:
            self.wfile.write(payload)

    def _cut(self) -> None:
        """Drop the connection mid-body, as a failing network or proxy would."""
        self.wfile.flush()
        self.close_connection = True
        _hang_up(self.connection)


def _break(
    events: list[tuple[str, dict[str, Any]]], fault: Fault, after: int
) -> tuple[list[tuple[str, dict[str, Any]]], int | None]:
    """The events of a stream that ``fault`` breaks after ``after`` events, and where to
    drop the connection (None: end the response normally)."""
    if fault.status is None:
        return events, after
    if fault.status >= 400:
        return [*events[:after], ("error", error_body(fault.status, fault.message))], None
    return events[:after], None


def _hang_up(conn: socket.socket) -> None:
    with contextlib.suppress(OSError):
        conn.shutdown(socket.SHUT_RDWR)


# ---- scripts from files, and the command line ----------------------------------------------


def steps_from_json(items: Iterable[Mapping[str, Any]]) -> list[Step]:
    """Steps from plain data: ``{"text": ..., "calls": [{"name": ..., "arguments": {...}}
    or {"name": ..., "raw": "..."}], "stop_reason": ..., "usage": {...}, "chunk_delay": ...,
    "thinking": ..., "redacted_thinking": ..., "blocks": [API blocks], "stop_details": {...},
    "cut_last_call": true}``
    or ``{"fault": {"status": 529, "times": 2}}`` / ``{"fault": {"cut_after": 5}}``."""
    steps: list[Step] = []
    for i, item in enumerate(items):
        if "fault" in item:
            try:
                steps.append(Fault(**item["fault"]))
            except TypeError as err:
                raise ValueError(f"script step {i}: bad fault {item['fault']!r}: {err}") from None
            continue
        unknown = set(item) - {
            "text",
            "calls",
            "stop_reason",
            "usage",
            "chunk_delay",
            "thinking",
            "redacted_thinking",
            "blocks",
            "stop_details",
            "cut_last_call",
        }
        if unknown:
            raise ValueError(f"script step {i}: unknown keys {sorted(unknown)}")
        calls = tuple(
            ScriptedCall(
                name=c["name"], arguments=c.get("arguments", {}), raw=c.get("raw"), id=c.get("id")
            )
            for c in item.get("calls", ())
        )
        usage = Usage(**item["usage"]) if "usage" in item else None
        steps.append(
            Reply(
                text=item.get("text", ""),
                calls=calls,
                stop_reason=item.get("stop_reason"),
                usage=usage,
                chunk_delay=float(item.get("chunk_delay", 0.0)),
                thinking=item.get("thinking"),
                redacted_thinking=item.get("redacted_thinking"),
                blocks=tuple(item.get("blocks", ())),
                stop_details=item.get("stop_details"),
                cut_last_call=bool(item.get("cut_last_call", False)),
            )
        )
    return steps


def load_script(path: str) -> list[Step]:
    """A script from a ``.json`` file (a list of steps as :func:`steps_from_json` reads) or
    a ``.py`` file that defines ``SCRIPT``, a list of steps."""
    if path.endswith(".py"):
        script = runpy.run_path(path).get("SCRIPT")
        if script is None:
            raise ValueError(f"{path}: define SCRIPT = [reply(...), ...]")
        return list(script)
    with open(path, encoding="utf-8") as f:
        data = json.load(f)
    if not isinstance(data, list):
        raise ValueError(f"{path}: expected a JSON list of steps")
    return steps_from_json(data)


def _echo(request: ModelRequest) -> Reply:
    last = request.messages[-1].text if request.messages else ""
    return Reply(text=f"(fake model) You said: {last}" if last else "(fake model) Hello.")


def main(argv: Sequence[str] | None = None, *, ready: Callable[[str], None] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m nb_tools.testing.server",
        description="Serve a fake Anthropic Messages API on loopback from a script.",
    )
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8765, help="0 picks a free port")
    parser.add_argument("--script", help="a .json list of steps or a .py file defining SCRIPT")
    parser.add_argument(
        "--no-echo", action="store_true", help="answer 500 once the script runs out"
    )
    options = parser.parse_args(argv)
    script = load_script(options.script) if options.script else []
    fallback = None if options.no_echo else _echo
    server = FakeMessagesServer(script, host=options.host, port=options.port, fallback=fallback)
    with server:
        print(f"ANTHROPIC_BASE_URL={server.base_url}", flush=True)
        if ready is not None:
            ready(server.base_url)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
