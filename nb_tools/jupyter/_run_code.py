"""``%nbtools code``: the last run of the agent as a cell of plain code below this one
(:meth:`~nb_tools.agent.RunResult.to_code`); ``%nbtools code --print`` prints it instead
(and so does a kernel no notebook shows, where a new cell cannot appear)."""

from __future__ import annotations

from IPython.core.error import UsageError

from nb_tools.jupyter._session import Session

__all__ = ["code_command"]


def code_command(words: list[str], session: Session) -> str:
    """Insert (or print) the last run's code; returns what to show."""
    unknown = [w for w in words if w != "--print"]
    if unknown:
        raise UsageError(f"%nbtools code: unknown option {unknown[0]!r}; use --print or nothing")
    agent = session.agent
    result = agent.last_result if agent is not None else None
    if result is None:
        raise UsageError("%nbtools code: no agent run yet in this kernel; run %%agent first")
    code = result.to_code()
    ran = sum(1 for c in result.calls if c.status == "ok")
    if "--print" in words or not _frontend():
        return code
    from IPython import get_ipython

    shell = get_ipython()
    if shell is None:
        return code
    shell.set_next_input(code, replace=False)
    return (
        f"the last run's {ran} call(s) that ran are in a new cell below, as code; running it "
        "re-does them without the model"
    )


def _frontend() -> bool:
    """Whether a notebook frontend shows this kernel (a new cell can appear)."""
    from nb_tools.jupyter._headless import frontend_known

    return frontend_known()
