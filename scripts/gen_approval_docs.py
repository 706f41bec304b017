"""Regenerate the approval pipeline's sections of ``docs/approvals.md`` from the code:

    python scripts/gen_approval_docs.py          # rewrite the sections
    python scripts/gen_approval_docs.py --check  # exit 1 if the page is stale

``decider-order``: the deciders in the order ``deciders_for`` builds them (with rules and a
permission callable present), each described by its own docstring.
``policy-table``: what each policy does with a set of typical calls, found by running the
pipeline (``nb_tools.agent.decide``) on real built-in tools in a scratch workspace, so the
table cannot say what the code does not. Tests run the check.
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "scripts"))

from gen_protection_docs import render  # noqa: E402

from nb_tools import Registry  # noqa: E402
from nb_tools.agent import POLICIES, Allow, Ask, Decision, decide  # noqa: E402
from nb_tools.agent._deciders import deciders_for  # noqa: E402
from nb_tools.builtin import builtin_tools  # noqa: E402
from nb_tools.model import ToolCall  # noqa: E402
from nb_tools.permissions import PermissionRules  # noqa: E402

PAGE = REPO / "docs" / "approvals.md"


def _first_paragraph(doc: str | None) -> str:
    text = " ".join((doc or "").strip().split("\n\n")[0].split())
    return text.replace("``", "`")


def decider_order() -> str:
    deciders = deciders_for(
        policy="ask", rules=PermissionRules(), permission=lambda c, i: None, root=REPO
    )
    rows = [
        f"{n}. **{d.name}**: {_first_paragraph(type(d).__doc__)}" for n, d in enumerate(deciders, 1)
    ]
    rows.append(
        f"{len(deciders) + 1}. **the person**, when a decider asked and none denied: the "
        "approval card (**Approve / Deny / Always allow**)."
    )
    return "\n".join(rows)


@dataclass(frozen=True)
class Case:
    what: str
    tool: str
    args: dict[str, Any]
    rule: tuple[str, str] | None = None  # (action, rule text)
    permission: bool | None = None  # the permission callable approves / refuses


CASES = (
    Case("`read_file a.txt` (read-only)", "read_file", {"file_path": "a.txt"}),
    Case("`bash ls` (the read-only vote passes it)", "bash", {"command": "ls"}),
    Case("`write_file b.txt`", "write_file", {"file_path": "b.txt", "content": "x"}),
    Case("`bash touch b.txt`", "bash", {"command": "touch b.txt"}),
    Case("`web_fetch` (read-only, reaches the network)", "web_fetch",
         {"url": "https://example.com/"}),
    Case("`write_file b.txt`, allow rule `write_file(b.txt)`", "write_file",
         {"file_path": "b.txt", "content": "x"}, ("allow", "write_file(b.txt)")),
    Case("`web_fetch`, allow rule `web_fetch(domain:example.com)`", "web_fetch",
         {"url": "https://example.com/"}, ("allow", "web_fetch(domain:example.com)")),
    Case("`read_file a.txt`, ask rule `read_file(a.txt)`", "read_file",
         {"file_path": "a.txt"}, ("ask", "read_file(a.txt)")),
    Case("`read_file a.txt`, deny rule `read_file(a.txt)`", "read_file",
         {"file_path": "a.txt"}, ("deny", "read_file(a.txt)")),
    Case("`write_file b.txt`, the `permission` callable approves", "write_file",
         {"file_path": "b.txt", "content": "x"}, permission=True),
    Case("`read_file .env` (a protected path)", "read_file", {"file_path": ".env"}),
    Case("`write_file .env`, allow rule `write_file(.env)`", "write_file",
         {"file_path": ".env", "content": "x"}, ("allow", "write_file(.env)")),
)  # fmt: skip


def _cell(verdict: Any) -> str:
    if verdict is None:
        return "runs"
    source = verdict.source
    who = "plan mode" if getattr(source, "plan_mode", False) else source.kind
    if isinstance(verdict, Allow):
        return f"runs ({who})"
    if isinstance(verdict, Ask):
        return f"**asks** ({who})"
    return f"denied ({who})"


def policy_table() -> str:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp).resolve()
        (root / "a.txt").write_text("a\n")
        (root / ".env").write_text("KEY=1\n")
        tools = Registry(
            *builtin_tools(root, include=["read_file", "write_file", "bash", "web_fetch"])
        )
        rows = [
            "| call | " + " | ".join(f"`{p}`" for p in POLICIES) + " |",
            "|---|" + "---|" * len(POLICIES),
        ]
        for case in CASES:
            cells = []
            for policy in POLICIES:
                rules = PermissionRules(root=root)
                if case.rule is not None:
                    rules.add(case.rule[0], case.rule[1])  # type: ignore[arg-type]
                answer = case.permission
                permission = (
                    None
                    if answer is None
                    else lambda c, i, a=answer: Decision(approved=a, by="permission")
                )
                call = ToolCall(id="c", name=case.tool, arguments=json.dumps(case.args))
                verdict = asyncio.run(
                    decide(
                        call,
                        tools=tools,
                        approval=policy,  # type: ignore[arg-type]
                        rules=rules,
                        permission=permission,
                        root=root,
                    )
                )
                cells.append(_cell(verdict))
            rows.append(f"| {case.what} | " + " | ".join(cells) + " |")
    return "\n".join(rows)


SECTIONS = {"decider-order": decider_order, "policy-table": policy_table}


def _render_all(text: str) -> str:
    for name, make in SECTIONS.items():
        text = render(text, name, make(), script="scripts/gen_approval_docs.py")
    return text


def main(argv: list[str]) -> int:
    text = PAGE.read_text()
    new = _render_all(text)
    if new == text:
        return 0
    if "--check" in argv:
        print(f"{PAGE.relative_to(REPO)} is stale: run python scripts/gen_approval_docs.py")
        return 1
    PAGE.write_text(new)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
