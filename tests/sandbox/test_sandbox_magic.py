"""``%nbtools sandbox [MODE]``: shows and sets the session default."""

from __future__ import annotations

import pytest

from nb_tools.sandbox import default_mode, set_default_mode


class _Session:
    agent = None


def test_sandbox_magic_shows_and_sets() -> None:
    pytest.importorskip("IPython")
    from IPython.core.error import UsageError

    from nb_tools.jupyter._rules_mcp import nbtools_command

    try:
        shown = nbtools_command("sandbox", _Session())  # type: ignore[arg-type]
        assert "approved bash calls run 'workspace-write'" in shown
        assert "bubblewrap works" in shown or "NO sandbox can start" in shown
        out = nbtools_command("sandbox read-only", _Session())  # type: ignore[arg-type]
        assert out.startswith("sandbox for approved bash calls: read-only")
        assert default_mode() == "read-only"
        with pytest.raises(UsageError, match="give one of read-only, workspace-write, off"):
            nbtools_command("sandbox bogus", _Session())  # type: ignore[arg-type]
    finally:
        set_default_mode("workspace-write")
