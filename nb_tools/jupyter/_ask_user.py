"""``ask_user``: the model asks the person a question in the middle of a run.

The cell shows a small form (the question, a button per choice, a text box when free text
is allowed); the answer is the tool's result. The form waits like an approval card (woken
every 0.25 s, so Interrupt and Stop act), and is replaced by a one-line static record of
the question and the answer, so a saved notebook holds no widget. A headless run (nobody
can answer: nbclient, papermill) answers at once with a message saying so; it never waits.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

from nb_tools.tool import Info, Result, Schema
from nb_tools.transcript import visible_html

__all__ = ["HEADLESS_ANSWER", "AskUserTool"]

HEADLESS_ANSWER = (
    "nobody can answer: this is a headless run (no notebook frontend shows the cell). Go on "
    "with what you know, and say in your reply which question is still open."
)
MAX_CHOICES = 12
_MUTED = "color:var(--jp-content-font-color2,#57606a)"


class AskUserTool:
    """The ``ask_user`` tool (a kernel tool: it needs the cell to show its form)."""

    def info(self) -> Info:
        return Info(
            name="ask_user",
            description=(
                "Ask the person at the notebook a question and wait for the answer, when "
                "you cannot go on without their choice or knowledge. Give choices when the "
                "answer is one of a few options; free_text lets them type (default: true "
                "without choices). Ask one clear question at a time."
            ),
            parameters=Schema.object(
                {
                    "question": Schema.string("The question, one or two sentences"),
                    "choices": Schema.array(
                        Schema.string("One option"),
                        f"Options to pick from (at most {MAX_CHOICES})",
                    ),
                    "free_text": Schema.boolean("Let the person type an answer"),
                },
                "question",
            ),
            read_only=True,
        )

    async def call(self, args: str | bytes) -> Result:
        parsed = json.loads(args or "{}")
        question = str(parsed.get("question") or "").strip()
        choices = [str(c) for c in parsed.get("choices") or [] if str(c).strip()]
        if not question:
            return Result.error("ask_user: the question is empty; ask something")
        if len(choices) > MAX_CHOICES:
            return Result.error(
                f"ask_user: {len(choices)} choices; give at most {MAX_CHOICES} (or free_text)"
            )
        free = parsed.get("free_text")
        free_text = (not choices) if free is None else bool(free)
        if not choices and not free_text:
            return Result.error("ask_user: no way to answer: give choices or free_text=true")
        form = AskForm(question, choices, free_text, loop=asyncio.get_running_loop())
        return await form.ask()


class AskForm:
    """The form in the cell; :meth:`ask` shows it and returns the answer as a Result."""

    def __init__(
        self,
        question: str,
        choices: Sequence[str],
        free_text: bool,
        *,
        loop: asyncio.AbstractEventLoop,
    ) -> None:
        import ipywidgets as widgets

        self.question = question
        self._loop = loop
        self._lock = threading.Lock()
        self.future: asyncio.Future[str] = loop.create_future()
        # what the person reads is what the model wrote: hidden characters shown
        self.label = widgets.HTML(f"<b>The agent asks:</b> {visible_html(question)}")
        self.buttons = [widgets.Button(description=c, tooltip=c) for c in choices]
        for button, choice in zip(self.buttons, choices, strict=True):
            button.on_click(lambda _b, c=choice: self.answer(c))
        row: list[Any] = list(self.buttons)
        self.text: Any = None
        if free_text:
            self.text = widgets.Text(
                placeholder="Your answer; Enter sends it",
                continuous_update=False,
                layout=widgets.Layout(flex="1 1 auto", min_width="16em"),
            )
            self.text.observe(self._typed, names="value")
            self.send = widgets.Button(description="Send", button_style="primary", icon="reply")
            self.send.on_click(lambda _b: self._send())
            row += [self.text, self.send]
        self.widget = widgets.VBox([self.label, widgets.HBox(row)])
        self.handle: Any = None

    def _typed(self, change: Mapping[str, Any]) -> None:
        """Enter (or leaving the box) sends typed text: ``continuous_update=False``."""
        if str(change.get("new") or "").strip():
            self.answer(str(change["new"]).strip())

    def _send(self) -> None:
        value = str(self.text.value or "").strip() if self.text is not None else ""
        if value:
            self.answer(value)

    def answer(self, text: str) -> None:
        """The first answer wins (a click may come on another thread)."""
        with self._lock:
            if self.future.done():
                return
            self._loop.call_soon_threadsafe(_resolve, self.future, text)

    async def ask(self) -> Result:
        from IPython.display import display

        from nb_tools.jupyter._headless import FrontendWatch

        watch = FrontendWatch(self.widget)
        self.handle = display(self.widget, display_id=True)
        try:
            if await watch.headless():
                self._record("not asked: headless run")
                return Result.error(f"ask_user: {HEADLESS_ANSWER}")
            while not self.future.done():  # wake for Interrupt and Stop
                await asyncio.wait({self.future}, timeout=0.25)
            answer = self.future.result()
        except BaseException:
            self._record("not answered: the run stopped")
            raise
        finally:
            self.widget.close()
        self._record(f"answered: {answer}")
        return Result(content=answer)

    def _record(self, outcome: str) -> None:
        """Put a static line in place of the form (no widget left in a saved notebook)."""
        asked = visible_html(self.question)
        html = (
            f'<div class="nbtools-ask-record"><b>The agent asked:</b> {asked} '
            f'<span style="{_MUTED}">— {escape(outcome)}</span></div>'
        )
        text = f"The agent asked: {self.question} — {outcome}"
        if self.handle is not None:
            self.handle.update({"text/html": html, "text/plain": text}, raw=True)


def _resolve(fut: asyncio.Future[str], text: str) -> None:
    if not fut.done():
        fut.set_result(text)
