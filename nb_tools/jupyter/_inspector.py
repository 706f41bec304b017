"""``%tools``: the registry inspector (one row per tool with its flags, call count, last
duration, JSON Schema and strict schema; toggles to hide a tool from the model and to
change its approval for the session; MCP tools grouped under a header row per server; the
session's permission rules below) and ``%tools --json`` (the specs the model sees)."""

from __future__ import annotations

import json
from html import escape
from typing import Any

from nb_tools.jupyter._session import Session, get_session
from nb_tools.tool._types import FromMCPServer
from nb_tools.transcript._diff import PRE_STYLE
from nb_tools.transcript._visible import visible_html

_APPROVAL_CHOICES = (
    ("approval: the tool's own", "default"),
    ("approval: always ask", "ask"),
    ("approval: never ask", "never"),
)
_MUTED = "color:var(--jp-content-font-color2,#57606a)"


def specs_json(session: Session | None = None) -> str:
    s = session or get_session()
    return json.dumps(
        [
            {
                "name": sp.name,
                "description": sp.description,
                "input_schema": dict(sp.input_schema),
                **({"strict": True} if sp.strict else {}),
            }
            for sp in s.registry.specs()
        ],
        indent=2,
        ensure_ascii=False,
    )


def print_specs() -> None:
    print(specs_json())


def _flag(value: bool) -> str:
    return "✓" if value else "–"


def row_html(session: Session, name: str) -> str:
    entry = session.registry.entry(name)
    if entry is None:
        return f"<b>{escape(name)}</b> (removed)"
    info = entry.info
    stats = session.stats.get(name)
    approval = session.approval.get(name, info.requires_approval)
    chosen = " (session)" if name in session.approval else ""
    last = f"{stats.last_duration:.3f} s" if stats and stats.last_duration is not None else "–"
    hidden = " · <i>hidden</i>" if session.registry.is_hidden(name) else ""
    schema = json.dumps(dict(entry.spec.input_schema), indent=2, ensure_ascii=False)
    if info.parameters is not None:
        strict = json.dumps(json.loads(info.parameters.strict_json()), indent=2)
    else:
        strict = "(raw parameters: sent as given, not validated)"
    summary = info.description.splitlines()[0] if info.description else ""
    return (
        f"<div><b>{escape(name)}</b>{hidden} — {escape(summary)}</div>"
        f'<div style="{_MUTED}">read-only {_flag(info.read_only)} · concurrent '
        f"{_flag(info.concurrent)} · approval {_flag(approval)}{chosen} · calls "
        f"{stats.calls if stats else 0} · last {last}</div>"
        f'<details><summary style="cursor:pointer;{_MUTED}">JSON Schema</summary>'
        f'<pre style="{PRE_STYLE}">{escape(schema)}</pre></details>'
        f'<details><summary style="cursor:pointer;{_MUTED}">strict schema</summary>'
        f'<pre style="{PRE_STYLE}">{escape(strict)}</pre></details>'
    )


def tool_groups(session: Session) -> list[tuple[str | None, list[str]]]:
    """The registry's tool names, sorted: the session's own tools first (``None``), then
    one group per MCP server (by the tool's ``mcp_server``), servers sorted by name."""
    own: list[str] = []
    servers: dict[str, list[str]] = {}
    for tool in session.registry.list():
        name = tool.info().name
        server = tool.mcp_server if isinstance(tool, FromMCPServer) else None
        if isinstance(server, str):
            servers.setdefault(server, []).append(name)
        else:
            own.append(name)
    groups: list[tuple[str | None, list[str]]] = [(None, own)] if own else []
    return groups + [(srv, servers[srv]) for srv in sorted(servers)]


def server_header_html(server: str, count: int) -> str:
    """The header row of one MCP server's tools: name, state, how it is reached."""
    from nb_tools.mcp import attached

    handle = attached().get(server)
    if handle is None:
        state = "not attached"
    else:
        where = handle.connection.params.where
        state = ("connected" if handle.connected else "NOT connected") + f" · {where}"
    return (
        f'<div style="margin-top:8px;padding:2px 4px;background:var(--jp-layout-color2,'
        f'#f6f8fa)"><b>MCP server {escape(server)}</b> · {count} tool(s) · '
        f'<span style="{_MUTED}">{escape(state)}</span></div>'
    )


def rules_html(session: Session) -> str:
    """The session's permission rules (action, rule, source) for below the table."""
    try:
        rules = session.rules.rules
    except ValueError as exc:  # a broken settings file
        return f'<div style="color:var(--jp-error-color1,#cf222e)">{escape(str(exc))}</div>'
    head = (
        '<div style="margin-top:8px"><b>Permission rules</b> '
        f'<span style="{_MUTED}">(deny wins over ask, ask over allow; '
        "<code>%nbtools allow|ask|deny RULE</code>)</span></div>"
    )
    if not rules:
        return head + f'<div style="{_MUTED}">none</div>'
    order = ("deny", "ask", "allow")
    rows = "".join(
        f"<tr><td><b>{escape(r.action)}</b></td><td><code>{visible_html(r.text)}</code></td>"
        f'<td style="{_MUTED}">{escape(r.source)}</td></tr>'
        for r in sorted(rules, key=lambda r: order.index(r.action))
    )
    return head + f"<table>{rows}</table>"


class Inspector:
    """The widget: a row per tool, with a visibility toggle and an approval choice."""

    def __init__(self, session: Session | None = None) -> None:
        import ipywidgets as widgets

        self.session = session or get_session()
        self.rows: dict[str, Any] = {}
        self.visible: dict[str, Any] = {}
        self.approval: dict[str, Any] = {}
        reg = self.session.registry
        children = []
        groups = tool_groups(self.session)
        names = [n for _, group in groups for n in group]
        header = widgets.HTML(
            f"<b>{len(names)} tool(s)</b>, {reg.visible_count()} visible to the model"
            if names
            else "No tools yet: decorate a function with <code>@tool</code>."
        )
        self.header = header
        children.append(header)
        pairs = [(server, n) for server, group in groups for n in group]
        for i, (server, name) in enumerate(pairs):
            if server is not None and (i == 0 or pairs[i - 1][0] != server):
                count = sum(1 for srv, _ in pairs if srv == server)
                children.append(widgets.HTML(server_header_html(server, count)))
            html = widgets.HTML(row_html(self.session, name), layout=widgets.Layout(width="70%"))
            visible = widgets.Checkbox(
                value=not reg.is_hidden(name),
                description="visible",
                indent=False,
                layout=widgets.Layout(width="90px"),
            )
            choice = self.session.approval.get(name)
            approval = widgets.Dropdown(
                options=_APPROVAL_CHOICES,
                value="default" if choice is None else ("ask" if choice else "never"),
                layout=widgets.Layout(width="220px"),
            )
            visible.observe(lambda ch, n=name: self.set_visible(n, ch["new"]), names="value")
            approval.observe(lambda ch, n=name: self.set_approval(n, ch["new"]), names="value")
            self.rows[name], self.visible[name], self.approval[name] = html, visible, approval
            children.append(widgets.HBox([html, visible, approval]))
        self.rules = widgets.HTML(rules_html(self.session))
        children.append(self.rules)
        self.widget = widgets.VBox(children)

    def set_visible(self, name: str, visible: bool) -> None:
        reg = self.session.registry
        if visible:
            reg.unhide(name)
        else:
            reg.hide(name)
        self._refresh(name)

    def set_approval(self, name: str, choice: str) -> None:
        if choice == "default":
            self.session.approval.pop(name, None)
        else:
            self.session.approval[name] = choice == "ask"
        self._refresh(name)

    def _refresh(self, name: str) -> None:
        self.rows[name].value = row_html(self.session, name)
        reg = self.session.registry
        self.header.value = f"<b>{len(reg)} tool(s)</b>, {reg.visible_count()} visible to the model"


def static_html(session: Session | None = None) -> str:
    """The inspector as plain HTML: what a saved notebook shows without a kernel."""
    s = session or get_session()
    parts = []
    count = 0
    for server, names in tool_groups(s):
        if server is not None:
            parts.append(server_header_html(server, len(names)))
        count += len(names)
        parts.extend(
            f'<div style="margin:4px 0;padding:2px 0;border-bottom:1px solid '
            f'var(--jp-border-color2,#d0d7de)">{row_html(s, n)}</div>'
            for n in names
        )
    return f"<div><b>{count} tool(s)</b></div>{''.join(parts)}{rules_html(s)}"


def show_inspector() -> Inspector:
    """Display the inspector: the widget, with a static HTML table in the same bundle for
    viewers without the widget state (GitHub, nbviewer)."""
    from IPython.display import display

    inspector = Inspector()
    bundle = inspector.widget._repr_mimebundle_()
    bundle["text/html"] = static_html(inspector.session)
    display(bundle, raw=True)
    return inspector
