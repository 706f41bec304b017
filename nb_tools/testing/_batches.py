"""The Message Batches API of the fake Messages server: ``POST /v1/messages/batches``
(create), ``GET /v1/messages/batches/{id}`` (retrieve), ``GET .../results`` (JSON lines),
``POST .../cancel``. Each request of a batch is answered from the script as a
``POST /v1/messages`` would be (non-streamed); the batch has ended by its first retrieve
after ``batch_delay`` seconds."""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from nb_tools.testing._sse import check_body, error_body, message_json, usage_for

if TYPE_CHECKING:
    from nb_tools.testing.server import FakeMessagesServer

ROUTE = re.compile(r"^/v1/messages/batches(?:/(?P<id>[\w-]+))?(?:/(?P<action>results|cancel))?$")
_CUSTOM_ID = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


@dataclass
class Batch:
    id: str
    created: float
    results: list[dict[str, Any]] = field(default_factory=list)
    canceled: bool = False

    def json(self, base_url: str, delay: float) -> dict[str, Any]:
        ended = self.canceled or time.monotonic() - self.created >= delay
        kinds = [r["result"]["type"] for r in self.results]
        counts = {
            "processing": 0 if ended else len(kinds),
            "succeeded": kinds.count("succeeded") if ended else 0,
            "errored": kinds.count("errored") if ended else 0,
            "canceled": kinds.count("canceled") if ended else 0,
            "expired": 0,
        }
        return {
            "id": self.id,
            "type": "message_batch",
            "processing_status": "ended" if ended else "in_progress",
            "request_counts": counts,
            "created_at": "2026-12-01T00:00:00Z",
            "expires_at": "2026-12-02T00:00:00Z",
            "ended_at": "2026-12-01T00:00:01Z" if ended else None,
            "archived_at": None,
            "cancel_initiated_at": "2026-12-01T00:00:01Z" if self.canceled else None,
            "results_url": f"{base_url}/v1/messages/batches/{self.id}/results" if ended else None,
        }


class Batches:
    """The batches a fake server holds."""

    def __init__(self) -> None:
        self.by_id: dict[str, Batch] = {}
        self.created: list[str] = []
        self._lock = threading.Lock()

    def create(self, fake: FakeMessagesServer, body: Any) -> tuple[int, Mapping[str, Any]]:
        requests = body.get("requests") if isinstance(body, Mapping) else None
        if not isinstance(requests, list) or not requests:
            return 400, error_body(400, "requests: a non-empty list is required")
        seen: set[str] = set()
        for i, item in enumerate(requests):
            custom_id = item.get("custom_id", "")
            if not isinstance(custom_id, str) or not _CUSTOM_ID.match(custom_id):
                return 400, error_body(
                    400, f"requests.{i}.custom_id: must match ^[a-zA-Z0-9_-]{{1,64}}$"
                )
            if custom_id in seen:
                return 400, error_body(400, f"requests.{i}.custom_id: {custom_id} is duplicated")
            seen.add(custom_id)
            params = item.get("params")
            problem = check_body(params, count=False, signed=fake.signed)
            if problem is not None:
                return 400, error_body(400, f"requests.{i}.params: {problem}")
            if params.get("stream"):
                return 400, error_body(400, f"requests.{i}.params.stream: not allowed in a batch")
        batch = Batch(id=fake.new_id("msgbatch"), created=time.monotonic())
        for item in requests:
            batch.results.append(
                {"custom_id": item["custom_id"], "result": _answer(fake, item["params"])}
            )
        with self._lock:
            self.by_id[batch.id] = batch
            self.created.append(batch.id)
        return 200, batch.json(fake.base_url, fake.batch_delay)

    def get(self, fake: FakeMessagesServer, batch_id: str) -> tuple[int, Mapping[str, Any]]:
        batch = self.by_id.get(batch_id)
        if batch is None:
            return 404, error_body(404, f"no batch {batch_id}")
        return 200, batch.json(fake.base_url, fake.batch_delay)

    def cancel(self, fake: FakeMessagesServer, batch_id: str) -> tuple[int, Mapping[str, Any]]:
        batch = self.by_id.get(batch_id)
        if batch is None:
            return 404, error_body(404, f"no batch {batch_id}")
        if not batch.json(fake.base_url, fake.batch_delay)["ended_at"]:
            batch.canceled = True
            for r in batch.results:
                r["result"] = {"type": "canceled"}
        return 200, batch.json(fake.base_url, fake.batch_delay)

    def results(self, fake: FakeMessagesServer, batch_id: str) -> tuple[int, bytes]:
        batch = self.by_id.get(batch_id)
        if batch is None:
            return 404, json.dumps(error_body(404, f"no batch {batch_id}")).encode()
        if batch.json(fake.base_url, fake.batch_delay)["processing_status"] != "ended":
            return 400, json.dumps(error_body(400, f"batch {batch_id} has not ended")).encode()
        # results may come in any order, as the API's do
        lines = [json.dumps(r) for r in reversed(batch.results)]
        return 200, ("\n".join(lines) + "\n").encode()


def _answer(fake: FakeMessagesServer, params: Mapping[str, Any]) -> dict[str, Any]:
    action = fake.next_action(params)
    reply = action.reply
    if reply is None or action.fault is not None:
        status = action.status if reply is None else 500
        return {"type": "errored", "error": error_body(status, action.message or "fault")}
    ids = [c.id or fake.new_id("toolu") for c in reply.calls]
    message = message_json(
        reply,
        msg_id=fake.new_id("msg"),
        model=str(params["model"]),
        tool_ids=ids,
        usage=usage_for(reply, params),
    )
    return {"type": "succeeded", "message": message}
