"""The notebook's agent state: one conversation that ``%%agent`` cells continue, the model,
per-tool call statistics, the session's approval/visibility choices from ``%tools`` and its
permission rules (``%nbtools``, "Always allow", the settings files)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from nb_tools.model import Provider
from nb_tools.tool import Info, Registry, Tool, default_registry

if TYPE_CHECKING:
    from nb_tools.agent import Event
    from nb_tools.permissions import PermissionRules
    from nb_tools.transcript import ConversationRef

DEMO_MODEL = "demo"
"""``--model demo`` / ``use_model("demo")``: the offline demo model."""


@dataclass
class ToolStats:
    calls: int = 0
    errors: int = 0
    last_duration: float | None = None


class ApprovalOverride:
    """A tool seen through a session choice about approval (``%tools``): ``info()`` says
    ``requires_approval=required``; everything else is the tool's own (its call, preview,
    fast validated path), except a per-argument approval vote, which the choice replaces."""

    def __init__(self, tool: Tool, required: bool) -> None:
        self._tool = tool
        self._required = required

    def info(self) -> Info:
        from dataclasses import replace

        return replace(self._tool.info(), requires_approval=self._required)

    def __getattr__(self, name: str) -> Any:
        if name == "requires_approval_for":
            raise AttributeError(name)
        return getattr(self._tool, name)


class Session:
    """State shared by the cells of one kernel."""

    def __init__(self) -> None:
        self.agent: Any = None  # nb_tools.agent.Agent, created on the first run
        self.agent_model_key: object = None
        self.model: Provider | str | None = None  # set by use_model()
        self.stats: dict[str, ToolStats] = {}
        self.approval: dict[str, bool] = {}  # tool name -> requires approval (session choice)
        self._runs: list[tuple[dict[str, Any], tuple[Any, ...] | None]] = []
        self.conversation: ConversationRef | None = None  # as the last run left it
        self.run_tools = Registry()
        self.builtins: dict[str, Registry] = {}  # root folder -> the built-in tools on it
        self.running: Any = None  # the transcript recorder of the run in progress
        self._kernel_tools: Registry | None = None
        self._rules: PermissionRules | None = None

    # -- transcripts ---------------------------------------------------------------------

    def keep_run(self, transcript: dict[str, Any], added: tuple[Any, ...] | None) -> None:
        """Keep a run's transcript. ``added``: the messages the run added (the agent's own
        objects), kept instead of their encoded copy in ``conversation.messages``."""
        if added is not None:
            conv = {k: v for k, v in transcript["conversation"].items() if k != "messages"}
            transcript = {**transcript, "conversation": conv}
        self._runs.append((transcript, added))

    @property
    def transcripts(self) -> list[dict[str, Any]]:
        """The session's transcripts, oldest first, each as it was displayed."""
        from nb_tools.agent._persist import encode_messages

        out = []
        for transcript, added in self._runs:
            if added is not None:
                conv = {**transcript["conversation"], "messages": encode_messages(added)}
                transcript = {**transcript, "conversation": conv}
            out.append(transcript)
        return out

    # -- permission rules ----------------------------------------------------------------

    @property
    def rules(self) -> PermissionRules:
        """The session's permission rules, shared by every agent the session makes: the
        user's config file and the project's ``.nb_tools/settings.json`` beside the
        notebook (read on first use), plus the session's own rules (``%nbtools allow``,
        "Always allow")."""
        if self._rules is None:
            from nb_tools.permissions import load_rules

            try:
                self._rules = load_rules(os.getcwd())
            except ValueError as exc:
                raise ValueError(f"{exc}; fix the file, then run %nbtools reload") from exc
        return self._rules

    def reload_rules(self) -> PermissionRules:
        """Read the settings files again (``%nbtools reload``): their rules are replaced,
        the session's own rules are kept. The rules object stays the same, so agents
        already holding it see the change."""
        from nb_tools.permissions import load_rules

        try:
            fresh = load_rules(os.getcwd())
        except ValueError as exc:
            raise ValueError(f"{exc}; fix the file, then run %nbtools reload") from exc
        if self._rules is None:
            self._rules = fresh
            return fresh
        rules = self._rules
        kept = [r for r in rules.rules if r.source == "session"]
        rules.root = fresh.root
        rules.rules = list(fresh.rules) + [r for r in kept if r not in fresh.rules]
        return rules

    # -- tools -------------------------------------------------------------------------

    @property
    def registry(self) -> Registry:
        """The registry ``@tool`` registers into (the session's registry)."""
        return default_registry()

    @property
    def kernel_registry(self) -> Registry:
        """The kernel's own tools as ``%tools`` lists them (``python``, ``list_variables``,
        ``describe``, ``notebook_read``, ``notebook_edit``; none outside IPython). Hiding one
        here hides it from the model in the next runs."""
        if self._kernel_tools is None:
            from nb_tools.jupyter._kernel_tools import listed_kernel_tools

            self._kernel_tools = Registry(*listed_kernel_tools())
        return self._kernel_tools

    def hidden_kernel_tools(self) -> frozenset[str]:
        """The kernel tools hidden from the model with ``%tools``."""
        reg = self._kernel_tools
        return frozenset(n for n in reg.names() if reg.is_hidden(n)) if reg else frozenset()

    def refresh_tools(
        self, names: list[str] | None = None, extra: Registry | None = None
    ) -> Registry:
        """Fill :attr:`run_tools` (the registry the agent sees) from the session registry:
        only ``names`` when given, plus ``extra`` (built-ins), with the session's approval
        choices applied and hidden tools kept hidden."""
        base = self.registry.subset(*names) if names is not None else self.registry.clone()
        reg = self.run_tools
        reg.remove(*reg.names())
        sources = [base] + ([extra] if extra is not None else [])
        for source in sources:
            for tool in source.list():
                name = tool.info().name
                if name in self.approval:
                    tool = ApprovalOverride(tool, self.approval[name])
                reg.add(tool)
                if source.is_hidden(name):
                    reg.hide(name)
        return reg

    def record(self, event: Event) -> None:
        """An event consumer keeping call counts and durations for ``%tools``."""
        from nb_tools.agent import ToolCallFinished

        if isinstance(event, ToolCallFinished) and event.status in ("ok", "error", "cut_off"):
            stats = self.stats.setdefault(event.call.name, ToolStats())
            stats.calls += 1
            stats.last_duration = event.duration
            if event.status != "ok":
                stats.errors += 1

    def reset(self) -> None:
        """Forget the conversation (``--new``)."""
        if self.agent is not None:
            self.agent.reset()


def has_credentials() -> bool:
    return bool(os.environ.get("ANTHROPIC_API_KEY") or os.environ.get("ANTHROPIC_BASE_URL"))


_session: Session | None = None


def get_session() -> Session:
    global _session
    if _session is None:
        _session = Session()
    return _session


def reset_session() -> None:
    """Drop all session state (``%unload_ext``)."""
    global _session
    _session = None
