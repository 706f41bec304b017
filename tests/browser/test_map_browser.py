"""``%%agent --over`` in JupyterLab, as a person meets it: the plan card before any
request, Approve, the progress view with its rows, a click on a running map's row opens
that row's conversation (rendered by the transcript renderer), after the run a click
on a row of the table's list opens its conversation too, and rerun with its checkpoint, a
row taken from the checkpoint opens its recorded conversation. Screenshots go to
tests/artifacts/ (and the one the docs show to docs/images/)."""

from __future__ import annotations

from typing import Any

import nbformat
import pytest
from browser_ui import (
    OUTPUTS,
    SLOW,
    TRANSCRIPT,
    cell,
    docs_shot,
    enabled_button,
    open_notebook,
    run_cells,
    shot,
)

from nb_tools.model import ModelRequest
from nb_tools.testing import call, reply

expect = pytest.importorskip("playwright.sync_api").expect
pytestmark = pytest.mark.browser


SETUP = '''%load_ext nb_tools
import pandas as pd
from nb_tools import tool

@tool(read_only=True)
def customer_plan(customer: str) -> str:
    """The customer's plan: enterprise, pro or free."""
    return {"acme": "enterprise", "globex": "pro"}.get(customer, "free")

tickets = pd.DataFrame({
    "ticket": ["#4411", "#4412", "#4413", "#4414"],
    "customer": ["acme", "globex", "initech", "acme"],
    "text": ["Charged twice for March.", "CSV export times out.",
             "How do I add a second admin?", "Invoice has the wrong VAT number."],
})
'''
MAP = (
    "%%agent --over tickets --output triage --concurrency 2 --budget 1 "
    "--checkpoint triage.jsonl\n"
    "Ticket {ticket} from customer {customer}: {text}"
)


def answer(request: ModelRequest) -> Any:
    """Look the customer's plan up, then triage."""
    if len(request.messages) == 1:
        customer = request.messages[0].text.split("customer ")[1].split(":")[0]
        return reply("", call("customer_plan", customer=customer))
    plan = request.messages[-1].content[0].result.content
    priority = "high" if plan == "enterprise" else "normal"
    return reply(f"**{priority}** priority: the customer is on the {plan} plan.")


def test_plan_card_progress_rows_and_conversations_in_lab(
    lab: Any, page: Any, script: Any, fake_model: Any
) -> None:
    script.push(*([answer] * 8))
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    nb.cells = [nbformat.v4.new_code_cell(SETUP), nbformat.v4.new_code_cell(MAP)]
    nbformat.write(nb, lab.root / "map_view.ipynb")
    open_notebook(page, lab, "map_view.ipynb")
    fake_model.latency = 1.5  # rows stay in flight long enough to be looked at
    try:
        run_cells(page, 0, 1)
        agent = cell(page, 1)
        # the plan card: rows, the tool and what it does, the estimate, the budget
        plan = agent.locator(f"{OUTPUTS} .nbtools-map-plan")
        expect(plan).to_contain_text("Plan of this map", timeout=SLOW)
        expect(plan).to_contain_text("4, 2 at a time")
        expect(plan).to_contain_text("customer_plan")
        expect(plan).to_contain_text("Estimated costabout $")
        expect(plan).to_contain_text("Budget$1.00 for the whole map")
        assert fake_model.queue.remaining == 8  # no model request before Approve
        shot(page, "map-plan-card", agent)
        docs_shot(agent, "map-plan-card")
        enabled_button(agent, "Approve", exact=True).click()

        # the progress view: the line, the rows; a click on a row opens its conversation
        line = agent.locator(OUTPUTS).get_by_text("rows done")
        expect(line).to_contain_text("running", timeout=SLOW)
        rows = agent.locator(f"{OUTPUTS} .nbtools-map-rows-list select")
        expect(rows.locator("option")).to_have_count(4)
        rows.select_option(index=0)
        live = agent.locator(TRANSCRIPT).first
        expect(live).to_contain_text("customer_plan", timeout=SLOW)
        expect(agent.locator(OUTPUTS)).to_contain_text("Ticket #4411 from customer acme")
        expect(enabled_button(agent, "Stop", exact=True)).to_have_count(1)  # still running
        shot(page, "map-progress-row-open", agent)
        docs_shot(agent, "map-progress")

        # after the run: the table, then the rows; a click opens a row's conversation
        rows_list = agent.locator(f"{OUTPUTS} .nbtools-map-rows")
        expect(rows_list).to_be_visible(timeout=SLOW)
        expect(agent.locator(f"{OUTPUTS} table.dataframe")).to_contain_text("#4414")
        expect(agent.locator(f"{OUTPUTS} .nbtools-map-rows-list")).to_have_count(0)  # widgets gone
        row = rows_list.locator("details.nbtools-map-row").nth(1)
        expect(row.locator(":scope > summary")).to_contain_text("row 1 · #4412 · ok · 2 turn(s)")
        body = row.locator(".nbtools-transcript")
        expect(body).to_be_hidden()
        row.locator(":scope > summary").click()
        expect(body).to_be_visible()
        expect(row).to_contain_text("normal priority: the customer is on the pro plan.")
        expect(row).to_contain_text("Ticket #4412 from customer globex")
        shot(page, "map-after-row-open", agent)
        docs_shot(agent, "map-after-run")

        # Rerun the cell: every row comes from the checkpoint (no request); a click on a
        # restored row opens its conversation as it was recorded.
        fake_model.latency = 0.0
        run_cells(page, 1)
        plan = agent.locator(f"{OUTPUTS} .nbtools-map-plan")
        expect(plan).to_contain_text("(4 of 4 are done: in the checkpoint)", timeout=SLOW)
        enabled_button(agent, "Approve", exact=True).click()
        row = agent.locator(f"{OUTPUTS} .nbtools-map-rows details.nbtools-map-row").nth(1)
        summary = row.locator(":scope > summary")
        expect(summary).to_contain_text("row 1 · #4412 · ok · 2 turn(s)", timeout=SLOW)
        expect(summary).to_contain_text("from the checkpoint")
        summary.click()
        expect(row.locator(".nbtools-transcript")).to_be_visible()
        expect(row).to_contain_text("normal priority: the customer is on the pro plan.")
        expect(row).to_contain_text("customer_plan")
        expect(row).to_contain_text("Ticket #4412 from customer globex")
        shot(page, "map-restored-row-open", agent)
        assert fake_model.queue.remaining == 0  # the rerun sent no model request
    finally:
        fake_model.latency = 0.0
    assert page.console.unexpected() == []
