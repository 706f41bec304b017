"""``%%agent`` / ``%agent`` and ``%tools``, with ``@magic_arguments`` help (``%agent?``).

The ``%%agent`` magic itself runs only when the input transformer did not rewrite the cell
(e.g. ``get_ipython().run_cell_magic(...)``); it then starts the run as a background task,
which is shown but does not hold the cell.
"""

from __future__ import annotations

import argparse
import asyncio
import shlex
from typing import Any

from IPython.core.error import UsageError
from IPython.core.magic import Magics, line_cell_magic, line_magic, magics_class
from IPython.core.magic_arguments import argument, magic_arguments, parse_argstring

POLICIES = ("ask", "auto", "deny", "read-only")


@magics_class
class AgentMagics(Magics):
    @magic_arguments()
    @argument(
        "--model",
        help="a Claude model name, openai:NAME, ollama:NAME, openai-compatible:NAME (with "
        "--base-url), or 'demo' for the offline demo model (default: $NB_TOOLS_MODEL, else "
        "the newest Sonnet; offline: the demo)",
    )
    @argument(
        "--approval",
        choices=POLICIES,
        default=None,
        help="who approves calls that need it: ask (buttons in the cell), auto, deny, "
        "read-only (default: $NB_TOOLS_APPROVAL, else ask)",
    )
    @argument(
        "--max-turns",
        type=int,
        default=None,
        help="stop this run after this many model turns (default 25)",
    )
    @argument(
        "--base-url",
        default=None,
        help="the server of an OpenAI-compatible model (with --model openai-compatible:NAME)",
    )
    @argument(
        "--budget",
        type=float,
        default=None,
        help="USD per run: pause before a turn that would pass it and ask to continue "
        "(default: $NB_TOOLS_BUDGET_USD, else none)",
    )
    @argument(
        "--continue",
        dest="continue_run",
        action="store_true",
        help="go on from where the last run stopped (turn limit, budget); no request needed",
    )
    @argument(
        "--result-limit",
        type=int,
        default=None,
        help="bytes of each tool result the model gets, head and tail (default: "
        "$NB_TOOLS_RESULT_LIMIT, else 30000); the card shows the whole result",
    )
    @argument("--new", action="store_true", help="start a new conversation")
    @argument(
        "--system",
        nargs="+",
        default=None,
        help="system prompt, quoted or as the words up to the next option (kept for later "
        "runs, also when --model changes)",
    )
    @argument(
        "--tools",
        default=None,
        help="comma-separated tool names: only these tools of the session registry",
    )
    @argument(
        "--builtins",
        action="store_true",
        help="add the built-in coding tools rooted at the notebook's folder",
    )
    @argument(
        "--thinking",
        default=None,
        help="extended thinking: a token budget (e.g. 8000) or 'adaptive'; 0 turns it off "
        "(kept for later runs)",
    )
    @argument(
        "--server-tools",
        default=None,
        help="comma-separated tools the API runs itself: web_search, web_fetch, "
        "code_execution (kept for later runs; 'none' removes them)",
    )
    @argument(
        "--cache-ttl",
        choices=("5m", "1h"),
        default=None,
        help="how long the prompt cache keeps this conversation between requests (default "
        "1h: a pause of more than five minutes between cells would rewrite it each cell; "
        "kept for later runs)",
    )
    @argument(
        "--tool-search",
        choices=("auto", "on", "off"),
        default=None,
        help="defer MCP tools to Claude's tool search: auto (when there are more than 30 "
        "tools; the default), on, off (kept for later runs)",
    )
    @argument(
        "--memory",
        action="store_true",
        help="give Claude its memory tool, on .nb_tools/memories in the notebook's folder "
        "(kept across conversations and notebooks of the project; kept for later runs)",
    )
    @argument(
        "--mcp-server",
        action="append",
        default=None,
        metavar="NAME=URL",
        help="a remote MCP server Claude's API connects to itself (the MCP connector; repeat "
        "for several; 'none' removes them; kept for later runs). The rules apply: "
        "deny mcp__NAME__TOOL disables that tool",
    )
    @argument(
        "--cite",
        action="store_true",
        help="send attached documents with citations enabled: the answer cites them (kept "
        "for later runs)",
    )
    @argument(
        "--upload",
        action="store_true",
        help="upload attachments once to Claude's Files API and name them by file id in "
        "later requests, instead of sending their bytes each turn (kept for later runs)",
    )
    @argument(
        "--attach",
        action="append",
        default=None,
        help="an image or PDF to send with the prompt: a file path or the name of a "
        "variable holding bytes, a path or a PIL image (repeat for several)",
    )
    @argument(
        "--output",
        default=None,
        metavar="NAME[:TYPE]",
        help="a typed answer put in the variable NAME: TYPE is the name of a pydantic model, "
        "dataclass, TypedDict or JSON Schema dict of the notebook (without it, NAME's "
        "annotation: `city: City` in an earlier cell)",
    )
    @argument(
        "--no-python",
        action="store_true",
        help="do not offer the python tool (code in this kernel); list_variables and describe stay",
    )
    @argument(
        "--fix",
        action="store_true",
        help="have the agent fix the last failed cell (or --cell ID's): the cell body, if "
        "any, is a hint; the fix is a notebook_edit you approve",
    )
    @argument("--cell", default=None, help="with --fix: the failed cell's id")
    @argument(
        "--no-instructions",
        action="store_true",
        help="do not read the project's AGENTS.md / CLAUDE.md / .nb_tools/instructions.md",
    )
    @argument(
        "--over",
        default=None,
        metavar="DF",
        help="run the cell body, a template naming columns ({ticket}), over every row of the "
        "DataFrame DF (nb_tools.map): one conversation per row; the result table goes in "
        "--output NAME (default map_result) and is shown; --budget is then the whole map's",
    )
    @argument(
        "--concurrency",
        type=int,
        default=None,
        help="with --over: rows at once (default 8; lowered while the provider rate-limits)",
    )
    @argument(
        "--checkpoint",
        default=None,
        metavar="PATH",
        help="with --over: a JSON-lines file of finished rows; a rerun skips them",
    )
    @argument(
        "--batch",
        action="store_true",
        help="with --over: each round of the rows' loops goes as one Message Batch (half "
        "the price, slower); a provider without batches runs the rows in the kernel",
    )
    @argument("prompt", nargs="*", help="the request (the cell magic takes it from the cell body)")
    @line_cell_magic
    def agent(self, line: str, cell: str | None = None) -> None:
        """Run the model's tool loop in this cell: ``%%agent [options]`` + the request."""
        coro = run_magic(line, cell)
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            asyncio.run(coro)
            return
        task = loop.create_task(coro)
        _background.add(task)
        task.add_done_callback(_background.discard)

    @magic_arguments()
    @argument("--json", action="store_true", help="print the tool specs the model will see")
    @line_magic
    def tools(self, line: str) -> Any:
        """Show the session's tool registry: ``%tools`` (inspector) or ``%tools --json``."""
        args = parse_argstring(self.tools, line)
        from nb_tools.jupyter._inspector import print_specs, show_inspector

        if args.json:
            print_specs()
            return None
        show_inspector()
        return None


_background: set[asyncio.Task[Any]] = set()
_TOOL_SEARCH: dict[str | None, Any] = {"auto": "auto", "on": True, "off": False}


def parse(line: str) -> argparse.Namespace:
    """The ``%%agent`` options of ``line``; raises ``UsageError`` with the problem."""
    # Split as a shell would (IPython's own splitting keeps the quotes in
    # --system "You are terse.").
    try:
        argv = shlex.split(line)
    except ValueError as exc:  # e.g. unbalanced quotes
        raise UsageError(f"%agent: cannot parse {line!r}: {exc}; close the quotes") from exc
    try:
        args = AgentMagics.agent.parser.parse_args(argv)  # type: ignore[attr-defined]
    except UsageError:
        raise
    except SystemExit as exc:  # argparse on --help and some errors
        raise UsageError(f"%agent: bad options {line!r}") from exc
    if args.system is not None:
        args.system = " ".join(args.system)
    return args


def run_magic(line: str, cell: str | None) -> Any:
    """The coroutine running ``%%agent line`` + ``cell``."""
    from nb_tools.jupyter._runner import run_agent

    args = parse(line)
    if args.over is not None:
        from nb_tools.jupyter._map_magic import run_over

        async def over() -> None:
            await run_over(
                args, "\n".join(x for x in (" ".join(args.prompt), cell) if x), _user_ns()
            )

        return over()
    words = " ".join(args.prompt)
    prompt = words if cell is None else "\n".join(x for x in (words, cell.strip()) if x)
    names = [n.strip() for n in args.tools.split(",") if n.strip()] if args.tools else None
    server = None
    if args.server_tools is not None:
        server = [n.strip() for n in args.server_tools.split(",") if n.strip() not in ("", "none")]
    attachments = [_attachment(a) for a in args.attach or ()]
    target, output = _output_target(args.output) if args.output else (None, None)

    async def go() -> None:
        nonlocal prompt
        fix = None
        if args.fix:
            from nb_tools.jupyter._fix import prepare_fix

            prompt, fix = await prepare_fix(prompt, args.cell)
        elif args.cell is not None:
            raise UsageError("%%agent: --cell goes with --fix")
        try:
            result = await run_agent(
                prompt,
                model=args.model,
                approval=args.approval,
                max_turns=args.max_turns,
                new=args.new,
                system=args.system,
                tools=names,
                builtins=args.builtins,
                thinking=args.thinking,
                server_tools=server,
                cache_ttl=args.cache_ttl,
                tool_search=_TOOL_SEARCH.get(args.tool_search),
                memory=args.memory or None,
                mcp_servers=_mcp_servers(args.mcp_server),
                citations=args.cite or None,
                upload_attachments=args.upload or None,
                attachments=attachments,
                base_url=args.base_url,
                python=not args.no_python,
                budget=args.budget,
                continue_run=args.continue_run,
                result_limit=args.result_limit,
                instructions=not args.no_instructions,
                output=output,
            )
        except (KeyError, ValueError) as exc:
            from nb_tools.agent import OutputError

            if isinstance(exc, OutputError):
                raise
            raise UsageError(str(exc).strip("'\"")) from None
        if fix is not None:
            fix(result)
        if target is not None and result.output is not None:
            _user_ns()[target] = result.output

    return go()


def _mcp_servers(specs: list[str] | None) -> list[dict[str, str]] | None:
    """``--mcp-server NAME=URL`` (repeated): the connector's servers; None: unchanged."""
    if specs is None:
        return None
    servers: list[dict[str, str]] = []
    for spec in specs:
        if spec.strip() == "none":
            continue
        name, sep, url = (p.strip() for p in spec.partition("="))
        if not sep or not name or not url.startswith(("https://", "http://")):
            raise UsageError(f"%%agent --mcp-server {spec!r}: write NAME=https://...")
        servers.append({"name": name, "url": url})
    return servers


def _user_ns() -> dict[str, Any]:
    from IPython import get_ipython

    shell = get_ipython()
    if shell is None:
        raise UsageError("%%agent --output needs an IPython session")
    ns: dict[str, Any] = shell.user_ns
    return ns


def _output_target(spec: str) -> tuple[str, object]:
    """``--output NAME[:TYPE]``: the variable to set and the output type, looked up in
    the user's namespace (a dotted name reads attributes: ``models.City``)."""
    name, _, type_name = (p.strip() for p in spec.partition(":"))
    if not name.isidentifier():
        raise UsageError(f"%%agent --output {spec!r}: NAME must be a Python variable name")
    ns = _user_ns()
    if not type_name:
        annotations = ns.get("__annotations__") or {}
        if name not in annotations:
            raise UsageError(
                f"%%agent --output {name}: no type for {name}; write --output {name}:TYPE, "
                f"or annotate it first ({name}: MyModel)"
            )
        return name, annotations[name]
    head, *rest = type_name.split(".")
    if head not in ns:
        raise UsageError(
            f"%%agent --output {spec}: {head} is not defined in the notebook; define the "
            "type (a pydantic model, dataclass, TypedDict or JSON Schema dict) first"
        )
    value = ns[head]
    for attr in rest:
        try:
            value = getattr(value, attr)
        except AttributeError:
            raise UsageError(f"%%agent --output {spec}: {type_name} does not exist") from None
    return name, value


def _attachment(name: str) -> object:
    """``--attach NAME``: a variable of the user's namespace when one has that name, else a
    file path."""
    from IPython import get_ipython

    shell = get_ipython()
    if shell is not None and name.isidentifier() and name in shell.user_ns:
        return shell.user_ns[name]
    return name
