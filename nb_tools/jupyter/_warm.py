"""Import the provider's SDK in the background after ``%load_ext nb_tools``, so the first
``%%agent`` of a fresh kernel does not wait about a second for ``import anthropic`` (or
``openai``) before its first token. ``import nb_tools`` itself imports no SDK; loading the
extension stays instant (the thread does the work while the person types a prompt)."""

from __future__ import annotations

import importlib
import os
import sys
import threading

from nb_tools.jupyter._session import has_credentials

THREAD_NAME = "nb_tools-warm-sdk"
RUN_MODULES = (
    "nb_tools.agent._persist",
    "nb_tools.jupyter._runner",
    "nb_tools.jupyter._kernel_tools",
    "nb_tools.jupyter._python_tool",
    "nb_tools.jupyter._live_notebook",
    "nb_tools.jupyter._headless",
    "nb_tools.jupyter._trim",
    "nb_tools.transcript._html",
    "nb_tools.jupyter._view",  # and ipywidgets (its import registers its comm targets)
    "nb_tools.jupyter._draft",
    "nb_tools.jupyter._ask_user",
    "nb_tools.jupyter._notebook_run",
    "nb_tools.jupyter._prompt_context",
    "nb_tools.jupyter._review",
)
"""What every run imports besides the SDK (a kernel test checks that the first run
imports no other module of nb_tools)."""
REFUSED = "http://127.0.0.1:9"  # the discard port: nothing answers, the connection is refused
_OPENAI_PREFIXES = ("openai", "openai-chat", "ollama", "openai-compatible")


def modules_to_warm() -> tuple[str, ...]:
    """The modules the first run will import: the SDK of the provider ``%%agent`` picks by
    default (``$NB_TOOLS_MODEL``'s prefix, else Claude with credentials), with nb_tools'
    own provider module and the agent loop; nothing for the offline demo model."""
    spec = os.environ.get("NB_TOOLS_MODEL", "").strip()
    prefix = spec.split(":", 1)[0] if ":" in spec else ""
    if prefix in _OPENAI_PREFIXES:
        return ("openai", "nb_tools.model.openai", "nb_tools.agent", *RUN_MODULES)
    if prefix in ("", "anthropic") and (prefix or has_credentials()):
        return ("anthropic", "nb_tools.model.anthropic", "nb_tools.agent", *RUN_MODULES)
    return ()


def _import_all(names: tuple[str, ...]) -> None:
    for name in names:
        try:
            importlib.import_module(name)
        except Exception:  # not installed or broken: the run says so when it needs it
            return
    _first_render()
    if "anthropic" in names:
        _first_request()


def _first_render() -> None:
    """What the first streamed answer costs besides imports: the Markdown parser compiles
    its scanners on its first text (~90 ms on a busy machine)."""
    try:
        from nb_tools.transcript import text_html

        sample = "A *warm* `up`:\n\n- one\n\n```python\nx = 1\n```\n\n| a |\n|---|\n| 1 |"
        text_html(sample, live=True)
    except Exception:
        return


def _first_request() -> None:
    """What the SDK imports on its first request (its HTTP stack's connection, TLS and
    async backend modules), and the TLS context the run's client will share: a request
    to a port where nothing listens, refused at once."""
    import asyncio

    import anthropic

    from nb_tools.model.anthropic import shared_tls_http_client

    async def refused() -> None:
        http = shared_tls_http_client()  # and the TLS context every client then shares
        client = anthropic.AsyncAnthropic(
            api_key="warm-up",
            base_url=REFUSED,
            max_retries=0,
            timeout=5.0,
            **({"http_client": http} if http is not None else {}),
        )
        try:
            await client.messages.create(
                model="warm-up", max_tokens=1, messages=[{"role": "user", "content": "."}]
            )
        except Exception:
            pass
        finally:
            await client.close()

    try:
        asyncio.run(refused())
    except Exception:
        return


def warm() -> threading.Thread | None:
    """Start importing :func:`modules_to_warm` in a daemon thread (None: nothing to do)."""
    names = tuple(n for n in modules_to_warm() if n not in sys.modules)
    if not names or any(t.name == THREAD_NAME for t in threading.enumerate()):
        return None
    thread = threading.Thread(target=_import_all, args=(names,), name=THREAD_NAME, daemon=True)
    thread.start()
    return thread
