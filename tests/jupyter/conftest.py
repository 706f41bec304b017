from __future__ import annotations

from collections.abc import Iterator

import pytest

from nb_tools.testing import FakeMessagesServer


@pytest.fixture(scope="module")
def server() -> Iterator[FakeMessagesServer]:
    with FakeMessagesServer() as srv:
        yield srv


@pytest.fixture(scope="module")
def kernel(server: FakeMessagesServer, tmp_path_factory: pytest.TempPathFactory):
    """One real kernel per test module, with nb_tools loaded."""
    from kernel_helpers import Kernel

    k = Kernel(server, tmp_path_factory.mktemp("kernel"))
    try:
        yield k
    finally:
        k.close()
