"""nb_tools.sandbox as data: the public surface, modes, the environment allow-list, git's
overrides, the bubblewrap command line's order, the probe, grants and the bash tool's
choice of policy."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

import nb_tools.sandbox as sandbox
from nb_tools.builtin._bash import PARAMETERS, BashTool
from nb_tools.builtin._workspace import Workspace
from nb_tools.sandbox import (
    SandboxPolicy,
    check_mode,
    git_safety_env,
    sandbox_available,
    sandbox_env,
    secret_env_name,
)
from nb_tools.sandbox._bwrap import bwrap_argv
from nb_tools.tool._grant import Grant, current_grant, granted


def test_public_names_are_sorted_and_importable() -> None:
    assert len(set(sandbox.__all__)) == len(sandbox.__all__)
    for name in sandbox.__all__:
        assert hasattr(sandbox, name)


def test_modes() -> None:
    assert check_mode("read-only") == "read-only"
    with pytest.raises(ValueError, match=r"unknown mode 'write'.*'workspace-write'"):
        check_mode("write")
    with pytest.raises(ValueError):
        SandboxPolicy(mode="nope")  # type: ignore[arg-type]
    p = SandboxPolicy(workspace=Path("."))
    assert p.mode == "workspace-write" and p.workspace == Path.cwd().resolve()
    assert p.read_only().mode == "read-only" and p.read_only().workspace == p.workspace
    assert not p.network


@pytest.mark.parametrize(
    "name",
    [
        "ANTHROPIC_API_KEY",
        "OPENAI_API_KEY",
        "GITHUB_TOKEN",
        "AWS_SECRET_ACCESS_KEY",
        "DB_PASSWORD",
        "JPY_SESSION_NAME",
        "JUPYTER_TOKEN",
        "MY_KEY",
        "SSH_AUTH_SOCK",
        "anthropic_base_url",
        "HF_TOKEN",
        "NPM_AUTH",
    ],
)
def test_secret_names_never_pass(name: str) -> None:
    assert secret_env_name(name)
    env = sandbox_env({name: "v", "PATH": "/bin"}, extra={name: "v"})
    assert name not in env


def test_allow_list() -> None:
    base = {
        "PATH": "/bin",
        "LANG": "en_US.UTF-8",
        "LC_ALL": "C",
        "TERM": "xterm",
        "TZ": "UTC",
        "HOME": "/h",
        "USER": "u",
        "RANDOM_THING": "x",
        "LD_PRELOAD": "/evil.so",
        "GIT_DIR": "/elsewhere",
        "PYTHONSTARTUP": "/x.py",
        "BASH_ENV": "/x.sh",
    }
    env = sandbox_env(base)
    for kept in ("PATH", "LANG", "LC_ALL", "TERM", "TZ", "HOME", "USER"):
        assert env[kept] == base[kept]
    for dropped in ("RANDOM_THING", "LD_PRELOAD", "GIT_DIR", "PYTHONSTARTUP", "BASH_ENV"):
        assert dropped not in env
    assert env["TMPDIR"] == "/tmp" and env["GIT_CONFIG_NOSYSTEM"] == "1"


def test_git_overrides_name_the_repository_drivers(tmp_path: Path) -> None:
    config = tmp_path / "config"
    config.write_text('[diff "evil"]\n\ttextconv = x\n[filter "f"]\n\tclean = y\n')
    env = git_safety_env(config)
    pairs = {
        env[f"GIT_CONFIG_KEY_{i}"]: env[f"GIT_CONFIG_VALUE_{i}"]
        for i in range(int(env["GIT_CONFIG_COUNT"]))
    }
    assert pairs["core.fsmonitor"] == "false"
    assert pairs["diff.evil.textconv"] == "cat"
    assert pairs["filter.f.clean"] == "cat" and pairs["filter.f.process"] == ""
    assert "diff -u" in pairs["diff.external"]


def _argv(policy: SandboxPolicy) -> list[str]:
    return bwrap_argv("bwrap", policy, ["true"], cwd=policy.workspace)


def test_argv_order_follows_codex(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / ".git" / "hooks").mkdir(parents=True)
    (ws / ".git" / "config").write_text("")
    (ws / ".env").write_text("S=1")
    argv = _argv(SandboxPolicy(mode="workspace-write", workspace=ws))
    joined = " ".join(argv)
    assert argv[:4] == ["bwrap", "--ro-bind", "/", "/"]
    tmp_mask = joined.index("--tmpfs /tmp")
    bind = joined.index(f"--bind {ws} {ws}")
    hooks = joined.index(f"--ro-bind {ws}/.git/hooks {ws}/.git/hooks")
    env_mask = joined.index(f"--ro-bind /dev/null {ws}/.env")
    assert tmp_mask < bind < hooks < env_mask
    for flag in ("--unshare-all", "--die-with-parent", "--new-session"):
        assert flag in argv
    assert argv[argv.index("--cap-drop") + 1] == "ALL"
    assert "--share-net" not in argv
    assert argv[-2:] == ["--", "true"]
    assert (ws / ".nb_tools").is_dir()  # created empty so it can be protected


def test_read_only_binds_the_workspace_read_only(tmp_path: Path) -> None:
    argv = _argv(SandboxPolicy(mode="read-only", workspace=tmp_path))
    assert f"--ro-bind {tmp_path} {tmp_path}" in " ".join(argv)
    assert "--bind" not in argv and not (tmp_path / ".nb_tools").exists()


def test_network_true_shares_the_network(tmp_path: Path) -> None:
    assert "--share-net" in _argv(SandboxPolicy(workspace=tmp_path, network=True))


def test_off_has_no_bwrap_command(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="'off'"):
        _argv(SandboxPolicy(mode="off", workspace=tmp_path))


def test_probe_says_why_without_bwrap(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NB_TOOLS_BWRAP", "")
    found = sandbox_available(refresh=True)
    assert not found and "not installed" in found.reason and "apt-get install" in found.reason
    monkeypatch.setenv("NB_TOOLS_BWRAP", "/nonexistent/bwrap")
    assert not sandbox_available(refresh=True)
    monkeypatch.setenv("NB_TOOLS_BWRAP", "/bin/false")
    found = sandbox_available(refresh=True)
    assert not found and "cannot start a sandbox" in found.reason
    monkeypatch.delenv("NB_TOOLS_BWRAP")
    sandbox_available(refresh=True)


def test_probe_off_linux(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "platform", "darwin")
    monkeypatch.setenv("NB_TOOLS_BWRAP", "probe-darwin")
    found = sandbox_available(refresh=True)
    assert not found and "darwin" in found.reason and "Linux" in found.reason


def _sources() -> list[tuple[object, bool, str]]:
    from nb_tools.agent._approval import (
        Allow,
        PermissionSource,
        PersonSource,
        PolicySource,
        RuleSource,
    )
    from nb_tools.permissions import parse_rule

    rule = RuleSource(rule=parse_rule("bash(git:*)", "allow"))
    return [
        (None, False, "none"),
        (Allow(source=PersonSource(asked=PolicySource(policy="ask"))), True, "person"),
        (Allow(source=PersonSource(asked=rule)), True, "person"),
        (Allow(source=PermissionSource(by="my-policy")), True, "rule"),
        (Allow(source=rule), True, "rule"),
        (Allow(source=PolicySource(policy="auto")), True, "policy"),
        (Allow(source=PolicySource(policy="read-only")), False, "none"),
    ]


@pytest.mark.parametrize(("decision", "approved", "kind"), _sources())
def test_grant_from_decisions(decision: object, approved: bool, kind: str) -> None:
    """Only a person's yes counts as someone having seen the card ("person"): "Always
    allow" and the permission callable approve without one."""
    from nb_tools.agent._schedule import approve, plan
    from nb_tools.model import ToolCall
    from nb_tools.tool import Registry

    p = plan(Registry(), ToolCall(id="c", name="t", arguments="{}"))
    g = approve(p, decision).grant  # type: ignore[arg-type]
    assert g is not None and (g.approved, g.kind) == (approved, kind)


def test_granted_is_scoped() -> None:
    assert current_grant() is None
    with granted(Grant(approved=True, kind="person")):
        assert current_grant() == Grant(approved=True, kind="person")
    assert current_grant() is None


def _mode(tool: BashTool, grant: Grant | None, *, outside: bool = False) -> str:
    with granted(grant):
        p = tool.policy_for(outside=outside)
    return p if isinstance(p, str) else p.mode


@pytest.mark.parametrize(
    ("explicit", "grant", "outside", "expected"),
    [
        (None, None, False, "read-only"),  # a direct call: not approved (fail closed)
        ("workspace-write", None, False, "workspace-write"),  # the developer's choice
        (None, Grant(approved=False), False, "read-only"),
        (None, Grant(approved=True, kind="person"), False, "workspace-write"),
        (None, Grant(approved=True, kind="policy", sandbox="read-only"), False, "read-only"),
        (None, Grant(approved=False, sandbox="off"), False, "read-only"),
        ("workspace-write", Grant(approved=False), False, "read-only"),
        (None, Grant(approved=True, kind="person"), True, "off"),
        ("off", None, True, "off"),
    ],
)
def test_bash_policy_choice(
    tmp_path: Path, explicit: str | None, grant: Grant | None, outside: bool, expected: str
) -> None:
    tool = BashTool(Workspace(tmp_path), sandbox=explicit)  # type: ignore[arg-type]
    assert _mode(tool, grant, outside=outside) == expected


@pytest.mark.parametrize("grant", [None, Grant(approved=False)])
def test_outside_refused_without_approval(tmp_path: Path, grant: Grant | None) -> None:
    tool = BashTool(Workspace(tmp_path))
    assert "runs only when a person approved it" in _mode(tool, grant, outside=True)


def test_outside_call_is_protected_and_previewed(tmp_path: Path) -> None:
    tool = BashTool(Workspace(tmp_path))
    off = json.dumps({"command": "ls", "sandbox": "off"})
    plain = json.dumps({"command": "ls"})
    assert tool.is_protected_call(off) and not tool.is_protected_call(plain)
    assert tool.requires_approval_for(off) and not tool.read_only_call(off)
    assert "OUTSIDE the sandbox" in tool.preview(off).path
    with pytest.raises(ValueError):
        tool.preview(plain)
    assert PARAMETERS.to_dict()["properties"]["sandbox"]["enum"] == ["off"]
    assert "OUTSIDE the sandbox" in tool.info().description


def test_unreadable_arguments_count_as_outside(tmp_path: Path) -> None:
    tool = BashTool(Workspace(tmp_path))
    assert tool.is_protected_call("not json") and tool.is_protected_call("[1]")


def test_session_off_and_no_sandbox_show_outside_on_the_card(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from nb_tools.sandbox import set_default_mode

    plain = json.dumps({"command": "make"})
    tool = BashTool(Workspace(tmp_path))
    with pytest.raises(ValueError):
        tool.preview(plain)
    set_default_mode("off")
    try:
        assert "OUTSIDE" in tool.preview(plain).path
    finally:
        set_default_mode("workspace-write")
    assert "OUTSIDE" in BashTool(Workspace(tmp_path), sandbox="off").preview(plain).path
    monkeypatch.setenv("NB_TOOLS_BWRAP", "")
    try:
        assert "OUTSIDE" in tool.preview(plain).path
    finally:
        monkeypatch.delenv("NB_TOOLS_BWRAP")


def test_adapter_without_a_sandbox_asks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import warnings

    from nb_tools.builtin import BashAdapterTool

    tool = BashAdapterTool(Workspace(tmp_path))
    ls = json.dumps({"command": "ls"})
    if sandbox_available().ok:
        assert tool.read_only_call(ls)
    monkeypatch.setenv("NB_TOOLS_BWRAP", "")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert not tool.read_only_call(ls) and tool.requires_approval_for(ls)
    assert tool.read_only_call(json.dumps({"restart": True}))
