"""``nb_tools.map(backend="batch", checkpoint=...)`` after a kernel restart: a process is
killed while a batch is pending; a new process with the same checkpoint polls that batch
instead of creating it again, and the rows that had finished send nothing."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from map_rows import rounds_by_row

from nb_tools.testing.server import FakeMessagesServer

SCRIPT = '''
import json, sys
import nb_tools
from nb_tools import tool
from nb_tools.model.anthropic import AnthropicProvider

@tool(register=False, read_only=True)
def lookup(customer: str) -> str:
    """A customer's plan."""
    print("TOOL", customer, flush=True)
    return "free"

provider = AnthropicProvider("claude-sonnet-4-5", base_url=sys.argv[1], api_key="x")
out = nb_tools.map(
    "Customer {input}", ["c1", "c0", "c1"], tools=[lookup], model=provider,
    backend="batch", checkpoint=sys.argv[2], batch_poll_seconds=0.05, approval="auto",
)
info = out.attrs["nb_tools"]
print("RESULT " + json.dumps({
    "status": list(out["status"]), "output": list(out["output"]),
    "turns": [int(t) for t in out["turns"]],
    "created": info.batch_ids, "resumed": info.resumed_batch_ids, "restored": info.restored,
}), flush=True)
'''


def _batch_lines(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    lines = [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
    return [x for x in lines if "batch" in x or "batch_done" in x]


def test_a_new_process_resumes_the_pending_batch_by_its_id(tmp_path: Path) -> None:
    script = tmp_path / "run_map.py"
    script.write_text(SCRIPT)
    checkpoint = tmp_path / "rows.jsonl"
    with FakeMessagesServer(fallback=rounds_by_row, batch_delay=1.0) as srv:
        args = [sys.executable, str(script), srv.base_url, str(checkpoint)]
        first = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            deadline = time.monotonic() + 60
            # Round 1 (three rows) ends after a second; c0 finishes; round 2 (the two c1
            # rows) is created: kill the process while that batch is pending.
            while sum("batch" in x for x in _batch_lines(checkpoint)) < 2:
                assert first.poll() is None, first.communicate()
                assert time.monotonic() < deadline, "the second batch was never created"
                time.sleep(0.02)
            first.kill()
            first.communicate()
        finally:
            if first.poll() is None:
                first.kill()
        created_before = list(srv.batches.created)
        assert len(created_before) == 2
        pending = _batch_lines(checkpoint)[-1]
        assert pending["batch"] == created_before[1]
        assert sorted(r["row"] for r in pending["requests"].values()) == [0, 2]
        requests_before = len(srv.requests)

        second = subprocess.run(args, capture_output=True, text=True, timeout=120)
        assert second.returncode == 0, second.stderr
        result = json.loads(second.stdout.split("RESULT ", 1)[1])
        sent = srv.requests[requests_before:]

    assert result["status"] == ["ok", "ok", "ok"]
    assert result["output"] == ["c1: 1 lookups", "c0: 0 lookups", "c1: 1 lookups"]
    assert result["restored"] == 1  # c0 came from the checkpoint
    assert result["turns"] == [2, 1, 2]  # a resumed row counts its turns before the restart
    assert result["resumed"] == [created_before[1]] and result["created"] == []
    assert srv.batches.created == created_before  # no batch created by the second process
    assert "TOOL" not in second.stdout  # nothing re-run: the batch held the final answers
    assert [r.path for r in sent if r.method == "POST"] == []
    assert _batch_lines(checkpoint)[-1] == {"batch_done": created_before[1]}


async def test_rows_not_in_the_pending_batch_go_out_without_waiting_for_it(
    tmp_path: Path,
) -> None:
    """In one process: a map cancelled while its batch is pending leaves it running (it has
    a checkpoint); the next map polls it for its rows, and a row that was not in it goes
    out in a batch of its own meanwhile."""
    import asyncio

    import pandas  # noqa: F401  (imported before the clock matters: the cancelled map builds its table)

    import nb_tools
    from nb_tools import tool
    from nb_tools.model.anthropic import AnthropicProvider

    @tool(register=False, read_only=True)
    def lookup(customer: str) -> str:
        """A customer's plan."""
        return "free"

    checkpoint = tmp_path / "rows.jsonl"
    with FakeMessagesServer(fallback=rounds_by_row, batch_delay=1.5) as srv:
        provider = AnthropicProvider("claude-sonnet-4-5", base_url=srv.base_url, api_key="x")
        options: dict[str, Any] = dict(
            tools=[lookup],
            model=provider,
            backend="batch",
            checkpoint=checkpoint,
            batch_poll_seconds=0.02,
            approval="auto",
        )
        first = asyncio.ensure_future(nb_tools.amap("Customer {input}", ["c0", "c0"], **options))
        while not _batch_lines(checkpoint):
            await asyncio.sleep(0.01)
        first.cancel()
        await asyncio.gather(first, return_exceptions=True)
        pending = srv.batches.created[0]
        assert not srv.batches.by_id[pending].canceled
        out = await nb_tools.amap("Customer {input}", ["c0", "c0", "c0"], **options)
        creates = [r for r in srv.requests if r.path == "/v1/messages/batches"]
        await provider.client.close()
    assert list(out["status"]) == ["ok"] * 3
    info = out.attrs["nb_tools"]
    assert info.resumed_batch_ids == [pending]
    # the third row's request went alone, while the first two waited on the pending batch
    assert [len(r.body["requests"]) for r in creates] == [2, 1]
    alone = srv.batches.by_id[srv.batches.created[1]]
    assert alone.created < srv.batches.by_id[pending].created + 1.5  # before it had ended
