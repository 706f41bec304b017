"""``%nbtools allow|ask|deny|forget|rules|reload`` (the session's permission rules) and
``%mcp add|list|remove`` (MCP servers whose tools join the session registry).

Attaching and removing a server is async and a magic cannot ``await``: the input
transformer rewrites a top-level ``%mcp ...`` line into an awaited
:func:`mcp_command` call. When the magic itself runs (``get_ipython().run_line_magic``, an
indented line), it runs the coroutine on a fresh event loop in a helper thread and waits;
that works because an MCP connection lives on its own loop thread, not the caller's.
"""

from __future__ import annotations

import argparse
import os
import shlex
from typing import TypeVar

from IPython.core.error import UsageError
from IPython.core.magic import Magics, line_magic, magics_class
from IPython.core.magic_arguments import argument, magic_arguments

from nb_tools.jupyter._session import Session, get_session
from nb_tools.tool._sync import run_blocking

T = TypeVar("T")

RULE_ACTIONS = ("allow", "ask", "deny")
RULE_COMMANDS = (*RULE_ACTIONS, "forget", "rules", "reload", "sandbox", "code", "restore")
MCP_COMMANDS = ("add", "list", "remove")


@magics_class
class RulesMCPMagics(Magics):
    @magic_arguments()
    @argument(
        "command",
        nargs="?",
        choices=RULE_COMMANDS,
        help="allow / ask / deny RULE...: add session rules; forget RULE...: remove rules; "
        "rules: list every rule with its action and source; reload: read the settings "
        "files again (user config and the project's .nb_tools/settings.json); "
        "sandbox [read-only|workspace-write|off]: where approved bash calls run (bare: show "
        "the mode and whether the sandbox works); code [--print]: the last run's tool calls as a "
        "cell of code below (--print: print it); restore [PATH...]: put back what the last "
        "run changed",
    )
    @argument(
        "rule",
        nargs="*",
        help="TOOL or TOOL(SPECIFIER), e.g. bash(git log:*), edit_file(notebooks/**), "
        "web_fetch(domain:example.com), mcp__github__*; several rules are separated by spaces",
    )
    @line_magic
    def nbtools(self, line: str) -> None:
        """The session's permission rules: ``%nbtools deny bash(rm:*)``, ``%nbtools rules``.

        Deny wins over ask, ask over allow; rules apply before a tool's own approval
        setting and the ``--approval`` policy, and every decision a rule makes names it.
        """
        print(nbtools_command(line))

    @magic_arguments()
    @argument("command", choices=MCP_COMMANDS, help="add a server, list them, remove one")
    @argument("name", nargs="?", help="the server's name (its tools are mcp__NAME__TOOL)")
    @argument("--url", default=None, help="a streamable HTTP server's URL (instead of -- COMMAND)")
    @argument(
        "--env",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="an environment variable for a stdio server (repeat for more)",
    )
    @argument(
        "--trust-hints",
        action="store_true",
        help="believe the server's readOnlyHint: those tools run without a click (default: "
        "every tool of the server asks)",
    )
    @argument(
        "--sandbox",
        default=None,
        choices=("read-only", "workspace-write"),
        help="run a stdio server in the OS sandbox (no network; the workspace read-only or "
        "writable)",
    )
    @line_magic
    def mcp(self, line: str) -> None:
        """MCP servers: ``%mcp add NAME -- COMMAND ARGS...`` (stdio, optional
        ``--env KEY=VALUE``), ``%mcp add NAME --url URL`` (streamable HTTP), ``%mcp list``,
        ``%mcp remove NAME``. The server's tools join the session registry as
        ``mcp__NAME__TOOL``, so ``%%agent`` sees them; remove takes exactly those away.
        Every call of a server's tool asks unless ``--trust-hints`` (its ``readOnlyHint``
        tools then run unasked) or a rule allows it; ``--sandbox read-only`` runs a stdio
        server in the OS sandbox."""
        print(run_blocking(mcp_command(line)))


# -- %nbtools ---------------------------------------------------------------------------


def split_rules(text: str) -> list[str]:
    """Rules separated by whitespace outside parentheses and quotes:
    ``bash(git log:*) web_fetch`` is two rules. A rule wholly in quotes loses them."""
    out: list[str] = []
    buf: list[str] = []
    depth = 0
    quote = ""
    for c in text:
        if quote:
            if c == quote:
                quote = ""
            buf.append(c)
        elif c in "'\"" and depth == 0 and not buf:
            quote = c
            buf.append(c)
        elif c == "(":
            depth += 1
            buf.append(c)
        elif c == ")":
            depth = max(0, depth - 1)
            buf.append(c)
        elif c.isspace() and depth == 0:
            if buf:
                out.append("".join(buf))
                buf = []
        else:
            buf.append(c)
    if buf:
        out.append("".join(buf))
    return [r[1:-1] if len(r) >= 2 and r[0] == r[-1] and r[0] in "'\"" else r for r in out]


def nbtools_command(line: str, session: Session | None = None) -> str:
    """Run ``%nbtools line``; returns the text to show. Raises ``UsageError``."""
    s = session or get_session()
    command, _, rest = line.strip().partition(" ")
    command = command or "rules"  # a bare %nbtools lists the rules
    texts = split_rules(rest)
    if command == "sandbox":
        return sandbox_command(texts, s)
    if command == "code":
        from nb_tools.jupyter._run_code import code_command

        return code_command(texts, s)
    if command == "restore":  # a top-level line is rewritten into an await (_transform)
        from nb_tools.jupyter._review import restore_command

        return run_blocking(restore_command(texts, s))
    if command not in RULE_COMMANDS:
        raise UsageError(
            f"%nbtools: unknown command {command!r}; use one of {', '.join(RULE_COMMANDS)} "
            "(%nbtools? for help)"
        )
    try:
        rules = s.reload_rules() if command == "reload" else s.rules
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if command in ("rules", "reload"):
        if texts:
            raise UsageError(f"%nbtools {command} takes no rules, got {rest.strip()!r}")
        head = "re-read the settings files\n" if command == "reload" else ""
        return head + rules_text(s)
    if not texts:
        raise UsageError(
            f"%nbtools {command}: give a rule, e.g. %nbtools {command} bash(git log:*)"
        )
    if command == "forget":
        missing = [t for t in texts if rules.remove(t) == 0]
        if missing:
            raise UsageError(
                f"%nbtools forget: no rule {', '.join(map(repr, missing))}; "
                "%nbtools rules lists them"
            )
        return f"forgot {', '.join(texts)}\n" + rules_text(s)
    try:
        added = rules.add(command, *texts, source="session")  # type: ignore[arg-type]
    except ValueError as exc:
        raise UsageError(f"%nbtools {command}: {exc}") from None
    return f"added {', '.join(str(r) for r in added)} [session]\n" + rules_text(s)


def sandbox_command(words: list[str], session: Session) -> str:
    """``%nbtools sandbox [MODE]``: set or show where approved shell calls run."""
    from nb_tools.sandbox import (
        SANDBOX_MODES,
        SandboxPolicy,
        default_mode,
        sandbox_available,
        set_default_mode,
    )

    if len(words) > 1 or (words and words[0] not in SANDBOX_MODES):
        raise UsageError(
            f"%nbtools sandbox: give one of {', '.join(SANDBOX_MODES)}, or nothing to show "
            f"the current mode; got {' '.join(words)!r}"
        )
    head = ""
    if words:
        set_default_mode(words[0])
        agent = session.agent
        if agent is not None and hasattr(agent, "sandbox"):
            agent.sandbox = None  # follow the session default from now on
        head = f"sandbox for approved bash calls: {words[0]}\n"
    mode = default_mode()
    name = mode.mode if isinstance(mode, SandboxPolicy) else mode
    found = sandbox_available()
    works = (
        f"bubblewrap works ({found.bwrap}, {found.version})"
        if found.ok
        else f"NO sandbox can start: {found.reason}; every bash call asks for approval"
    )
    return (
        f"{head}sandbox: approved bash calls run {name!r}; calls without approval run "
        f"'read-only'; a call that asks for sandbox 'off' always asks a person\n{works}"
    )


def rules_text(session: Session) -> str:
    """The session's rules, one a line: action, rule, source."""
    from nb_tools.permissions import project_settings_path, user_settings_path

    rules = session.rules
    user, project = user_settings_path(), project_settings_path(rules.root)
    files = (
        f"settings: user {user}{'' if user.is_file() else ' (none)'}, "
        f"project {project}{'' if project.is_file() else ' (none)'}"
    )
    if not rules.rules:
        return f"no permission rules\n{files}"
    ordered = sorted(rules.rules, key=lambda r: RULE_ACTIONS[::-1].index(r.action))
    width = max(len(r.text) for r in ordered)
    lines = [f"{len(ordered)} permission rule(s) (deny wins over ask, ask over allow):"]
    lines += [f"  {r.action:<5}  {r.text:<{width}}  [{r.source}]" for r in ordered]
    return "\n".join([*lines, files])


# -- %mcp -------------------------------------------------------------------------------


def parse_mcp(line: str) -> tuple[argparse.Namespace, list[str]]:
    """The options of ``%mcp line`` and the server command after ``--``."""
    try:
        words = shlex.split(line, posix=os.name != "nt")
    except ValueError as exc:
        raise UsageError(f"%mcp: cannot parse {line!r}: {exc}") from None
    command: list[str] = []
    if "--" in words:
        cut = words.index("--")
        words, command = words[:cut], words[cut + 1 :]
    try:
        args = RulesMCPMagics.mcp.parser.parse_args(words)  # type: ignore[attr-defined]
    except SystemExit as exc:  # argparse on --help
        raise UsageError(f"%mcp: bad options {line!r}") from exc
    if args.command == "add":
        if not args.name:
            raise UsageError("%mcp add: name the server: %mcp add NAME -- COMMAND ARGS...")
        if bool(command) == bool(args.url):
            raise UsageError(
                "%mcp add: give either a command after -- (stdio: %mcp add NAME -- python "
                "server.py) or --url URL (streamable HTTP), not both"
            )
        if args.env and args.url:
            raise UsageError("%mcp add: --env is for stdio servers (-- COMMAND), not --url")
        bad = [e for e in args.env if "=" not in e or e.startswith("=")]
        if bad:
            raise UsageError(f"%mcp add: --env takes KEY=VALUE, got {', '.join(bad)}")
        if args.sandbox and args.url:
            raise UsageError("%mcp add: --sandbox is for stdio servers (-- COMMAND), not --url")
    elif command or args.url or args.env or args.trust_hints or args.sandbox:
        raise UsageError(
            f"%mcp {args.command}: -- COMMAND, --url, --env, --sandbox and --trust-hints are "
            "for %mcp add"
        )
    elif args.command == "remove" and not args.name:
        raise UsageError("%mcp remove: name the server (%mcp list shows them)")
    elif args.command == "list" and args.name:
        raise UsageError(f"%mcp list takes no name, got {args.name!r}")
    return args, command


async def mcp_command(line: str) -> str:
    """Run ``%mcp line``; returns the text to show. Raises ``UsageError``."""
    from nb_tools.mcp import attach, detach

    args, command = parse_mcp(line)
    session = get_session()
    if args.command == "list":
        return mcp_list_text()
    if args.command == "remove":
        try:
            removed = await detach(args.name)
        except KeyError as exc:
            raise UsageError(f"%mcp remove: {exc.args[0]}") from None
        return f"MCP server {args.name!r} removed with its {removed} tool(s)"
    env = dict(e.split("=", 1) for e in args.env) or None
    try:
        handle = await attach(
            session.registry,
            args.name,
            command=command or None,
            env=env,
            url=args.url,
            sandbox=args.sandbox,
            trust_hints=args.trust_hints,
        )
    except (ConnectionError, ValueError) as exc:
        raise UsageError(f"%mcp add {args.name}: {exc}") from None
    return f"MCP server {handle.name!r} connected: {len(handle.tools)} tool(s): " + ", ".join(
        handle.tools
    )


def mcp_list_text() -> str:
    from nb_tools.mcp import attached

    servers = attached()
    if not servers:
        return "no MCP servers attached; %mcp add NAME -- COMMAND ARGS... adds one"
    lines = []
    for name, handle in sorted(servers.items()):
        where = handle.connection.params.where
        state = "connected" if handle.connected else "NOT connected"
        lines.append(f"{name}: {state}, {where}, {len(handle.tools)} tool(s)")
        lines += [f"  {t}" for t in handle.tools]
    return "\n".join(lines)
