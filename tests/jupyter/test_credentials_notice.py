"""A key in the environment and an SDK profile both present: the cell shows no SDK warning
on stderr, and the transcript says once, as a notice, which credential is used."""

from __future__ import annotations

from pathlib import Path

import pytest
from kernel_helpers import TRANSCRIPT, Kernel

from nb_tools.testing import FakeMessagesServer, reply


def _notices(ex) -> list[str]:  # type: ignore[no-untyped-def]
    last = [o for o in ex.displays if TRANSCRIPT in o["data"]][-1]["data"][TRANSCRIPT]
    return [i["text"] for i in last["items"] if i.get("kind") == "notice"]


def test_the_sdk_credential_warning_becomes_one_notice(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "anthropic-config"
    (config / "configs").mkdir(parents=True)
    (config / "active_config").write_text("work\n")  # a profile the SDK would discover
    monkeypatch.setenv("ANTHROPIC_CONFIG_DIR", str(config))
    with FakeMessagesServer() as server:
        kernel = Kernel(server, tmp_path)  # ANTHROPIC_API_KEY is set in the kernel too
        try:
            kernel.ok("%load_ext nb_tools")
            server.push(reply("Hello."), reply("Again."))
            first = kernel.run("%%agent --new\nHi")
            second = kernel.run("%%agent\nOnce more")
        finally:
            kernel.close()
    stderr = "".join(
        o.get("text", "") for o in first.outputs + second.outputs if o.get("name") == "stderr"
    )
    assert "takes precedence" not in stderr and "ANTHROPIC_API_KEY" not in stderr, stderr
    [note] = [n for n in _notices(first) if "ANTHROPIC_API_KEY" in n]
    assert note.startswith("using ANTHROPIC_API_KEY from the environment"), note
    assert "profile" in note
    assert not [n for n in _notices(second) if "ANTHROPIC_API_KEY" in n]  # said once
