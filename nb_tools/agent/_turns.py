"""What a turn's request carries beyond the conversation (thinking, effort, server tools,
Anthropic-defined tools by type, sampling, tool choice, context management), and what the
loop does with each stop reason the Messages API documents.

The loop (``_run.Run``) asks :class:`TurnPolicy` for each request and hands it each
response; the policy answers with a :class:`Verdict` saying whether to keep the reply, run
its calls, go on, retry, or end, and why."""

from __future__ import annotations

import dataclasses
import fnmatch
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

from nb_tools.agent._mcp_connector import BETA_MCP_CLIENT, check_servers, connector_request
from nb_tools.agent._notices import RunNotice
from nb_tools.model import (
    DEFAULT_MAX_TOKENS,
    ImageBlock,
    Message,
    ModelLimits,
    ModelRequest,
    Provider,
    RedactedThinkingBlock,
    ResponseEvent,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolSpec,
    ToolUseBlock,
)
from nb_tools.model._anthropic_features import (
    BETA_FILES_API,
    CACHE_TTLS,
    DEFAULT_CACHE_TTL,
    TOOL_SEARCH_THRESHOLD,
    TOOL_SEARCH_TOOL,
    live_container,
    tool_search,
)
from nb_tools.model._limits import (
    BETA_EFFORT,
    BETA_INTERLEAVED_THINKING,
    anthropic_tool,
    server_tool,
)
from nb_tools.tool import FromMCPServer

if TYPE_CHECKING:
    from nb_tools.agent._agent import Agent
    from nb_tools.agent._conversation import Conversation
    from nb_tools.agent._settings import AgentSettings
    from nb_tools.permissions import PermissionRules, RuleMatch
    from nb_tools.tool import Registry

Thinking: TypeAlias = "int | Literal['adaptive'] | Mapping[str, Any] | None"
ToolSearch: TypeAlias = "Literal['auto'] | bool"
ToolChoice: TypeAlias = "Literal['auto', 'any', 'none'] | str | Mapping[str, Any] | None"

MIN_THINKING_BUDGET = 1024
_THINKING_TYPES = ("enabled", "adaptive", "disabled")
CONTINUE_TEXT = "Continue from where you stopped."


def thinking_param(thinking: object) -> dict[str, Any] | None:
    """The API's ``thinking`` object from ``Agent(thinking=...)``: a token budget, "adaptive",
    the API's own dict, or None / 0 / False (off)."""
    if thinking is None or thinking is False or thinking == 0:
        return None
    if isinstance(thinking, bool):
        raise ValueError("Agent: thinking=True is ambiguous; pass a token budget or 'adaptive'")
    if isinstance(thinking, int):
        if thinking < MIN_THINKING_BUDGET:
            raise ValueError(
                f"Agent: a thinking budget of {thinking} tokens is below the API's minimum of "
                f"{MIN_THINKING_BUDGET}; pass thinking={MIN_THINKING_BUDGET} or more"
            )
        return {"type": "enabled", "budget_tokens": thinking}
    if thinking == "adaptive":
        return {"type": "adaptive"}
    if isinstance(thinking, str) and thinking.isdigit():
        return thinking_param(int(thinking))
    if isinstance(thinking, Mapping) and thinking.get("type") in _THINKING_TYPES:
        return dict(thinking)
    raise ValueError(
        f"Agent: thinking={thinking!r}: pass a token budget (e.g. 8000), 'adaptive', or the "
        "API's dict ({'type': 'enabled', 'budget_tokens': 8000})"
    )


def tool_choice_param(choice: object, disable_parallel: bool) -> dict[str, Any] | None:
    if choice is None:
        out: dict[str, Any] | None = {"type": "auto"} if disable_parallel else None
    elif isinstance(choice, Mapping):
        out = dict(choice)
    elif choice in ("auto", "any", "none"):
        out = {"type": choice}
    elif isinstance(choice, str):
        out = {"type": "tool", "name": choice}
    else:
        raise ValueError(f"Agent: tool_choice={choice!r}: 'auto', 'any', 'none' or a tool name")
    if disable_parallel and out is not None and out["type"] != "none":
        out["disable_parallel_tool_use"] = True
    return out


@dataclass(frozen=True, kw_only=True)
class RequestOptions:
    """What ``Agent(...)`` was asked to send with every request, checked once."""

    thinking: Mapping[str, Any] | None = None
    effort: str | None = None
    server_tools: tuple[str | Mapping[str, Any], ...] = ()
    tool_choice: Mapping[str, Any] | None = None
    temperature: float | None = None
    top_p: float | None = None
    stop_sequences: tuple[str, ...] = ()
    compaction: bool = True
    clear_tool_results: bool = True
    cache_ttl: str | None = DEFAULT_CACHE_TTL
    tool_search: ToolSearch = "auto"
    mcp_servers: tuple[Mapping[str, Any], ...] = ()

    @classmethod
    def make(
        cls,
        *,
        thinking: object = None,
        effort: str | None = None,
        server_tools: Sequence[str | Mapping[str, Any]] = (),
        tool_choice: object = None,
        disable_parallel_tool_use: bool = False,
        temperature: float | None = None,
        top_p: float | None = None,
        stop_sequences: Sequence[str] = (),
        compaction: bool = True,
        clear_tool_results: bool = True,
        cache_ttl: str | None = DEFAULT_CACHE_TTL,
        tool_search: ToolSearch = "auto",
        mcp_servers: Sequence[Mapping[str, Any]] = (),
    ) -> RequestOptions:
        think = thinking_param(thinking)
        if tool_search not in ("auto", True, False):
            raise ValueError(f"Agent: tool_search={tool_search!r}: use 'auto', True or False")
        if cache_ttl is not None and cache_ttl not in CACHE_TTLS:
            raise ValueError(
                f"Agent: cache_ttl={cache_ttl!r}: use '5m' or '1h' (None: the API's default)"
            )
        choice = tool_choice_param(tool_choice, disable_parallel_tool_use)
        on = think is not None and think.get("type") != "disabled"
        if on and choice is not None and choice["type"] in ("any", "tool"):
            raise ValueError(
                "Agent: with thinking on, tool_choice may only be 'auto' or 'none' (the API "
                "rejects forcing a tool while thinking); drop one of the two"
            )
        if on and temperature is not None and temperature != 1:
            raise ValueError(
                f"Agent: temperature={temperature} cannot be combined with thinking (the API "
                "needs temperature 1 when thinking); drop one of the two"
            )
        if effort is not None and effort not in ("low", "medium", "high", "max"):
            raise ValueError(f"Agent: effort={effort!r}: use 'low', 'medium', 'high' or 'max'")
        for spec in server_tools:
            server_tool(spec)  # fails early on an unknown name
        if isinstance(stop_sequences, str):
            stop_sequences = (stop_sequences,)
        return cls(
            thinking=think,
            effort=effort,
            server_tools=tuple(server_tools),
            tool_choice=choice,
            temperature=temperature,
            top_p=top_p,
            stop_sequences=tuple(stop_sequences),
            compaction=compaction,
            clear_tool_results=clear_tool_results,
            cache_ttl=cache_ttl,
            tool_search=tool_search,
            mcp_servers=check_servers(mcp_servers),
        )


def configure_request(
    agent: Agent,
    *,
    thinking: object = None,
    server_tools: Sequence[str] | None = None,
    cache_ttl: str | None = None,
    tool_search: ToolSearch | None = None,
    mcp_servers: Sequence[Mapping[str, Any]] | None = None,
) -> None:
    """``%%agent --thinking/--server-tools/--cache-ttl/--tool-search``: change what later
    runs send (None: unchanged; thinking "0" turns it off)."""
    unchanged = (thinking, server_tools, cache_ttl, tool_search, mcp_servers)
    if all(x is None for x in unchanged):
        return
    opts = agent.request_options
    new_thinking: Any = opts.thinking
    if thinking is not None:
        new_thinking = None if str(thinking).strip() in ("0", "off", "none") else thinking
        if isinstance(new_thinking, str) and new_thinking.isdigit():
            new_thinking = int(new_thinking)
    choice = dict(opts.tool_choice) if opts.tool_choice else None
    disable = bool(choice and choice.pop("disable_parallel_tool_use", False))
    agent.request_options = RequestOptions.make(
        thinking=new_thinking,
        effort=opts.effort,
        server_tools=opts.server_tools if server_tools is None else tuple(server_tools),
        tool_choice=choice if choice != {"type": "auto"} or not disable else None,
        disable_parallel_tool_use=disable,
        temperature=opts.temperature,
        top_p=opts.top_p,
        stop_sequences=opts.stop_sequences,
        compaction=opts.compaction,
        clear_tool_results=opts.clear_tool_results,
        cache_ttl=opts.cache_ttl if cache_ttl is None else cache_ttl,
        tool_search=opts.tool_search if tool_search is None else tool_search,
        mcp_servers=opts.mcp_servers if mcp_servers is None else mcp_servers,
    )


@dataclass(frozen=True, kw_only=True)
class Verdict:
    """What the loop does with a reply. ``keep``: append it to the conversation; ``run``:
    run its tool calls; ``again``: ask the model again now (``max_tokens`` for that
    request); else the run ends with ``stop_reason`` and ``error`` (None: a normal end)."""

    keep: bool = True
    run: bool = True
    again: bool = False
    max_tokens: int | None = None
    stop_reason: str = ""
    error: str | None = None
    drop_prompt: bool = False
    notices: tuple[RunNotice, ...] = ()


@dataclass
class TurnPolicy:
    """Per run: builds each request and judges each reply, reading the run's frozen
    settings (``settings``) and the conversation's live container."""

    settings: AgentSettings
    conversation: Conversation
    retried_cut_call: bool = False
    notices: list[RunNotice] = field(default_factory=list)
    _specs: dict[int, tuple[ToolSpec, ToolSpec, bool]] = field(default_factory=dict)
    _server: tuple[tuple[Mapping[str, Any], ...], tuple[str, ...]] | None = None
    _mcp: tuple[list[dict[str, Any]], list[dict[str, Any]]] | None = None
    output_options: Mapping[str, Any] | None = None
    """The provider's request options for a typed output (structured outputs), merged
    into ``output_config`` beside effort."""

    @property
    def provider(self) -> Provider:
        return self.settings.provider

    @property
    def model(self) -> str:
        return self.settings.provider.model

    @property
    def max_tokens(self) -> int | None:
        """What the user asked for (None: the provider's default, see :meth:`output_limit`)."""
        return self.settings.max_tokens

    def output_limit(self, limits: ModelLimits) -> int | None:
        """The request's ``max_tokens``: the user's, else the provider's default for the
        model, else none where the provider may leave it out (the server decides)."""
        if self.max_tokens is not None:
            return self.max_tokens
        if limits.default_max_tokens is not None:
            return limits.default_max_tokens
        return None if self.provider.features.optional_max_tokens else DEFAULT_MAX_TOKENS

    # -- the request ---------------------------------------------------------------------

    def request(
        self,
        registry: Registry,
        messages: Sequence[Message],
        *,
        extra_options: Mapping[str, Any] | None = None,
        extra_betas: Sequence[str] = (),
    ) -> ModelRequest:
        settings = self.settings
        opts: RequestOptions = settings.request_options
        limits = self.provider.limits()
        options: dict[str, Any] = {}
        betas: list[str] = []
        max_tokens = self.output_limit(limits)
        thinking = dict(opts.thinking) if opts.thinking and limits.thinking else None
        if thinking and thinking.get("type") == "enabled":
            if limits.claude4:
                betas.append(BETA_INTERLEAVED_THINKING)  # thinking between tool calls
            budget = int(thinking["budget_tokens"])
            if max_tokens is not None and budget >= max_tokens and not limits.claude4:
                ceiling = limits.max_output_tokens or budget + max_tokens
                max_tokens = min(ceiling, budget + max_tokens)
        if thinking and _unthought_tool_turn(messages):
            # The API wants an ongoing tool turn that began without thinking to go on
            # without it (it ends at the next prompt).
            thinking = None
            betas.clear()
        if thinking and thinking.get("type") == "adaptive" and not limits.adaptive_thinking:
            thinking = {"type": "enabled", "budget_tokens": max(MIN_THINKING_BUDGET, 8000)}
            if limits.claude4:
                betas.append(BETA_INTERLEAVED_THINKING)
        if opts.effort and limits.effort:
            options["output_config"] = {"effort": opts.effort}
            if not limits.adaptive_thinking:  # Opus 4.5 takes effort as a beta
                betas.append(BETA_EFFORT)
        if opts.tool_choice is not None:
            options["tool_choice"] = dict(opts.tool_choice)
        if opts.temperature is not None:
            options["temperature"] = opts.temperature
        if opts.top_p is not None:
            options["top_p"] = opts.top_p
        if opts.stop_sequences:
            options["stop_sequences"] = list(opts.stop_sequences)
        container = live_container(self.conversation.container)
        if container is not None:
            options["container"] = container
        if extra_options:
            options.update(extra_options)
        for key, value in (self.output_options or {}).items():
            before = options.get(key)
            merge = isinstance(before, Mapping) and isinstance(value, Mapping)
            options[key] = {**before, **value} if merge else value  # type: ignore[dict-item]
        server, server_betas = self._server_tools(registry)
        if _names_a_file(messages):
            betas.append(BETA_FILES_API)
        specs = self._tool_specs(registry)
        if any(s.defer_loading for s in specs):
            server = (*server, TOOL_SEARCH_TOOL)
        if opts.mcp_servers:
            if self._mcp is None:
                declared, toolsets, notices = connector_request(
                    opts.mcp_servers, settings.rules, settings.approval
                )
                self.notices.extend(notices)
                self._mcp = (declared, toolsets)
            if self._mcp[0]:
                options["mcp_servers"] = self._mcp[0]
                server = (*server, *self._mcp[1])
                betas.append(BETA_MCP_CLIENT)
        if not self.provider.features.betas:
            betas, server_betas, extra_betas = [], [], ()
        return ModelRequest(
            system=settings.system_prompt,
            messages=tuple(messages),
            tools=specs,
            max_tokens=max_tokens,
            thinking=thinking,
            server_tools=server,
            options=options,
            betas=tuple(dict.fromkeys([*betas, *server_betas, *extra_betas])),
            cache_ttl=opts.cache_ttl,
        )

    def _tool_specs(self, registry: Registry) -> tuple[ToolSpec, ...]:
        """The registry's specs, Anthropic-defined tools declared by type, MCP tools
        deferred to tool search when there are many (the same objects turn after turn, so
        the encoder reuses their JSON)."""
        out: list[ToolSpec] = []
        specs = registry.specs()
        mode = self.settings.request_options.tool_search
        many = len(specs) > TOOL_SEARCH_THRESHOLD
        defer_mcp = mode is True or (mode == "auto" and many and tool_search(self.model))
        for spec in specs:
            kept = self._specs.get(id(spec))
            if kept is None or kept[0] is not spec or kept[2] != defer_mcp:
                tool = registry.get(spec.name)
                # A tool is ``AnthropicDefined`` when it has ``ANTHROPIC_TYPE``: read that
                # rather than ask the runtime-checkable protocol, which collects the
                # protocol's members again on every check.
                base: str = getattr(tool, "ANTHROPIC_TYPE", "")
                typed = base and self.provider.features.anthropic_tools
                declared = anthropic_tool(base, spec.name, self.model) if typed else None
                new = (
                    dataclasses.replace(spec, anthropic_type=declared["type"]) if declared else spec
                )
                if defer_mcp and isinstance(tool, FromMCPServer) and not new.defer_loading:
                    new = dataclasses.replace(new, defer_loading=True)
                if mode is False and new.defer_loading:
                    new = dataclasses.replace(new, defer_loading=False)
                kept = self._specs[id(spec)] = (spec, new, defer_mcp)
            out.append(kept[1])
        return tuple(out)

    def _server_tools(self, registry: Registry) -> tuple[tuple[Mapping[str, Any], ...], list[str]]:
        """The server tools to declare; one a permission rule denies (or asks for: the API
        runs it, so nobody could be asked) is left out, and a notice says so; under the
        "deny" and "read-only" policies (nothing that needs a yes runs), so is one no allow
        rule names."""
        if self._server is not None:
            return self._server[0], list(self._server[1])
        rules = self.settings.rules
        tools: list[Mapping[str, Any]] = []
        betas: list[str] = []
        for spec in self.settings.request_options.server_tools:
            definition, beta = server_tool(spec)
            name = str(definition["name"])
            if not self.provider.features.server_tools:
                self.notices.append(
                    RunNotice(
                        kind="server_tool_skipped",
                        message=f"server tool {name} not declared: the {self.provider.name} "
                        "provider runs no server tools",
                    )
                )
                continue
            if registry.get(name) is not None:
                self.notices.append(
                    RunNotice(
                        kind="server_tool_skipped",
                        message=f"server tool {name} not declared: a tool of the same name is "
                        "registered",
                    )
                )
                continue
            match = _restricting_rule(rules, name) if rules is not None else None
            if match is not None:
                if match.action == "ask":
                    why = "asks for it, and the API runs it without asking"
                elif match.rule.specifier is None:
                    why = "denies it"
                else:
                    why = "denies some of its calls, and the API runs it without reading rules"
                self.notices.append(
                    RunNotice(
                        kind="server_tool_skipped",
                        message=f"server tool {name} not declared: the rule {match.label} {why}",
                    )
                )
                continue
            policy = self.settings.approval
            if policy in ("deny", "read-only") and not _allowed(rules, name):
                self.notices.append(
                    RunNotice(
                        kind="server_tool_skipped",
                        message=f"server tool {name} not declared: the approval policy is "
                        f"{policy!r} and the API runs it without asking; to use it under "
                        f"this policy, allow it with a rule ({name})",
                    )
                )
                continue
            tools.append(definition)
            if beta:
                betas.append(beta)
        self._server = (tuple(tools), tuple(betas))
        return self._server[0], betas

    # -- the reply -----------------------------------------------------------------------

    def judge(self, response: ResponseEvent, request: ModelRequest) -> Verdict:
        reason = response.stop_reason
        message = response.message
        cut_call = _cut_tool_call(message)
        if reason == "refusal":
            return Verdict(
                keep=False,
                run=False,
                drop_prompt=True,
                stop_reason="refusal",
                error=refusal_text(response.stop_details),
            )
        if reason in ("max_tokens", "model_context_window_exceeded") and cut_call is not None:
            limit = self.provider.limits().max_output_tokens
            asked = request.max_tokens
            if (
                reason == "max_tokens"
                and not self.retried_cut_call
                and asked is not None
                and limit is not None
                and asked < limit
            ):
                self.retried_cut_call = True
                bigger = min(limit, max(asked * 2, asked + 8192))
                note = RunNotice(
                    kind="retry_max_tokens",
                    message=f"the tool call {cut_call.name} was cut at max_tokens="
                    f"{request.max_tokens}; asking again with max_tokens={bigger}",
                )
                return Verdict(
                    keep=False, run=False, again=True, max_tokens=bigger, notices=(note,)
                )
            if reason == "max_tokens":
                at = f"max_tokens={asked}" if asked is not None else "the server's output limit"
                known = f" (this model's limit is {limit})" if limit is not None else ""
                error = (
                    f"the tool call {cut_call.name} was cut at {at}{known}, so it was not "
                    "run; ask for smaller steps (e.g. write the file in parts), then run again"
                )
            else:
                error = context_window_text(self.model, self.provider.limits().context_window)
                error += f"; the tool call {cut_call.name} was "
                error += "cut, so it was not run"
            return Verdict(keep=False, run=False, stop_reason=reason, error=error)
        if reason == "max_tokens":
            at = (
                f"max_tokens={request.max_tokens}"
                if request.max_tokens is not None
                else "the server's output limit"
            )
            return Verdict(
                stop_reason=reason,
                error=f"the reply was cut at {at}; run('') (an empty %%agent cell) continues it",
            )
        if reason == "model_context_window_exceeded":
            # Kept only without calls: a call that cannot be answered must not stay.
            return Verdict(
                keep=not message.tool_calls,
                run=False,
                stop_reason=reason,
                error=context_window_text(self.model, self.provider.limits().context_window),
            )
        if reason == "pause_turn":
            return Verdict(again=True)
        return Verdict(stop_reason=reason)


def _allowed(rules: PermissionRules | None, name: str) -> bool:
    """Whether an allow rule names the whole server tool (``web_search``)."""
    match = rules.check(name, "{}", None) if rules is not None else None
    return match is not None and match.action == "allow"


def _restricting_rule(rules: PermissionRules, name: str) -> RuleMatch | None:
    """The first deny (then ask) rule naming the server tool ``name``, with or without a
    specifier: the API runs the tool with arguments nobody here sees, so a rule that
    would deny or ask for some of its calls keeps it out entirely (fail closed)."""
    from nb_tools.permissions import RuleMatch

    for action in ("deny", "ask"):
        for rule in rules.rules:
            if rule.action == action and fnmatch.fnmatchcase(name.lower(), rule.tool.lower()):
                return RuleMatch(action=action, rule=rule)
    return None


def _names_a_file(messages: Sequence[Message]) -> bool:
    """Whether an attachment or a tool result's part is named by a ``file_id``."""
    return any(
        (isinstance(b, ImageBlock) and b.part.file_id)
        or (isinstance(b, ToolResultBlock) and any(p.file_id for p in b.result.parts))
        for m in messages
        for b in m.content
    )


def _unthought_tool_turn(messages: Sequence[Message]) -> bool:
    """Whether the conversation is inside a tool turn whose assistant message does not
    start with a thinking block (made before thinking was turned on)."""
    if len(messages) < 2 or messages[-1].role != "user":
        return False
    last = messages[-2]
    if last.role != "assistant" or not last.tool_calls:
        return False
    if not any(isinstance(b, ToolResultBlock) for b in messages[-1].content):
        return False
    first = last.content[0] if last.content else None
    return not isinstance(first, ThinkingBlock | RedactedThinkingBlock)


def _cut_tool_call(message: Message) -> ToolUseBlock | None:
    """The tool call a cut reply ended in (its arguments are incomplete)."""
    blocks = [b for b in message.content if not (isinstance(b, TextBlock) and not b.text.strip())]
    if blocks and isinstance(blocks[-1], ToolUseBlock):
        return blocks[-1]
    return None


def refusal_text(details: Mapping[str, Any] | None) -> str:
    parts = ["the model declined to continue (stop_reason refusal)"]
    if details:
        if details.get("category"):
            parts.append(f"category {details['category']}")
        if details.get("explanation"):
            parts.append(str(details["explanation"]))
    return (
        "; ".join(parts) + "; no tool was run and the refused turn was dropped from the "
        "conversation, so the next prompt starts clean: rephrase the request"
    )


def context_window_text(model: str, window: int | None) -> str:
    size = f" ({window:,} tokens)" if window else ""
    return (
        f"the conversation filled {model}'s context window{size}; start a new "
        "conversation (%%agent --new, or agent.reset()), or keep compaction on "
        "(Agent(compaction=True)) so older turns are summarised"
    )


def sendable(message: Message) -> bool:
    """Whether the message has a block the API accepts (not only empty text)."""
    return any(not (isinstance(b, TextBlock) and not b.text.strip()) for b in message.content)
