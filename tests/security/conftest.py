from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, os.path.dirname(__file__))


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root


@pytest.fixture
def visible_dir(request: pytest.FixtureRequest) -> Path:
    """A folder outside the workspace that the sandbox does NOT mask wholesale for an
    approved call (beside the tests, or, when the checkout lies under /tmp or a home, in
    /var or /opt), removed afterwards."""
    import shutil
    import uuid

    from nb_tools.sandbox._hide import coarse_masks

    masked = [str(m).rstrip("/") + "/" for m in coarse_masks()]
    name = f".sandbox-probe-{uuid.uuid4().hex[:8]}"
    for base in (Path(__file__).resolve().parent, Path("/var/cache"), Path("/opt")):
        if os.access(base, os.W_OK) and not any((f"{base}/").startswith(m) for m in masked):
            break
    else:
        pytest.skip("no folder outside the sandbox's masks is writable here")
    d = base / name
    d.mkdir()
    yield d
    shutil.rmtree(d, ignore_errors=True)
