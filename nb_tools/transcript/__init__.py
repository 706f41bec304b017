"""The record of a run: its types, JSON Schema, the recorder of agent events, and the HTML
renderer (safe HTML, hidden characters, Markdown). Nothing here imports Jupyter."""

from nb_tools.transcript._chain import ConversationRef, self_contained, shown_in
from nb_tools.transcript._diff import PRE_STYLE, diff_html
from nb_tools.transcript._html import (
    LIVE_TEXT_CLASSES,
    footer_html,
    text_html,
    tool_item_html,
    transcript_bundle,
)
from nb_tools.transcript._markdown import safe_split
from nb_tools.transcript._partial_args import PartialArguments, completed_arguments
from nb_tools.transcript._recorder import TranscriptRecorder, diff_dict, tool_item, usage_line
from nb_tools.transcript._visible import (
    NOT_SHOWN,
    count_in_arguments,
    hidden_runs,
    hidden_warning,
    json_strings,
    shown_arguments,
    visible_html,
    visible_text,
)

__all__ = [
    "LIVE_TEXT_CLASSES",
    "NOT_SHOWN",
    "PRE_STYLE",
    "ConversationRef",
    "PartialArguments",
    "TranscriptRecorder",
    "completed_arguments",
    "count_in_arguments",
    "diff_dict",
    "diff_html",
    "footer_html",
    "hidden_runs",
    "hidden_warning",
    "json_strings",
    "safe_split",
    "self_contained",
    "shown_arguments",
    "shown_in",
    "text_html",
    "tool_item",
    "tool_item_html",
    "transcript_bundle",
    "usage_line",
    "visible_html",
    "visible_text",
]
