"""``%tools``: the registry inspector (one row per tool with its flags, call count, last
duration, JSON Schema and strict schema; toggles to hide a tool from the model and to
change its approval for the session; the kernel's own tools and each MCP server's tools
grouped under a header row; the session's permission rules below) and ``%tools --json``
(the specs the model sees)."""

from __future__ import annotations

import json
from html import escape
from typing import Any

from nb_tools.jupyter._session import Session, get_session
from nb_tools.tool import FromMCPServer, Registry
from nb_tools.transcript import PRE_STYLE, visible_html

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
            for sp in sorted(
                [*s.registry.specs(), *s.kernel_registry.specs()], key=lambda sp: sp.name
            )
        ],
        indent=2,
        ensure_ascii=False,
    )


def print_specs() -> None:
    print(specs_json())


def _flag(value: bool) -> str:
    return "✓" if value else "–"


def row_html(session: Session, name: str, registry: Registry | None = None) -> str:
    reg = registry if registry is not None else session.registry
    entry = reg.entry(name)
    if entry is None:
        return f"<b>{escape(name)}</b> (removed)"
    info = entry.info
    stats = session.stats.get(name)
    approval = session.approval.get(name, info.requires_approval)
    chosen = " (session)" if name in session.approval else ""
    last = f"{stats.last_duration:.3f} s" if stats and stats.last_duration is not None else "–"
    hidden = " · <i>hidden</i>" if reg.is_hidden(name) else ""
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


KERNEL_HEADER = (
    '<div style="margin-top:8px;padding:2px 4px;background:var(--jp-layout-color2,#f6f8fa)">'
    "<b>Kernel tools</b> · {count} tool(s) · "
    f'<span style="{_MUTED}">offered by every run: <code>python</code> runs code in your '
    "namespace (with approval), the others read your variables and the open notebook</span>"
    "</div>"
)


def tool_groups(session: Session) -> list[tuple[str | None, Registry, list[str]]]:
    """``(group, registry, names)``: the session's own tools first (group ``None``), then
    the kernel's tools (group ``"kernel"``), then one group per MCP server (by the tool's
    ``mcp_server``), servers sorted by name; names sorted in each."""
    own: list[str] = []
    servers: dict[str, list[str]] = {}
    reg = session.registry
    for tool in reg.list():
        name = tool.info().name
        server = tool.mcp_server if isinstance(tool, FromMCPServer) else None
        if isinstance(server, str):
            servers.setdefault(server, []).append(name)
        else:
            own.append(name)
    kernel = session.kernel_registry
    groups: list[tuple[str | None, Registry, list[str]]] = [(None, reg, own)] if own else []
    if len(kernel):
        groups.append(("kernel", kernel, [t.info().name for t in kernel.list()]))
    return groups + [(f"mcp:{srv}", reg, servers[srv]) for srv in sorted(servers)]


def group_header_html(group: str, count: int) -> str:
    if group == "kernel":
        return KERNEL_HEADER.format(count=count)
    return server_header_html(group.removeprefix("mcp:"), count)


def counts_html(session: Session) -> str:
    regs = (session.registry, session.kernel_registry)
    total = sum(len(r) for r in regs)
    if not total:
        return "No tools yet: decorate a function with <code>@tool</code>."
    return f"<b>{total} tool(s)</b>, {sum(r.visible_count() for r in regs)} visible to the model"


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
        self.registries: dict[str, Registry] = {}
        children = []
        header = widgets.HTML(counts_html(self.session))
        self.header = header
        children.append(header)
        for group, reg, names in tool_groups(self.session):
            if group is not None:
                children.append(widgets.HTML(group_header_html(group, len(names))))
            for name in names:
                self.registries[name] = reg
                html = widgets.HTML(
                    row_html(self.session, name, reg), layout=widgets.Layout(width="70%")
                )
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
        reg = self.registries[name]
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
        self.rows[name].value = row_html(self.session, name, self.registries[name])
        self.header.value = counts_html(self.session)


def static_html(session: Session | None = None) -> str:
    """The inspector as plain HTML: what a saved notebook shows without a kernel."""
    s = session or get_session()
    parts = []
    count = 0
    for group, reg, names in tool_groups(s):
        if group is not None:
            parts.append(group_header_html(group, len(names)))
        count += len(names)
        parts.extend(
            f'<div style="margin:4px 0;padding:2px 0;border-bottom:1px solid '
            f'var(--jp-border-color2,#d0d7de)">{row_html(s, n, reg)}</div>'
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
