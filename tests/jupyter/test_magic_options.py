"""``%%agent`` options: --system quoted or not, and kept when a later cell changes --model."""

from __future__ import annotations

import pytest
from IPython.core.error import UsageError

from nb_tools.jupyter._magics import parse


@pytest.mark.parametrize(
    ("line", "system", "model"),
    [
        ('--system "You are terse."', "You are terse.", None),
        ("--system 'Be brief.' --model demo", "Be brief.", "demo"),
        ("--system You are a careful reviewer --model demo", "You are a careful reviewer", "demo"),
        ('--system="a b"', "a b", None),
        ("--model demo", None, "demo"),
    ],
)
def test_system_prompt_forms(line: str, system: str | None, model: str | None) -> None:
    args = parse(line)
    assert (args.system, args.model) == (system, model)


def test_unbalanced_quotes_name_the_fix() -> None:
    with pytest.raises(UsageError, match="close the quotes"):
        parse('--system "oops')


async def test_system_is_kept_when_a_later_cell_changes_the_model() -> None:
    from nb_tools.jupyter import run_agent
    from nb_tools.jupyter._session import reset_session
    from nb_tools.testing import ScriptedModel, reply

    reset_session()
    try:
        first, second = ScriptedModel([reply("one")]), ScriptedModel([reply("two")])
        await run_agent("a", model=first, system="Be brief.", show=False, approval="deny")
        await run_agent("b", model=second, show=False, approval="deny")
        assert first.requests[0].system == "Be brief."
        assert second.requests[0].system == "Be brief."
        assert [m.text for m in second.requests[0].messages] == ["a", "one", "b"]
    finally:
        reset_session()
