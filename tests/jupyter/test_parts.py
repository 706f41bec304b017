"""The notebook layer's pure parts: the cell transformer, the demo model, the session's
tool choices, HTML rendering, save_transcript and the inspector's toggles."""

from __future__ import annotations

import asyncio
import json

import pytest

from nb_tools.agent import Agent
from nb_tools.jupyter._demo import DemoModel, arguments_for, example
from nb_tools.jupyter._session import ApprovalOverride, Session
from nb_tools.jupyter._transform import agent_cell_transformer
from nb_tools.model import ToolSpec
from nb_tools.tool import Registry, default_registry, needs_approval, tool
from nb_tools.transcript._diff import diff_html
from nb_tools.transcript._html import transcript_bundle, transcript_html
from nb_tools.transcript._recorder import TRANSCRIPT_MIME

RUNNER = '__import__("nb_tools.jupyter", fromlist=["_"])'


def test_transformer_rewrites_an_agent_cell_into_an_awaited_call() -> None:
    out = agent_cell_transformer(["%%agent --new --model demo\n", "Plot 'it'\n", "now\n"])
    assert out == [
        f"await {RUNNER}.run_cell_magic_async('--new --model demo', \"Plot 'it'\\nnow\\n\")\n"
    ]
    assert agent_cell_transformer(["%%agent\n"]) == [
        f"await {RUNNER}.run_cell_magic_async('', '')\n"
    ]


def test_transformer_rewrites_top_level_agent_lines_only() -> None:
    cell = ["x = 1\n", "%agent say hi\n", "  %agent not me\n", "%agents no\n"]
    assert agent_cell_transformer(cell) == [
        "x = 1\n",
        f"await {RUNNER}.run_line_magic_async('say hi')\n",
        "  %agent not me\n",
        "%agents no\n",
    ]
    other = ["%%time\n", "%agent x\n"]
    assert agent_cell_transformer(["print(1)\n"]) == ["print(1)\n"]
    assert agent_cell_transformer(other)[0] == "%%time\n"


def test_the_transformed_cell_is_async_python() -> None:
    import ast

    [line] = agent_cell_transformer(["%%agent\n", "hi\n"])
    code = compile(line, "<cell>", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
    assert code.co_flags & 0x80  # CO_COROUTINE: IPython runs it as an async cell


def test_demo_arguments_come_from_the_schema_and_the_prompt() -> None:
    spec = ToolSpec(
        name="book",
        description="",
        input_schema={
            "type": "object",
            "properties": {
                "restaurant": {"type": "string"},
                "people": {"type": "integer", "minimum": 1},
                "when": {"type": "string", "format": "date"},
                "vip": {"type": "boolean"},
                "note": {"type": "string"},
                "kind": {"enum": ["lunch", "dinner"]},
            },
            "required": ["restaurant", "people", "when", "kind"],
        },
    )
    assert arguments_for(spec, "book people=6 restaurant='Chez Panisse' vip=yes") == {
        "restaurant": "Chez Panisse",
        "people": 6,
        "when": "2026-01-15",
        "vip": True,
        "kind": "lunch",
    }
    assert example({"type": "array", "items": {"type": "number"}, "minItems": 2}) == [1.5, 1.5]
    assert example({"anyOf": [{"type": "integer", "maximum": 1}, {"type": "null"}]}) == 1


async def test_demo_model_tours_the_named_tool_and_reports() -> None:
    seen = []

    @tool
    def add(a: int, b: int) -> int:
        """Add."""
        seen.append((a, b))
        return a + b

    @tool
    def other() -> str:
        """Other."""
        return "no"

    agent = Agent(DemoModel(), tools=Registry(add, other))
    result = await agent.run("please add a=2 b=3")
    assert seen == [(2, 3)]
    assert result.text.startswith("Here is what the tools returned:\n- add returned: 5")
    assert "Offline demo model" in result.text


def test_session_tools_apply_approval_choices_and_keep_hidden_tools() -> None:
    @tool
    def alpha() -> str:
        """A."""
        return "a"

    @tool(requires_approval=True)
    def beta() -> str:
        """B."""
        return "b"

    reg = default_registry()
    reg.add(alpha)
    reg.add(beta)
    try:
        reg.hide("alpha")
        session = Session()
        session.approval = {"alpha": True, "beta": False}
        run = session.refresh_tools(["alpha", "beta"])
        assert run.names() == ["alpha", "beta"]
        assert run.is_hidden("alpha") and not run.is_hidden("beta")
        assert needs_approval(run.get("alpha"), "{}") is True
        assert needs_approval(run.get("beta"), "{}") is False
        assert isinstance(run.get("beta"), ApprovalOverride)
        assert asyncio.run(_call(run)) == "b"
        with pytest.raises(KeyError, match="unknown tool 'nope'"):
            session.refresh_tools(["nope"])
    finally:
        reg.remove("alpha", "beta")


async def _call(reg: Registry) -> str:
    from nb_tools.model import ToolCall
    from nb_tools.tool import Executor

    result = await Executor(reg).execute(ToolCall(id="1", name="beta", arguments="{}"))
    return result.content


def test_diff_html_colours_lines_with_theme_variables() -> None:
    html = diff_html("--- a/x\n+++ b/x\n@@ -1 +1 @@\n-old <b>\n+new\n ctx\n")
    assert html.count("<span") == 6
    assert "var(--jp-error-color1" in html and "var(--jp-success-color1" in html
    assert "-old &lt;b&gt;" in html


TRANSCRIPT = {
    "version": 1,
    "model": "m",
    "stop_reason": "end_turn",
    "error": None,
    "turns": 1,
    "items": [
        {"kind": "user", "text": "<script>alert(1)</script>"},
        {"kind": "assistant", "text": "**Sure** <script>alert(2)</script>"},
        {
            "kind": "tool",
            "id": "t",
            "name": "f",
            "arguments": '{"a": 1}',
            "status": "error",
            "result": "x" * 5000,
            "parts": [],
            "duration": 0.5,
            "diffs": [],
            "progress": None,
            "approval": None,
        },
    ],
    "usage": {
        "input_tokens": 10,
        "output_tokens": 2,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 4,
        "cost_usd": 0.01,
    },
}


def test_transcript_html_escapes_and_truncates_with_show_all() -> None:
    html = transcript_html(TRANSCRIPT)
    # The prompt is the cell's source (not repeated); the model's Markdown is rendered
    # and its HTML shown as text.
    assert "alert(1)" not in html and "<strong>Sure</strong>" in html
    assert "<script>" not in html and "&lt;script&gt;alert(2)" in html
    assert "show all (5,000 characters)" in html
    assert "var(--jp-error-color1" in html
    bundle = transcript_bundle(TRANSCRIPT)
    assert set(bundle) == {TRANSCRIPT_MIME, "text/html", "text/plain"}
    assert bundle["text/plain"].splitlines()[-1] == (
        "[end_turn] 1 turn · 10 in / 2 out tokens · 4 cached · $0.0100"
    )


def test_save_transcript_writes_a_valid_notebook(tmp_path) -> None:
    import nbformat

    from nb_tools.jupyter import save_transcript

    path = save_transcript(tmp_path / "c.ipynb", runs=[TRANSCRIPT], title="Talk")
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    assert nb.cells[0].source.startswith("# Talk")
    assert nb.cells[2].source == "%%agent\n<script>alert(1)</script>"
    assert nb.cells[2].outputs[0]["data"][TRANSCRIPT_MIME] == json.loads(json.dumps(TRANSCRIPT))
    with pytest.raises(FileExistsError):
        save_transcript(path, runs=[TRANSCRIPT])
    with pytest.raises(ValueError, match=r"must end in \.ipynb"):
        save_transcript(tmp_path / "c.txt", runs=[TRANSCRIPT])


def test_inspector_toggles_visibility_and_approval_for_the_session() -> None:
    pytest.importorskip("ipywidgets")
    from nb_tools.jupyter._inspector import Inspector, specs_json

    @tool(read_only=True)
    def gamma(n: int) -> str:
        """Gamma things."""
        return "g"

    reg = default_registry()
    reg.add(gamma)
    try:
        session = Session()
        inspector = Inspector(session)
        assert "<b>gamma</b>" in inspector.rows["gamma"].value
        assert "calls 0" in inspector.rows["gamma"].value
        inspector.visible["gamma"].value = False
        assert reg.is_hidden("gamma")
        assert "gamma" not in [s["name"] for s in json.loads(specs_json(session))]
        inspector.visible["gamma"].value = True
        assert not reg.is_hidden("gamma")
        inspector.approval["gamma"].value = "ask"
        assert session.approval == {"gamma": True}
        assert "approval ✓ (session)" in inspector.rows["gamma"].value
        inspector.approval["gamma"].value = "default"
        assert session.approval == {}
    finally:
        reg.remove("gamma")


async def test_run_agent_without_display_keeps_the_conversation_and_transcripts() -> None:
    from nb_tools.jupyter import run_agent, transcripts
    from nb_tools.jupyter._session import get_session, reset_session
    from nb_tools.testing import ScriptedModel, reply

    reset_session()
    try:
        model = ScriptedModel([reply("one"), reply("two"), reply("fresh")])
        first = await run_agent("a", model=model, show=False, approval="deny")
        second = await run_agent("b", model=model, show=False)
        assert (first.text, second.text) == ("one", "two")
        assert [m.text for m in model.requests[1].messages] == ["a", "one", "b"]
        third = await run_agent("c", model=model, show=False, new=True)
        assert third.text == "fresh" and [m.text for m in model.requests[2].messages] == ["c"]
        assert [t["items"][0]["text"] for t in transcripts()] == ["a", "b", "c"]
        assert get_session().running is None
        with pytest.raises(ValueError, match="--max-turns must be at least 1"):
            await run_agent("d", model=model, show=False, max_turns=0)
        with pytest.raises(ValueError, match="unknown approval policy 'sometimes'"):
            await run_agent("d", model=model, show=False, approval="sometimes")
    finally:
        reset_session()
