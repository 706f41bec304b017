"""A scripted reply for the map suites (``tests/agent/test_map_batch*.py``,
``tests/jupyter/test_map_cell.py``): each row asks for as many lookups as its name says."""

from __future__ import annotations

from typing import Any

from nb_tools.model import ModelRequest
from nb_tools.testing import call, reply


def rounds_by_row(request: ModelRequest) -> Any:
    """Row "c<n>" makes n lookups, then answers."""
    customer = request.messages[0].text.split()[-1]
    done = (len(request.messages) - 1) // 2
    if done < int(customer[1:]):
        return reply("", call("lookup", customer=customer))
    return reply(f"{customer}: {done} lookups")
