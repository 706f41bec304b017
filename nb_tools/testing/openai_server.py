"""A fake OpenAI API on loopback: Chat Completions and Responses, real HTTP and SSE,
replies from the same script format as :class:`FakeMessagesServer` (``reply``, ``call``,
``Fault``, responders).

The official ``openai`` SDK talks to it unchanged, and so does every client of an
OpenAI-compatible server::

    with FakeOpenAIServer([reply("Hi!"), Fault(status=429), reply("Again")]) as srv:
        provider = OpenAIProvider("gpt-5", api="chat", base_url=srv.base_url)

``srv.base_url`` ends in ``/v1``, as OpenAI-compatible clients expect. A scripted call of
a tool the request declares as a freeform (custom) tool is sent as a
``custom_tool_call`` whose input is the call's ``input`` argument (or its ``raw`` text).
``reasoning=`` makes every Responses reply start with a reasoning item of that summary.
``reasoning_field=`` ("reasoning_content", "reasoning") streams a reply's ``thinking`` in
Chat Completions under that field, as local servers do; with ``require_reasoning=True``
a follow-up whose assistant message made calls without it is refused with DeepSeek's 400.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from http.server import BaseHTTPRequestHandler
from typing import Any

from nb_tools.model import ModelRequest
from nb_tools.testing._openai_sse import (
    chat_chunks,
    chat_completion,
    check_chat,
    check_responses,
    encode_chat,
    encode_response_event,
    missing_reasoning,
    openai_error,
    request_from_chat,
    request_from_responses,
    response_events,
    usage_for,
)
from nb_tools.testing._script import Step
from nb_tools.testing.server import FakeMessagesServer, _Handler

__all__ = ["FakeOpenAIServer"]

_ROUTES = ("/v1/chat/completions", "/v1/responses")


class FakeOpenAIServer(FakeMessagesServer):
    """Serves ``POST /v1/chat/completions`` and ``POST /v1/responses`` from ``script``.

    Each request is checked as the real API checks it (every tool call answered, in order;
    every tool output answering a call of its kind) and refused with a 400 that says what
    is wrong. Faults answer an error status with ``retry-after-ms``, or cut the stream.
    """

    def __init__(
        self,
        script: Sequence[Step] | None = None,
        *,
        reasoning: str = "",
        reasoning_field: str = "",
        require_reasoning: bool = False,
        **options: Any,
    ) -> None:
        super().__init__(script, **options)
        self.reasoning = reasoning
        self.reasoning_field = reasoning_field
        self.require_reasoning = require_reasoning

    @property
    def base_url(self) -> str:
        return f"{super().base_url}/v1"

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        return _OpenAIHandler

    def _model_request(self, body: Mapping[str, Any]) -> ModelRequest:
        if "input" in body:
            return request_from_responses(body)
        return request_from_chat(body)

    def __repr__(self) -> str:
        return super().__repr__().replace("FakeMessagesServer", "FakeOpenAIServer")


class _OpenAIHandler(_Handler):
    server: Any
    STREAM_HEADERS: Mapping[str, str] = {}
    api_error = staticmethod(openai_error)

    def do_POST(self) -> None:
        fake: FakeOpenAIServer = self.server.fake
        body, problem = self._read_body()
        path = self.path.split("?")[0]
        if problem is not None:
            self._send_error(400, problem)
            return
        if path not in _ROUTES:
            self._send_error(404, f"FakeOpenAIServer: no route POST {path}")
            return
        chat = path.endswith("/chat/completions")
        problem = check_chat(body) if chat else check_responses(body)
        if problem is None and chat and fake.require_reasoning:
            problem = missing_reasoning(body, fake.reasoning_field or "reasoning_content")
        if problem is not None:
            self._send_error(400, problem)
            return
        action = fake.next_action(body)
        if action.reply is None:
            self._send_failure(fake, action)
            return
        reply = action.reply
        ids = [c.id or fake.new_id("call") for c in reply.calls]
        model, usage = str(body["model"]), usage_for(reply, body)
        cut = action.fault.cut_after if action.fault else None
        try:
            if chat:
                completion_id = fake.new_id("chatcmpl")
                if body.get("stream"):
                    include = bool((body.get("stream_options") or {}).get("include_usage"))
                    chunks = chat_chunks(
                        reply,
                        completion_id=completion_id,
                        model=model,
                        tool_ids=ids,
                        usage=usage,
                        include_usage=include,
                        reasoning_field=fake.reasoning_field,
                    )
                    payloads = [encode_chat(c) for c in chunks] + [encode_chat(None)]
                    self._stream_payloads(payloads, reply.chunk_delay, cut)
                else:
                    whole = chat_completion(
                        reply, completion_id=completion_id, model=model, tool_ids=ids, usage=usage
                    )
                    self._send_json(200, whole, cut=cut is not None)
                return
            custom = {t["name"] for t in body.get("tools", ()) if t.get("type") == "custom"}
            events = response_events(
                reply,
                response_id=fake.new_id("resp"),
                model=model,
                tool_ids=ids,
                usage=usage,
                custom_tools=custom,
                reasoning=fake.reasoning,
            )
            if body.get("stream"):
                self._stream_payloads(
                    [encode_response_event(e) for e in events], reply.chunk_delay, cut
                )
            else:
                self._send_json(200, events[-1]["response"], cut=cut is not None)
        except OSError:
            self.close_connection = True
