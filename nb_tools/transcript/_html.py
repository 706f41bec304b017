"""The transcript's display forms: the MIME bundle (JSON + HTML + plain text) and the HTML
pieces the live widgets reuse, so a card looks the same during the run and after it."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from html import escape
from typing import Any, assert_never, cast

from nb_tools.transcript._diff import PRE_STYLE, diff_html
from nb_tools.transcript._html_blocks import citations_html, note_html, server_tool_html
from nb_tools.transcript._markdown import TEXT_BOX, TOKEN_CSS, code_block_html, markdown_html
from nb_tools.transcript._recorder import (
    TRANSCRIPT_MIME,
    ending_text,
    format_duration,
    pretty_arguments,
    status_label,
    transcript_text,
    usage_line,
    who_text,
)
from nb_tools.transcript._safe_html import safe_html
from nb_tools.transcript._types import ITEM_KINDS, ItemKind
from nb_tools.transcript._visible import (
    count_in_arguments,
    shown_arguments,
    transcript_warning,
    visible_html,
)

RESULT_PREVIEW_CHARS = 1_500
RESULT_PREVIEW_LINES = 10
FULL_RESULT_CHARS = 20_000
PROGRESS_LINES = 12
# The images a card shows (the labextension's IMAGE_TYPES): raster types a browser draws
# without running anything (no SVG), and data that is base64 and nothing else.
IMAGE_TYPES = re.compile(r"image/(png|jpeg|gif|webp)")
BASE64 = re.compile(r"[A-Za-z0-9+/=\s]+")

_STATUS_COLOUR = {
    "ok": "var(--jp-success-color1,#1a7f37)",
    "error": "var(--jp-error-color1,#cf222e)",
    "denied": "var(--jp-error-color1,#cf222e)",
    "cut_off": "var(--jp-warn-color1,#9a6700)",
    "stopped": "var(--jp-warn-color1,#9a6700)",
    "running_in_background": "var(--jp-warn-color1,#9a6700)",
    "pending": "var(--jp-info-color1,#0969da)",
    "running": "var(--jp-info-color1,#0969da)",
    "waiting": "var(--jp-warn-color1,#9a6700)",
}
_ERROR_TEXT = "color:var(--jp-error-color1,#cf222e)"
_WARN_TEXT = "color:var(--jp-warn-color0,#7d4e00);font-weight:600"
_ROOT = (
    "font-family:var(--jp-ui-font-family,sans-serif);font-size:var(--jp-content-font-size1,13px);"
    "color:var(--jp-content-font-color1,#1f2328);line-height:1.4"
)
_CARD = (
    "border:1px solid var(--jp-border-color2,#d0d7de);"
    "border-left:3px solid var(--jp-brand-color1,#0969da);"
    "border-radius:3px;padding:4px 8px;margin:4px 0"
)
_MUTED = "color:var(--jp-content-font-color2,#57606a)"


def _pre(text: str, style: str = "", field: str = "", *, visible: bool = False) -> str:
    """``text`` in a ``<pre>``; ``visible``: hidden characters shown as markers (a call's
    arguments: what the person reads must be what runs)."""
    mark = f' data-nbt="{field}"' if field else ""
    body = visible_html(text) if visible else escape(text)
    return (
        f'<pre{mark} style="{PRE_STYLE};white-space:pre-wrap;overflow-wrap:anywhere;{style}">'
        f"{body}</pre>"
    )


def is_shown_image(media_type: object, data: object) -> bool:
    """Whether a card shows this image: a whitelisted type and base64 data."""
    return (
        isinstance(media_type, str)
        and IMAGE_TYPES.fullmatch(media_type) is not None
        and isinstance(data, str)
        and BASE64.fullmatch(data) is not None
    )


def _img(media_type: str, data: str, cls: str, field: str) -> str:
    return (
        f'<img class="{cls}" data-nbt="{field}" src="data:{media_type};base64,{data}" '
        'style="max-width:100%;max-height:400px;display:block;margin:2px 0"/>'
    )


def result_html(text: str, *, error: bool = False) -> str:
    """A result: its first lines (at most ``RESULT_PREVIEW_LINES`` and
    ``RESULT_PREVIEW_CHARS``), with a "show all" toggle holding the rest."""
    style = _ERROR_TEXT if error else ""
    preview = "\n".join(text.split("\n")[:RESULT_PREVIEW_LINES])[:RESULT_PREVIEW_CHARS]
    if preview == text:
        return _pre(text, style, "result")
    full = text[:FULL_RESULT_CHARS]
    more = ""
    if len(text) > FULL_RESULT_CHARS:
        more = f"\n… {len(text) - FULL_RESULT_CHARS:,} more characters"
    return (
        _pre(preview + " …", style, "result")
        + f'<details><summary data-nbt="result-more" style="cursor:pointer;{_MUTED}">show all '
        f"({len(text):,} characters)</summary>{_pre(full + more, style, 'result-full')}</details>"
    )


def parts_html(parts: list[Mapping[str, Any]]) -> str:
    out = []
    for part in parts:
        data = part.get("data")
        media_type = str(part.get("media_type", ""))
        if part.get("kind") == "image" and is_shown_image(media_type, data):
            out.append(_img(media_type, str(data), "nbtools-image", "image"))
        else:
            out.append(f'<div data-nbt="part" style="{_MUTED}">{escape(part_text(part))}</div>')
    return "".join(out)


def part_text(part: Mapping[str, Any]) -> str:
    """A part that is not shown: ``[image image/svg+xml]``, with the note if it has one."""
    note = part.get("note")
    return f"[{part.get('kind') or 'part'} {part.get('media_type') or ''}" + (
        f": {note}]" if note else "]"
    )


def approval_html(approval: Mapping[str, Any] | None) -> str:
    if not approval:
        return ""
    approved = approval.get("approved")
    verb = "Approved" if approved else "Denied"
    colour = _STATUS_COLOUR["ok" if approved else "denied"]
    message = approval.get("message")
    note = f": {escape(str(message))}" if message else ""
    who = escape(who_text(approval.get("by")))
    return (
        f'<div class="nbtools-approval" data-nbt="approval" style="color:{colour}">'
        f"{verb} by {who}{note}</div>"
    )


def args_html(
    name: str, raw: str, *, expanded: bool, headline: Mapping[str, Any] | None = None
) -> str:
    """A call's arguments: the argument the tool declared as its headline (the item's
    ``headline``: ``Info.headline``) as a highlighted block (kinds command, code) or on a
    line of its own (path, url, text), the rest as indented JSON; hidden characters (bidi
    controls, zero-width, tags, controls) as ``⟨U+202E⟩`` markers, with a line that counts
    them. ``expanded``: shown open (a call waiting for approval or running); else inside a
    "▸ arguments" toggle. No table of tool or argument names: the labextension reads the
    same ``headline``."""
    parsed = shown_arguments(raw)
    pieces: list[str] = []
    rest: dict[str, Any] = {}
    if isinstance(parsed, dict):
        head = headline.get("arg") if isinstance(headline, Mapping) else None
        kind = headline.get("kind") if isinstance(headline, Mapping) else None
        for key, value in parsed.items():
            if key != head or not isinstance(value, str) or headline is None:
                rest[key] = value
            elif kind in ("command", "code"):
                language = headline.get("language")
                shown_as = language if isinstance(language, str) else None
                pieces.append(code_block_html(value, shown_as, field="args"))
            else:
                pieces.append(
                    f'<div data-nbt="args"><span style="{_MUTED}">{escape(key)}</span> '
                    f'<code style="font-family:var(--jp-code-font-family,monospace)">'
                    f"{visible_html(value)}</code></div>"
                )
        if rest:
            shown = json.dumps(rest, indent=2, ensure_ascii=False)
            pieces.append(_pre(shown, field="args", visible=True))
    elif raw:
        pieces.append(_pre(pretty_arguments(raw), field="args", visible=True))
    if not pieces:
        return ""
    # The count stays in sight when the arguments are folded away.
    warning = transcript_warning(count_in_arguments(raw))
    if warning:
        warning = f'<div data-nbt="hidden" style="{_WARN_TEXT}">{escape(warning)}</div>'
    body = "".join(pieces)
    if expanded:
        return f'{warning}<div class="nbtools-args">{body}</div>'
    return (
        f'{warning}<details class="nbtools-args"><summary style="cursor:pointer;{_MUTED}">'
        f"Arguments</summary>{body}</details>"
    )


def display_html(shown: Mapping[str, Any] | None) -> str:
    """A tool's rich value (its own HTML, e.g. a DataFrame, or a PNG) inside its card."""
    if not shown:
        return ""
    html = shown.get("text/html")
    if isinstance(html, str):
        # rebuilt from a whitelist: the value may hold the model's text (_safe_html)
        return (
            '<div class="nbtools-display jp-RenderedHTMLCommon" data-nbt="display" '
            f'style="overflow:auto;max-height:30em">{safe_html(html)}</div>'
        )
    for mime in ("image/png", "image/jpeg"):
        data = shown.get(mime)
        if is_shown_image(mime, data):
            return _img(mime, str(data), "nbtools-display", "display-image")
    return ""


def traceback_html(tb: str) -> str:
    """A failing tool's traceback for its developer (the model got the one-line message)."""
    return (
        f'<details class="nbtools-traceback"><summary style="cursor:pointer;{_MUTED}">'
        f"Traceback</summary>{_pre(tb, _ERROR_TEXT, 'traceback')}</details>"
    )


_ERROR_STATUSES = ("error", "denied", "cut_off", "stopped", "running_in_background")


def tool_item_html(
    item: Mapping[str, Any], *, status: str | None = None, progress: str | None = None
) -> str:
    """One tool call as a card: name, status, duration, arguments (open while the call
    waits or runs), approval, diff preview, progress, result (truncated, errors in red),
    the traceback of a tool that raised (collapsed), images. ``status``: the live view's
    own ("running", "waiting") while the call is not finished."""
    status = status or str(item.get("status", "pending"))
    live = item.get("status") in (None, "pending")
    duration = format_duration(item.get("duration"))
    took = f' <span data-nbt="duration" style="{_MUTED}">{duration}</span>' if duration else ""
    # The same shape as the labextension's card: a <details> whose summary holds the
    # name, a status badge and the duration; open while the call is live, then open only
    # for what needs a look (not ok, or a diff), so the end of the run changes nothing.
    # A shell call stays open: its command and the first lines of its output are the point.
    headline = item.get("headline")
    shell = isinstance(headline, Mapping) and headline.get("kind") == "command"
    is_open = (
        live or shell or status != "ok" or bool(item.get("diffs")) or bool(item.get("display"))
    )
    colour = _STATUS_COLOUR.get(status, _STATUS_COLOUR["pending"])
    name = escape(str(item.get("name") or "(unnamed tool)"))
    pieces = [
        f'<details class="nbtools-card" data-nbt-item="tool" data-status="{escape(status)}"'
        f'{" open" if is_open else ""} style="{_CARD};border-left-color:{colour}">',
        f'<summary style="cursor:pointer;padding:2px 0"><span data-nbt="name" style="font-'
        f'family:var(--jp-code-font-family,monospace);font-weight:600">{name}</span> '
        f"{badge_html(status_label(status), status)}{took}</summary>",
        args_html(
            str(item.get("name")),
            str(item.get("arguments") or ""),
            # a writer's diff shows its change: its arguments (the content again) fold
            expanded=(live or shell) and not item.get("diffs"),
            headline=item.get("headline"),
        ),
        approval_html(item.get("approval")),
    ]
    for diff in item.get("diffs") or []:
        label = diff.get("label")
        what = f"{diff.get('kind')} {diff.get('path')}" if not label else str(label)
        pieces.append(f'<div data-nbt="diff-path" style="{_MUTED}">{visible_html(what)}</div>')
        pieces.append(diff_html(str(diff.get("diff", "")), field=True))
    shown_progress = progress if progress is not None else item.get("progress")
    result = item.get("result")
    if shown_progress:  # kept beside the result: a long tool's log is part of the record
        tail = "\n".join(str(shown_progress).splitlines()[-PROGRESS_LINES:])
        if not progress_in_result(tail, result):
            pieces.append(_pre(tail, _MUTED, "progress"))
    saw = item.get("model_saw")
    if isinstance(saw, Mapping):
        pieces.append(
            f'<div class="nbtools-model-saw" data-nbt="model-saw" style="{_MUTED}">The model saw '
            f"the start and the end: {saw.get('bytes', 0):,} of {saw.get('of', 0):,} bytes "
            "(--result-limit)</div>"
        )
    if result:
        pieces.append(result_html(str(result), error=item.get("status") in _ERROR_STATUSES))
    if item.get("traceback"):
        pieces.append(traceback_html(str(item["traceback"])))
    pieces.append(display_html(item.get("display")))
    pieces.append(parts_html(item.get("parts") or []))
    pieces.append("</details>")
    return "".join(pieces)


def progress_in_result(tail: str, result: object) -> bool:
    """Whether the result already holds the streamed log (a shell call's output comes as
    progress, then whole as the result): its last line is in the result. The card then
    shows it once, as the result."""
    lines = tail.strip().split("\n")
    return bool(result) and bool(lines[-1].strip()) and lines[-1].strip() in str(result)


def badge_html(label: str, status: str | None = None) -> str:
    """The status as a pill, as the labextension shows it."""
    colour = _STATUS_COLOUR.get(status or label, _STATUS_COLOUR["pending"])
    return (
        f'<span class="nbtools-badge" data-nbt="status" style="padding:0 6px;border-radius:8px;'
        f"font-size:var(--jp-ui-font-size0,11px);font-weight:600;text-transform:uppercase;color:"
        f'var(--jp-ui-inverse-font-color1,#fff);background:{colour}">'
        f"{escape(label.replace('_', ' '))}</span>"
    )


LIVE_TEXT_CLASSES = ("nbtools-assistant", "jp-RenderedHTMLCommon")
"""The classes of a live text widget (its DOM element): the text box's look, and inside
JupyterLab the look of its rendered Markdown (tables, lists, code), as the final transcript
has."""
_LABEL = (
    "display:block;font-size:var(--jp-ui-font-size0,11px);font-weight:600;"
    "color:var(--jp-ui-font-color2,#57606a);text-transform:uppercase"
)


def text_html(text: str, *, who: str = "assistant", label: bool = True, live: bool = False) -> str:
    """The assistant's Markdown in the labextension's look (a bar on the left, the
    "Assistant" label on a segment's first piece); the user's text as typed. ``live``:
    only the Markdown (and the label): the live widget carries the box's classes
    (:data:`LIVE_TEXT_CLASSES`) and its look comes from the view's stylesheet
    (``TOKEN_CSS``, in its footer), as a streamed piece is re-sent about 12 times a
    second."""
    if who == "user":
        return (
            f'<div class="nbtools-user" data-nbt-item="user" style="margin:4px 0"><b>You:</b> '
            f'<span data-nbt="text" style="white-space:pre-wrap">{escape(text)}</span></div>'
        )
    head = f'<span style="{_LABEL}">Assistant</span>' if label else ""
    # jp-RenderedHTMLCommon: inside JupyterLab, the live text gets the look of its rendered
    # Markdown (tables, lists, code), as the final transcript has.
    if live:  # the widget itself carries LIVE_TEXT_CLASSES: no wrapper on each update
        return f"{head}{markdown_html(text)}"
    look = f' style="{TEXT_BOX}"'
    return (
        f'<div class="nbtools-assistant jp-RenderedHTMLCommon" data-nbt-item="assistant"'
        f'{look}>{head}<div data-nbt="text">{markdown_html(text)}</div></div>'
    )


def footer_html(d: Mapping[str, Any], *, live: bool = False) -> str:
    """``model · 3 turns · 1,204 in / 310 out tokens · 800 cached · $0.0061 · end_turn``,
    the same figures the labextension's footer shows; live, with a busy spinner."""
    stop = d.get("stop_reason")
    line = usage_line(d.get("usage", {}), d.get("turns"))
    error = d.get("error")
    err = (
        f'<div data-nbt="error" style="{_ERROR_TEXT}">Error: {escape(str(error))}</div>'
        if error
        else ""
    )
    model = d.get("model")
    bits = [escape(str(model))] if model else []
    bits.append(escape(line))
    if stop:
        bits.append(escape(str(stop)))
    busy = ""
    if live and not stop:
        busy = (
            '<span class="nbtools-busy" role="status" aria-label="running" style="display:'
            "inline-block;width:8px;height:8px;margin-right:6px;border-radius:50%;"
            'background:var(--jp-brand-color1,#0969da);vertical-align:middle"></span>'
            "<b>running</b> · "
        )
    ending = ending_text(d)
    end = (
        f'<div class="nbtools-ending" data-nbt="ending" style="margin-top:2px">'
        f"{_code_spans(ending)}</div>"
        if ending
        else ""
    )
    return (
        f'{TOKEN_CSS}<div class="nbtools-footer" data-nbt="footer" style="{_MUTED};'
        f'font-size:var(--jp-ui-font-size1,13px);margin-top:4px">{busy}{" · ".join(bits)}</div>'
        f"{err}{end}"
    )


def _code_spans(text: str) -> str:
    """``text`` escaped, its `backtick` spans shown as code (the labextension's ending)."""
    return "".join(
        f"<code>{escape(bit[1:-1])}</code>"
        if len(bit) > 2 and bit.startswith("`") and bit.endswith("`")
        else escape(bit)
        for bit in re.split(r"(`[^`]+`)", text)
    )


def item_html(item: Mapping[str, Any], *, first: bool) -> str:
    """One transcript item (``first``: nothing shown before it); "" for a kind this
    version does not know (a newer nb_tools wrote it)."""
    if item.get("kind") not in ITEM_KINDS:
        return ""
    kind = cast(ItemKind, item["kind"])
    if kind == "user":  # the first prompt is the cell's own source, just above
        return "" if first else text_html(str(item.get("text", "")), who="user")
    if kind == "assistant":
        return text_html(str(item.get("text", "")))
    if kind == "thinking":
        return thinking_html(str(item.get("text", "")))
    if kind == "tool":
        return tool_item_html(item)
    if kind == "server_tool":
        return server_tool_html(item)
    if kind == "citations":
        return citations_html(item)
    if kind == "compaction" or kind == "notice":
        return note_html(item)
    assert_never(kind)


def transcript_html(d: Mapping[str, Any]) -> str:
    """The whole transcript as self-contained HTML (the ``text/html`` fallback)."""
    body: list[str] = []
    for item in d.get("items", []):
        shown = item_html(item, first=not body)
        if shown:
            body.append(shown)
    body.append(footer_html(d))
    return f'<div class="nbtools-transcript" style="{_ROOT}">{"".join(body)}</div>'


def thinking_html(text: str) -> str:
    """The model's thinking, collapsed."""
    return (
        f'<details class="nbtools-thinking" data-nbt-item="thinking"><summary style="cursor:'
        f'pointer;{_MUTED}">Thinking</summary><div data-nbt="text" style="{_MUTED}">'
        f"{markdown_html(text)}</div></details>"
    )


def transcript_bundle(d: Mapping[str, Any]) -> dict[str, Any]:
    """The MIME bundle every run ends with."""
    return {
        TRANSCRIPT_MIME: json.loads(json.dumps(d)),
        "text/html": transcript_html(d),
        "text/plain": transcript_text(d),
    }
