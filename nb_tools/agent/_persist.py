"""A conversation as JSON and back: ``Agent.save`` / ``Agent.load`` / ``Agent.from_notebook``.

Messages are encoded generically from their dataclasses, so every block type of
:mod:`nb_tools.model` (text, tool use and results, images, and whatever blocks providers
add: thinking with its signature, server tools, compaction) round-trips without a line
here: a dataclass becomes ``{"$type": "ClassName", <fields>}``, bytes become
``{"$bytes": "<base64>"}``, tuples become lists (and tuples again where the field is
declared a tuple). A result's ``metadata`` is the application's, never sent to the model:
its JSON values are kept, the rest (exceptions, tracebacks objects) dropped.
"""

from __future__ import annotations

import base64
import dataclasses
import json
import os
import typing
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from nb_tools.agent._conversation import Conversation
from nb_tools.agent._saved_settings import saved_settings, settings_kwargs
from nb_tools.model import Message, Usage

if TYPE_CHECKING:
    from nb_tools.agent._agent import Agent
    from nb_tools.permissions import PermissionRules

FORMAT = "nb_tools.agent"
VERSION = 1
TRANSCRIPT_MIME = "application/vnd.nbtools.transcript+json"


# -- values ---------------------------------------------------------------------------------


def _types() -> dict[str, type]:
    """The dataclasses a message may hold, by name (looked up when needed, so block types
    added to the model layer later are found)."""
    import nb_tools.model as model
    from nb_tools.model import _types as types_module

    found: dict[str, type] = {}
    for module in (types_module, model):
        for name, value in vars(module).items():
            if isinstance(value, type) and dataclasses.is_dataclass(value):
                found.setdefault(name, value)
    return found


def encode(value: Any) -> Any:
    """A JSON-ready form of a message, a block or any value inside one."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        out: dict[str, Any] = {"$type": type(value).__name__}
        for f in dataclasses.fields(value):
            item = getattr(value, f.name)
            out[f.name] = _metadata(item) if f.name == "metadata" else encode(item)
        return out
    if isinstance(value, bytes | bytearray):
        return {"$bytes": base64.b64encode(bytes(value)).decode("ascii")}
    if isinstance(value, list | tuple):
        return [encode(v) for v in value]
    if isinstance(value, Mapping):
        return {str(k): encode(v) for k, v in value.items()}
    if value is None or isinstance(value, str | int | float | bool):
        return value
    raise TypeError(
        f"cannot save a {type(value).__name__} in a conversation; messages hold plain data"
    )


def _metadata(meta: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in dict(meta or {}).items():
        try:
            json.dumps(value, allow_nan=False)
        except (TypeError, ValueError):
            continue
        out[str(key)] = value
    return out


def decode(value: Any, types: dict[str, type] | None = None) -> Any:
    """The inverse of :func:`encode`."""
    types = _types() if types is None else types
    if isinstance(value, list):
        return [decode(v, types) for v in value]
    if not isinstance(value, dict):
        return value
    if "$bytes" in value and len(value) == 1:
        return base64.b64decode(value["$bytes"])
    name = value.get("$type")
    if name is None:
        return {k: decode(v, types) for k, v in value.items()}
    cls = types.get(name)
    if cls is None:
        raise ValueError(
            f"unknown block type {name!r} in a saved conversation; it was saved by a newer "
            "nb_tools: update nb_tools to load it"
        )
    hints = _hints(cls)
    kwargs: dict[str, Any] = {}
    for f in dataclasses.fields(cls):
        if f.name not in value:
            continue
        item = decode(value[f.name], types)
        if isinstance(item, list) and _is_tuple(hints.get(f.name)):
            item = tuple(item)
        kwargs[f.name] = item
    return cls(**kwargs)


_HINTS: dict[type, dict[str, Any]] = {}


def _hints(cls: type) -> dict[str, Any]:
    hints = _HINTS.get(cls)
    if hints is None:
        try:
            hints = typing.get_type_hints(cls)
        except Exception:  # an annotation that does not resolve: no tuple restoring
            hints = {}
        _HINTS[cls] = hints
    return hints


def _is_tuple(tp: Any) -> bool:
    if tp is None:
        return False
    if tp is tuple or typing.get_origin(tp) is tuple:
        return True
    return any(_is_tuple(a) for a in typing.get_args(tp) if a is not type(None))


def encode_messages(messages: Any) -> list[Any]:
    return [encode(m) for m in messages]


def decode_messages(data: Any) -> list[Message]:
    types = _types()
    messages = [decode(m, types) for m in data]
    for i, m in enumerate(messages):
        if not isinstance(m, Message):
            raise ValueError(f"saved conversation: item {i} is not a message")
    return messages


# -- agents ---------------------------------------------------------------------------------


def agent_dict(agent: Agent) -> dict[str, Any]:
    """What ``Agent.save`` writes."""
    rules = agent.rules
    return {
        "format": FORMAT,
        "version": VERSION,
        "model": agent.model_name,
        "system": agent.system,
        "approval": agent.approval,
        "max_turns": agent.max_turns,
        "max_tokens": agent.max_tokens,
        "rules": None
        if rules is None
        else {
            "root": str(rules.root),
            "rules": [
                {"action": r.action, "text": r.text, "source": r.source} for r in rules.rules
            ],
        },
        "request_options": _without_tokens(_fields(getattr(agent, "request_options", None))),
        **{k: encode(v) for k, v in saved_settings(agent).items()},
        "usage": encode(agent.usage),
        "messages": encode_messages(agent.messages),
    }


def _without_tokens(options: dict[str, Any] | None) -> dict[str, Any] | None:
    """The request options to save: an MCP server's ``authorization_token`` is a secret
    and stays out of the file (give ``mcp_servers`` again to ``Agent.load``)."""
    if options and options.get("mcp_servers"):
        options["mcp_servers"] = [
            {k: v for k, v in server.items() if k != "authorization_token"}
            for server in options["mcp_servers"]
        ]
    return options


def _fields(value: Any) -> dict[str, Any] | None:
    """A dataclass's fields as JSON (no ``$type``: the reader knows the class)."""
    if value is None or not dataclasses.is_dataclass(value):
        return None
    return {f.name: encode(getattr(value, f.name)) for f in dataclasses.fields(value)}


def save(agent: Agent, path: str | os.PathLike[str]) -> None:
    text = json.dumps(agent_dict(agent), ensure_ascii=False, indent=1)
    Path(path).write_text(text + "\n", encoding="utf-8")


def _trusted_rules(
    data: Mapping[str, Any], into: PermissionRules | None, path: str | os.PathLike[str]
) -> PermissionRules | None:
    """The saved rules (and the always-allow list older files kept apart, as session
    rules), added to ``into`` (the caller's rules) or to a new set rooted where they were
    saved. Only for ``trust_settings=True``."""
    from nb_tools.permissions import PermissionRules

    saved = data.get("rules")
    legacy = data.get("always_allow") or []
    if saved is None and not legacy:
        return into
    if saved is not None and not isinstance(saved, dict):
        raise ValueError(f"Agent.load: {path}: 'rules' must be an object")
    rules = into
    if rules is None:
        root = saved.get("root") if saved is not None else None
        rules = PermissionRules(root=Path(root)) if isinstance(root, str) else PermissionRules()
    for r in (saved or {}).get("rules", []):
        rules.add(r["action"], r["text"], source=r["source"])
    for text in legacy:
        rules.allow(str(text), source="session")
    return rules


def load(
    cls: type[Agent],
    path: str | os.PathLike[str],
    *,
    trust_settings: bool = False,
    **overrides: Any,
) -> Agent:
    """See :meth:`Agent.load`: the conversation and the saved settings always; those
    that loosen the boundary (:data:`~nb_tools.agent._saved_settings.SETTINGS`: the
    policy, the rules, server tools, MCP servers, memory) only with ``trust_settings``,
    and never a policy looser than the caller's. The caller's ``overrides`` win."""
    from nb_tools.agent._approval import check_policy, stricter_policy

    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise FileNotFoundError(f"Agent.load: {path} does not exist") from None
    except ValueError as exc:
        raise ValueError(f"Agent.load: {path} is not JSON ({exc})") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ValueError(
            f'Agent.load: {path} is not a saved conversation (no "format": "{FORMAT}"); '
            "write one with agent.save(path), or use Agent.from_notebook for a notebook"
        )
    if data.get("version", 0) > VERSION:
        raise ValueError(
            f"Agent.load: {path} is format version {data['version']}, newer than this "
            f"nb_tools reads ({VERSION}); update nb_tools"
        )
    kwargs: dict[str, Any] = {
        "model": data.get("model"),
        "system": data.get("system"),
        "max_turns": data.get("max_turns", 25),
        "max_tokens": data.get("max_tokens"),
        "messages": decode_messages(data.get("messages", [])),
        **settings_kwargs(data, trust=trust_settings),
    }
    kwargs.update(overrides)
    chosen = check_policy(overrides.get("approval", "ask"))
    kwargs["approval"] = chosen
    if trust_settings:
        kwargs["approval"] = stricter_policy(chosen, str(data.get("approval", chosen)))
        kwargs["rules"] = _trusted_rules(data, overrides.get("rules"), path)
    usage = decode(data.get("usage"))
    if isinstance(usage, Usage) and not isinstance(kwargs["messages"], Conversation):
        kwargs["messages"] = Conversation(kwargs["messages"], usage)
    return cls(**kwargs)


# -- conversations stored once across transcripts (format: docs/transcript.md) ----------


class ChainBroken(ValueError):
    """A transcript continues a run whose transcript is not there."""


def _conversation(run: Mapping[str, Any]) -> Mapping[str, Any] | None:
    conv = run.get("conversation")
    return conv if isinstance(conv, Mapping) else None


def by_id(runs: Iterable[Mapping[str, Any]]) -> dict[str, Mapping[str, Any]]:
    """The transcripts that carry a conversation id, by that id."""
    found: dict[str, Mapping[str, Any]] = {}
    for run in runs:
        conv = _conversation(run)
        if conv is not None and isinstance(conv.get("id"), str):
            found[conv["id"]] = run
    return found


def full_messages(
    run: Mapping[str, Any], runs: Mapping[str, Mapping[str, Any]]
) -> tuple[str | None, list[Any]]:
    """``(system, messages)``: the whole conversation after ``run``, its stored messages
    put after those of the runs it continues (``runs``: transcripts by id)."""
    conv = _conversation(run)
    if conv is None:
        raise ChainBroken("the transcript has no conversation")
    chain: list[Mapping[str, Any]] = [conv]
    seen: set[str] = set()
    while isinstance(chain[-1].get("previous"), str):
        wanted = chain[-1]["previous"]
        if wanted in seen:
            raise ChainBroken(f"the transcripts refer to each other in a loop (run {wanted})")
        seen.add(wanted)
        found = runs.get(wanted)
        earlier = _conversation(found) if found is not None else None
        if earlier is None:
            raise ChainBroken(
                f"the run it continues (conversation {wanted}) is not there: its cell was "
                "deleted, re-run or not saved"
            )
        chain.append(earlier)
    messages: list[Any] = []
    for part in reversed(chain):
        start = part.get("start", 0)
        if not isinstance(start, int) or start > len(messages):
            raise ChainBroken(
                f"conversation {part.get('id')} starts at message {start}, but the runs "
                f"before it hold {len(messages)}"
            )
        del messages[start:]
        messages.extend(part.get("messages", []))
    return conv.get("system"), messages


def _transcripts(cell: Mapping[str, Any]) -> list[dict[str, Any]]:
    outputs = cell.get("outputs", [])
    data = [out.get("data", {}).get(TRANSCRIPT_MIME) for out in outputs]
    return [t for t in data if isinstance(t, dict)]


def from_notebook(
    cls: type[Agent],
    path: str | os.PathLike[str],
    cell: int | str | None = None,
    **overrides: Any,
) -> Agent:
    """The conversation as it was after the run shown in ``cell`` of a saved notebook."""
    try:
        nb = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise FileNotFoundError(f"Agent.from_notebook: {path} does not exist") from None
    cells = nb.get("cells", []) if isinstance(nb, dict) else []
    found: list[tuple[int, dict[str, Any]]] = []
    for i, c in enumerate(cells):
        if cell is not None and cell not in (i, c.get("id")):
            continue
        found.extend((i, t) for t in _transcripts(c))
    where = "any cell" if cell is None else f"cell {cell!r}"
    if not found:
        raise ValueError(
            f"Agent.from_notebook: {path}: no transcript in {where}; save the notebook after "
            "a %%agent run (cells are counted from 0, or given by their id)"
        )
    index, transcript = found[-1]
    if transcript.get("conversation") is None:
        raise ValueError(
            f"Agent.from_notebook: {path}: the transcript in cell {index} has no "
            '"conversation" (it was written by an older nb_tools); run the cell again and save'
        )
    every = [t for c in cells for t in _transcripts(c)]
    try:
        system, messages = full_messages(transcript, by_id(every))
    except ChainBroken as exc:
        raise ValueError(
            f"Agent.from_notebook: {path}: the transcript in cell {index} cannot be rebuilt: "
            f"{exc}; run the conversation again and save"
        ) from None
    kwargs: dict[str, Any] = {
        "model": transcript.get("model") or None,
        "system": system,
        "messages": decode_messages(messages),
    }
    kwargs.update(overrides)
    return cls(**kwargs)
