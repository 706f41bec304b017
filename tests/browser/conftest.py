"""Browser test harness: JupyterLab (or Notebook 7) on 127.0.0.1 with private config, data,
runtime, settings and workspace dirs; a fake Messages API server in this process that the
notebook's kernel talks to through ``ANTHROPIC_BASE_URL``; Debian's chromium driven by
Playwright (``executable_path``, never ``playwright install``).

Each test pushes the model's replies it needs with ``script.push(reply(...), ...)``.
"""

from __future__ import annotations

import collections
import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from nb_tools.model import ModelRequest
from nb_tools.testing import Fault, Reply, Step

REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO / "tests" / "artifacts"
CHROMIUM = Path(os.environ.get("NB_TOOLS_CHROMIUM", "/usr/bin/chromium"))
EXTENSION = "nb-tools-labextension"
TOKEN = "T"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--headless",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--no-first-run",
    "--disable-extensions",
    "--disable-component-update",
    "--disable-sync",
]
# Settings that keep JupyterLab from asking about (and fetching) news and updates, and keep
# every cell in the DOM (no windowing) so off-screen outputs can be found.
QUIET_SETTINGS = {
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {
        "fetchNews": "false",
        "checkForUpdates": False,
    },
    "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none"},
}


def _why_no_browser() -> str | None:
    if not CHROMIUM.exists():
        return (
            f"browser tests need Chromium at {CHROMIUM} (Debian: apt-get install chromium; "
            "or set NB_TOOLS_CHROMIUM)"
        )
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "browser tests need the Python package playwright (pip install playwright)"
    return None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    reason = _why_no_browser()
    for item in items:
        if here in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.browser)
            if reason:
                item.add_marker(pytest.mark.skip(reason=reason))


# ---- the fake model ------------------------------------------------------------------------


class ScriptQueue:
    """The replies of the current test, served in order by the session's fake server;
    whatever a test leaves over is dropped before the next test."""

    def __init__(self) -> None:
        self._steps: collections.deque[Step] = collections.deque()
        self._lock = threading.Lock()

    def push(self, *steps: Step) -> None:
        with self._lock:
            self._steps.extend(steps)

    def clear(self) -> None:
        with self._lock:
            self._steps.clear()

    @property
    def remaining(self) -> int:
        with self._lock:
            return len(self._steps)

    def __call__(self, request: ModelRequest) -> Reply | Fault:
        with self._lock:
            step = self._steps.popleft() if self._steps else None
        if step is None:
            return Fault(status=400, message="browser test: the fake model's script is used up")
        if isinstance(step, Reply | Fault):
            return step
        return step(request)


@pytest.fixture(scope="session")
def fake_model() -> Iterator[Any]:
    from nb_tools.testing import FakeMessagesServer

    queue = ScriptQueue()
    server = FakeMessagesServer(fallback=queue)
    server.queue = queue  # type: ignore[attr-defined]
    with server:
        yield server


@pytest.fixture
def script(fake_model: Any) -> Iterator[ScriptQueue]:
    """Push the model's replies for this test: ``script.push(reply("Hi"))``."""
    queue: ScriptQueue = fake_model.queue
    queue.clear()
    yield queue
    queue.clear()


# ---- Jupyter servers -----------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def built_extension() -> Path | None:
    """The working tree's built extension (``jlpm build:prod`` or ``pip install .``)."""
    out = REPO / "labextension" / "dist"
    return out if (out / "package.json").exists() else None


def installed_extension() -> Path | None:
    from jupyter_core.paths import jupyter_path

    for root in jupyter_path("labextensions"):
        candidate = Path(root) / EXTENSION
        if (candidate / "package.json").exists():
            return candidate
    return None


@dataclass
class JupyterServer:
    """A running ``jupyter lab`` / ``jupyter notebook`` on loopback."""

    kind: str  # "lab" or "notebook"
    url: str
    root: Path  # the server's notebook directory (a copy of notebooks/)
    home: Path  # private config/data/runtime/settings/workspaces
    proc: subprocess.Popen[bytes]
    log: Path
    extension: Path = field(default_factory=Path)

    def api(self, path: str, method: str = "GET", body: Any = None) -> Any:
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(
            f"{self.url}{path}",
            data=data,
            method=method,
            headers={"Authorization": f"token {TOKEN}", "Content-Type": "application/json"},
        )
        with urllib.request.urlopen(req, timeout=10) as resp:
            raw = resp.read()
        return json.loads(raw) if raw else None

    def page_url(self, path: str) -> str:
        if self.kind == "lab":
            return f"{self.url}/lab/tree/{path}?token={TOKEN}&reset"
        return f"{self.url}/notebooks/{path}?token={TOKEN}"

    def shutdown_kernels(self) -> None:
        for kernel in self.api("/api/kernels"):
            with contextlib.suppress(urllib.error.HTTPError):
                self.api(f"/api/kernels/{kernel['id']}", method="DELETE")

    def log_tail(self, lines: int = 40) -> str:
        text = self.log.read_text(errors="replace") if self.log.exists() else ""
        return "\n".join(text.splitlines()[-lines:])


def start_server(kind: str, home: Path, base_url: str) -> JupyterServer:
    """Start JupyterLab (``kind="lab"``) or Notebook 7 (``"notebook"``) on a free port, in a
    private copy of notebooks/, with the kernel pointed at the fake model at ``base_url``."""
    for sub in ("config", "data", "runtime", "settings", "workspaces", "ipython"):
        (home / sub).mkdir(parents=True, exist_ok=True)
    root = home / "notebooks"
    if not root.exists():
        shutil.copytree(REPO / "notebooks", root)
    for rel, values in QUIET_SETTINGS.items():
        target = home / "settings" / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(values))
    # The working tree's build wins over an installed copy, so tests see the current code.
    built = built_extension()
    if built is not None:
        staged = home / "data" / "labextensions" / EXTENSION
        staged.parent.mkdir(parents=True, exist_ok=True)
        if not staged.exists():
            staged.symlink_to(built, target_is_directory=True)
        extension = staged
    else:
        found = installed_extension()
        if found is None:
            raise RuntimeError(
                f"the {EXTENSION} JupyterLab extension is neither built in "
                f"{REPO / 'labextension' / 'dist'} nor installed; run `pip install -e .` "
                "(or `cd labextension && jlpm install && jlpm build:prod`) first"
            )
        extension = found

    # The suite's guard (NB_TOOLS_BLOCK_REAL_MODELS) stays; a user's model/approval choice goes.
    drop = ("NB_TOOLS_APPROVAL", "NB_TOOLS_MODEL")
    env = {k: v for k, v in os.environ.items() if not k.startswith("JUPYTER") and k not in drop}
    env.update(
        JUPYTER_CONFIG_DIR=str(home / "config"),
        JUPYTER_DATA_DIR=str(home / "data"),
        JUPYTER_RUNTIME_DIR=str(home / "runtime"),
        IPYTHONDIR=str(home / "ipython"),
        ANTHROPIC_BASE_URL=base_url,
        ANTHROPIC_API_KEY="test",
        PYTHONPATH=os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH", "")) if p),
    )
    port = free_port()
    app = "JupyterNotebookApp" if kind == "notebook" else "LabApp"
    cmd = [
        sys.executable,
        "-m",
        "jupyterlab" if kind == "lab" else "notebook",
        "--no-browser",
        "--allow-root",
        "--ServerApp.ip=127.0.0.1",
        f"--ServerApp.port={port}",
        "--ServerApp.port_retries=0",
        f"--ServerApp.root_dir={root}",
        f"--IdentityProvider.token={TOKEN}",
        f"--{app}.expose_app_in_browser=True",
        f"--{app}.user_settings_dir={home / 'settings'}",
        f"--{app}.workspaces_dir={home / 'workspaces'}",
    ]
    if kind == "lab":
        cmd += ["--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"]
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    log = ARTIFACTS / f"jupyter-{kind}.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            cmd, cwd=root, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
    server = JupyterServer(kind, f"http://127.0.0.1:{port}", root, home, proc, log, extension)
    deadline = time.monotonic() + 60
    while True:
        if proc.poll() is not None:
            raise RuntimeError(f"jupyter {kind} exited ({proc.returncode}):\n{server.log_tail()}")
        try:
            server.api("/api/status")
            return server
        except (urllib.error.URLError, ConnectionError, OSError):
            if time.monotonic() > deadline:
                stop_server(server)
                raise RuntimeError(
                    f"jupyter {kind} did not answer on {server.url} within 60 s:\n"
                    f"{server.log_tail()}"
                ) from None
            time.sleep(0.2)


def stop_server(server: JupyterServer) -> None:
    with contextlib.suppress(Exception):
        server.shutdown_kernels()
    server.proc.terminate()
    try:
        server.proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(server.proc.pid, signal.SIGKILL)
        server.proc.wait(timeout=5)


@pytest.fixture(scope="session")
def lab_server(
    fake_model: Any, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[JupyterServer]:
    server = start_server("lab", tmp_path_factory.mktemp("lab"), fake_model.base_url)
    yield server
    stop_server(server)


@pytest.fixture(scope="session")
def notebook7_server(
    fake_model: Any, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[JupyterServer]:
    server = start_server("notebook", tmp_path_factory.mktemp("nb7"), fake_model.base_url)
    yield server
    stop_server(server)


@pytest.fixture
def lab(lab_server: JupyterServer) -> Iterator[JupyterServer]:
    """The session's JupyterLab; the kernels a test started are shut down after it."""
    yield lab_server
    with contextlib.suppress(Exception):
        lab_server.shutdown_kernels()


@pytest.fixture
def notebook7(notebook7_server: JupyterServer) -> Iterator[JupyterServer]:
    """The session's Notebook 7 server; kernels are shut down after each test."""
    yield notebook7_server
    with contextlib.suppress(Exception):
        notebook7_server.shutdown_kernels()


# ---- the browser ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Chromium for one test module. Playwright's sync API keeps an event loop running in
    the main thread while it is open, which would break every asyncio test after it in
    the same pytest process; closing it with the module ends that loop."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@dataclass
class ConsoleLog:
    """Browser console errors and uncaught page errors seen by one page."""

    errors: list[str] = field(default_factory=list)
    allowed: tuple[str, ...] = ()

    # JupyterLab's LSP client probes /lsp/status; a server without the jupyter-lsp server
    # extension enabled (e.g. in a venv layered on another prefix) answers 404. Not ours.
    ALWAYS_ALLOWED = ("/lsp/status",)

    def unexpected(self) -> list[str]:
        allowed = self.allowed + self.ALWAYS_ALLOWED
        return [e for e in self.errors if not any(a in e for a in allowed)]


@pytest.fixture
def page(browser: Any, request: pytest.FixtureRequest) -> Iterator[Any]:
    """A fresh browser context and page; ``page.console`` collects console errors.
    A screenshot of the page is saved to tests/artifacts/ when the test fails."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.set_default_timeout(30_000)
    pg = context.new_page()
    log = ConsoleLog()
    pg.on(
        "console",
        lambda m: (
            log.errors.append(f"{m.text} [{m.location.get('url', '')}]")
            if m.type == "error"
            else None
        ),
    )
    pg.on("pageerror", lambda e: log.errors.append(f"pageerror: {e}"))
    pg.console = log
    yield pg
    report = getattr(request.node, "rep_call", None)
    if report is not None and report.failed:
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(Exception):
            pg.screenshot(path=str(ARTIFACTS / f"FAILED-{request.node.name}.png"), full_page=True)
    context.close()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[Any]) -> Any:
    report = yield
    setattr(item, f"rep_{report.when}", report)
    return report
