"""Project instructions: which files are read, in which order, and which are refused."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from nb_tools.agent import Agent, find_instructions
from nb_tools.agent._instructions import MAX_BYTES
from nb_tools.testing import ScriptedModel, reply


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_outermost_first_every_name_in_its_order(tmp_path: Path) -> None:
    write(tmp_path / "AGENTS.md", "root agents")
    write(tmp_path / "analysis" / "CLAUDE.md", "analysis claude")
    write(tmp_path / "analysis" / "AGENTS.md", "analysis agents")
    write(tmp_path / "analysis" / ".nb_tools" / "instructions.md", "analysis nb_tools")
    write(tmp_path / "other" / "AGENTS.md", "not on the way")
    found = find_instructions(tmp_path / "analysis", tmp_path)
    assert found.names == (
        "AGENTS.md",
        "analysis/AGENTS.md",
        "analysis/CLAUDE.md",
        "analysis/.nb_tools/instructions.md",
    )
    assert [f.text for f in found.files] == [
        "root agents",
        "analysis agents",
        "analysis claude",
        "analysis nb_tools",
    ]
    block = found.block()
    assert block.index("root agents") < block.index("analysis nb_tools")
    assert "## analysis/CLAUDE.md" in block


def test_a_folder_outside_the_root_reads_only_itself(tmp_path: Path) -> None:
    write(tmp_path / "AGENTS.md", "parent")
    write(tmp_path / "nb" / "AGENTS.md", "mine")
    found = find_instructions(tmp_path / "nb", tmp_path / "elsewhere")
    assert [f.text for f in found.files] == ["mine"]


def test_links_are_not_instructions(tmp_path: Path) -> None:
    """A link could make any file of the machine (a key, a history) part of the system
    prompt sent to the provider: none is read, and the transcript says why."""
    secret = write(tmp_path / "outside" / "id_rsa", "PRIVATE KEY MATERIAL")
    project = tmp_path / "project"
    project.mkdir()
    os.symlink(secret, project / "AGENTS.md")
    os.link(secret, project / "CLAUDE.md")
    (project / "linked").symlink_to(tmp_path / "outside", target_is_directory=True)
    write(tmp_path / "outside" / ".nb_tools" / "instructions.md", "via a linked folder")
    found = find_instructions(project, project)
    assert found.files == ()
    reasons = dict(found.skipped)
    assert "symbolic link" in reasons["AGENTS.md"]
    assert "hard link" in reasons["CLAUDE.md"]
    found = find_instructions(project / "linked", project)
    assert found.files == ()
    agent = Agent(ScriptedModel([reply("ok")]))
    agent.instructions = find_instructions(project, project)
    assert "PRIVATE KEY" not in agent.request_preview("hi").system


def test_a_long_file_is_cut_and_says_so(tmp_path: Path) -> None:
    write(tmp_path / "AGENTS.md", "x" * (MAX_BYTES + 100))
    [f] = find_instructions(tmp_path).files
    assert f.truncated and len(f.text) == MAX_BYTES
    assert f"[cut at {MAX_BYTES} bytes]" in find_instructions(tmp_path).block()


async def test_the_request_carries_them_after_the_system_prompt(tmp_path: Path) -> None:
    write(tmp_path / "AGENTS.md", "Use polars, not pandas.")
    model = ScriptedModel([reply("ok")])
    agent = Agent(model, system="Be brief.")
    agent.instructions = find_instructions(tmp_path)
    events: list[object] = []
    await agent.run("hi", on_event=events.append)
    system = model.requests[0].system
    assert system.startswith("Be brief.\n\n# Project instructions")
    assert system.endswith("## AGENTS.md\n\nUse polars, not pandas.")
    notices = [e for e in events if type(e).__name__ == "RunNotice"]
    assert [n.message for n in notices] == ["project instructions read: AGENTS.md"]
    # the user's system prompt is what is kept and saved, not the composed one
    assert agent.system == "Be brief." and agent.last_result.system == "Be brief."


@pytest.mark.parametrize("content", ["", "   \n"])
def test_empty_files_add_nothing(tmp_path: Path, content: str) -> None:
    write(tmp_path / "AGENTS.md", content)
    assert find_instructions(tmp_path).files == ()
