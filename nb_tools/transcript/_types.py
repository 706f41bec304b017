"""The transcript format (``application/vnd.nbtools.transcript+json``, version 1) as types.

These TypedDicts and Literals are the contract: ``transcript.schema.json`` (beside this
module) is generated from them by ``scripts/gen_transcript_contract.py``, and the
labextension's ``src/transcript.generated.ts`` from that schema. Change a type here, run
the script, commit all three; ``tests/agent/test_transcript_schema.py`` fails otherwise.

No ``from __future__ import annotations`` here: the schema generator reads the
annotations as objects (``NotRequired`` included).
"""

from typing import Annotated, Any, Literal, NotRequired, TypedDict

from nb_tools.agent._events import ToolStatus
from nb_tools.agent._notices import CompactionHow, NoticeKind
from nb_tools.tool import SubjectKind

__all__ = [
    "ITEM_KINDS",
    "STOP_REASONS",
    "TOOL_STATUSES",
    "Approval",
    "ApprovalSource",
    "AssistantItem",
    "CitationSource",
    "CitationsItem",
    "CompactionHow",
    "CompactionItem",
    "Diff",
    "DiffKind",
    "Item",
    "ItemKind",
    "ModelSaw",
    "NoticeItem",
    "NoticeKind",
    "Part",
    "PartKind",
    "SavedConversation",
    "SearchResult",
    "ServerToolItem",
    "StopReason",
    "ThinkingItem",
    "ToolItem",
    "ToolStatus",
    "Transcript",
    "TranscriptUsage",
    "UserItem",
]

ItemKind = Literal[
    "user", "assistant", "tool", "thinking", "server_tool", "citations", "compaction", "notice"
]
"""What a transcript item is."""

StopReason = Literal[
    "end_turn",
    "tool_use",
    "stop_sequence",
    "max_tokens",
    "refusal",
    "model_context_window_exceeded",
    "pause_turn",
    "max_turns",
    "budget",
    "stopped",
    "stopped_after_turn",
    "error",
]
"""How a run ended: the model's own reasons (``end_turn``, ``stop_sequence``, ``max_tokens``,
``refusal``, ``model_context_window_exceeded``; ``tool_use``/``pause_turn`` only when a
turn could not go on), or the run's: ``max_turns``, ``budget`` (paused before a turn over
budget), ``stopped`` (Stop button or Interrupt), ``stopped_after_turn`` (stopped cleanly at
a turn's end because the user asked; every call answered), ``error``."""

ApprovalSource = Literal["rule", "permission", "protection", "policy", "person", "error"]
"""The kind of who decided a call's approval."""

DiffKind = Literal["create", "update", "delete"]
PartKind = Literal["image", "document"]

TOOL_STATUSES: tuple[ToolStatus, ...] = ToolStatus.__args__  # type: ignore[attr-defined]
STOP_REASONS: tuple[StopReason, ...] = StopReason.__args__  # type: ignore[attr-defined]
ITEM_KINDS: tuple[ItemKind, ...] = ItemKind.__args__  # type: ignore[attr-defined]


class Part(TypedDict):
    """An image or document a tool returned (what the model got)."""

    kind: PartKind
    media_type: str
    data: Annotated[str | None, "base64; null when the part was over 4 MB (see note)"]
    title: NotRequired[str]
    note: NotRequired[Annotated[str, "why data is null, e.g. '5000000 bytes, not stored'"]]


class Diff(TypedDict):
    """A writer's preview, computed before approval."""

    path: str
    kind: DiffKind
    diff: Annotated[
        str,
        "unified format, a/ and b/ prefixes, /dev/null for a created file (no file "
        "headers with a label)",
    ]
    label: NotRequired[
        Annotated[
            str,
            "what the change is when it is not a file's (insert code cell ...); shown "
            "instead of kind and path",
        ]
    ]


class Approval(TypedDict):
    """Who approved or denied a call, and why."""

    approved: bool
    by: Annotated[str, '"user", "policy:auto", a rule\'s label, ...']
    message: str | None
    source: ApprovalSource | None
    rule: Annotated[str | None, "the rule that decided, or that Always allow added"]


class ToolHeadline(TypedDict):
    """What the tool declared its card shows as the call's headline (``Info.headline``):
    renderers show that argument as code (kinds command, code) or on a line (path, url,
    text), and the other arguments as JSON; no renderer keeps a table of tool names."""

    arg: str
    kind: SubjectKind
    language: Annotated[str | None, 'how to highlight a code block: "bash", "python", ...']


class ModelSaw(TypedDict):
    """How much of the result the model got (--result-limit)."""

    bytes: int
    of: int


class UserItem(TypedDict):
    kind: Literal["user"]
    text: str


class AssistantItem(TypedDict):
    """The assistant's text: Markdown, rendered sanitized."""

    kind: Literal["assistant"]
    text: str


class ThinkingItem(TypedDict):
    """The model's extended thinking, shown collapsed."""

    kind: Literal["thinking"]
    text: str


class ToolItem(TypedDict):
    """One tool call, from its announcement to its result."""

    kind: Literal["tool"]
    id: str
    name: str
    arguments: Annotated[str, "the raw JSON text as the model sent it"]
    status: ToolStatus
    result: Annotated[str | None, "text content, head and tail kept over 20,000 characters"]
    parts: list[Part]
    duration: Annotated[float | None, "seconds"]
    diffs: list[Diff]
    progress: Annotated[str | None, "the last 2,000 characters the tool streamed"]
    approval: Approval | None
    headline: NotRequired[ToolHeadline]
    model_saw: NotRequired[ModelSaw]
    traceback: NotRequired[Annotated[str, "a tool that raised: its traceback, for the user"]]
    display: NotRequired[
        Annotated[
            dict[str, str],
            'the tool\'s rich value as one MIME type: {"text/html": ...} or {"image/png": b64}',
        ]
    ]


class SearchResult(TypedDict):
    title: str
    url: str
    page_age: str | None


class ServerToolItem(TypedDict):
    """A tool the API ran itself (web_search, web_fetch, code_execution, ...)."""

    kind: Literal["server_tool"]
    id: str
    name: str
    arguments: Annotated[str, "raw JSON text"]
    result_type: Annotated[str, '"" when the result is not in this reply']
    error: Annotated[str | None, "the API's error_code, if the tool failed"]
    results: list[SearchResult]
    code: Annotated[str | None, "code_execution: the code or command"]
    stdout: str | None
    stderr: str | None
    return_code: int | None
    url: Annotated[str | None, "web_fetch: the page"]


class CitationSource(TypedDict):
    type: str
    title: str
    url: str
    cited_text: str


class CitationsItem(TypedDict):
    """The sources of the text just before."""

    kind: Literal["citations"]
    sources: list[CitationSource]


class CompactionItem(TypedDict):
    """The conversation was made shorter."""

    kind: Literal["compaction"]
    how: CompactionHow
    text: str
    tokens_before: Annotated[int, "the conversation's size that triggered it (0: unknown)"]


class NoticeItem(TypedDict):
    """Something the run did on its own that the user should know."""

    kind: Literal["notice"]
    notice: NoticeKind
    text: str


Item = (
    UserItem
    | AssistantItem
    | ToolItem
    | ThinkingItem
    | ServerToolItem
    | CitationsItem
    | CompactionItem
    | NoticeItem
)


class TranscriptUsage(TypedDict):
    input_tokens: int
    output_tokens: int
    cache_creation_input_tokens: int
    cache_read_input_tokens: int
    cost_usd: Annotated[float, "0.0 for models without a known price"]
    thinking_tokens: NotRequired[Annotated[int, "part of output_tokens"]]
    web_search_requests: NotRequired[int]
    web_fetch_requests: NotRequired[int]
    estimated: NotRequired[
        Annotated[bool, "true when part of it was estimated (a reply cut off by a stop)"]
    ]


class SavedConversation(TypedDict):
    """The conversation after the run, stored once across the notebook: the messages this
    run added, after those of the run it continued (``previous``); ``Agent.from_notebook``
    rebuilds the whole of it by following ``previous``. Renderers ignore it."""

    system: str | None
    id: NotRequired[Annotated[str, "this run's conversation (a hash of previous and messages)"]]
    previous: NotRequired[
        Annotated[
            str | None,
            "the id of the run this one continued; null or absent: messages is the whole "
            "conversation",
        ]
    ]
    start: NotRequired[Annotated[int, "how many messages came before these (0 without previous)"]]
    messages: Annotated[
        list[Any],
        'the messages from "start" on, each as {"$type": "Message", ...}, see '
        "nb_tools.agent._persist",
    ]


class Transcript(TypedDict):
    """One ``%%agent`` run (docs/transcript.md)."""

    version: Literal[1]
    model: str
    provider: NotRequired[
        Annotated[str, "anthropic | openai | ollama | openai-compatible | a class name"]
    ]
    stop_reason: Annotated[StopReason | None, "null only while the run is in progress"]
    error: Annotated[str | None, "why the run failed or stopped early, if it did"]
    turns: int
    items: Annotated[list[Item], "in conversation order"]
    usage: TranscriptUsage
    conversation: NotRequired[SavedConversation]


# Named for the schema's $defs and the TypeScript types (a Literal alias has no name).
NAMED_ALIASES: dict[str, Any] = {
    "ItemKind": ItemKind,
    "ToolStatus": ToolStatus,
    "StopReason": StopReason,
    "ApprovalSource": ApprovalSource,
    "DiffKind": DiffKind,
    "PartKind": PartKind,
    "CompactionHow": CompactionHow,
    "NoticeKind": NoticeKind,
    "Item": Item,
}
