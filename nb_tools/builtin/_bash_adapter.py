"""The Anthropic-defined bash tool (``{"type": "bash_20250124", "name": "bash"}``), mapped
onto :class:`BashTool`.

The API declares this tool by type, not by schema; ``ANTHROPIC_TYPE`` says which. Its input
is ``command`` or ``restart: true``. One difference from the API's description: every
command runs in a fresh ``bash -c`` in the workspace root (as with our ``bash`` tool), so
``cd`` and variables do not persist between calls and ``restart`` has nothing to reset.
Commands run in the sandbox exactly as the ``bash`` tool's do (read-only without approval,
the session's mode once approved).
"""

from __future__ import annotations

from nb_tools.builtin._bash import DEFAULT_TIMEOUT_MS, BashTool, warn_unavailable
from nb_tools.builtin._bash_readonly import is_read_only
from nb_tools.builtin._common import ToolError, parse_args
from nb_tools.builtin._workspace import Workspace
from nb_tools.sandbox import sandbox_available
from nb_tools.tool import Info, Result, Schema, Subject

__all__ = ["BashAdapterTool"]

PARAMETERS = Schema.object(
    {
        "command": Schema.string("The bash command to run."),
        "restart": Schema.boolean("Restart the shell instead of running a command."),
    }
)


class BashAdapterTool:
    """``bash`` as the Anthropic API defines it (``bash_20250124``)."""

    name = "bash"
    ANTHROPIC_TYPE = "bash_20250124"

    def __init__(self, workspace: Workspace, *, bash: BashTool | None = None) -> None:
        self.bash = bash if bash is not None else BashTool(workspace)
        self._info = Info(
            name=self.name,
            description=(
                "Run a bash command in the workspace root (a fresh shell each call: cd and "
                "variables do not persist). restart: true resets the shell."
            ),
            parameters=PARAMETERS,
            requires_approval=True,
            subject=Subject(arg="command", kind="command"),
        )

    def info(self) -> Info:
        return self._info

    def _command(self, args: str | bytes) -> str | None:
        """The command to run, or None for a restart; raises ToolError when neither."""
        a = parse_args(self.name, PARAMETERS, args)
        if a.get("restart"):
            return None
        command = a.get("command")
        if not command or not command.strip():
            raise ToolError("bash: pass a command to run, or restart: true")
        return command

    def read_only_call(self, args: str | bytes) -> bool:
        try:
            command = self._command(args)
        except ToolError:
            return False
        if command is None:
            return True
        found = sandbox_available()
        if not found.ok:  # without a sandbox every command asks (as the bash tool does)
            warn_unavailable(found.reason)
            return False
        return is_read_only(command, self.bash.workspace.root)

    def requires_approval_for(self, args: str | bytes) -> bool:
        return not self.read_only_call(args)

    async def call(self, args: str | bytes) -> Result:
        try:
            command = self._command(args)
        except ToolError as exc:
            return Result.error(str(exc))
        if command is None:
            return Result(content="bash tool has been restarted.")
        return await self.bash.run(command, DEFAULT_TIMEOUT_MS / 1000)
