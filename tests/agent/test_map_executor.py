"""nb_tools.map(tool_executor=...): approved tool calls run on a real dask.distributed
LocalCluster (two worker processes); the approvals stay in the kernel."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import nb_tools
from nb_tools import tool
from nb_tools.agent import ApprovalRequest, Decision
from nb_tools.model import ModelRequest
from nb_tools.testing import ScriptedModel, call, reply

distributed = pytest.importorskip("distributed")


@pytest.fixture(scope="module")
def client() -> Iterator[Any]:
    cluster = distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    )
    with distributed.Client(cluster) as c:
        yield c
    cluster.close()


def calls_then_answers(name: str) -> Any:
    def step(request: ModelRequest) -> Any:
        if len(request.messages) == 1:
            return reply("", call(name, customer=request.messages[0].text.split()[-1]))
        return reply(request.messages[-1].content[0].result.content)

    return step


async def test_tool_calls_run_in_the_workers_approvals_in_the_kernel(
    client: Any, tmp_path: Path
) -> None:
    folder = str(tmp_path)

    @tool(register=False, requires_approval=True)
    def stamp(customer: str) -> str:
        """Write the customer's stamp file; returns the process id."""
        import os as _os

        with open(f"{folder}/{customer}", "w") as f:
            f.write(str(_os.getpid()))
        return str(_os.getpid())

    asked: list[tuple[str, int, str]] = []

    def approver(request: ApprovalRequest) -> Decision:
        customer = request.call.arguments.split('"')[3]
        asked.append((customer, os.getpid(), threading.current_thread().name))
        return Decision(approved=customer != "globex", message="not this one")

    m = ScriptedModel([calls_then_answers("stamp")] * 8)
    out = await nb_tools.amap(
        "Stamp {input}",
        ["acme", "globex", "initech", "umbrella"],
        tools=[stamp],
        model=m,
        approval="ask",
        approver=approver,
        tool_executor=client.get_executor(),
    )
    assert list(out["status"]) == ["ok", "denied", "ok", "ok"]
    workers = set(client.run(os.getpid).values())
    pids = {int(out["output"][i]) for i in (0, 2, 3)}
    assert os.getpid() not in pids and pids <= workers
    assert sorted(p.name for p in tmp_path.iterdir()) == ["acme", "initech", "umbrella"]
    assert sorted(a[0] for a in asked) == ["acme", "globex", "initech", "umbrella"]
    assert {a[1] for a in asked} == {os.getpid()}


async def test_an_unpicklable_tool_is_named_before_any_request(client: Any) -> None:
    lock = threading.Lock()

    @tool(register=False, read_only=True)
    def guarded(customer: str) -> str:
        """Uses a lock of the kernel."""
        with lock:
            return customer

    m = ScriptedModel([calls_then_answers("guarded")] * 2)
    with pytest.raises(TypeError, match=r"tool 'guarded' is not: .*lock"):
        await nb_tools.amap(
            "{input}", ["a"], tools=[guarded], model=m, tool_executor=client.get_executor()
        )
    assert m.requests == []


async def test_a_process_pool_works_too() -> None:
    from concurrent.futures import ProcessPoolExecutor

    @tool(register=False, read_only=True)
    def pid(customer: str) -> str:
        """The process id."""
        import os as _os

        return str(_os.getpid())

    m = ScriptedModel([calls_then_answers("pid")] * 4)
    import multiprocessing

    # spawn: forking a process that runs threads (servers, a cluster) can hang the child
    with ProcessPoolExecutor(
        max_workers=1, mp_context=multiprocessing.get_context("spawn")
    ) as pool:
        out = await nb_tools.amap("{input}", ["a", "b"], tools=[pid], model=m, tool_executor=pool)
    assert list(out["status"]) == ["ok", "ok"]
    assert int(out["output"][0]) != os.getpid()
